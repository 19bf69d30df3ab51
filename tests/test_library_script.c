/* libagora's script (API version 4) as a program sees it, linked against libagora.so: the world file's
 * steps and schedule on a virtual clock (agora_script_step, agora_script_finish, AGORA_ENDED), the
 * periodic tick and a Ctrl-C made of it (agora_tick, agora_cancel), the options `agora run` needs
 * (AGORA_SCRIPT, AGORA_NO_CLOCK, a chat's world without naming it, the NATS fields). */
#include "agora.h"
#include "support/llm_server.h"
#include "support/unit.h"
#include "support/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Steps at 08:00, a wait to 10:00 that delivers the 09:00 item, then the schedule alone until noon. */
static const char town[] =
  "{\"name\": \"Town\", \"clock\": {\"mode\": \"virtual\", \"start\": \"2026-03-01T08:00:00Z\","
  " \"until\": \"2026-03-01T12:00:00Z\"},"
  " \"agents\": [{\"name\": \"ann\", \"provider\": \"script\", \"replies\": [\"a1\", \"a2\", \"a3\", \"a4\"]}],"
  " \"schedule\": [{\"at\": \"2026-03-01T09:00:00Z\", \"from\": \"world\", \"text\": \"@ann nine\"},"
  "              {\"at\": \"2026-03-01T11:00:00Z\", \"from\": \"world\", \"text\": \"@ann eleven\"}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@ann at {{time}}\"}, {\"wait\": \"2h\"},"
  "            {\"from\": \"human\", \"text\": \"@ann then {{time}}\"}]}";

/* "HH:MM sender: text" of every message, from agora_event_sim_time. */
typedef struct log {
  char text[4096];
} log;

static void on_message(const agora_event *ev, void *ctx) {
  log *l = ctx;
  int64_t ms = 0;
  if (agora_event_type(ev) != AGORA_EVENT_MESSAGE) return;
  size_t n = strlen(l->text);
  int virtual_time = agora_event_sim_time(ev, &ms);
  long minutes = (long)(ms / 60000 % (24 * 60));
  snprintf(l->text + n, sizeof l->text - n, "%s%02ld:%02ld %s: %s\n", virtual_time ? "" : "(real) ", minutes / 60,
           minutes % 60, agora_event_sender(ev), agora_event_text(ev));
}

static agora_world *open_4(const char *json, unsigned flags, const char *db) {
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_4 | (db ? 0 : AGORA_NO_SAVE) | flags};
  CHECK_INT(agora_world_open(json, db, &o, &w), AGORA_OK);
  if (!w) fprintf(stderr, "  %s\n", agora_errmsg());
  return w;
}

static void steps_on_a_virtual_clock(void) {
  agora_world *w = open_4(town, 0, NULL);
  if (!w) return;
  log l = {""};
  CHECK(agora_subscribe(w, on_message, &l) > 0);
  CHECK_INT((int)agora_script_steps(w), 3);
  for (size_t i = 0; i < 3; i++) CHECK_INT(agora_script_step(w, i), AGORA_OK);
  CHECK_STR(l.text, "08:00 human: @ann at 08:00\n08:00 ann: a1\n09:00 world: @ann nine\n09:00 ann: a2\n"
                    "10:00 human: @ann then 10:00\n10:00 ann: a3\n");
  CHECK_INT(agora_script_finish(w), AGORA_OK); /* the schedule until noon */
  CHECK(strstr(l.text, "11:00 world: @ann eleven\n11:00 ann: a4\n") != NULL);
  CHECK_INT(agora_script_step(w, 3), AGORA_ERR_NOT_FOUND);
  CHECK(strstr(agora_errmsg(), "agora_script_step") != NULL);
  agora_world_close(w);
}

/* A wait past `until` ends the script: the steps after it are the caller's to skip. */
static void until_ends_the_script(void) {
  agora_world *w = open_4("{\"name\": \"Short\", \"clock\": {\"mode\": \"virtual\", \"start\": \"2026-03-01T08:00:00Z\","
                          " \"until\": \"2026-03-01T09:00:00Z\"}, \"agents\": [{\"name\": \"ann\", \"provider\": \"script\","
                          " \"replies\": [\"ok\"]}], \"script\": [{\"wait\": \"5h\"}, {\"from\": \"human\", \"text\": \"@ann late\"}]}",
                          0, NULL);
  if (!w) return;
  CHECK_INT(agora_script_step(w, 0), AGORA_ENDED);
  CHECK_STR(agora_strerror(AGORA_ENDED), "the world's clock reached its until");
  agora_world_close(w);
}

/* On a real clock a message has no simulated time; a new_chat step without a database starts afresh. */
static void real_clock_and_new_chat(void) {
  agora_world *w = open_4("{\"name\": \"Real\", \"agents\": [{\"name\": \"ann\", \"provider\": \"script\","
                          " \"replies\": [\"one\", \"two\"]}], \"script\": [{\"from\": \"human\", \"text\": \"@ann hi\"},"
                          " {\"new_chat\": true}, {\"from\": \"human\", \"text\": \"@ann again\"}]}", 0, NULL);
  if (!w) return;
  log l = {""};
  agora_subscribe(w, on_message, &l);
  for (size_t i = 0; i < agora_script_steps(w); i++) CHECK_INT(agora_script_step(w, i), AGORA_OK);
  CHECK_STR(l.text, "(real) 00:00 human: @ann hi\n(real) 00:00 ann: one\n(real) 00:00 human: @ann again\n"
                    "(real) 00:00 ann: two\n");
  agora_world_close(w);
}

/* Ctrl-C as `agora run` makes it: the tick sees the flag a signal handler would set and cancels the
 * reply in flight; the step returns AGORA_ERR_CANCELLED and the world stays usable. */
typedef struct ticker {
  llm_server *srv;
  int ticks, cancelled;
} ticker;

static void on_tick(agora_world *w, void *ctx) {
  ticker *t = ctx;
  t->ticks++;
  if (!t->cancelled && llm_server_stalls(t->srv) >= 1) { /* the reply is in flight */
    t->cancelled = 1;
    CHECK_INT((int)agora_thinking(w), 1);
    CHECK_INT(agora_cancel(w), AGORA_OK);
  }
}

static void tick_cancels_a_step(void) {
  llm_server *srv = NULL;
  CHECK_INT(llm_server_start(&srv), 0);
  if (!srv) return;
  llm_server_rule(srv, NULL, "stall=1");
  setenv("AGORA_TEST_KEY", "k", 1);
  char json[1024];
  snprintf(json, sizeof json, "{\"name\": \"Stall\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\","
           " \"model\": \"m\", \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\", \"timeout_ms\": 20000}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@ann hello\"}]}", llm_server_url(srv, "/v1"));
  agora_world *w = open_4(json, AGORA_STREAM, NULL);
  ticker t = {.srv = srv};
  if (w) {
    CHECK_INT(agora_tick(w, -1, on_tick, &t), AGORA_ERR_INVALID);
    CHECK_INT(agora_tick(w, 20, on_tick, &t), AGORA_OK);
    CHECK_INT(agora_script_step(w, 0), AGORA_ERR_CANCELLED);
    CHECK(t.cancelled && t.ticks >= 1);
    CHECK_INT((int)agora_thinking(w), 0);
    CHECK_INT(agora_tick(w, 0, NULL, NULL), AGORA_OK); /* ended: no more ticks */
    int ticks = t.ticks;
    CHECK_INT(agora_run_for(w, 60), AGORA_OK);
    CHECK_INT(t.ticks, ticks);
    agora_interrupt(w); /* before the call: the step does not start */
    CHECK_INT(agora_script_step(w, 0), AGORA_ERR_CANCELLED);
    agora_world_close(w);
  }
  llm_server_stop(srv);
}

/* An interrupt during a real clock's wait ends the step at once (the 3 s are not waited out), and the
 * world's next wait is whole again. */
typedef struct waiter {
  int armed, ticks;
} waiter;

static void interrupt_when_armed(agora_world *w, void *ctx) {
  waiter *t = ctx;
  if (t->armed && ++t->ticks == 2) agora_interrupt(w);
}

static void interrupt_ends_a_real_wait(void) {
  agora_world *w = open_4("{\"name\": \"Waits\", \"agents\": [{\"name\": \"ann\", \"provider\": \"script\","
                          " \"replies\": [\"ok\"]}], \"script\": [{\"wait\": \"3s\"}, {\"wait\": \"1s\"}]}", 0, NULL);
  if (!w) return;
  waiter t = {.armed = 1};
  CHECK_INT(agora_tick(w, 10, interrupt_when_armed, &t), AGORA_OK);
  long long start = now_ms();
  CHECK_INT(agora_script_step(w, 0), AGORA_ERR_CANCELLED);
  CHECK(now_ms() - start < 2000);
  t.armed = 0;
  start = now_ms();
  CHECK_INT(agora_script_step(w, 1), AGORA_OK);
  CHECK(now_ms() - start >= 900);
  agora_world_close(w);
}

/* AGORA_NO_CLOCK: nothing scheduled moves, and the script calls say so; without AGORA_OPTIONS_4 the
 * API-4 flags are not read (a program built on an older header set none of them). */
static void no_clock(void) {
  agora_world *w = open_4(town, AGORA_NO_CLOCK, NULL);
  if (w) {
    CHECK_INT(agora_script_step(w, 0), AGORA_ERR_STATE);
    CHECK(strstr(agora_errmsg(), "AGORA_NO_CLOCK") != NULL);
    CHECK_INT(agora_script_finish(w), AGORA_ERR_STATE);
    agora_world_close(w);
  }
  w = NULL;
  CHECK_INT(agora_world_open(town, NULL, &(agora_options){.flags = AGORA_NO_SAVE | AGORA_NO_CLOCK}, &w), AGORA_OK);
  if (w) CHECK_INT(agora_script_step(w, 0), AGORA_OK);
  agora_world_close(w);
}

/* A stored world keeps no script: AGORA_SCRIPT refuses one without a schedule before any chat is
 * touched, naming the program; a chat's world opens from the chat alone. */
static void stored_worlds(void) {
  char *db = unit_tmpdir(), chat[AGORA_ID_MAX] = "";
  agora_world *w = open_4("{\"name\": \"Kept\", \"agents\": [{\"name\": \"ann\", \"provider\": \"script\","
                          " \"replies\": [\"ok\"]}], \"script\": [{\"from\": \"human\", \"text\": \"@ann hi\"}]}", 0, db);
  if (w) {
    CHECK_INT(agora_script_step(w, 0), AGORA_OK);
    snprintf(chat, sizeof chat, "%s", agora_chat_current(w));
    agora_world_close(w);
  }
  w = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | AGORA_SCRIPT | AGORA_FROM_STORE, .program = "prog"};
  CHECK_INT(agora_world_open("kept", db, &o, &w), AGORA_ERR_INVALID);
  CHECK(w == NULL);
  CHECK(strstr(agora_errmsg(), "prog: stored world 'kept' has no script to run") != NULL);
  o.flags &= ~(unsigned)AGORA_SCRIPT;
  CHECK_INT(agora_world_open("kept", db, &o, &w), AGORA_OK);
  if (w) CHECK_INT((int)agora_script_steps(w), 0);
  agora_world_close(w);
  w = NULL;
  o = (agora_options){.flags = AGORA_OPTIONS_4 | AGORA_NO_CLOCK, .chat = chat};
  CHECK_INT(agora_world_open(NULL, db, &o, &w), AGORA_OK);
  if (w) CHECK_STR(agora_world_id(w), "kept");
  if (w) CHECK_STR(agora_chat_current(w), chat);
  agora_world_close(w);
  w = NULL;
  o.flags = 0; /* before API 4 a world is always named */
  CHECK_INT(agora_world_open(NULL, db, &o, &w), AGORA_ERR_INVALID);
  unit_rmrf(db);
  free(db);
}

/* The NATS fields are checked, naming the field. */
static void nats_fields_checked(void) {
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_NO_SAVE | AGORA_OPTIONS_4, .nats_url = "nats://127.0.0.1:1", .nats_replicas = 9};
  CHECK_INT(agora_world_open(town, NULL, &o, &w), AGORA_ERR_INVALID);
  CHECK(strstr(agora_errmsg(), "agora_options.nats_replicas") != NULL);
  o.nats_url = "";
  o.nats_replicas = 0;
  CHECK_INT(agora_world_open(town, NULL, &o, &w), AGORA_ERR_INVALID);
  CHECK(strstr(agora_errmsg(), "agora_options.nats_url") != NULL);
  CHECK(w == NULL);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    UNIT(steps_on_a_virtual_clock), UNIT(until_ends_the_script), UNIT(real_clock_and_new_chat),
    UNIT(tick_cancels_a_step), UNIT(interrupt_ends_a_real_wait), UNIT(no_clock), UNIT(stored_worlds), UNIT(nats_fields_checked),
  };
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
