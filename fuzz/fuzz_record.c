/* Fuzzes the parser of the records a world on NATS reads from its stream (cluster/wire.c): any bytes
 * decode or fail cleanly; what decodes has subject-safe ids and encodes back to a record that decodes
 * to the same fields, numbers exact up to 2^53 - 1 and strings byte for byte (invalid UTF-8 included). */
#include "fuzz_util.h"

#include "cluster/wire.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wire_record r, back;
  if (wire_decode((const char *)data, size, &r, NULL) != AG_OK) return 0;
  if (!wire_id_ok(r.chat) || (r.type == WIRE_TURN_END && !wire_id_ok(r.agent))) abort();
  char *text = NULL;
  size_t len = 0;
  if (wire_encode(&r, &text, &len) != AG_OK) abort();
  if (wire_decode(text, len, &back, NULL) != AG_OK) abort();
  if (back.type != r.type || strcmp(back.chat, r.chat)) abort();
  if (r.type == WIRE_MSG && (strcmp(back.sender, r.sender) || strcmp(back.text, r.text) || back.kind != r.kind ||
                             back.ts_ms != r.ts_ms || back.has_sim != r.has_sim || back.sim_ms != r.sim_ms))
    abort();
  if (r.type == WIRE_EVENT &&
      (back.ev != r.ev || strcmp(back.origin, r.origin) || strcmp(back.text, r.text) || strcmp(back.agent, r.agent) ||
       (r.sender && strcmp(back.sender, r.sender)) || back.has_info != r.has_info ||
       (r.has_info && (back.http_status != r.http_status || back.attempts != r.attempts ||
                       strcmp(back.error_type, r.error_type)))))
    abort();
  if (r.type == WIRE_CHAT && (back.deleted != r.deleted || strcmp(back.origin, r.origin) ||
                              (!r.deleted && (strcmp(back.text, r.text) || back.ts_ms != r.ts_ms))))
    abort();
  if (r.type == WIRE_TURN_END && (back.trigger != r.trigger || back.counter != r.counter || strcmp(back.agent, r.agent)))
    abort();
  free(text);
  wire_record_free(&r);
  wire_record_free(&back);
  return 0;
}
