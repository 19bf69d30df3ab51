/* Tools and the event thread (issue 7), offline on the script provider: the context reduction, the
 * built-in tools, the round limit, approvals answered at once, bad tool calls, the degraded inline mode,
 * and the stored state — rising versions, surviving a restart and a snapshot, and rebuilt exactly by
 * reducing the chat's event thread. Approvals that wait, and ask_human, are in test_tool_approval. */
#include "support/proc.h"
#include "support/reduce.h"
#include "support/suite.h"
#include "support/tsession.h"
#include "support/ttools.h"
#include "support/tworld.h"
#include "support/unit.h"

#include "agents/context.h"
#include "agents/tools.h"
#include "chat/session.h"
#include "chat/snapshot.h"
#include "storage/store.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void context_accumulates_and_drops(void) {
  context_state st;
  CHECK_INT(context_init(&st), AG_OK);
  cJSON *a1 = cJSON_Parse("{\"message\": \"hi\", \"topics\": [\"a\", \"b\"], \"mood\": \"calm\"}");
  cJSON *a2 = cJSON_Parse("{\"topics\": [\"b\", \"c\"], \"notes\": [\"n1\"], \"mood\": \"busy\"}");
  cJSON *a3 = cJSON_Parse("{\"drop\": {\"topics\": [\"a\"], \"notes\": [\"zzz\"]}}");
  CHECK_INT(context_apply(&st, a1, 1000), AG_OK);
  CHECK_INT(context_apply(&st, a2, 2000), AG_OK);
  CHECK_INT(context_apply(&st, a3, 3000), AG_OK);
  CHECK_INT(st.version, 3);
  CHECK_INT(st.updated_at_ms, 3000);
  char *d = cJSON_PrintUnformatted(st.data);
  CHECK_STR(d, "{\"topics\":[\"b\",\"c\"],\"mood\":\"busy\",\"notes\":[\"n1\"]}");
  free(d);
  cJSON *bad = cJSON_Parse("[1]");
  CHECK_INT(context_apply(&st, bad, 4000), AG_ERR_INVALID);
  CHECK_INT(st.version, 3); /* unchanged */
  cJSON *j = context_to_json(&st);
  context_state back;
  CHECK_INT(context_from_json(j, &back), AG_OK);
  CHECK_INT(back.version, 3);
  CHECK_INT(back.updated_at_ms, 3000);
  CHECK(cJSON_Compare(back.data, st.data, 1));
  context_free(&back);
  cJSON_Delete(j);
  cJSON *arr[] = {a1, a2, a3, bad};
  for (int i = 0; i < 4; i++) cJSON_Delete(arr[i]);
  context_free(&st);
}

static void tool_arguments_checked(void) {
  char err[128];
  cJSON *out = NULL;
  CHECK_INT(tool_args_parse(TOOL_SAVE_CONTEXT, "{\"message\": \"m\", \"topics\": [\"x\"]}", &out, err, sizeof err), AG_OK);
  cJSON_Delete(out);
  CHECK_INT(tool_args_parse(TOOL_SAVE_CONTEXT, "{\"topics\": \"x\"}", &out, err, sizeof err), AG_ERR_INVALID);
  CHECK_STR(err, "topics must be an array of strings");
  CHECK_INT(tool_args_parse(TOOL_SAVE_CONTEXT, "{\"message\": 5}", &out, err, sizeof err), AG_ERR_INVALID);
  CHECK_INT(tool_args_parse(TOOL_SAVE_CONTEXT, "not json", &out, err, sizeof err), AG_ERR_INVALID);
  CHECK_STR(err, "arguments must be a JSON object");
  CHECK_INT(tool_args_parse(TOOL_SEND_MESSAGE, "{\"to\": [], \"text\": \"x\"}", &out, err, sizeof err), AG_ERR_INVALID);
  CHECK_INT(tool_args_parse(TOOL_SEND_MESSAGE, "{\"to\": [\"bob\"]}", &out, err, sizeof err), AG_ERR_INVALID);
  CHECK_INT(tool_args_parse(TOOL_ASK_HUMAN, "{\"question\": \"\"}", &out, err, sizeof err), AG_ERR_INVALID);
  CHECK_STR(err, "question must be a non-empty string");
  CHECK_INT(tool_args_parse(TOOL_ASK_HUMAN, "{}", &out, err, sizeof err), AG_ERR_INVALID);
  CHECK_INT(tool_args_parse(TOOL_LOAD_CONTEXT, "", &out, err, sizeof err), AG_OK);
  cJSON_Delete(out);
  tool_id id;
  CHECK_INT(tool_parse("send_message", &id), AG_OK);
  CHECK_INT(id, TOOL_SEND_MESSAGE);
  CHECK_INT(tool_parse("rm_rf", &id), AG_ERR_INVALID);
  cJSON *args = NULL;
  char *rest = NULL;
  CHECK_INT(tool_inline_extract("Sure.\n```json\n{\"topics\": [\"t\"]}\n```\n", &args, &rest), AG_OK);
  CHECK_STR(rest, "Sure.\n\n");
  CHECK(cJSON_IsArray(cJSON_GetObjectItem(args, "topics")));
  cJSON_Delete(args);
  free(rest);
  CHECK_INT(tool_inline_extract("no block here", &args, &rest), AG_ERR_NOT_FOUND);
}

/* ---- in a world, with storage ---- */

static const char *KEEPER =
  "{\"name\": \"K\", \"turn_limit\": 5, \"agents\": [{\"name\": \"keeper\", \"monadic\": true, \"replies\": ["
  "{\"tool\": \"load_context\"},"
  "{\"tool\": \"save_context\", \"args\": {\"message\": \"one\", \"topics\": [\"a\"]}},"
  "{\"tool\": \"load_context\"},"
  "{\"tool\": \"save_context\", \"args\": {\"message\": \"two\", \"topics\": [\"b\"], \"notes\": [\"n\"]}},"
  "{\"tool\": \"save_context\", \"args\": {\"message\": \"three\", \"drop\": {\"topics\": [\"a\"]}}}]}]}";

typedef tsession fx;

static void fx_open(fx *f, const char *json) { tsession_open(f, json); }

/* A restart, resumed: the agents hold the stored chat again. */
static void fx_restart(fx *f, const char *json) {
  tsession_restart(f, json);
  CHECK_INT(chat_session_resume(f->cs, NULL), AG_OK);
}

static void fx_close(fx *f) { tsession_close(f); }
static void say(fx *f, const char *text) { tsession_say(f, "human", text); }

typedef struct stored_ctx_q {
  const char *chat, *agent;
  store_context c;
  int found;
} stored_ctx_q;

static int ctx_txn(store_txn *t, void *arg) {
  stored_ctx_q *q = arg;
  int rc = store_context_get(t, q->chat, q->agent, &q->c);
  q->found = rc == AG_OK;
  return rc == AG_ERR_NOT_FOUND ? AG_OK : rc;
}

/* The stored context of agent in chat as a context_state (caller frees); version 0 when none. */
static context_state stored_context(fx *f, const char *chat, const char *agent) {
  stored_ctx_q q = {chat, agent, {0}, 0};
  context_state cs;
  context_init(&cs);
  store_read(f->st, ctx_txn, &q, NULL);
  if (q.found) {
    cs.version = q.c.version;
    cs.updated_at_ms = q.c.updated_at_ms;
    cJSON_Delete(cs.data);
    cs.data = cJSON_Parse(q.c.data_json);
    store_context_free(&q.c);
  }
  return cs;
}

/* The event thread reduced (support/reduce.h). */
typedef struct reduce_q {
  const char *chat, *agent;
  context_state *st;
} reduce_q;

static int reduce_txn(store_txn *t, void *arg) {
  reduce_q *q = arg;
  return reduce_thread_txn(t, q->chat, q->agent, q->st);
}

static context_state reduce_thread(fx *f, const char *chat, const char *agent) {
  context_state st;
  context_init(&st);
  reduce_q q = {chat, agent, &st};
  CHECK_INT(store_read(f->st, reduce_txn, &q, NULL), AG_OK);
  return st;
}

static void context_over_turns_restart_snapshot_and_thread(void) {
  fx f;
  fx_open(&f, KEEPER);
  chat_session_new(f.cs, NULL);
  char chat[STORE_ID_MAX];
  snprintf(chat, sizeof chat, "%s", chat_session_current(f.cs));
  say(&f, "@keeper first");
  CHECK(strstr(f.log.text, "keeper: one\n") != NULL);
  context_state s1 = stored_context(&f, chat, "keeper");
  CHECK_INT(s1.version, 1);
  say(&f, "@keeper second");
  CHECK(strstr(f.log.text, "keeper: two\n") != NULL);
  context_state s2 = stored_context(&f, chat, "keeper");
  CHECK_INT(s2.version, 2);
  char *d = cJSON_PrintUnformatted(s2.data);
  CHECK_STR(d, "{\"topics\":[\"a\",\"b\"],\"notes\":[\"n\"]}");
  free(d);
  /* The agent's own view matches storage exactly. */
  CHECK(reduce_same_context(agent_context(world_agent_find(f.w, "keeper")), &s2));
  /* A restart: the context comes back, and the next turn builds on it. */
  fx_restart(&f, KEEPER);
  CHECK(reduce_same_context(agent_context(world_agent_find(f.w, "keeper")), &s2));
  say(&f, "@keeper third"); /* the script goes on: save_context drops "a" */
  context_state s3 = stored_context(&f, chat, "keeper");
  CHECK_INT(s3.version, 3);
  d = cJSON_PrintUnformatted(s3.data);
  CHECK_STR(d, "{\"topics\":[\"b\"],\"notes\":[\"n\"]}");
  free(d);
  /* Reducing the event thread rebuilds exactly the stored state. */
  context_state r3 = reduce_thread(&f, chat, "keeper");
  CHECK(reduce_same_context(&r3, &s3));
  /* Snapshot round trip: the imported chat has the same context and thread, and restores it. */
  cJSON *snap = NULL;
  CHECK_INT(chat_snapshot_export(f.st, chat, &snap, NULL), AG_OK);
  CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(snap, "thread")) >= 10);
  char imported[STORE_ID_MAX];
  ag_errmsg em = {""};
  CHECK_INT(chat_snapshot_import(f.st, snap, "snap", imported, &em), AG_OK);
  context_state si = stored_context(&f, imported, "keeper");
  CHECK(reduce_same_context(&si, &s3));
  context_state ri = reduce_thread(&f, imported, "keeper");
  CHECK(reduce_same_context(&ri, &s3));
  CHECK_INT(chat_session_load(f.cs, imported, NULL), AG_OK);
  CHECK(reduce_same_context(agent_context(world_agent_find(f.w, "keeper")), &s3));
  /* A new chat (reusing nothing: this one is titled) starts from an empty context. */
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  CHECK_INT(agent_context(world_agent_find(f.w, "keeper"))->version, 0);
  context_state *all[] = {&s1, &s2, &s3, &r3, &si, &ri};
  for (int i = 0; i < 6; i++) context_free(all[i]);
  cJSON_Delete(snap);
  fx_close(&f);
}

/* A model that never stops calling tools: 8 rounds, then the turn ends; it counts as one turn. */
static void round_limit(void) {
  fx f;
  fx_open(&f, "{\"name\": \"R\", \"agents\": [{\"name\": \"loopy\", \"tools\": [\"load_context\"],"
              " \"replies\": [{\"tool\": \"load_context\", \"text\": \"thinking\"}]}]}");
  say(&f, "@loopy go");
  CHECK_INT(ttools_count(f.log.text, "-- llm-start\n"), 1 + TOOL_MAX_ROUNDS);
  CHECK_INT(ttools_count(f.log.text, "-- tool-result\n"), TOOL_MAX_ROUNDS);
  CHECK_INT(ttools_count(f.log.text, "-- llm-error\n"), 1);
  CHECK(strstr(f.log.text, "loopy: thinking\n") != NULL); /* the text of the last round is still published */
  CHECK_INT(agent_turn_state(world_agent_find(f.w, "loopy")).count, 1);
  CHECK(world_is_quiet(f.w));
  fx_close(&f);
}

/* Unknown tools, tools the agent was not given and invalid arguments are error results, not crashes;
 * the model then answers in text. */
static void bad_tool_calls_become_error_results(void) {
  fx f;
  fx_open(&f, "{\"name\": \"B\", \"agents\": [{\"name\": \"bad\", \"tools\": [\"save_context\"], \"replies\": ["
              "{\"tool\": \"rm_rf\", \"args\": {\"path\": \"/\"}},"
              "{\"tool\": \"send_message\", \"args\": {\"to\": [\"x\"], \"text\": \"y\"}},"
              "{\"tool\": \"save_context\", \"args\": {\"topics\": \"not a list\"}},"
              "\"All my tool calls failed.\"]}]}");
  ttools_result_grab g = {{{0}}, 0};
  bus_subscribe(world_bus(f.w), BUS_EVENT, BUS_PHASE_OUTPUT, ttools_grab_results, &g, NULL);
  say(&f, "@bad try");
  CHECK_INT(g.n, 3);
  CHECK_STR(g.results[0], "{\"error\":\"unknown tool 'rm_rf'\"}");
  CHECK_STR(g.results[1], "{\"error\":\"unknown tool 'send_message'\"}");
  CHECK_STR(g.results[2], "{\"error\":\"invalid arguments: topics must be an array of strings\"}");
  CHECK(strstr(f.log.text, "bad: All my tool calls failed.\n") != NULL);
  CHECK_INT(agent_context(world_agent_find(f.w, "bad"))->version, 0);
  fx_close(&f);
}

/* An approver that answers yes from inside the question (the world delivers it from the loop). */
typedef struct asker {
  world *w;
  int asked;
} asker;

static void yes(void *ud, const world_approval *req) {
  asker *k = ud;
  CHECK_STR(req->tool, "save_context");
  CHECK_STR(req->agent_id, "careful");
  k->asked++;
  CHECK_INT(world_approval_answer(k->w, req->id, 1), AG_OK);
  CHECK_INT(world_approval_answer(k->w, req->id, 1), AG_ERR_STATE); /* one answer per request */
}

static void approval_denied_then_granted(void) {
  const char *json = "{\"name\": \"A\", \"agents\": [{\"name\": \"careful\", \"tools\": [{\"name\": \"save_context\","
                     " \"approve\": true}], \"replies\": [{\"tool\": \"save_context\", \"args\": {\"message\": \"saved\","
                     " \"notes\": [\"x\"]}}, \"not saved\"]}]}";
  fx f;
  fx_open(&f, json);
  ttools_result_grab g = {{{0}}, 0};
  bus_subscribe(world_bus(f.w), BUS_EVENT, BUS_PHASE_OUTPUT, ttools_grab_results, &g, NULL);
  say(&f, "@careful remember x"); /* no approver: denied, and the denial goes back to the model */
  CHECK_INT(g.n, 1);
  CHECK(strstr(g.results[0], "denied") != NULL);
  CHECK(strstr(f.log.text, "careful: not saved\n") != NULL);
  CHECK_INT(agent_context(world_agent_find(f.w, "careful"))->version, 0);
  asker k = {f.w, 0};
  world_set_approver(f.w, &(world_approver){yes, NULL}, &k);
  say(&f, "@careful remember x");
  CHECK_INT(k.asked, 1);
  CHECK_INT(world_approvals_pending(f.w), 0);
  CHECK(strstr(f.log.text, "careful: saved\n") != NULL);
  CHECK_INT(agent_context(world_agent_find(f.w, "careful"))->version, 1);
  fx_close(&f);
}


static void degraded_inline_context(void) {
  fx f;
  fx_open(&f, "{\"name\": \"D\", \"agents\": [{\"name\": \"plain\", \"monadic\": true, \"tool_support\": false,"
              " \"replies\": [\"Noted the trip.\\n```json\\n{\\\"topics\\\": [\\\"trip\\\"]}\\n```\", \"No update.\"]}]}");
  chat_session_new(f.cs, NULL);
  say(&f, "@plain plan a trip");
  CHECK(strstr(f.log.text, "plain: Noted the trip.\n") != NULL);
  CHECK(strstr(f.log.text, "```") == NULL);
  const context_state *c = agent_context(world_agent_find(f.w, "plain"));
  CHECK_INT(c->version, 1);
  context_state s = stored_context(&f, chat_session_current(f.cs), "plain");
  CHECK(reduce_same_context(&s, c));
  context_state r = reduce_thread(&f, chat_session_current(f.cs), "plain");
  CHECK(reduce_same_context(&r, c));
  say(&f, "@plain anything new?");
  CHECK_INT(agent_context(world_agent_find(f.w, "plain"))->version, 1);
  context_free(&s);
  context_free(&r);
  fx_close(&f);
}

/* send_message addresses exactly the named agents with leading mentions. */
static void send_message_addresses_agents(void) {
  fx f;
  fx_open(&f, "{\"name\": \"S\", \"agents\": ["
              "{\"name\": \"boss\", \"auto_reply\": false, \"tools\": [\"send_message\"], \"replies\": ["
              "  {\"tool\": \"send_message\", \"args\": {\"to\": [\"Ann\", \"bob\"], \"text\": \"standup now\"}}, \"Sent.\"]},"
              "{\"name\": \"ann\", \"auto_reply\": false, \"replies\": [\"coming\"]},"
              "{\"name\": \"bob\", \"auto_reply\": false, \"replies\": [\"on my way\"]},"
              "{\"name\": \"cid\", \"replies\": [\"(should not answer)\"]}]}");
  say(&f, "@boss call the team");
  CHECK(strstr(f.log.text, "boss: @ann @bob standup now\n") != NULL);
  CHECK(strstr(f.log.text, "no agent") == NULL);
  CHECK(strstr(f.log.text, "ann: coming\n") != NULL);
  CHECK(strstr(f.log.text, "bob: on my way\n") != NULL);
  CHECK(strstr(f.log.text, "boss: Sent.\n") != NULL);
  CHECK(strstr(f.log.text, "cid:") == NULL);
  fx_close(&f);
  /* An unknown recipient is an error result; nothing is sent. */
  fx_open(&f, "{\"name\": \"S2\", \"agents\": [{\"name\": \"boss\", \"tools\": [\"send_message\"], \"replies\": ["
              "  {\"tool\": \"send_message\", \"args\": {\"to\": [\"ghost\"], \"text\": \"boo\"}}, \"Nobody there.\"]}]}");
  ttools_result_grab g = {{{0}}, 0};
  bus_subscribe(world_bus(f.w), BUS_EVENT, BUS_PHASE_OUTPUT, ttools_grab_results, &g, NULL);
  say(&f, "@boss call ghost");
  CHECK_INT(g.n, 1);
  CHECK_STR(g.results[0], "{\"error\":\"no agent 'ghost' in this world\"}");
  CHECK(strstr(f.log.text, "boo") == NULL);
  fx_close(&f);
}

/* Through the binary: the example world, denied without --yes and approved with it; show --state;
 * an unknown tool in a world file is exit 2. */
static void cli_tools_end_to_end(void) {
  char *dir = unit_tmpdir();
  char db[4096];
  snprintf(db, sizeof db, "%s/db", dir);
  const char *run[] = {"run", unit_src_path("examples/context-keeper.json"), "--db", db, "--json", NULL};
  proc_result r;
  PROC_OK(run, NULL, NULL, &r);
  CHECK(strstr(r.out, "The note was not saved: the tool needs approval.") != NULL);
  CHECK_INT(ttools_count(r.out, "\"event\":\"tool-call\""), 10);
  proc_result_free(&r);
  const char *yes_run[] = {"run", unit_src_path("examples/context-keeper.json"), "--no-save", "--yes", NULL};
  CHECK_INT(proc_agora(yes_run, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "scout: Saved a note about the flights.") != NULL);
  proc_result_free(&r);
  char chat[64] = "";
  CHECK_INT(proc_first_chat(db, chat, sizeof chat), 0);
  const char *show[] = {"chats", "show", chat, "--state", "--db", db, "--json", NULL};
  PROC_OK(show, NULL, NULL, &r);
  const char *st = strstr(r.out, "{\"version\":4,");
  CHECK(st != NULL);
  CHECK(st && strstr(st, "\"agent\":\"keeper\"") && strstr(st, "cheap flights in May"));
  proc_result_free(&r);
  const char *replay[] = {"replay", chat, "--db", db, NULL};
  CHECK_INT(proc_agora(replay, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "-- tool-call: agent=keeper tool=save_context") != NULL);
  proc_result_free(&r);
  char bad[4096];
  snprintf(bad, sizeof bad, "%s/bad.json", dir);
  unit_write_file(bad, "{\"name\": \"x\", \"agents\": [{\"name\": \"a\", \"tools\": [\"rm_rf\"]}]}");
  const char *badrun[] = {"run", bad, "--no-save", NULL};
  PROC_REFUSED(badrun, NULL, "agents[0].tools[0]: unknown tool 'rm_rf'", NULL);
  unit_rmrf(dir);
  free(dir);
}

SUITE_RUN((UNIT(context_accumulates_and_drops), UNIT(tool_arguments_checked),
  UNIT(context_over_turns_restart_snapshot_and_thread), UNIT(round_limit), UNIT(bad_tool_calls_become_error_results),
  UNIT(approval_denied_then_granted), UNIT(degraded_inline_context), UNIT(send_message_addresses_agents),
  UNIT(cli_tools_end_to_end)))
