/* A wire format's output collected for tests (see wire_sink.h). */
#include "support/wire_sink.h"

#include <stdio.h>
#include <string.h>

static int sink_text(void *ctx, const char *s, size_t n) {
  wire_sink *k = ctx;
  size_t used = strlen(k->text);
  snprintf(k->text + used, sizeof k->text - used, "%.*s", (int)n, s);
  return AG_OK;
}

void wire_sink_init(wire_sink *k, size_t calls_cap) {
  memset(k, 0, sizeof *k);
  k->out.text = sink_text;
  k->out.ctx = k;
  k->out.err = &k->err;
  if (calls_cap) {
    llm_wire_calls_init(&k->calls, calls_cap);
    k->out.calls = &k->calls;
  }
}

int wire_sink_event(const llm_wire *w, wire_sink *k, const char *name, const char *data) {
  return w->stream_event(name, data, strlen(data), &k->out);
}
