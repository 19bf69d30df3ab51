/* What a provider's wire format (llm/wire.h) hands out, collected for a test that feeds it stream
 * events or whole bodies by hand: the text, the error, the tool calls. */
#ifndef AG_TEST_WIRE_SINK_H
#define AG_TEST_WIRE_SINK_H

#include "llm/wire.h"

typedef struct wire_sink {
  char text[256];       /* the text, concatenated (cut at 255 bytes) */
  llm_error_info err;
  llm_wire_calls calls; /* collected when wire_sink_init had a cap */
  llm_wire_out out;     /* what the wire writes to */
} wire_sink;

/* Empties k; with calls_cap > 0 it collects tool calls too (up to that many bytes of arguments). */
void wire_sink_init(wire_sink *k, size_t calls_cap);

/* One stream event (name, data) through wire w into k: the wire's result. */
int wire_sink_event(const llm_wire *w, wire_sink *k, const char *name, const char *data);

#endif
