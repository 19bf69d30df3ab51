/* The bus, the agent and the world below the CLI: queued non-reentrant delivery in publish order and
 * phases, quietness, an agent driven through a fake host with no world, the prompt and its memory
 * window, and the world's events. */
#include "support/suite.h"
#include "support/tworld.h"
#include "support/unit.h"

#include "agents/agent.h"
#include "agents/prompt.h"
#include "world/world.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- bus ---- */

typedef struct recorder {
  bus *b;
  char log[1024];
  int republish; /* publish one more message from inside the handler */
} recorder;

static void rec_add(recorder *r, const char *s) {
  strncat(r->log, s, sizeof r->log - strlen(r->log) - 1);
}

static void rec_agents(void *ud, bus_topic topic, void *payload) {
  recorder *r = ud;
  if (topic == BUS_MESSAGE) {
    ag_msg *m = payload;
    rec_add(r, "A:");
    rec_add(r, m->text);
    rec_add(r, " ");
    if (r->republish && !strcmp(m->text, "one")) {
      ag_msg *x = ag_msg_new("bob", "inner", AG_KIND_AGENT);
      bus_publish_message(r->b, x);
      ag_msg_unref(x);
      rec_add(r, "(published) ");
    }
  } else {
    rec_add(r, "A:event ");
  }
}

static void rec_output(void *ud, bus_topic topic, void *payload) {
  recorder *r = ud;
  rec_add(r, "O:");
  rec_add(r, topic == BUS_MESSAGE ? ((ag_msg *)payload)->text : ev_kind_name(((bus_event *)payload)->ev.kind));
  rec_add(r, " ");
}

static void bus_order_phases_and_no_reentry(void) {
  struct event_base *base = event_base_new();
  bus *b = NULL;
  CHECK_INT(bus_new(base, &b), AG_OK);
  recorder r = {b, "", 1};
  /* Subscribed output first, agents second: phases decide the order, not subscription order. */
  CHECK_INT(bus_subscribe(b, BUS_MESSAGE | BUS_EVENT, BUS_PHASE_OUTPUT, rec_output, &r, NULL), AG_OK);
  CHECK_INT(bus_subscribe(b, BUS_MESSAGE, BUS_PHASE_AGENTS, rec_agents, &r, NULL), AG_OK);
  ag_msg *m1 = ag_msg_new("human", "one", AG_KIND_HUMAN);
  ag_msg *m2 = ag_msg_new("human", "two", AG_KIND_HUMAN);
  CHECK_INT(bus_publish_message(b, m1), AG_OK);
  bus_event *e = bus_event_new(&(world_event){EV_TITLE_UPDATED, .u.title = {"t"}});
  CHECK_INT(bus_publish_event(b, e), AG_OK);
  CHECK_INT(bus_publish_message(b, m2), AG_OK);
  /* Nothing is delivered from inside publish. */
  CHECK_STR(r.log, "");
  CHECK_INT(bus_pending(b), 3);
  event_base_loop(base, EVLOOP_NONBLOCK);
  CHECK_STR(r.log, "A:one (published) O:one O:title-updated A:two O:two A:inner O:inner ");
  CHECK_INT(bus_pending(b), 0);
  ag_msg_unref(m1);
  ag_msg_unref(m2);
  bus_event_unref(e);
  bus_free(b);
  event_base_free(base);
}

typedef struct unsub_ctx {
  bus *b;
  unsigned id;
  int calls;
} unsub_ctx;

static void unsub_self(void *ud, bus_topic topic, void *payload) {
  (void)topic;
  (void)payload;
  unsub_ctx *u = ud;
  u->calls++;
  bus_unsubscribe(u->b, u->id);
}

static void bus_unsubscribe_inside_handler(void) {
  struct event_base *base = event_base_new();
  bus *b = NULL;
  bus_new(base, &b);
  unsub_ctx u = {b, 0, 0};
  bus_subscribe(b, BUS_MESSAGE, BUS_PHASE_AGENTS, unsub_self, &u, &u.id);
  for (int i = 0; i < 3; i++) {
    ag_msg *m = ag_msg_new("human", "x", AG_KIND_HUMAN);
    bus_publish_message(b, m);
    ag_msg_unref(m);
  }
  event_base_loop(base, EVLOOP_NONBLOCK);
  CHECK_INT(u.calls, 1);
  bus_free(b); /* also frees anything still queued */
  event_base_free(base);
}

/* ---- an agent with a fake host: no world, no bus ---- */

typedef struct fake_host {
  char published[8][256];
  ag_kind kinds[8];
  ag_msg *msgs[8];
  int n;
  int thinking;
  char events[512];
} fake_host;

static int fh_publish(void *ctx, agent *a, const char *text, ag_kind kind, ag_msg **out) {
  fake_host *h = ctx;
  if (h->n >= 8) return AG_ERR_STATE;
  snprintf(h->published[h->n], sizeof h->published[0], "%s", text);
  h->kinds[h->n] = kind;
  h->msgs[h->n] = ag_msg_new(agent_id(a), text, kind);
  h->msgs[h->n]->seq = 100 + (uint64_t)h->n;
  *out = h->msgs[h->n];
  h->n++;
  return AG_OK;
}

static void fh_report(void *ctx, agent *a, const agent_report *ev) {
  (void)a;
  fake_host *h = ctx;
  static const char *names[] = {"start", "chunk", "done", "error", "turn-limit", "tool-call", "tool-result", "turn-end"};
  strncat(h->events, names[ev->kind], sizeof h->events - strlen(h->events) - 2);
  strcat(h->events, " ");
}

static void fh_phase(void *ctx, agent *a, agent_phase from, agent_phase to) {
  (void)a;
  (void)from;
  ((fake_host *)ctx)->thinking = to != AGENT_IDLE;
}

static const char *const *fh_ids(void *ctx, size_t *n) {
  (void)ctx;
  static const char *const ids[] = {"madame-pedagogue", "bob", "ann"};
  *n = 3;
  return ids;
}

static ag_msg *msg_from(const char *sender, const char *text, const char *const *ids, size_t n) {
  ag_msg *m = ag_msg_new(sender, text, ag_sender_kind(sender));
  mention_leading(text, ids, n, &m->leading);
  return m;
}

/* A script agent on host with the given replies (borrowed strings, copied by agent_new). */
static agent *script_agent(llm_client *llm, const agent_host *host, const char *name, char **replies, size_t n) {
  agent_settings s;
  agent_settings_init(&s);
  s.name = strdup(name);
  llm_script_reply typed[8] = {{0}};
  for (size_t i = 0; i < n && i < 8; i++) typed[i].text = replies[i];
  s.llm.script.replies = typed;
  s.llm.script.n_replies = n < 8 ? n : 8;
  agent *a = NULL;
  ag_errmsg em = {""};
  if (agent_new(&s, llm, host, &a, &em)) unit_fail_(__FILE__, __LINE__, "agent_new: %s", em.text);
  s.llm.script.replies = NULL;
  s.llm.script.n_replies = 0;
  agent_settings_free(&s);
  return a;
}

/* An agent's surroundings without a world: a loop, an LLM client and a fake host that records what the
 * agent does through it. */
typedef struct rig {
  struct event_base *base;
  llm_client *llm;
  fake_host h;
  agent_host host;
} rig;

static void rig_open(rig *r) {
  memset(r, 0, sizeof *r);
  r->base = event_base_new();
  llm_client_new(r->base, &r->llm);
  r->host = (agent_host){.ctx = &r->h, .publish = fh_publish, .report = fh_report, .phase = fh_phase, .ids = fh_ids};
}

/* Frees what the host kept (after the agent is gone), the client and the loop. */
static void rig_close(rig *r) {
  for (int i = 0; i < r->h.n; i++) ag_msg_unref(r->h.msgs[i]);
  llm_client_free(r->llm);
  event_base_free(r->base);
}

static void agent_answers_through_host(void) {
  rig r;
  rig_open(&r);
  char *replies[] = {"@madame-pedagogue Bonjour, class.", "   "};
  agent *a = script_agent(r.llm, &r.host, "Madame Pedagogue", replies, 2);
  CHECK_STR(agent_id(a), "madame-pedagogue");
  const char *ids[] = {"madame-pedagogue", "bob"};
  agent_rules rules = {2, 10, NULL, 0};

  /* Not addressed: nothing stored, nothing started. */
  ag_msg *m0 = msg_from("human", "@bob only you", ids, 2);
  CHECK_INT(agent_on_message(a, m0, &rules), TURN_SKIP);
  size_t n;
  agent_memory(a, &n);
  CHECK_INT(n, 0);
  CHECK(!agent_is_thinking(a));

  /* Addressed by display name: the answer comes from a later loop iteration, shaped (self-mention gone). */
  ag_msg *m1 = msg_from("bob", "@Madame Pedagogue, teach us", ids, 2);
  CHECK_INT(agent_on_message(a, m1, &rules), TURN_ANSWER);
  CHECK(agent_is_thinking(a) && r.h.thinking == 1);
  CHECK_INT(r.h.n, 0);
  event_base_loop(r.base, 0);
  CHECK_INT(r.h.n, 1);
  CHECK_STR(r.h.published[0], "@bob Bonjour, class.");
  CHECK(!agent_is_thinking(a) && r.h.thinking == 0);
  ag_msg *const *mem = agent_memory(a, &n);
  CHECK_INT(n, 2);
  CHECK(mem[0] == m1 && mem[1] == r.h.msgs[0]);
  CHECK_INT(agent_turn_state(a).count, 1);

  /* An empty reply publishes nothing, reports an error, and still counts. */
  ag_msg *m2 = msg_from("bob", "@madame-pedagogue again", ids, 2);
  CHECK_INT(agent_on_message(a, m2, &rules), TURN_ANSWER);
  event_base_loop(r.base, 0);
  CHECK_INT(r.h.n, 1);
  CHECK_INT(agent_turn_state(a).count, 2);
  CHECK(strstr(r.h.events, "error") != NULL);

  /* Over the limit: the notice, once. */
  ag_msg *m3 = msg_from("bob", "@madame-pedagogue and again", ids, 2);
  CHECK_INT(agent_on_message(a, m3, &rules), TURN_NOTICE);
  CHECK_INT(r.h.n, 2);
  CHECK_INT(r.h.kinds[1], AG_KIND_TURN_LIMIT);
  CHECK_STR(r.h.published[1], "@human Turn limit reached (2 LLM calls). Please take control of the conversation.");
  CHECK_INT(agent_on_message(a, m3, &rules), TURN_SKIP);
  CHECK_STR(r.h.events, "start done turn-end start done error turn-end turn-limit ");

  ag_msg *msgs[] = {m0, m1, m2, m3};
  for (int i = 0; i < 4; i++) ag_msg_unref(msgs[i]);
  agent_free(a);
  rig_close(&r);
}

/* Busy agents answer queued messages one at a time, in order; none is lost. */
static void agent_inbox_keeps_order(void) {
  rig r;
  rig_open(&r);
  char *replies[] = {"first answer", "second answer"};
  agent *a = script_agent(r.llm, &r.host, "ann", replies, 2);
  const char *ids[] = {"ann"};
  agent_rules rules = {5, 10, NULL, 0};
  ag_msg *m1 = msg_from("human", "@ann one", ids, 1);
  ag_msg *m2 = msg_from("world", "two", ids, 1);
  CHECK_INT(agent_on_message(a, m1, &rules), TURN_ANSWER);
  CHECK_INT(agent_on_message(a, m2, &rules), TURN_ANSWER);
  event_base_loop(r.base, 0);
  CHECK_INT(r.h.n, 2);
  CHECK_STR(r.h.published[0], "first answer");
  CHECK_STR(r.h.published[1], "second answer");
  size_t n;
  ag_msg *const *mem = agent_memory(a, &n);
  CHECK_INT(n, 4);
  CHECK(n == 4 && mem[0] == m1 && mem[1] == r.h.msgs[0] && mem[2] == m2 && mem[3] == r.h.msgs[1]);
  /* Cancelling drops the call: no publish afterwards. */
  ag_msg *m3 = msg_from("human", "@ann three", ids, 1);
  agent_on_message(a, m3, &rules);
  agent_cancel(a);
  event_base_loop(r.base, EVLOOP_NONBLOCK);
  CHECK_INT(r.h.n, 2);
  CHECK(!agent_is_thinking(a));
  ag_msg_unref(m1);
  ag_msg_unref(m2);
  ag_msg_unref(m3);
  agent_free(a);
  rig_close(&r);
}

/* The prompt ann builds from mem[0..n) with this window, as "role|content" lines, is want. */
static void check_prompt_roles(ag_msg *const *mem, size_t n, int window, const char *want) {
  llm_message *msgs = NULL;
  size_t k = 0;
  char *arena = NULL, got[1024] = "";
  CHECK_INT(prompt_build("You are ann.", "ann", mem, n, window, &msgs, &k, &arena), AG_OK);
  for (size_t i = 0, o = 0; i < k && o < sizeof got; i++)
    o += (size_t)snprintf(got + o, sizeof got - o, "%s|%s\n", msgs[i].role, msgs[i].content);
  CHECK_STR(got, want);
  free(msgs);
  free(arena);
}

static void prompt_memory_window(void) {
  ag_msg *mem[5];
  const char *senders[] = {"human", "ann", "bob", "ann", "world"};
  const char *texts[] = {"hello all", "hi human", "@ann what?", "@bob this.", "Night falls."};
  for (int i = 0; i < 5; i++) mem[i] = ag_msg_new(senders[i], texts[i], ag_sender_kind(senders[i]));
  llm_message *msgs = NULL;
  size_t n = 0;
  char *arena = NULL;
  CHECK_INT(prompt_build("You are ann.", "ann", mem, 5, 3, &msgs, &n, &arena), AG_OK);
  CHECK_INT(n, 4);
  CHECK_STR(msgs[0].role, "system");
  CHECK_STR(msgs[0].content, "You are ann.");
  CHECK_STR(msgs[1].role, "user");
  CHECK_STR(msgs[1].content, "bob: @ann what?");
  CHECK_STR(msgs[2].role, "assistant");
  CHECK_STR(msgs[2].content, "@bob this.");
  CHECK_STR(msgs[3].role, "user");
  CHECK_STR(msgs[3].content, "world: Night falls.");
  free(msgs);
  free(arena);
  /* No system prompt, window larger than memory: everything, oldest first. */
  CHECK_INT(prompt_build(NULL, "ann", mem, 5, 10, &msgs, &n, &arena), AG_OK);
  CHECK_INT(n, 5);
  CHECK_STR(msgs[0].content, "human: hello all");
  CHECK_STR(msgs[1].role, "assistant");
  free(msgs);
  free(arena);
  /* A window sliding onto ann's own reply opens on a user turn: the reply is named like the others. */
  check_prompt_roles(mem, 5, 2, "system|You are ann.\nuser|ann: @bob this.\nuser|world: Night falls.\n");
  check_prompt_roles(mem, 4, 3, "system|You are ann.\nuser|ann: hi human\nuser|bob: @ann what?\n"
                                "assistant|@bob this.\n");
  for (int i = 0; i < 5; i++) ag_msg_unref(mem[i]);
}

/* ---- the world ---- */

static void world_quiet_and_agents(void) {
  struct event_base *base = event_base_new();
  world *w = tworld_make(base, "{\"name\": \"W\", \"agents\": [{\"name\": \"ann\", \"replies\": [\"@bob hi\"]},"
                              " {\"name\": \"bob\", \"replies\": [\"fine\"]}]}");
  tworld_log s = {""};
  bus_subscribe(world_bus(w), BUS_MESSAGE | BUS_EVENT, BUS_PHASE_OUTPUT, tworld_record, &s, NULL);
  CHECK(world_is_quiet(w));
  CHECK_INT(world_publish(w, "human", "@ann start", NULL), AG_OK);
  CHECK(!world_is_quiet(w));
  CHECK_INT(world_run_until_quiet(w), AG_OK);
  CHECK(world_is_quiet(w));
  CHECK_STR(s.text, "1 human: @ann start\n-- llm-start\n-- llm-done\n2 ann: @bob hi\n-- turn-end\n"
                   "-- llm-start\n-- llm-done\n3 bob: @ann fine\n-- turn-end\n-- llm-start\n-- llm-done\n"
                   "4 ann: @bob hi\n-- turn-end\n-- llm-start\n-- llm-done\n5 bob: @ann fine\n-- turn-end\n"
                   "-- llm-start\n-- llm-done\n6 ann: @bob hi\n-- turn-end\n-- llm-start\n-- llm-done\n"
                   "7 bob: @ann fine\n-- turn-end\n-- llm-start\n-- llm-done\n8 ann: @bob hi\n-- turn-end\n"
                   "-- llm-start\n-- llm-done\n9 bob: @ann fine\n-- turn-end\n-- llm-start\n-- llm-done\n"
                   "10 ann: @bob hi\n-- turn-end\n-- llm-start\n-- llm-done\n11 bob: @ann fine\n-- turn-end\n"
                   "-- turn-limit\n12 ann: @human Turn limit reached (5 LLM calls). Please take "
                   "control of the conversation.\n-- turn-end\n");
  /* Adding and removing agents: ids are checked, events emitted, mentions resolve to the new agent. */
  s.text[0] = '\0';
  agent_settings st;
  agent_settings_init(&st);
  st.name = strdup("Carol");
  ag_errmsg em = {""};
  CHECK_INT(world_add_agent(w, &st, &em), AG_OK);
  CHECK_INT(world_add_agent(w, &st, &em), AG_ERR_EXISTS);
  CHECK(strstr(em.text, "carol") != NULL);
  agent_settings_free(&st);
  CHECK(world_agent_find(w, "CAROL") != NULL);
  CHECK_INT(world_publish(w, "human", "@carol speak", NULL), AG_OK);
  world_run_until_quiet(w);
  CHECK(strstr(s.text, "-- agent-added\n") != NULL);
  CHECK(strstr(s.text, "carol: (Carol has nothing to say)") != NULL);
  /* The words are made only for a scripted agent without replies: one with replies never says them, and
   * a million agents held 112 bytes each of them (issue 22). */
  CHECK(agent_settings_of(world_agent_find(w, "carol"))->llm.script.fallback != NULL);
  CHECK(agent_settings_of(world_agent_find(w, "ann"))->llm.script.n_replies > 0);
  CHECK(agent_settings_of(world_agent_find(w, "ann"))->llm.script.fallback == NULL);
  CHECK_INT(world_remove_agent(w, "Carol"), AG_OK);
  CHECK_INT(world_remove_agent(w, "Carol"), AG_ERR_NOT_FOUND);
  CHECK_INT(world_agent_count(w), 2);
  world_free(w);
  event_base_free(base);
}

typedef struct remover {
  world *w;
  size_t thinking_before, thinking_after;
  int messages;
} remover;

/* At the output phase of the first message, ann has started her call: remove her then. */
static void remove_on_first(void *ud, bus_topic topic, void *payload) {
  remover *r = ud;
  if (topic != BUS_MESSAGE) return;
  r->messages++;
  if (((ag_msg *)payload)->seq != 1) return;
  r->thinking_before = world_thinking(r->w);
  CHECK_INT(world_remove_agent(r->w, "ann"), AG_OK);
  r->thinking_after = world_thinking(r->w);
}

static void world_removing_a_thinking_agent(void) {
  struct event_base *base = event_base_new();
  world *w = tworld_make(base, "{\"name\": \"W\", \"agents\": [{\"name\": \"ann\", \"replies\": [\"a long reply in many words\"]}]}");
  remover r = {w, 0, 0, 0};
  bus_subscribe(world_bus(w), BUS_MESSAGE, BUS_PHASE_OUTPUT, remove_on_first, &r, NULL);
  world_publish(w, "human", "@ann go", NULL);
  CHECK_INT(world_run_until_quiet(w), AG_OK);
  CHECK_INT(r.thinking_before, 1);
  CHECK_INT(r.thinking_after, 0);
  CHECK_INT(r.messages, 1); /* her call was cancelled: no reply */
  world_free(w);
  event_base_free(base);
}

/* The script provider's replies are typed options: plain text, and tool calls with or without args
 * and text; the world file reads them and writes them back as they were. */
static void script_replies_round_trip(void) {
  const char *replies = "[\"plain\", {\"tool\": \"save_context\", \"args\": {\"notes\": [\"x\"]}, \"text\": \"t\"},"
                        " {\"tool\": \"load_context\"}]";
  char json[512];
  snprintf(json, sizeof json, "{\"name\": \"R\", \"agents\": [{\"name\": \"ann\", \"replies\": %s}]}", replies);
  cJSON *root = cJSON_Parse(json);
  world_spec spec;
  ag_errmsg em = {""};
  CHECK_INT(world_spec_from_json(root, "r.json", &spec, &em), AG_OK);
  const llm_script_options *o = &spec.agents[0].llm.script;
  CHECK_INT(o->n_replies, 3);
  CHECK_STR(o->replies[0].text, "plain");
  CHECK(o->replies[0].tool == NULL);
  CHECK_STR(o->replies[1].tool, "save_context");
  CHECK_STR(o->replies[1].args_json, "{\"notes\":[\"x\"]}");
  CHECK_STR(o->replies[1].text, "t");
  CHECK_STR(o->replies[2].tool, "load_context");
  CHECK(o->replies[2].args_json == NULL && o->replies[2].text == NULL);
  cJSON *back = world_agent_to_json(&spec.agents[0]);
  cJSON *want = cJSON_Parse(replies);
  CHECK(cJSON_Compare(cJSON_GetObjectItem(back, "replies"), want, 1));
  cJSON_Delete(want);
  cJSON_Delete(back);
  world_spec_free(&spec);
  cJSON_Delete(root);
}

/* Kinds and wire names map one to one; the bus's copy owns every string, a chunk ending at len. */
static void events_names_and_copies(void) {
  for (int k = 0; k < EV_KIND_COUNT; k++) {
    ev_kind back = EV_KIND_COUNT;
    CHECK_INT(ev_kind_parse(ev_kind_name((ev_kind)k), &back), AG_OK);
    CHECK_INT(back, k);
  }
  ev_kind none;
  CHECK_INT(ev_kind_parse("llm_chunk", &none), AG_ERR_NOT_FOUND);
  CHECK_STR(ev_kind_name(EV_LLM_CHUNK), "llm-chunk");
  CHECK_STR(ev_kind_name(EV_KIND_COUNT), "event");
  char agent[] = "bot", text[] = "hello world";
  bus_event *e = bus_event_new(&(world_event){EV_LLM_CHUNK, .u.llm_chunk = {agent, text, 5}});
  agent[0] = text[0] = 'X';
  CHECK_STR(e->ev.u.llm_chunk.agent, "bot");
  CHECK_STR(e->ev.u.llm_chunk.text, "hello");
  CHECK_INT(e->ev.u.llm_chunk.len, 5);
  CHECK_STR(world_event_agent(&e->ev), "bot");
  bus_event_unref(e);
  char n1[] = "bob", n2[] = "eve";
  const char *names[] = {n1, n2};
  e = bus_event_new(&(world_event){EV_UNKNOWN_MENTION, .u.unknown = {"human", names, 2, 7}});
  n1[0] = n2[0] = 'X';
  CHECK_STR(e->ev.u.unknown.names[0], "bob");
  CHECK_STR(e->ev.u.unknown.names[1], "eve");
  CHECK_STR(e->ev.u.unknown.sender, "human");
  CHECK(world_event_agent(&e->ev) == NULL);
  bus_event_unref(e);
  e = bus_event_new(&(world_event){EV_CHAT_DELETED, .u.chat = {"c1", NULL}});
  CHECK(e->ev.u.chat.current == NULL);
  bus_event_unref(e);
}

SUITE_RUN((UNIT(events_names_and_copies), UNIT(bus_order_phases_and_no_reentry), UNIT(bus_unsubscribe_inside_handler),
  UNIT(agent_answers_through_host), UNIT(agent_inbox_keeps_order), UNIT(prompt_memory_window),
  UNIT(script_replies_round_trip), UNIT(world_quiet_and_agents), UNIT(world_removing_a_thinking_agent)))
