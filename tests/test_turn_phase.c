/* An agent's turn as a state machine (agents/agent_phase.c), driven through the agent_host seam with
 * no world: every path a turn can take — an answer, a tool round, an approval allowed, denied or
 * withdrawn, a cancel during the call and during a tool round (an MCP call in flight on an in-test
 * transport), the turn limit, and the turns of a world spread over processes — with the phase and the
 * thinking count the host derives from the agent's phase reports, at each step. The table of moves in
 * docs/architecture.md is checked against the code's. */
#include "support/suite.h"
#include "support/tagent.h"
#include "support/unit.h"
#include "support/wait.h"

#include "agents/agent.h"
#include "mcp/client.h"

#include <cjson/cJSON.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a host that records every move ---- */

typedef struct fake_host {
  char path[512];     /* "queued:1 calling:1 idle:0 ": each move, with the thinking count after it */
  int thinking;       /* agents not idle, counted from phase reports as the world counts them */
  char results[512];  /* tool results, one per line */
  ag_msg *msgs[8];
  int n_published;
  int asked, withdrawn;
  int elsewhere;      /* turn_begin: another process answers */
  int defer_end;      /* turn_end: the end waits for agent_turn_done */
} fake_host;

static int fh_publish(void *ctx, agent *a, const char *text, ag_kind kind, ag_msg **out) {
  fake_host *h = ctx;
  if (h->n_published >= 8) return AG_ERR_STATE;
  ag_msg *m = ag_msg_new(agent_id(a), text, kind);
  m->seq = 100 + (uint64_t)h->n_published;
  *out = h->msgs[h->n_published++] = m;
  return AG_OK;
}

static void fh_report(void *ctx, agent *a, const agent_report *ev) {
  (void)a;
  fake_host *h = ctx;
  if (ev->kind != AGENT_REPORT_TOOL_RESULT) return;
  strncat(h->results, ev->text, sizeof h->results - strlen(h->results) - 2);
  strcat(h->results, "\n");
}

static void fh_phase(void *ctx, agent *a, agent_phase from, agent_phase to) {
  fake_host *h = ctx;
  if (from == to || agent_phase_of(a) != to) unit_fail_(__FILE__, __LINE__, "reported %d -> %d", from, to);
  if (from == AGENT_IDLE) h->thinking++;
  if (to == AGENT_IDLE) h->thinking--;
  size_t len = strlen(h->path);
  snprintf(h->path + len, sizeof h->path - len, "%s:%d ", agent_phase_name(to), h->thinking);
}

static int fh_approve(void *ctx, agent *a, const char *tool, const char *args_json, const char *question) {
  (void)a, (void)tool, (void)args_json, (void)question;
  ((fake_host *)ctx)->asked++;
  return AG_OK; /* pending: the test answers later */
}

static void fh_approve_cancel(void *ctx, agent *a) {
  (void)a;
  ((fake_host *)ctx)->withdrawn++;
}

static int fh_turn_begin(void *ctx, agent *a) {
  (void)a;
  return ((fake_host *)ctx)->elsewhere;
}

static int fh_turn_end(void *ctx, agent *a, const ag_msg *m) {
  (void)a, (void)m;
  return ((fake_host *)ctx)->defer_end;
}

typedef struct rig {
  struct event_base *base;
  llm_client *llm;
  fake_host h;
  agent_host host;
  agent *a;
  ag_msg *in[4];
  int n_in;
} rig;

/* An agent "ann" on the scripted provider with replies (borrowed) and the given built-in tools. */
static void rig_open(rig *r, const llm_script_reply *replies, size_t n, unsigned tools, unsigned approve) {
  memset(r, 0, sizeof *r);
  r->base = event_base_new();
  llm_client_new(r->base, &r->llm);
  r->host = (agent_host){.ctx = &r->h, .publish = fh_publish, .report = fh_report, .phase = fh_phase,
                         .approve = fh_approve, .approve_cancel = fh_approve_cancel,
                         .turn_begin = fh_turn_begin, .turn_end = fh_turn_end};
  agent_settings s;
  agent_settings_init(&s);
  s.name = strdup("ann");
  s.tools = tools;
  s.approve = approve;
  tagent_new(&s, replies, n, r->llm, &r->host, &r->a);
}

static void rig_close(rig *r) {
  agent_free(r->a);
  for (int i = 0; i < r->h.n_published; i++) ag_msg_unref(r->h.msgs[i]);
  for (int i = 0; i < r->n_in; i++) ag_msg_unref(r->in[i]);
  llm_client_free(r->llm);
  event_base_free(r->base);
}

/* Delivers text from sender (an agent's message counts against the turn limit) with seq. */
static turn_decision rig_say(rig *r, const char *sender, const char *text, uint64_t seq, int turn_limit) {
  static const char *const ids[] = {"ann", "bob"};
  ag_msg *m = ag_msg_new(sender, text, ag_sender_kind(sender));
  m->seq = seq;
  mention_leading(text, ids, 2, &m->leading);
  r->in[r->n_in++] = m;
  agent_rules rules = {.turn_limit = turn_limit, .memory_window = 10};
  return agent_on_message(r->a, m, &rules);
}

/* Runs what is ready on the loop until the agent's phase is want (5 s at most, stretched on slow builds:
 * a pass with nothing ready returns at once). */
static int rig_run_until(rig *r, agent_phase want) {
  for (long long end = now_ms() + wait_budget_ms(5000); agent_phase_of(r->a) != want && now_ms() < end;)
    event_base_loop(r->base, EVLOOP_NONBLOCK);
  return agent_phase_of(r->a) == want;
}

static const llm_script_reply tool_then_text[] = {{.tool = "load_context"}, {.text = "done"}};

/* ---- the paths ---- */

static void answer(void) {
  static const llm_script_reply replies[] = {{.text = "hello"}};
  rig r;
  rig_open(&r, replies, 1, 0, 0);
  CHECK_INT(agent_phase_of(r.a), AGENT_IDLE);
  CHECK_INT(rig_say(&r, "human", "@ann hi", 1, 5), TURN_ANSWER);
  CHECK_INT(agent_phase_of(r.a), AGENT_CALLING);
  CHECK(agent_is_thinking(r.a) && r.h.thinking == 1);
  CHECK(rig_run_until(&r, AGENT_IDLE));
  CHECK_STR(r.h.path, "queued:1 calling:1 idle:0 ");
  CHECK_INT(r.h.n_published, 1);
  CHECK(!agent_is_thinking(r.a) && r.h.thinking == 0);
  rig_close(&r);
}

/* A message that comes during a turn waits in the inbox; the next turn starts from queued, never
 * passing through idle (the world never sees the agent quiet in between). */
static void answers_queue_behind_a_turn(void) {
  static const llm_script_reply replies[] = {{.text = "one"}, {.text = "two"}};
  rig r;
  rig_open(&r, replies, 2, 0, 0);
  rig_say(&r, "human", "@ann first", 1, 5);
  rig_say(&r, "human", "@ann second", 2, 5);
  CHECK_INT(agent_phase_of(r.a), AGENT_CALLING);
  CHECK_STR(r.h.path, "queued:1 calling:1 ");
  CHECK(rig_run_until(&r, AGENT_IDLE));
  CHECK_STR(r.h.path, "queued:1 calling:1 queued:1 calling:1 idle:0 ");
  CHECK_INT(r.h.n_published, 2);
  rig_close(&r);
}

static void tool_round(void) {
  rig r;
  rig_open(&r, tool_then_text, 2, TOOL_BIT(TOOL_LOAD_CONTEXT), 0);
  rig_say(&r, "human", "@ann look", 1, 5);
  CHECK(rig_run_until(&r, AGENT_IDLE));
  CHECK_STR(r.h.path, "queued:1 calling:1 tool-round:1 calling:1 idle:0 ");
  CHECK(strstr(r.h.results, "\"version\"") != NULL);
  CHECK_INT(r.h.n_published, 1);
  CHECK_INT(r.h.thinking, 0);
  rig_close(&r);
}

/* The call needs approval: the turn waits, still thinking, until the host answers (allow or deny). */
static void approval(int allow) {
  rig r;
  rig_open(&r, tool_then_text, 2, TOOL_BIT(TOOL_LOAD_CONTEXT), TOOL_BIT(TOOL_LOAD_CONTEXT));
  rig_say(&r, "human", "@ann look", 1, 5);
  CHECK(rig_run_until(&r, AGENT_AWAITING_APPROVAL));
  CHECK_INT(r.h.asked, 1);
  CHECK_INT(r.h.thinking, 1);
  CHECK_STR(r.h.path, "queued:1 calling:1 tool-round:1 awaiting-approval:1 ");
  agent_approval_answer(r.a, allow, NULL);
  CHECK_INT(agent_phase_of(r.a), AGENT_CALLING); /* the round went on and sent its results back */
  CHECK(rig_run_until(&r, AGENT_IDLE));
  CHECK_STR(r.h.path, "queued:1 calling:1 tool-round:1 awaiting-approval:1 tool-round:1 calling:1 idle:0 ");
  CHECK(strstr(r.h.results, allow ? "\"version\"" : "denied") != NULL);
  CHECK_INT(r.h.withdrawn, 0);
  CHECK_INT(r.h.thinking, 0);
  rig_close(&r);
}
static void approval_allowed(void) { approval(1); }
static void approval_denied(void) { approval(0); }

/* Cancelled while waiting: the host is told to forget the question, and a late answer does nothing. */
static void approval_cancelled(void) {
  rig r;
  rig_open(&r, tool_then_text, 2, TOOL_BIT(TOOL_LOAD_CONTEXT), TOOL_BIT(TOOL_LOAD_CONTEXT));
  rig_say(&r, "human", "@ann look", 1, 5);
  CHECK(rig_run_until(&r, AGENT_AWAITING_APPROVAL));
  agent_cancel(r.a);
  CHECK_INT(agent_phase_of(r.a), AGENT_IDLE);
  CHECK_INT(r.h.withdrawn, 1);
  CHECK_INT(r.h.thinking, 0);
  agent_approval_answer(r.a, 1, NULL);
  CHECK_INT(agent_phase_of(r.a), AGENT_IDLE);
  CHECK_STR(r.h.path, "queued:1 calling:1 tool-round:1 awaiting-approval:1 idle:0 ");
  CHECK_STR(r.h.results, "");
  rig_close(&r);
}

static void cancel_during_call(void) {
  static const llm_script_reply replies[] = {{.text = "hello"}};
  rig r;
  rig_open(&r, replies, 1, 0, 0);
  rig_say(&r, "human", "@ann hi", 1, 5);
  rig_say(&r, "human", "@ann and this", 2, 5); /* waits in the inbox: dropped with the turn */
  CHECK_INT(agent_phase_of(r.a), AGENT_CALLING);
  agent_cancel(r.a);
  CHECK_INT(agent_phase_of(r.a), AGENT_IDLE);
  CHECK_INT(r.h.thinking, 0);
  event_base_loop(r.base, EVLOOP_NONBLOCK);
  CHECK_INT(r.h.n_published, 0);
  CHECK_STR(r.h.path, "queued:1 calling:1 idle:0 ");
  rig_close(&r);
}

/* Over the limit while answering: the notice goes out and the answer waiting in the inbox is dropped,
 * but the turn in flight ends as it will — the agent stays in its phase and keeps thinking. */
static void turn_limit(void) {
  static const llm_script_reply replies[] = {{.text = "@bob one"}, {.text = "@bob two"}};
  rig r;
  rig_open(&r, replies, 2, 0, 0);
  CHECK_INT(rig_say(&r, "bob", "@ann 1", 1, 2), TURN_ANSWER);
  CHECK_INT(rig_say(&r, "bob", "@ann 2", 2, 2), TURN_ANSWER);
  CHECK_INT(rig_say(&r, "bob", "@ann 3", 3, 2), TURN_NOTICE);
  CHECK_INT(agent_phase_of(r.a), AGENT_CALLING);
  CHECK_INT(r.h.thinking, 1);
  CHECK_INT(r.h.n_published, 1);
  CHECK_INT(r.h.msgs[0]->kind, AG_KIND_TURN_LIMIT);
  CHECK(rig_run_until(&r, AGENT_IDLE));
  CHECK_STR(r.h.path, "queued:1 calling:1 idle:0 ");
  CHECK_INT(r.h.n_published, 2); /* the one answer in flight; the queued one never started */
  CHECK_INT(rig_say(&r, "bob", "@ann 4", 4, 2), TURN_SKIP);
  CHECK_INT(agent_phase_of(r.a), AGENT_IDLE);
  rig_close(&r);
}

/* ---- a world spread over processes: the turn answered elsewhere, or its end awaiting confirmation ---- */

/* A rig whose agent would say "hello", handed "@ann hi" as turn 7 while another process answers it;
 * defer_end: its own end waits for the order. */
static void rig_open_elsewhere(rig *r, int defer_end) {
  static const llm_script_reply replies[] = {{.text = "hello"}};
  rig_open(r, replies, 1, 0, 0);
  r->h.elsewhere = 1;
  r->h.defer_end = defer_end;
  rig_say(r, "human", "@ann hi", 7, 5);
}

static void answered_elsewhere(void) {
  rig r;
  rig_open_elsewhere(&r, 0);
  CHECK_INT(agent_phase_of(r.a), AGENT_ELSEWHERE);
  CHECK_INT(r.h.thinking, 1);
  agent_turn_done(r.a, 6); /* another turn's end: ignored */
  CHECK_INT(agent_phase_of(r.a), AGENT_ELSEWHERE);
  agent_turn_done(r.a, 7);
  CHECK_INT(agent_phase_of(r.a), AGENT_IDLE);
  CHECK_STR(r.h.path, "queued:1 elsewhere:1 idle:0 ");
  event_base_loop(r.base, EVLOOP_NONBLOCK);
  CHECK_INT(r.h.n_published, 0); /* no call here */
  rig_close(&r);
}

/* The process that answered went away: this one resumes the turn, and its end waits for the order. */
static void resumed_here_then_confirmed(void) {
  rig r;
  rig_open_elsewhere(&r, 1);
  agent_turn_resume(r.a);
  CHECK_INT(agent_phase_of(r.a), AGENT_CALLING);
  CHECK(rig_run_until(&r, AGENT_ENDING));
  CHECK_INT(r.h.n_published, 1);
  CHECK_INT(r.h.thinking, 1); /* not quiet until the end is confirmed */
  agent_turn_resume(r.a);     /* over here already: nothing to resume */
  CHECK_INT(agent_phase_of(r.a), AGENT_ENDING);
  agent_turn_done(r.a, 7);
  CHECK_STR(r.h.path, "queued:1 elsewhere:1 calling:1 ending:1 idle:0 ");
  CHECK_INT(r.h.thinking, 0);
  rig_close(&r);
}

/* Another process finished the turn while this one waited for an approval: the question is withdrawn
 * and the next answer in the inbox starts. */
static void done_elsewhere_while_awaiting(void) {
  rig r;
  rig_open(&r, tool_then_text, 2, TOOL_BIT(TOOL_LOAD_CONTEXT), TOOL_BIT(TOOL_LOAD_CONTEXT));
  rig_say(&r, "human", "@ann look", 1, 5);
  CHECK(rig_run_until(&r, AGENT_AWAITING_APPROVAL));
  rig_say(&r, "human", "@ann next", 2, 5);
  agent_turn_done(r.a, 1);
  CHECK_INT(r.h.withdrawn, 1);
  CHECK_INT(agent_phase_of(r.a), AGENT_CALLING);
  CHECK_STR(r.h.path, "queued:1 calling:1 tool-round:1 awaiting-approval:1 queued:1 calling:1 ");
  agent_cancel(r.a);
  CHECK_INT(r.h.withdrawn, 1);
  rig_close(&r);
}

/* ---- a tool round that waits: an MCP call on an in-test transport ---- */

/* A server that answers the handshake and lists "echo", holds each tools/call until the test answers
 * it, and counts cancellations. Its answers come from the loop, as a real transport's do. */
typedef struct fake_mcp {
  mcp_transport t; /* first: the client calls through it */
  struct event_base *base;
  mcp_transport_sink sink;
  void *sink_ud;
  char call_id[32]; /* the held call's id as JSON ("" none) */
  int calls, cancelled;
} fake_mcp;

typedef struct fake_reply {
  fake_mcp *f;
  char json[512];
} fake_reply;

static void fake_deliver(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  fake_reply *r = arg;
  r->f->sink.on_message(r->f->sink_ud, r->json, strlen(r->json));
  free(r);
}

static void fake_reply_later(fake_mcp *f, const char *id, const char *result) {
  fake_reply *r = malloc(sizeof *r);
  r->f = f;
  snprintf(r->json, sizeof r->json, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}", id, result);
  struct timeval now = {0, 0};
  event_base_once(f->base, -1, EV_TIMEOUT, fake_deliver, r, &now);
}

static int fake_send(mcp_transport *t, const char *json, size_t len) {
  fake_mcp *f = (fake_mcp *)t;
  cJSON *m = cJSON_ParseWithLength(json, len);
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(m, "method");
  char *id = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(m, "id"));
  const char *name = cJSON_IsString(method) ? method->valuestring : "";
  if (!strcmp(name, "initialize"))
    fake_reply_later(f, id, "{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{\"tools\":{}},"
                            "\"serverInfo\":{\"name\":\"fake\",\"version\":\"1\"}}");
  else if (!strcmp(name, "tools/list"))
    fake_reply_later(f, id, "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}]}");
  else if (!strcmp(name, "tools/call"))
    snprintf(f->call_id, sizeof f->call_id, "%s", id), f->calls++;
  else if (!strcmp(name, "notifications/cancelled"))
    f->cancelled++;
  free(id);
  cJSON_Delete(m);
  return AG_OK;
}

static void fake_close(mcp_transport *t) { (void)t; }

static const mcp_transport_ops fake_ops = {.send = fake_send, .close = fake_close};

static int fake_connect(void *ud, struct event_base *base, const mcp_transport_sink *sink, void *sink_ud,
                        mcp_transport **out, ag_errmsg *em) {
  (void)em;
  fake_mcp *f = ud;
  f->t.ops = &fake_ops;
  f->base = base;
  f->sink = *sink;
  f->sink_ud = sink_ud;
  *out = &f->t;
  return AG_OK;
}

/* Runs what is ready on the loop until *flag reaches want (bounded, as rig_run_until). */
static int spin_until(struct event_base *base, const int *flag, int want) {
  for (long long end = now_ms() + wait_budget_ms(5000); *flag < want && now_ms() < end;)
    event_base_loop(base, EVLOOP_NONBLOCK);
  return *flag >= want;
}

/* A rig whose agent calls the tool "echo" of an MCP server behind the fake transport f, then says
 * "done"; the client is the caller's to free (before rig_close). */
static mcp_client *rig_open_echo(rig *r, fake_mcp *f) {
  static const llm_script_reply replies[] = {{.tool = "echo"}, {.text = "done"}};
  rig_open(r, replies, 2, 0, 0);
  mcp_client *c = NULL;
  mcp_client_config cfg = {.name = "s", .version = "test", .connect = fake_connect, .connect_ud = f};
  CHECK_INT(mcp_client_new(r->base, &cfg, NULL, &c), AG_OK);
  mcp_client_start(c);
  agent_mcp_tool tool = {.name = "echo", .server = "s", .tool = "echo", .description = "", .schema = "{}", .client = c};
  CHECK_INT(agent_set_mcp_tools(r->a, &(agent_mcp_set){.tools = &tool, .n = 1}), AG_OK);
  return c;
}

/* Says text to the echo rig as turn seq (limit 5): its call number n is out, the agent in tool-round. */
static void echo_call_out(rig *r, fake_mcp *f, const char *text, uint64_t seq, int n) {
  rig_say(r, "human", text, seq, 5);
  CHECK(spin_until(r->base, &f->calls, n));
  CHECK_INT(agent_phase_of(r->a), AGENT_TOOL_ROUND);
}

static void tool_round_waits_then_cancel(void) {
  rig r;
  fake_mcp f = {.calls = 0};
  mcp_client *c = rig_open_echo(&r, &f);
  /* Answered: the round waits in tool-round, thinking, and goes on when the result comes. */
  echo_call_out(&r, &f, "@ann echo", 1, 1);
  CHECK_INT(r.h.thinking, 1);
  fake_reply_later(&f, f.call_id, "{\"content\":[{\"type\":\"text\",\"text\":\"echoed\"}]}");
  CHECK(rig_run_until(&r, AGENT_IDLE));
  CHECK_STR(r.h.path, "queued:1 calling:1 tool-round:1 calling:1 idle:0 ");
  CHECK(strstr(r.h.results, "echoed") != NULL);
  /* Cancelled while the call is out: idle at once, and the server is told. */
  r.h.path[0] = '\0';
  echo_call_out(&r, &f, "@ann echo again", 3, 2);
  agent_cancel(r.a);
  CHECK_INT(agent_phase_of(r.a), AGENT_IDLE);
  CHECK_INT(r.h.thinking, 0);
  CHECK(spin_until(r.base, &f.cancelled, 1));
  CHECK_STR(r.h.path, "queued:1 calling:1 tool-round:1 idle:0 ");
  mcp_client_free(c);
  rig_close(&r);
}

/* Another process finished the turn while this one waited for an MCP result (the agent was taken over
 * and the first owner's end came back): the call is withdrawn, and nothing of it comes back later. */
static void done_elsewhere_during_mcp_call(void) {
  rig r;
  fake_mcp f = {.calls = 0};
  mcp_client *c = rig_open_echo(&r, &f);
  echo_call_out(&r, &f, "@ann echo", 1, 1);
  agent_turn_done(r.a, 1);
  CHECK_INT(agent_phase_of(r.a), AGENT_IDLE);
  CHECK(spin_until(r.base, &f.cancelled, 1)); /* the server is told */
  if (f.cancelled) { /* else the late answer below would resume a round that is gone */
    fake_reply_later(&f, f.call_id, "{\"content\":[{\"type\":\"text\",\"text\":\"late\"}]}");
    for (int i = 0; i < 100; i++) event_base_loop(r.base, EVLOOP_NONBLOCK);
  }
  CHECK_INT(agent_phase_of(r.a), AGENT_IDLE);
  CHECK_STR(r.h.path, "queued:1 calling:1 tool-round:1 idle:0 ");
  CHECK_STR(r.h.results, "");
  mcp_client_free(c);
  rig_close(&r);
}

/* ---- the table ---- */

/* The section "An agent's turn" of docs/architecture.md lists exactly the moves the code allows, one
 * "| `from` | `to` | ..." row each. */
static void docs_table_is_the_code_table(void) {
  char *doc = unit_read_file(unit_src_path("docs/architecture.md"));
  CHECK(doc != NULL);
  const char *sec = doc ? strstr(doc, "\n## An agent's turn") : NULL;
  CHECK(sec != NULL);
  int seen[AGENT_PHASE_COUNT][AGENT_PHASE_COUNT] = {{0}};
  for (const char *line = sec; line && (line = strchr(line + 1, '\n'));) {
    if (!strncmp(line, "\n## ", 4)) break;
    char from[32], to[32];
    if (sscanf(line, "\n| `%31[a-z-]` | `%31[a-z-]` |", from, to) != 2) continue;
    int f = -1, t = -1;
    for (int p = 0; p < AGENT_PHASE_COUNT; p++) {
      if (!strcmp(agent_phase_name((agent_phase)p), from)) f = p;
      if (!strcmp(agent_phase_name((agent_phase)p), to)) t = p;
    }
    if (f < 0 || t < 0) unit_fail_(__FILE__, __LINE__, "docs: unknown phase in %s -> %s", from, to);
    else seen[f][t]++;
  }
  for (int f = 0; f < AGENT_PHASE_COUNT; f++)
    for (int t = 0; t < AGENT_PHASE_COUNT; t++)
      if (seen[f][t] != agent_phase_can((agent_phase)f, (agent_phase)t))
        unit_fail_(__FILE__, __LINE__, "%s -> %s: %d rows in the docs, code says %s", agent_phase_name((agent_phase)f),
                   agent_phase_name((agent_phase)t), seen[f][t], agent_phase_can((agent_phase)f, (agent_phase)t) ? "legal" : "illegal");
  CHECK_STR(agent_phase_name(AGENT_AWAITING_APPROVAL), "awaiting-approval");
  CHECK_STR(agent_phase_name(AGENT_PHASE_COUNT), "phase");
  free(doc);
}

SUITE_RUN((UNIT(answer), UNIT(answers_queue_behind_a_turn), UNIT(tool_round), UNIT(approval_allowed),
  UNIT(approval_denied), UNIT(approval_cancelled), UNIT(cancel_during_call), UNIT(turn_limit), UNIT(answered_elsewhere),
  UNIT(resumed_here_then_confirmed), UNIT(done_elsewhere_while_awaiting), UNIT(tool_round_waits_then_cancel),
  UNIT(done_elsewhere_during_mcp_call), UNIT(docs_table_is_the_code_table)))
