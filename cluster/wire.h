/* The records a world spread over NATS keeps in its JetStream stream (docs/distributed.md): a message
 * of a chat, the end of an agent's turn, a failure reported where an agent runs (an event), a chat
 * record (a title given by hand, or a chat deleted: a tombstone), and a memory step (a note, a
 * reflection's insights, a model's summary) made where an agent runs. One JSON object each; nothing secret is
 * ever in them.
 * Pure: no I/O, so the parser is fuzzed (fuzz/fuzz_record.c). */
#ifndef AG_CLUSTER_WIRE_H
#define AG_CLUSTER_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "agents/msg.h"

/* Longest chat id and agent id a record may carry (the subject holds the chat id). */
#define WIRE_ID_MAX 64
/* Largest record accepted (a message's text and its envelope). */
#define WIRE_MAX (1u << 20)

typedef enum wire_type { WIRE_MSG = 1, WIRE_TURN_END = 2, WIRE_EVENT = 3, WIRE_CHAT = 4, WIRE_MEMORY = 5 } wire_type;

/* A memory record's step. */
typedef enum wire_mem { WIRE_MEM_NOTE = 1, WIRE_MEM_REFLECTION = 2, WIRE_MEM_SUMMARY = 3, WIRE_MEM_RATED = 4 } wire_mem;
/* A reflection's insights and each insight's sources, at most (what an agent makes: agent_reflect.c). */
#define WIRE_INSIGHTS_MAX 5
#define WIRE_SOURCES_MAX 100
/* The ratings of one rating call, at most (agent_rate.c's batch). */
#define WIRE_RATINGS_MAX 50

/* A decoded record; strings point into its own storage (wire_record_free). */
typedef struct wire_record {
  wire_type type;
  char chat[WIRE_ID_MAX];
  /* WIRE_MSG */
  char *sender, *text;
  ag_kind kind;
  int64_t ts_ms;
  int has_sim;
  int64_t sim_ms;
  /* WIRE_TURN_END: agent's turn answering the chat's message trigger ended; counter: its script position */
  char agent[WIRE_ID_MAX];
  uint64_t trigger;
  uint64_t counter;
  /* WIRE_EVENT: ev is EV_LLM_ERROR (agent; text: the error; has_info: the provider's http_status,
   * attempts, error_type) or EV_MCP_ERROR (sender: the server; text: the error); origin: the process
   * (control_host_id) that reported it, which shows it already */
  int ev;
  int has_info;
  long http_status;
  int attempts;
  char *error_type;
  char origin[WIRE_ID_MAX];
  /* WIRE_CHAT: deleted 1 (a tombstone), or text: the chat's title given by hand and ts_ms its creation
   * time; origin: the process that recorded it (it purges a deleted chat's records from the stream) */
  int deleted;
  /* WIRE_MEMORY: agent's step mem, made in process origin, after the chat's message after_seq. A note:
   * text, importance (1..10), ts_ms when it happened. A reflection: text its insights as a JSON array
   * [{"text", "sources": [seq...], "importance"}] (at most WIRE_INSIGHTS_MAX of WIRE_SOURCES_MAX
   * sources each; decoded, it holds those fields only), ts_ms when. A summary: text, upto (the memory
   * entries it covers). Ratings (importance "llm"): text [[seq, importance 1..10]...] as JSON, at most
   * WIRE_RATINGS_MAX. */
  wire_mem mem;
  double importance;
  uint64_t after_seq, upto;
} wire_record;

/* Encodes r as JSON (caller frees *out, *len its length without the NUL); numbers as exact integers.
 * AG_ERR_INVALID when a number is outside what wire_decode accepts (ts 0..2^53-1, sim -(2^53-1)..2^53-1,
 * trigger 1..2^53-1, counter 0..2^53-1: 2^53 is also what 2^53+1 reads as). Strings go as their bytes,
 * invalid UTF-8 included: the local store keeps a message's text as it came, and every node must read
 * back the same bytes. */
int wire_encode(const wire_record *r, char **out, size_t *len);
/* Decodes data[0..len): AG_ERR_INVALID (em says why) for anything malformed, AG_ERR_TOO_BIG past WIRE_MAX.
 * On success release r with wire_record_free. */
int wire_decode(const char *data, size_t len, wire_record *r, ag_errmsg *em);
void wire_record_free(wire_record *r);

/* The last token of the subject a record of type t is published on: agora.<world>.<chat>.<token>. */
const char *wire_subject_token(wire_type t);
/* AG_OK when subject is exactly prefix "." r->chat "." wire_subject_token(r->type): a record that
 * names another chat than its subject would move every process to that chat, and a filter or a NATS
 * permission on the subject would not apply to it. AG_ERR_INVALID (em says what differs) otherwise. */
int wire_subject_check(const wire_record *r, const char *prefix, const char *subject, ag_errmsg *em);

/* 1 when s may stand in a NATS subject token and a de-duplication id: 1..WIRE_ID_MAX-1 bytes of
 * letters, digits, '-' and '_'. */
int wire_id_ok(const char *s);

#endif
