/* Approvals that wait (issue 7), offline on the script provider: a tool call's question is a pending
 * request while the world goes on — another agent streams, the turn is cancelled, the question times
 * out — and ask_human's question to a person, pending, cancelled, timed out, answered, and in a run. */
#include "support/proc.h"
#include "support/suite.h"
#include "support/ttools.h"
#include "support/tworld.h"
#include "support/unit.h"

#include "agents/context.h"
#include "agents/tools.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- asynchronous approvals: the question waits, the world goes on ---- */

#define APPROVE_WORLD(second_reply)                                                                        \
  "{\"name\": \"P\", \"agents\": [{\"name\": \"careful\", \"tools\": [{\"name\": \"save_context\", \"approve\":" \
  " true}], \"replies\": [{\"tool\": \"save_context\", \"args\": {\"message\": \"saved\"}}, " second_reply "]},"   \
  " {\"name\": \"chatty\", \"replies\": [\"one two three four five six\"]}]}"

/* What an approver saw: the pending question (its id, ask_human's text), and what became of it. */
typedef struct pend {
  world *w;
  uint64_t id;
  char text[64];
  int asked, withdrawn, timed_out, answer_now;
  int chunks, chatty_done, careful_done;
  int answered, chunks_at_answer, chatty_done_at_answer, phase_at_answer;
} pend;

static void pend_ask(void *ud, const world_approval *req) {
  pend *p = ud;
  CHECK_STR(req->agent_id, "careful");
  CHECK_STR(req->tool, "save_context");
  CHECK_STR(req->args_json, "{\"message\":\"saved\"}");
  p->id = req->id;
  p->asked++;
}

static void pend_withdrawn(void *ud, uint64_t id, int timed_out) {
  pend *p = ud;
  CHECK_INT(id, p->id);
  p->withdrawn++;
  p->timed_out = timed_out;
}

/* Watches the bus; answers the pending question (yes) once chatty's whole reply is out. */
static void pend_watch(void *ud, bus_topic topic, void *payload) {
  pend *p = ud;
  if (topic == BUS_EVENT) {
    const world_event *e = &((const bus_event *)payload)->ev;
    if (e->kind == EV_LLM_CHUNK && !strcmp(e->u.llm_chunk.agent, "chatty")) p->chunks++;
    return;
  }
  const ag_msg *m = payload;
  if (m->kind != AG_KIND_AGENT) return;
  if (!strcmp(m->sender, "careful")) p->careful_done = 1;
  if (strcmp(m->sender, "chatty")) return;
  p->chatty_done = 1;
  if (p->answer_now && p->asked && !p->answered) {
    p->chunks_at_answer = p->chunks;
    p->chatty_done_at_answer = p->chatty_done;
    p->phase_at_answer = agent_phase_of(world_agent_find(p->w, "careful"));
    p->answered = 1;
    CHECK_INT(world_approval_answer(p->w, p->id, 1), AG_OK);
  }
}

static world *pend_world(struct event_base *base, const char *json, pend *p) {
  world *w = tworld_make(base, json);
  memset(p, 0, sizeof *p);
  p->w = w;
  world_set_emit_chunks(w, 1);
  world_set_approver(w, &(world_approver){pend_ask, pend_withdrawn}, p);
  bus_subscribe(world_bus(w), BUS_MESSAGE | BUS_EVENT, BUS_PHASE_OUTPUT, pend_watch, p, NULL);
  return w;
}

/* Runs the loop until the question is asked (it never settles while one waits with no timeout). */
static void run_until_asked(world *w, pend *p) {
  for (int i = 0; i < 1000 && !p->asked; i++) event_base_loop(world_base(w), EVLOOP_ONCE);
  CHECK_INT(p->asked, 1);
}

/* While careful's tool call waits for its answer, chatty streams its whole reply. */
static void approval_pending_while_another_streams(void) {
  struct event_base *base = event_base_new();
  pend p;
  world *w = pend_world(base, APPROVE_WORLD("\"x\""), &p);
  p.answer_now = 1;
  CHECK_INT(world_publish(w, "human", "@careful @chatty go", NULL), AG_OK);
  CHECK_INT(world_run_until_quiet(w), AG_OK);
  CHECK_INT(p.asked, 1);
  CHECK_INT(p.answered, 1);
  CHECK(p.chunks_at_answer >= 6); /* every word of chatty's reply streamed before the answer */
  CHECK_INT(p.chatty_done_at_answer, 1);
  CHECK_INT(p.phase_at_answer, AGENT_AWAITING_APPROVAL);
  CHECK_INT(p.careful_done, 1);
  CHECK_INT(p.withdrawn, 0);
  CHECK_INT(agent_context(world_agent_find(w, "careful"))->version, 1);
  CHECK_INT(agent_phase_of(world_agent_find(w, "careful")), AGENT_IDLE);
  CHECK_INT(world_approvals_pending(w), 0);
  world_free(w);
  event_base_free(base);
}

/* Cancelling the turn (Ctrl-C, a reset) withdraws the question: a late answer is refused. */
static void approval_cancelled_while_pending(void) {
  struct event_base *base = event_base_new();
  pend p;
  /* Every reply of careful's is the tool call, so each turn asks. */
  world *w = pend_world(base, APPROVE_WORLD("{\"tool\": \"save_context\", \"args\": {\"message\": \"saved\"}}"), &p);
  CHECK_INT(world_publish(w, "human", "@careful go", NULL), AG_OK);
  run_until_asked(w, &p);
  agent *careful = world_agent_find(w, "careful");
  CHECK_INT(agent_phase_of(careful), AGENT_AWAITING_APPROVAL);
  CHECK_INT(world_approvals_pending(w), 1);
  CHECK(!world_is_quiet(w));
  world_cancel_all(w);
  CHECK_INT(p.withdrawn, 1);
  CHECK_INT(p.timed_out, 0);
  CHECK_INT(world_approvals_pending(w), 0);
  CHECK_INT(agent_phase_of(careful), AGENT_IDLE);
  CHECK_INT(world_approval_answer(w, p.id, 1), AG_ERR_NOT_FOUND);
  CHECK_INT(world_run_until_quiet(w), AG_OK);
  CHECK_INT(agent_context(careful)->version, 0);
  /* Asked again, then the agent is reset (a new chat); then asked again and the world freed. */
  CHECK_INT(world_publish(w, "human", "@careful go", NULL), AG_OK);
  p.asked = 0;
  run_until_asked(w, &p);
  agent_reset(careful);
  CHECK_INT(p.withdrawn, 2);
  CHECK_INT(world_approvals_pending(w), 0);
  CHECK_INT(world_publish(w, "human", "@careful go", NULL), AG_OK);
  p.asked = 0;
  run_until_asked(w, &p);
  world_free(w);
  CHECK_INT(p.withdrawn, 3);
  event_base_free(base);
}

/* With a timeout, an unanswered question is denied and the turn goes on. */
static void approval_times_out(void) {
  struct event_base *base = event_base_new();
  pend p;
  world *w = pend_world(base, APPROVE_WORLD("\"gave up\""), &p);
  tworld_log log = {""};
  bus_subscribe(world_bus(w), BUS_MESSAGE, BUS_PHASE_OUTPUT, tworld_record, &log, NULL);
  world_set_approval_timeout(w, 20);
  CHECK_INT(world_publish(w, "human", "@careful go", NULL), AG_OK);
  CHECK_INT(world_run_until_quiet(w), AG_OK);
  CHECK_INT(p.asked, 1);
  CHECK_INT(p.withdrawn, 1);
  CHECK_INT(p.timed_out, 1);
  CHECK(strstr(log.text, "careful: gave up\n") != NULL);
  CHECK_INT(agent_context(world_agent_find(w, "careful"))->version, 0);
  world_free(w);
  event_base_free(base);
}

/* A model without tool calling: the context travels in the prompt and a fenced JSON block updates it. */

static void question_ask(void *ud, const world_approval *req) {
  pend *q = ud;
  CHECK_STR(req->tool, "ask_human");
  snprintf(q->text, sizeof q->text, "%s", req->question ? req->question : "(none)");
  q->id = req->id;
  q->asked++;
}

/* ask_human's question waits on the approval desk: cancelled with the turn, timed out (nobody
 * answers: an error result), or answered with a text that becomes the tool's result. */
static void ask_human_pending_cancelled_timed_out_answered(void) {
  struct event_base *base = event_base_new();
  world *w = tworld_make(base, "{\"name\": \"Q\", \"agents\": [{\"name\": \"asker\", \"tools\": [\"ask_human\"],"
                               " \"replies\": [{\"tool\": \"ask_human\", \"args\": {\"question\": \"Which city?\"}}, \"ok\"]}]}");
  pend q = {0};
  ttools_result_grab g = {0};
  world_set_approver(w, &(world_approver){question_ask, pend_withdrawn}, &q);
  bus_subscribe(world_bus(w), BUS_EVENT, BUS_PHASE_OUTPUT, ttools_grab_results, &g, NULL);
  agent *asker = world_agent_find(w, "asker");
  CHECK_INT(world_publish(w, "human", "@asker go", NULL), AG_OK);
  for (int i = 0; i < 1000 && !q.asked; i++) event_base_loop(base, EVLOOP_ONCE);
  CHECK_STR(q.text, "Which city?");
  CHECK_INT(agent_phase_of(asker), AGENT_AWAITING_APPROVAL);
  world_cancel_all(w);
  CHECK_INT(q.withdrawn, 1);
  CHECK_INT(q.timed_out, 0);
  CHECK_INT(world_approval_reply(w, q.id, 1, "late"), AG_ERR_NOT_FOUND);
  CHECK_INT(g.n, 0);
  CHECK_INT(world_publish(w, "human", "@asker go", NULL), AG_OK); /* the script's "ok" */
  CHECK_INT(world_run_until_quiet(w), AG_OK);
  world_set_approval_timeout(w, 20);
  CHECK_INT(world_publish(w, "human", "@asker go", NULL), AG_OK);
  CHECK_INT(world_run_until_quiet(w), AG_OK);
  CHECK_INT(q.asked, 2);
  CHECK_INT(q.timed_out, 1);
  CHECK_INT(g.n, 1);
  CHECK_STR(g.results[0], "{\"error\":\"no human to answer\"}");
  world_set_approval_timeout(w, 0);
  CHECK_INT(world_publish(w, "human", "@asker go", NULL), AG_OK);
  for (int i = 0; i < 1000 && q.asked < 3; i++) event_base_loop(base, EVLOOP_ONCE);
  CHECK_INT(world_approval_reply(w, q.id, 1, "Lisbon \"old town\""), AG_OK);
  CHECK_INT(world_approval_reply(w, q.id, 1, "twice"), AG_ERR_STATE);
  CHECK_INT(world_run_until_quiet(w), AG_OK);
  CHECK_INT(g.n, 2);
  CHECK_STR(g.results[1], "{\"answer\":\"Lisbon \\\"old town\\\"\"}");
  CHECK_INT(world_approvals_pending(w), 0);
  world_free(w);
  event_base_free(base);
}

/* ask_human in `run`: --answers gives the answers in order, one a line; without the file, or once it
 * ran out, the tool's result is an error saying so and the run goes on (exit 0). */
static void ask_human_in_run(void) {
  char *dir = unit_tmpdir();
  char w[4096], ans[4096], db[4096];
  snprintf(w, sizeof w, "%s/ask.json", dir);
  snprintf(ans, sizeof ans, "%s/answers.txt", dir);
  snprintf(db, sizeof db, "%s/db", dir);
  unit_write_file(w, "{\"name\": \"Ask\", \"agents\": [{\"name\": \"asker\", \"provider\": \"script\","
                     " \"tools\": [\"ask_human\"], \"replies\": [{\"tool\": \"ask_human\", \"args\":"
                     " {\"question\": \"Which city?\"}}, \"Thanks, noted.\"]}], \"script\": ["
                     "{\"from\": \"human\", \"text\": \"@asker plan a trip\"},"
                     "{\"from\": \"human\", \"text\": \"@asker and the hotel?\"}]}");
  unit_write_file(ans, "Lisbon, in May\r\n");
  const char *with[] = {"run", w, "--db", db, "--json", "--answers", ans, NULL};
  proc_result r;
  PROC_OK(with, NULL, NULL, &r);
  const char *first = strstr(r.out, "\"event\":\"tool-result\"");
  CHECK(first && strstr(first, "\"result\":{\"answer\":\"Lisbon, in May\"},\"error\":false"));
  const char *second = first ? strstr(first + 1, "\"event\":\"tool-result\"") : NULL;
  CHECK(second && strstr(second, "no human to answer: the --answers file has no more lines"));
  CHECK_INT(ttools_count(r.out, "Thanks, noted."), 2);
  proc_result_free(&r);
  /* Stored like any tool's result: replay shows the answer. */
  const char *list[] = {"chats", "list", "--db", db, "--json", NULL};
  CHECK_INT(proc_agora(list, NULL, NULL, &r), 0);
  cJSON *j = cJSON_Parse(r.out);
  char chat[64];
  snprintf(chat, sizeof chat, "%s", j ? cJSON_GetStringValue(cJSON_GetObjectItem(j, "id")) : "");
  cJSON_Delete(j);
  proc_result_free(&r);
  const char *replay[] = {"replay", chat, "--db", db, NULL};
  CHECK_INT(proc_agora(replay, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "tool=ask_human call_id=call_1 result={\"answer\":\"Lisbon, in May\"}") != NULL);
  proc_result_free(&r);
  const char *without[] = {"run", w, "--no-save", NULL};
  PROC_OK(without, NULL, NULL, &r);
  CHECK_INT(ttools_count(r.out, "result={\"error\":\"no human to answer: pass --answers FILE\"} error=true"), 2);
  CHECK_INT(ttools_count(r.out, "asker: Thanks, noted."), 2);
  proc_result_free(&r);
  const char *missing[] = {"run", w, "--no-save", "--answers", "/nonexistent/answers.txt", NULL};
  PROC_REFUSED(missing, NULL, "--answers /nonexistent/answers.txt: No such file or directory", NULL);
  const char *bad[] = {"run", w, "--no-save", "--answers", NULL};
  PROC_REFUSED(bad, NULL, "--answers needs a file", NULL);
  unit_rmrf(dir);
  free(dir);
}

SUITE_RUN((UNIT(approval_pending_while_another_streams), UNIT(approval_cancelled_while_pending),
  UNIT(approval_times_out), UNIT(ask_human_pending_cancelled_timed_out_answered), UNIT(ask_human_in_run)))
