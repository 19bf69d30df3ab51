/* Fuzzes reply shaping (agents/shape.c): whatever an LLM replies, shaping ends in one of its three
 * outcomes, and a published text is non-empty with no white space at either end. */
#include "fuzz_util.h"

#include "agents/shape.h"

static const char *const ids[] = {"alice", "bob", "madame-pedagogue", "x_1", "carol-2"};

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_in in = {data, size};
  uint8_t ctl = fuzz_byte(&in);
  char *raw = fuzz_cstr(in.data, in.size);
  static const char *const senders[] = {"human", "world", "bob", "alice", "system"};
  shape_outcome oc = SHAPE_PUBLISH;
  char *out = NULL;
  int rc = shape_reply(raw, ids[ctl % 5], senders[(ctl >> 3) % 5], (ctl >> 6) & 1, ids, ctl & 0x80 ? 5 : 0, &oc,
                       &out);
  if (rc != AG_OK) abort();
  if (oc == SHAPE_PUBLISH) {
    size_t n = out ? strlen(out) : 0;
    if (!n || is_space(out[0]) || is_space(out[n - 1])) abort();
  } else if (out || (oc != SHAPE_EMPTY && oc != SHAPE_SILENT)) {
    abort();
  }
  free(out);
  free(raw);
  return 0;
}
