/* Fuzzes each wire format's response parser (llm/openai.c, anthropic.c, gemini.c, ollama.c) the way
 * the call engine drives it: a whole body, or a stream framed by net/net_stream.c in random pieces, with
 * tool calls collected. Any bytes end in success, an error object or "malformed" — with err filled
 * on failure — and never a crash, a leak or text past the caps. */
#include "fuzz_util.h"

#include "common/buf.h"
#include "net/net_stream.h"
#include "llm/wire.h"

#define TEXT_CAP (1u << 20)

typedef struct sink {
  const llm_wire *wire;
  llm_wire_out out;
  ag_buf text;
} sink;

static int on_text(void *ctx, const char *s, size_t n) {
  sink *k = ctx;
  return ag_buf_append(&k->text, s, n);
}

static int on_event(void *ud, const char *event, const char *data, size_t len) {
  sink *k = ud;
  return k->wire->stream_event(event, data, len, &k->out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_in in = {data, size};
  uint8_t ctl = fuzz_byte(&in);
  static const llm_provider_kind kinds[] = {LLM_OPENAI, LLM_ANTHROPIC, LLM_GEMINI, LLM_OLLAMA};
  sink k;
  memset(&k, 0, sizeof k);
  k.wire = llm_wire_for(kinds[ctl & 3]);
  llm_error_info err;
  memset(&err, 0, sizeof err);
  llm_wire_calls calls;
  llm_wire_calls_init(&calls, 1u << 20);
  ag_buf_init(&k.text, TEXT_CAP);
  k.out.text = on_text;
  k.out.ctx = &k;
  k.out.calls = ctl & 8 ? NULL : &calls; /* tool calls collected, or read and dropped */
  k.out.err = &err;
  int rc;
  if (ctl & 4) {
    net_stream s;
    net_stream_init(&s, k.wire->framing, 64u << 10, 4u << 20, on_event, &k);
    uint32_t seed = 0x2545f491u ^ ((uint32_t)ctl << 16) ^ (uint32_t)size;
    rc = AG_OK;
    for (size_t off = 0; off < in.size && !rc;) {
      size_t piece = 1 + fuzz_rand(&seed) % 64;
      if (piece > in.size - off) piece = in.size - off;
      rc = net_stream_feed(&s, (const char *)in.data + off, piece);
      off += piece;
    }
    if (!rc) rc = net_stream_finish(&s);
    net_stream_free(&s);
  } else {
    /* The engine hands parse_body a NUL-terminated body. */
    char *body = fuzz_cstr(in.data, in.size);
    rc = k.wire->parse_body(body, in.size, &k.out);
    free(body);
  }
  /* Malformed input says so (an error object may carry an empty message: the engine explains those). */
  if (rc == AG_ERR_INVALID) {
    if (!err.type[0] && !err.message[0]) abort();
  } else if (rc != AG_OK && rc != AG_ERR_LLM && rc != AG_ERR_TOO_BIG) {
    abort();
  }
  if (k.text.len > TEXT_CAP || calls.n > LLM_WIRE_MAX_CALLS) abort();
  if (memchr(err.type, '\0', sizeof err.type) == NULL || memchr(err.message, '\0', sizeof err.message) == NULL)
    abort();
  if (k.out.input_tokens < 0 || k.out.output_tokens < 0) abort();
  llm_wire_calls_free(&calls);
  ag_buf_free(&k.text);
  return 0;
}
