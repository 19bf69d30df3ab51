/* A memory is rated once and a note is held once (docs/distributed.md "Memory across hosts"), driven
 * through the agent_host seam with no world: the first rating of a memory wins over a later one (another
 * host's); a rating call's answers go to the memories it asked about even when another host's rating of
 * one of them arrives while it is out; a model's answer without a number goes out as the fixed
 * importance; a note of the same text and time as one held is not added again. */
#include "support/suite.h"
#include "support/tagent.h"
#include "support/unit.h"
#include "support/wait.h"

#include "agents/agent.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rate_rig {
  struct event_base *base;
  llm_client *llm;
  agent_host host;
  agent *a;
  char rated[256]; /* the last AGENT_REPORT_RATED */
  ag_msg *out[4], *in[4];
  int n_out, n_in;
} rate_rig;

static int rr_publish(void *ctx, agent *a, const char *text, ag_kind kind, ag_msg **out) {
  rate_rig *r = ctx;
  if (r->n_out >= 4) return AG_ERR_STATE;
  *out = r->out[r->n_out++] = ag_msg_new(agent_id(a), text, kind);
  return AG_OK;
}

static void rr_report(void *ctx, agent *a, const agent_report *ev) {
  (void)a;
  rate_rig *r = ctx;
  if (ev->kind == AGENT_REPORT_RATED) snprintf(r->rated, sizeof r->rated, "%.*s", (int)ev->len, ev->text);
}

/* "ann", memory mode stream rated by its (scripted) model, with replies (borrowed); memories holds the
 * messages of seqs 1..memories before anything is said. */
static void rr_open(rate_rig *r, const llm_script_reply *replies, size_t n, int memories) {
  memset(r, 0, sizeof *r);
  r->base = event_base_new();
  llm_client_new(r->base, &r->llm);
  r->host = (agent_host){.ctx = r, .publish = rr_publish, .report = rr_report};
  agent_settings s;
  agent_settings_init(&s);
  s.name = strdup("ann");
  s.memory.mode = MEM_MODE_STREAM;
  s.memory.importance = MEM_IMPORTANCE_LLM;
  s.memory.reflect_at = 0;
  tagent_new(&s, replies, n, r->llm, &r->host, &r->a);
  for (int i = 1; i <= memories && r->a; i++) {
    ag_msg *m = ag_msg_new("bob", i == 1 ? "the dam broke" : "nice weather", AG_KIND_HUMAN);
    m->seq = (uint64_t)i;
    CHECK_INT(agent_memory_push(r->a, m), AG_OK);
    ag_msg_unref(m);
  }
}

static void rr_close(rate_rig *r) {
  agent_free(r->a);
  for (int i = 0; i < r->n_out; i++) ag_msg_unref(r->out[i]);
  for (int i = 0; i < r->n_in; i++) ag_msg_unref(r->in[i]);
  llm_client_free(r->llm);
  event_base_free(r->base);
}

/* "@ann hi" at seq: the turn starts with its rating call. */
static void rr_say(rate_rig *r, uint64_t seq) {
  static const char *const ids[] = {"ann"};
  ag_msg *m = ag_msg_new("human", "@ann hi", AG_KIND_HUMAN);
  m->seq = seq;
  mention_leading(m->text, ids, 1, &m->leading);
  r->in[r->n_in++] = m;
  agent_rules rules = {.turn_limit = 5, .memory_window = 10};
  CHECK_INT(agent_on_message(r->a, m, &rules), TURN_ANSWER);
}

static int rr_idle(void *arg) {
  rate_rig *r = arg;
  event_base_loop(r->base, EVLOOP_NONBLOCK);
  return agent_phase_of(r->a) == AGENT_IDLE;
}

/* The importance of the memory of message seq (0: none). */
static double importance_of(const agent *a, uint64_t seq) {
  const mem_stream *s = agent_memory_stream(a);
  for (size_t i = 0; i < s->n; i++)
    if (s->e[i].msg->seq == seq) return s->e[i].importance;
  return 0;
}

static void first_rating_wins(void) {
  rate_rig r;
  rr_open(&r, NULL, 0, 1);
  agent_memory_rate(r.a, 1, 9);
  agent_memory_rate(r.a, 1, 2); /* another host's, later in the stream */
  CHECK(importance_of(r.a, 1) == 9);
  rr_close(&r);
}

/* Asked about 1, 2 and the message 3; another host's rating of 1 arrives while the call is out. */
static void answers_go_to_the_asked(void) {
  static const llm_script_reply replies[] = {{.text = "8\n4\n6"}, {.text = "ok"}};
  rate_rig r;
  rr_open(&r, replies, 2, 2);
  rr_say(&r, 3);
  CHECK_INT(agent_phase_of(r.a), AGENT_REMEMBERING);
  agent_memory_rate(r.a, 1, 5);
  CHECK(wait_until(rr_idle, &r, 5000));
  CHECK(importance_of(r.a, 1) == 5 && importance_of(r.a, 2) == 4 && importance_of(r.a, 3) == 6);
  CHECK_STR(r.rated, "[[2,4],[3,6]]");
  rr_close(&r);
}

static void no_number_goes_out_fixed(void) {
  static const llm_script_reply replies[] = {{.text = "7\nunsure"}, {.text = "ok"}};
  rate_rig r;
  rr_open(&r, replies, 2, 1);
  rr_say(&r, 2);
  CHECK(wait_until(rr_idle, &r, 5000));
  CHECK_STR(r.rated, "[[1,7],[2,3]]");
  rr_close(&r);
}

static void a_note_is_held_once(void) {
  rate_rig r;
  rr_open(&r, NULL, 0, 0);
  CHECK_INT(agent_memory_note(r.a, "the bridge is shut", 9, 1000), AG_OK);
  CHECK_INT(agent_memory_note(r.a, "the bridge is shut", 7, 1000), AG_OK); /* the turn run again */
  CHECK_INT(agent_memory_stream(r.a)->n, 1);
  CHECK_INT(agent_memory_note(r.a, "the bridge is shut", 9, 2000), AG_OK); /* noted again later */
  CHECK_INT(agent_memory_note(r.a, "the ferry runs", 9, 1000), AG_OK);
  CHECK_INT(agent_memory_stream(r.a)->n, 3);
  rr_close(&r);
}

SUITE_RUN((UNIT(first_rating_wins), UNIT(answers_go_to_the_asked), UNIT(no_number_goes_out_fixed),
           UNIT(a_note_is_held_once)))
