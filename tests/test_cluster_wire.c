/* The records of a world's NATS stream (cluster/wire.c): encode/decode round trips that keep numbers
 * exact up to 2^53 - 1 and strings byte for byte, and the refusals, each naming the field; a record's
 * subject, the stream's order (cluster/order.c) and signed records (cluster/sign.c). Includes the
 * input fuzz_record found (a 16-digit ts that came back 1 ms off). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/order.h"
#include "cluster/sign.h"
#include "cluster/wire.h"
#include "common/error.h"
#include "common/jsonnum.h"
#include "support/suite.h"
#include "support/unit.h"
#include "world/events.h"

/* Encodes r, decodes the text again into *back (release with wire_record_free); the text in *json. */
static void round_trip(int line, const wire_record *r, wire_record *back, char **json) {
  size_t len = 0;
  ag_errmsg em = {{0}};
  *json = NULL;
  if (wire_encode(r, json, &len) != AG_OK) unit_fail_(__FILE__, line, "wire_encode failed");
  else if (wire_decode(*json, len, back, &em) != AG_OK) unit_fail_(__FILE__, line, "decode of %s: %s", *json, em.text);
  else return;
  memset(back, 0, sizeof *back);
}

static wire_record msg(char *from, char *text, int64_t ts) {
  wire_record r = {.type = WIRE_MSG, .chat = "c1", .sender = from, .text = text, .kind = AG_KIND_HUMAN, .ts_ms = ts};
  return r;
}

/* fuzz/corpus/record/regress-ts-16-digits-invalid-utf8-from: cJSON printed the ts with 15 significant
 * digits (9.00000000199998e+15), so the record came back 1 ms off. */
static void fuzz_finding_ts_16_digits(void) {
  const char *in = "{\"t\":\"msg\",\"chat\":\"25r\",\"from\":\"h\x8d\x92" "an\",\"kind\":\"human\",\"text\":\"t\","
                   "\"ts\":9000000001999981}";
  wire_record r, back;
  ag_errmsg em = {{0}};
  CHECK_INT(wire_decode(in, strlen(in), &r, &em), AG_OK);
  CHECK_INT(r.ts_ms, INT64_C(9000000001999981));
  CHECK_STR(r.sender, "h\x8d\x92" "an");
  char *json;
  round_trip(__LINE__, &r, &back, &json);
  CHECK(json && strstr(json, "\"ts\":9000000001999981}"));
  CHECK_INT(back.ts_ms, r.ts_ms);
  CHECK_STR(back.sender, r.sender); /* the bytes as they came: nodes must agree with the local store */
  free(json);
  wire_record_free(&r);
  wire_record_free(&back);
}

static void numbers_exact_to_2p53_less_1(void) {
  const int64_t ts[] = {0, 1, INT64_C(1763894400123), INT64_C(999999999999999), INT64_C(1000000000000001),
                        INT64_C(9007199254740991)};
  for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) {
    wire_record r = msg("alice", "hi", ts[i]), back;
    r.has_sim = 1;
    r.sim_ms = -ts[i]; /* a virtual clock may start before 1970 */
    char *json;
    round_trip(__LINE__, &r, &back, &json);
    CHECK_INT(back.ts_ms, ts[i]);
    CHECK_INT(back.has_sim, 1);
    CHECK_INT(back.sim_ms, -ts[i]);
    free(json);
    wire_record_free(&back);
  }
  wire_record end = {.type = WIRE_TURN_END, .chat = "c1", .kind = AG_KIND_AGENT, .agent = "bob",
                     .trigger = UINT64_C(9000000001999981), .counter = UINT64_C(8999999999999999)};
  wire_record back;
  char *json;
  round_trip(__LINE__, &end, &back, &json);
  CHECK_INT(back.trigger, 9000000001999981);
  CHECK_INT(back.counter, 8999999999999999);
  CHECK_STR(back.agent, "bob");
  free(json);
}

/* Nothing goes out that no reader would take: the encoder refuses what the decoder refuses. */
static void encode_refuses_out_of_range(void) {
  char *json = NULL;
  size_t len = 0;
  wire_record r = msg("alice", "hi", AG_JSON_INT_MAX + 1); /* 2^53: also what 2^53 + 1 reads as */
  CHECK_INT(wire_encode(&r, &json, &len), AG_ERR_INVALID);
  r.ts_ms = -1;
  CHECK_INT(wire_encode(&r, &json, &len), AG_ERR_INVALID);
  r.ts_ms = 5;
  r.has_sim = 1;
  r.sim_ms = -AG_JSON_INT_MAX - 1;
  CHECK_INT(wire_encode(&r, &json, &len), AG_ERR_INVALID);
  wire_record end = {.type = WIRE_TURN_END, .chat = "c1", .kind = AG_KIND_AGENT, .agent = "bob", .counter = 1};
  CHECK_INT(wire_encode(&end, &json, &len), AG_ERR_INVALID); /* trigger 0: no message has seq 0 */
  end.trigger = (uint64_t)AG_JSON_INT_MAX + 1;
  CHECK_INT(wire_encode(&end, &json, &len), AG_ERR_INVALID);
  end.trigger = 1;
  end.counter = UINT64_MAX;
  CHECK_INT(wire_encode(&end, &json, &len), AG_ERR_INVALID);
  CHECK(json == NULL);
}

static void check_refused(int line, const char *in, const char *why) {
  wire_record r;
  ag_errmsg em = {{0}};
  int rc = wire_decode(in, strlen(in), &r, &em);
  if (rc != AG_ERR_INVALID) unit_fail_(__FILE__, line, "decode of %s gave %d, expected a refusal", in, rc);
  else if (!strstr(em.text, why)) unit_fail_(__FILE__, line, "decode of %s: \"%s\" does not say %s", in, em.text, why);
  if (rc == AG_OK) wire_record_free(&r);
}

static void decode_refuses_bad_numbers(void) {
#define M "{\"t\":\"msg\",\"chat\":\"c1\",\"from\":\"a\",\"kind\":\"human\",\"text\":\"x\","
#define E "{\"t\":\"end\",\"chat\":\"c1\",\"agent\":\"b\","
  check_refused(__LINE__, M "\"ts\":9007199254740993}", "\"ts\""); /* reads as 2^53 */
  check_refused(__LINE__, M "\"ts\":9007199254740992}", "\"ts\"");
  check_refused(__LINE__, M "\"ts\":1e999}", "\"ts\"");
  check_refused(__LINE__, M "\"ts\":-1e999}", "\"ts\"");
  check_refused(__LINE__, M "\"ts\":1.5}", "\"ts\"");
  check_refused(__LINE__, M "\"ts\":-1}", "\"ts\"");
  check_refused(__LINE__, M "\"ts\":\"1\"}", "\"ts\"");
  check_refused(__LINE__, M "\"ts\":1,\"sim\":-9007199254740992}", "\"sim\"");
  check_refused(__LINE__, M "\"ts\":1,\"sim\":null}", "\"sim\"");
  check_refused(__LINE__, E "\"trigger\":0,\"counter\":0}", "\"trigger\"");
  check_refused(__LINE__, E "\"trigger\":1e300,\"counter\":0}", "\"trigger\"");
  check_refused(__LINE__, E "\"trigger\":1,\"counter\":18446744073709551615}", "\"counter\"");
#undef M
#undef E
}

/* An event record: an llm-error with the provider's answer, one without, an mcp-error; and refusals. */
static void events_round_trip_and_refusals(void) {
  wire_record r = {.type = WIRE_EVENT, .chat = "c1", .text = "HTTP 500: boom", .agent = "bob", .ev = EV_LLM_ERROR,
                   .has_info = 1, .http_status = 500, .attempts = 3, .error_type = "server_error", .origin = "h0011"};
  wire_record back;
  char *json;
  round_trip(__LINE__, &r, &back, &json);
  CHECK_INT(back.type, WIRE_EVENT);
  CHECK_INT(back.ev, EV_LLM_ERROR);
  CHECK_STR(back.agent, "bob");
  CHECK_STR(back.text, "HTTP 500: boom");
  CHECK_STR(back.origin, "h0011");
  CHECK_INT(back.has_info, 1);
  CHECK_INT(back.http_status, 500);
  CHECK_INT(back.attempts, 3);
  CHECK_STR(back.error_type, "server_error");
  free(json);
  wire_record_free(&back);
  r.has_info = 0;
  round_trip(__LINE__, &r, &back, &json);
  CHECK_INT(back.has_info, 0);
  CHECK(json && !strstr(json, "status"));
  free(json);
  wire_record_free(&back);
  wire_record m = {.type = WIRE_EVENT, .chat = "c1", .sender = "files", .text = "cannot start", .ev = EV_MCP_ERROR,
                   .origin = "h0011"};
  round_trip(__LINE__, &m, &back, &json);
  CHECK_INT(back.ev, EV_MCP_ERROR);
  CHECK_STR(back.sender, "files");
  CHECK_STR(back.text, "cannot start");
  free(json);
  wire_record_free(&back);
  m.ev = EV_LLM_START; /* only failures travel */
  CHECK_INT(wire_encode(&m, &json, &(size_t){0}), AG_ERR_INVALID);
#define V "{\"t\":\"evt\",\"chat\":\"c1\",\"from\":\"h1\","
  check_refused(__LINE__, V "\"ev\":\"llm-start\",\"agent\":\"b\",\"error\":\"x\"}", "\"ev\"");
  check_refused(__LINE__, V "\"ev\":\"llm-error\",\"agent\":\"b.c\",\"error\":\"x\"}", "\"agent\"");
  check_refused(__LINE__, V "\"ev\":\"llm-error\",\"agent\":\"b\",\"error\":1}", "\"error\"");
  check_refused(__LINE__, V "\"ev\":\"llm-error\",\"agent\":\"b\",\"error\":\"x\",\"status\":1000,"
                "\"attempts\":1,\"etype\":\"\"}", "\"status\"");
  check_refused(__LINE__, V "\"ev\":\"mcp-error\",\"error\":\"x\"}", "\"server\"");
  check_refused(__LINE__, "{\"t\":\"evt\",\"chat\":\"c1\",\"ev\":\"mcp-error\",\"server\":\"s\",\"error\":\"x\"}",
                "\"from\"");
#undef V
}

/* A record's subject names its chat and its type (issue 28 item 10: a record naming another chat than
 * its subject's moved every process to it). */
static void subject_names_chat_and_type(void) {
  wire_record r = msg("human", "hi", 1);
  ag_errmsg em = {{0}};
  CHECK_INT(wire_subject_check(&r, "agora.w", "agora.w.c1.msg", &em), AG_OK);
  CHECK_INT(wire_subject_check(&r, "agora.w", "agora.w.zzzz.msg", &em), AG_ERR_INVALID);
  CHECK(strstr(em.text, "names chat c1") != NULL);
  CHECK_INT(wire_subject_check(&r, "agora.w", "agora.w.c1.turn", &em), AG_ERR_INVALID);
  CHECK_INT(wire_subject_check(&r, "agora.w", "agora.w.c12.msg", &em), AG_ERR_INVALID);
  CHECK_INT(wire_subject_check(&r, "agora.w", "agora.x.c1.msg", &em), AG_ERR_INVALID);
  CHECK_INT(wire_subject_check(&r, "agora.w", NULL, &em), AG_ERR_INVALID);
  r.type = WIRE_CHAT;
  CHECK_INT(wire_subject_check(&r, "agora.w", "agora.w.c1.rec", &em), AG_OK);
}

/* Chat records: a title (with the chat's creation time) or a tombstone, each naming who recorded it. */
static void chat_records_round_trip(void) {
  wire_record r = {.type = WIRE_CHAT, .chat = "c1", .text = "Plans", .ts_ms = 1763894400123, .origin = "h01"}, back;
  char *json;
  round_trip(__LINE__, &r, &back, &json);
  CHECK_INT(back.type, WIRE_CHAT);
  CHECK_STR(back.text, "Plans");
  CHECK_INT(back.ts_ms, r.ts_ms);
  CHECK_INT(back.deleted, 0);
  free(json);
  wire_record_free(&back);
  wire_record d = {.type = WIRE_CHAT, .chat = "c1", .deleted = 1, .origin = "h01"};
  round_trip(__LINE__, &d, &back, &json);
  CHECK_INT(back.deleted, 1);
  CHECK(back.text == NULL);
  free(json);
  wire_record_free(&back);
  check_refused(__LINE__, "{\"t\":\"chat\",\"chat\":\"c1\",\"from\":\"h1\",\"title\":\"\",\"created\":1}", "\"title\"");
  check_refused(__LINE__, "{\"t\":\"chat\",\"chat\":\"c1\",\"title\":\"x\",\"created\":1}", "\"from\"");
  check_refused(__LINE__, "{\"t\":\"chat\",\"chat\":\"c1\",\"from\":\"h1\",\"title\":\"x\"}", "\"created\"");
}

/* Memory records (docs/distributed.md "Memory across hosts"): a note, a reflection (its insights reduced
 * to the fields a reader uses) and a summary go and come back; and every field is checked, with caps on
 * the insights and their sources. */
static void memory_records_round_trip_and_refusals(void) {
  wire_record n = {.type = WIRE_MEMORY, .chat = "c1", .agent = "m0", .origin = "h01", .mem = WIRE_MEM_NOTE,
                   .text = "the bridge is shut", .importance = 9.5, .ts_ms = -5, .after_seq = 7}, back;
  char *json;
  round_trip(__LINE__, &n, &back, &json);
  CHECK_INT(back.type, WIRE_MEMORY);
  CHECK_INT(back.mem, WIRE_MEM_NOTE);
  CHECK_STR(back.agent, "m0");
  CHECK_STR(back.origin, "h01");
  CHECK_STR(back.text, "the bridge is shut");
  CHECK(back.importance == 9.5 && back.ts_ms == -5 && back.after_seq == 7);
  CHECK_STR(wire_subject_token(WIRE_MEMORY), "mem");
  free(json);
  wire_record_free(&back);
  wire_record r = n;
  r.mem = WIRE_MEM_REFLECTION;
  r.text = "[{\"text\":\"cut off\",\"sources\":[1,3],\"importance\":8,\"extra\":{\"x\":1}}]";
  round_trip(__LINE__, &r, &back, &json);
  CHECK_STR(back.text, "[{\"text\":\"cut off\",\"sources\":[1,3],\"importance\":8}]");
  free(json);
  wire_record_free(&back);
  wire_record s = n;
  s.mem = WIRE_MEM_SUMMARY, s.text = "Told: shut.", s.upto = 4;
  round_trip(__LINE__, &s, &back, &json);
  CHECK(back.mem == WIRE_MEM_SUMMARY && back.upto == 4 && !strcmp(back.text, "Told: shut."));
  free(json);
  wire_record_free(&back);
  wire_record q = {.type = WIRE_MEMORY, .chat = "c1", .agent = "m0", .origin = "h01", .mem = WIRE_MEM_RATED,
                   .text = "[[1,7],[3,2.5]]", .after_seq = 3};
  round_trip(__LINE__, &q, &back, &json);
  CHECK(back.mem == WIRE_MEM_RATED && !strcmp(back.text, "[[1,7],[3,2.5]]"));
  free(json);
  wire_record_free(&back);
  n.importance = 11; /* what no reader would take is not sent */
  CHECK_INT(wire_encode(&n, &json, &(size_t){0}), AG_ERR_INVALID);
  r.text = "[{\"text\":\"x\"}]";
  CHECK_INT(wire_encode(&r, &json, &(size_t){0}), AG_ERR_INVALID);
#define N "{\"t\":\"mem\",\"chat\":\"c1\",\"agent\":\"m0\",\"from\":\"h1\",\"after\":1,"
#define I(x) N "\"step\":\"reflection\",\"at\":1,\"insights\":" x "}"
  check_refused(__LINE__, N "\"step\":\"note\",\"at\":1,\"text\":\"x\",\"importance\":0}", "\"importance\"");
  check_refused(__LINE__, N "\"step\":\"note\",\"at\":1,\"text\":\"x\",\"importance\":\"9\"}", "\"importance\"");
  check_refused(__LINE__, N "\"step\":\"note\",\"at\":1,\"importance\":3}", "\"text\"");
  check_refused(__LINE__, N "\"step\":\"note\",\"text\":\"x\",\"importance\":3}", "\"at\"");
  check_refused(__LINE__, N "\"step\":\"program\",\"text\":\"x\"}", "\"step\"");
  check_refused(__LINE__, N "\"step\":\"summary\",\"text\":\"x\",\"upto\":-1}", "\"upto\"");
  check_refused(__LINE__, "{\"t\":\"mem\",\"chat\":\"c1\",\"agent\":\"m0\",\"from\":\"h1\",\"after\":-1,"
                "\"step\":\"summary\",\"text\":\"x\",\"upto\":1}", "\"after\"");
  check_refused(__LINE__, "{\"t\":\"mem\",\"chat\":\"c1\",\"agent\":\"m.0\",\"from\":\"h1\",\"after\":1,"
                "\"step\":\"summary\",\"text\":\"x\",\"upto\":1}", "\"agent\"");
  check_refused(__LINE__, N "\"step\":\"rated\",\"ratings\":[[0,7]]}", "\"ratings\"");
  check_refused(__LINE__, N "\"step\":\"rated\",\"ratings\":[[1,11]]}", "\"ratings\"");
  check_refused(__LINE__, N "\"step\":\"rated\",\"ratings\":[[1,7,1]]}", "\"ratings\"");
  check_refused(__LINE__, I("{}"), "\"insights\"");
  check_refused(__LINE__, I("[{},{},{},{},{},{}]"), "\"insights\"");
  check_refused(__LINE__, I("[{\"text\":\"x\",\"sources\":[0],\"importance\":8}]"), "insight 0");
  check_refused(__LINE__, I("[{\"text\":\"x\",\"sources\":[],\"importance\":8},{\"text\":1,\"sources\":[],"
                            "\"importance\":8}]"), "insight 1");
  char many[2048] = I("[{\"text\":\"x\",\"importance\":8,\"sources\":[1");
  many[strlen(many) - 1] = '\0'; /* I() closed the record: the sources go on */
  for (int i = 0; i < WIRE_SOURCES_MAX; i++) strcat(many, ",1");
  strcat(many, "]}]}");
  check_refused(__LINE__, many, "insight 0");
  strcpy(many, N "\"step\":\"rated\",\"ratings\":[[1,7]");
  for (int i = 0; i < WIRE_RATINGS_MAX; i++) strcat(many, ",[1,7]");
  strcat(many, "]}");
  check_refused(__LINE__, many, "\"ratings\"");
  /* a kind this version does not know is refused as an earlier version refuses "mem" (mixed versions) */
  check_refused(__LINE__, "{\"t\":\"later\",\"chat\":\"c1\"}", "unknown type");
#undef I
#undef N
}

/* The stream's order as read (issue 28 item 12): a jump in stream seqs at the first delivery of a
 * consumer made from the next seq is the stream's own gap (skipped); any other jump may be a record
 * lost on the way, or passed by a live consumer when a subject was purged (a new consumer). */
static void order_tells_gaps_from_losses(void) {
  order o = {0};
  CHECK_INT(order_judge(&o, 1, "c1", 1, 0), ORDER_NEXT);
  order_take(&o, 1, "c1", 1);
  CHECK_INT(order_judge(&o, 1, "c1", 1, 0), ORDER_AGAIN);
  /* consecutive consumer seqs prove nothing: a purge moves a live consumer past records that exist */
  CHECK_INT(order_judge(&o, 3, "c1", 2, 0), ORDER_LOST);
  CHECK_INT(order_judge(&o, 3, "c1", 3, 0), ORDER_LOST);  /* consumer seq 2 never came */
  CHECK_INT(order_judge(&o, 3, "c2", 2, 0), ORDER_LOST);  /* another consumer: nothing known */
  CHECK_INT(order_judge(&o, 3, "c2", 1, 1), ORDER_WAIT);  /* a new one, not reported yet */
  order_made(&o, "c2", 2);
  CHECK_INT(order_judge(&o, 3, "c2", 1, 0), ORDER_GAP);   /* made from seq 2, its first is seq 3 */
  order_made(&o, "c3", 1);
  CHECK_INT(order_judge(&o, 3, "c3", 1, 0), ORDER_LOST);  /* made from another seq than the next */
  CHECK_INT(order_judge(&o, 3, NULL, 2, 0), ORDER_LOST);
}

/* Signatures: the key's over subject, id and bytes; a change to any of them, another key, none or a
 * malformed one is refused; a key under 16 bytes is refused naming the variable only. */
static void signatures_cover_subject_id_and_bytes(void) {
  sign_key *k = NULL, *other = NULL;
  ag_errmsg em = {{0}};
  setenv("AGORA_NATS_SIGNING_KEY", "0123456789abcdef-world-key", 1);
  CHECK_INT(sign_key_from_env(&k, &em), AG_OK);
  setenv("AGORA_NATS_SIGNING_KEY", "0123456789abcdef-other-key", 1);
  CHECK_INT(sign_key_from_env(&other, &em), AG_OK);
  setenv("AGORA_NATS_SIGNING_KEY", "too-short", 1);
  sign_key *weak = NULL;
  CHECK_INT(sign_key_from_env(&weak, &em), AG_ERR_INVALID);
  CHECK(strstr(em.text, "AGORA_NATS_SIGNING_KEY") && !strstr(em.text, "too-short"));
  unsetenv("AGORA_NATS_SIGNING_KEY");
  sign_key *none = (sign_key *)1;
  CHECK_INT(sign_key_from_env(&none, &em), AG_OK);
  CHECK(none == NULL);
  if (k && other) {
    char sig[SIGN_HEX], bad[SIGN_HEX];
    sign_record(k, "agora.w.c1.msg", "c1.x.1", "{}", 2, sig);
    CHECK_INT((int)strlen(sig), 64);
    CHECK_INT(sign_check(k, "agora.w.c1.msg", "c1.x.1", "{}", 2, sig), 1);
    CHECK_INT(sign_check(k, "agora.w.c2.msg", "c1.x.1", "{}", 2, sig), 0);
    CHECK_INT(sign_check(k, "agora.w.c1.msg", "c1.x.2", "{}", 2, sig), 0);
    CHECK_INT(sign_check(k, "agora.w.c1.msg", "c1.x.1", "{ }", 3, sig), 0);
    CHECK_INT(sign_check(k, "agora.w.c1.msg", "c1.x.1", "{}", 2, NULL), 0);
    CHECK_INT(sign_check(k, "agora.w.c1.msg", "c1.x.1", "{}", 2, "00"), 0);
    sign_record(other, "agora.w.c1.msg", "c1.x.1", "{}", 2, bad);
    CHECK_INT(sign_check(k, "agora.w.c1.msg", "c1.x.1", "{}", 2, bad), 0);
    /* fields cannot be moved into each other: subject "a", id "bc" is not subject "ab", id "c" */
    sign_record(k, "a", "bc", "", 0, sig);
    CHECK_INT(sign_check(k, "ab", "c", "", 0, sig), 0);
  }
  sign_key_free(k);
  sign_key_free(other);
}

SUITE_RUN((UNIT(subject_names_chat_and_type), UNIT(chat_records_round_trip),
  UNIT(memory_records_round_trip_and_refusals), UNIT(order_tells_gaps_from_losses),
  UNIT(signatures_cover_subject_id_and_bytes), UNIT(events_round_trip_and_refusals), UNIT(fuzz_finding_ts_16_digits),
  UNIT(numbers_exact_to_2p53_less_1), UNIT(encode_refuses_out_of_range), UNIT(decode_refuses_bad_numbers)))
