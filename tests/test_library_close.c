/* agora_world_close_later (API version 10, include/agora_server.h): a world on the program's loop closed
 * from a callback of that loop, as agora serve's DELETE /api/worlds/{id} does from its HTTP handler. The
 * reply in flight finishes and is stored before the callback fires (agora_world_close from a callback
 * cancels it), the bound cancels one that takes too long, an MCP server is reaped before the callback,
 * and wrong use is refused. Linked against libagora.so, nothing internal included. */
#include "agora.h"
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/unit.h"

#include <ctype.h>
#include <dirent.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WATCHDOG_S 30

/* What the program saw: the world's events, the close's callback. */
typedef struct seen {
  struct event_base *L;
  agora_world *w;
  long ms;              /* the close's bound */
  const char *json, *db; /* with json: a second world of its id is opened while it closes */
  int close_rc, publish_rc, again_rc, found, reopen_rc, id_kept;
  int replies, cancelled, done, done_rc;
  char reply[128], done_id[AGORA_ID_MAX];
  int children_at_done;
} seen;

static void on_event(const agora_event *ev, void *ctx) {
  seen *s = ctx;
  const char *sender = agora_event_sender(ev);
  if (!strcmp(agora_event_kind(ev), "cancelled")) s->cancelled++;
  if (agora_event_type(ev) != AGORA_EVENT_MESSAGE || !sender || !strcmp(sender, "human")) return;
  s->replies++;
  snprintf(s->reply, sizeof s->reply, "%s", agora_event_text(ev));
}

static void on_closed(const char *world_id, int rc, void *ctx) {
  seen *s = ctx;
  s->done++;
  s->done_rc = rc;
  snprintf(s->done_id, sizeof s->done_id, "%s", world_id);
  s->children_at_done = proc_children();
  event_base_loopbreak(s->L);
}

/* The program's HTTP handler, as a timer: closes the world later, and looks at it right after. */
static void close_in_callback(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  seen *s = arg;
  const char *id = agora_world_id(s->w);
  char name[AGORA_ID_MAX];
  snprintf(name, sizeof name, "%s", id);
  s->close_rc = agora_world_close_later(s->w, s->ms, on_closed, s);
  s->found = agora_loop_world(s->L, name) != NULL;
  s->publish_rc = agora_publish(s->w, "human", "@ann more");
  s->again_rc = agora_world_close_later(s->w, s->ms, on_closed, s);
  s->id_kept = !strcmp(agora_world_id(s->w), name);
  agora_world *twin = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_8, .loop = s->L};
  if (s->json) s->reopen_rc = agora_world_open(s->json, s->db, &o, &twin);
  agora_world_close(twin);
}

/* Runs L until the close's callback; the close starts from a callback of the running loop. */
static void close_from_the_loop(seen *s) {
  alarm(WATCHDOG_S);
  CHECK_INT(event_base_once(s->L, -1, EV_TIMEOUT, close_in_callback, s, &(struct timeval){.tv_sec = 0}), 0);
  CHECK_INT(event_base_dispatch(s->L), 0);
  alarm(0);
  CHECK_INT(s->close_rc, AGORA_OK);
  CHECK_INT(s->found, 0);
  CHECK_INT(s->publish_rc, AGORA_ERR_STATE);
  CHECK_INT(s->again_rc, AGORA_ERR_STATE);
  CHECK_INT(s->id_kept, 1);
  CHECK_INT(s->reopen_rc, s->json ? AGORA_ERR_EXISTS : 0); /* its id stays taken until the callback */
  CHECK_INT(s->done, 1);
}

static void server_town(char *json, size_t cap, llm_server *srv) {
  snprintf(json, cap, "{\"name\": \"Net\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\", \"model\": "
           "\"m\", \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\"}]}", llm_server_url(srv, "/v1"));
}

static agora_world *open_on(const char *json, const char *db, struct event_base *L, seen *s, unsigned flags) {
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_8 | flags, .on_event = on_event, .on_event_ctx = s,
                     .loop = L};
  int rc = agora_world_open(json, db, &o, &w);
  if (rc) fprintf(stderr, "agora_world_open: %s\n", agora_errmsg());
  CHECK_INT(rc, AGORA_OK);
  return w;
}

/* The reply in flight when the close starts is delivered and stored before the callback, which gets the
 * world's id; the world then opens again from the database, with the reply in its chat. */
static void settles_the_reply_in_flight(void) {
  llm_server *srv = NULL;
  CHECK_INT(llm_server_start(&srv), 0);
  if (!srv) return;
  llm_server_rule(srv, NULL, "reply=\"@human late\" latency=300");
  setenv("AGORA_TEST_KEY", "k", 1);
  char json[1024], *db = unit_tmpdir(), *msgs = NULL;
  server_town(json, sizeof json, srv);
  seen s = {.L = event_base_new(), .ms = 10000, .json = json, .db = db};
  agora_world *again = NULL;
  if (!(s.w = open_on(json, db, s.L, &s, 0))) goto done;
  char id[AGORA_ID_MAX];
  snprintf(id, sizeof id, "%s", agora_world_id(s.w));
  CHECK_INT(agora_publish(s.w, "human", "@ann slow"), AGORA_OK);
  close_from_the_loop(&s);
  CHECK_INT(s.done_rc, AGORA_OK);
  CHECK_STR(s.done_id, id);
  CHECK_INT(s.replies, 1);
  CHECK_STR(s.reply, "@human late");
  CHECK_INT(s.cancelled, 0);
  CHECK_INT(agora_loop_worlds(s.L, NULL, 0), 0);
  CHECK_INT(agora_world_open(id, db, &(agora_options){.flags = AGORA_FROM_STORE | AGORA_OPTIONS_8, .loop = s.L},
                             &again), AGORA_OK);
  CHECK_INT(again ? agora_messages(again, NULL, 0, 0, &msgs) : -1, AGORA_OK);
  CHECK_HAS(msgs ? msgs : "", "@ann slow", "@human late");
done:
  agora_free(msgs);
  agora_world_close(again);
  event_base_free(s.L);
  llm_server_stop(srv);
  unit_rmrf(db);
  free(db);
}

/* A reply past the bound is cancelled (a cancelled event), and the callback says so. */
static void the_bound_cancels(void) {
  llm_server *srv = NULL;
  CHECK_INT(llm_server_start(&srv), 0);
  if (!srv) return;
  llm_server_rule(srv, NULL, "reply=\"@human never\" latency=60000");
  setenv("AGORA_TEST_KEY", "k", 1);
  char json[1024], *db = unit_tmpdir();
  server_town(json, sizeof json, srv);
  seen s = {.L = event_base_new(), .ms = 50};
  if (!(s.w = open_on(json, db, s.L, &s, 0))) goto done;
  CHECK_INT(agora_publish(s.w, "human", "@ann slow"), AGORA_OK);
  close_from_the_loop(&s);
  CHECK_INT(s.done_rc, AGORA_ERR_CANCELLED);
  CHECK_INT(s.cancelled, 1);
  CHECK_INT(s.replies, 0);
done:
  event_base_free(s.L);
  llm_server_stop(srv);
  unit_rmrf(db);
  free(db);
}

/* A world's MCP server (tests/mcp/fake_server.js) ends and is reaped before the callback fires. */
static void reaps_the_servers(void) {
  char json[2048];
  snprintf(json, sizeof json, "{\"name\": \"Tooled\", \"mcp_servers\": {\"fake\": {\"command\": \"node\", \"args\":"
           " [\"%s\", \"ok\"]}}, \"agents\": [{\"name\": \"t\", \"provider\": \"script\", \"tools\": [\"fake.echo\"]}]}",
           unit_src_path("tests/mcp/fake_server.js"));
  seen s = {.L = event_base_new(), .ms = 1000};
  if (!(s.w = open_on(json, NULL, s.L, &s, AGORA_NO_SAVE))) goto done;
  CHECK_INT(proc_children(), 1);
  close_from_the_loop(&s);
  CHECK_INT(s.done_rc, AGORA_OK);
  CHECK_INT(s.children_at_done, 0);
done:
  event_base_free(s.L);
}

/* A world on its own loop (nothing would run it) and a negative bound are refused, the world untouched. */
static void wrong_use(void) {
  static const char town[] = "{\"name\": \"Own\", \"agents\": [{\"name\": \"o\", \"provider\": \"script\"}]}";
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(town, NULL, &(agora_options){.flags = AGORA_NO_SAVE}, &w), AGORA_OK);
  if (!w) return;
  CHECK_INT(agora_world_close_later(w, 0, NULL, NULL), AGORA_ERR_STATE);
  CHECK_HAS(agora_errmsg(), "agora_world_close_later", "own loop", "agora_world_close");
  CHECK_INT(agora_world_close_later(w, -1, NULL, NULL), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "ms");
  CHECK_INT(agora_publish(w, "human", "@o hi"), AGORA_OK);
  agora_world_close(w);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    UNIT(settles_the_reply_in_flight), UNIT(the_bound_cancels), UNIT(reaps_the_servers), UNIT(wrong_use),
  };
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
