/* libagora's shared loops (API version 8, include/agora_server.h "Several worlds on one loop"): worlds opened
 * on a libevent loop the program owns, as `agora serve` runs many worlds on one. Scripted worlds on a
 * real database in a temporary directory; linked against libagora.so, nothing internal included. */
#include "agora.h"
#include "support/llm_server.h"
#include "support/unit.h"

#include <dirent.h>
#include <event2/event.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char town_a[] = "{\"name\": \"TownA\", \"defaults\": {\"provider\": \"script\"}, \"agents\": ["
                             " {\"name\": \"ann\", \"replies\": [\"@human ann here\", \"@human ann again\"]}]}";
static const char town_b[] = "{\"name\": \"TownB\", \"defaults\": {\"provider\": \"script\"}, \"agents\": ["
                             " {\"name\": \"bob\", \"replies\": [\"@human bob here\", \"@human bob again\"]}]}";

/* What one world's subscriber saw, and what it does on a reply. */
typedef struct heard {
  int replies;          /* agent messages */
  char last[128];       /* the last one's text */
  struct event_base *L; /* with stop_at: breaks the program's loop once every world in all has replied */
  struct heard *all[2];
  int stop_at;
  agora_world *other;   /* run_other: runs this world from the callback (refused) */
  int run_other, run_rc;
} heard;

static void on_event(const agora_event *ev, void *ctx) {
  heard *h = ctx;
  const char *sender = agora_event_sender(ev);
  if (agora_event_type(ev) != AGORA_EVENT_MESSAGE || !sender || !strcmp(sender, "human")) return;
  h->replies++;
  snprintf(h->last, sizeof h->last, "%s", agora_event_text(ev));
  if (h->run_other) h->run_rc = agora_run_until_quiet(h->other), h->run_other = 0;
  if (h->stop_at && h->all[0]->replies >= h->stop_at && h->all[1]->replies >= h->stop_at) event_base_loopbreak(h->L);
}

/* Opens world json on loop L (NULL: its own) in db, subscribed to h; NULL on failure (checked). */
static agora_world *open_on(const char *json, const char *db, struct event_base *L, heard *h) {
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_8, .on_event = on_event, .on_event_ctx = h, .loop = L};
  int rc = agora_world_open(json, db, &o, &w);
  if (rc) fprintf(stderr, "agora_world_open: %s\n", agora_errmsg());
  CHECK_INT(rc, AGORA_OK);
  return w;
}

/* How many descriptors of this process have db's data.mdb open (LMDB opens it twice per environment). */
static int data_mdb_opens(const char *db) {
  char want[PATH_MAX], real[PATH_MAX], link[300], to[PATH_MAX];
  snprintf(want, sizeof want, "%s/data.mdb", db);
  if (!realpath(want, real)) return -1;
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(link, to, sizeof to - 1);
    if (len > 0) to[len] = '\0';
    n += len > 0 && !strcmp(to, real);
  }
  if (d) closedir(d);
  return n;
}

static void fire(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  ++*(int *)arg;
}

/* The guard of a loop the program runs: ends it (arg: the loop; the flag says it was the guard). */
static int guard_hit;
static void give_up(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  guard_hit = 1;
  event_base_loopbreak(arg);
}

/* The end of a two-world case: both worlds closed, then their loop freed and their database removed. */
static void close_all(agora_world *a, agora_world *b, struct event_base *L, char *db) {
  agora_world_close(a);
  agora_world_close(b);
  event_base_free(L);
  unit_rmrf(db);
  free(db);
}
/* Two worlds on one loop of the program's, one database: each answers when run, a timer of the
 * program's fires inside a world's run, and both are found on the loop by id and name. */
static void two_worlds_one_loop(void) {
  char *db = unit_tmpdir();
  struct event_base *L = event_base_new();
  heard ha = {0}, hb = {0};
  agora_world *a = open_on(town_a, db, L, &ha);
  int opens = data_mdb_opens(db); /* LMDB's descriptors of one environment */
  agora_world *b = open_on(town_b, db, L, &hb);
  if (!a || !b) goto done;
  CHECK(opens > 0);
  CHECK_INT(data_mdb_opens(db), opens); /* b shares a's database handle (one environment per process) */
  CHECK(agora_world_loop(a) == L && agora_world_loop(b) == L);
  CHECK(strcmp(agora_world_id(a), agora_world_id(b)) != 0);
  agora_world *list[4] = {NULL};
  CHECK_INT(agora_loop_worlds(L, list, 4), 2);
  CHECK(list[0] == a && list[1] == b);
  CHECK(agora_loop_world(L, agora_world_id(b)) == b);
  CHECK(agora_loop_world(L, "TownA") == a);
  CHECK(agora_loop_world(L, "nope") == NULL);
  int fired = 0;
  CHECK_INT(event_base_once(L, -1, EV_TIMEOUT, fire, &fired, &(struct timeval){.tv_sec = 0}), 0);
  CHECK_INT(agora_publish(a, "human", "@ann hi"), AGORA_OK);
  CHECK_INT(agora_publish(b, "human", "@bob hi"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(a), AGORA_OK);
  CHECK_INT(fired, 1); /* the program's event ran in the world's run */
  CHECK_INT(agora_run_until_quiet(b), AGORA_OK);
  CHECK_STR(ha.last, "@human ann here");
  CHECK_STR(hb.last, "@human bob here");
  /* One database for both: each world's chat is stored and listed by it. */
  char *json = NULL;
  CHECK_INT(agora_chats(a, &json), AGORA_OK);
  CHECK(json && strstr(json, "\"message_count\":2"));
  agora_free(json);
  CHECK_INT(agora_transcript(b, NULL, &json), AGORA_OK);
  CHECK(json && strstr(json, "bob here"));
  agora_free(json);
done:
  close_all(a, b, L, db);
}

/* The program runs its loop itself (event_base_dispatch, as a server does): both worlds answer as it
 * runs, and their subscribers end it. A guard timer ends a loop that never would. */
static void the_program_runs_the_loop(void) {
  char *db = unit_tmpdir();
  struct event_base *L = event_base_new();
  heard ha = {0}, hb = {0};
  agora_world *a = open_on(town_a, db, L, &ha), *b = open_on(town_b, db, L, &hb);
  if (!a || !b) goto done;
  heard *all[2] = {&ha, &hb};
  for (int i = 0; i < 2; i++) *all[i] = (heard){.L = L, .all = {&ha, &hb}, .stop_at = 1};
  guard_hit = 0;
  struct event *guard = evtimer_new(L, give_up, L);
  struct timeval thirty = {.tv_sec = 30};
  evtimer_add(guard, &thirty);
  CHECK_INT(agora_publish(a, "human", "@ann hi"), AGORA_OK);
  CHECK_INT(agora_publish(b, "human", "@bob hi"), AGORA_OK);
  CHECK_INT(event_base_dispatch(L), 0);
  CHECK_INT(guard_hit, 0);
  CHECK_INT(ha.replies, 1);
  CHECK_INT(hb.replies, 1);
  event_free(guard);
done:
  close_all(a, b, L, db);
}

/* Closing one world leaves the other, their database and the loop working; once both are closed the
 * loop holds none of their events (the program's own timer is all that is left). */
static void closing_one_keeps_the_other(void) {
  char *db = unit_tmpdir();
  struct event_base *L = event_base_new();
  int fired = 0;
  struct event *mine = evtimer_new(L, fire, &fired);
  struct timeval hour = {.tv_sec = 3600}, now = {.tv_sec = 0};
  evtimer_add(mine, &hour);
  int before = event_base_get_num_events(L, EVENT_BASE_COUNT_ADDED);
  heard ha = {0}, hb = {0};
  agora_world *a = open_on(town_a, db, L, &ha), *b = open_on(town_b, db, L, &hb);
  if (!a || !b) goto done;
  CHECK_INT(agora_publish(a, "human", "@ann hi"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(a), AGORA_OK);
  agora_world_close(a);
  a = NULL;
  CHECK_INT(agora_loop_worlds(L, NULL, 0), 1);
  CHECK(agora_loop_world(L, "TownA") == NULL);
  CHECK_INT(agora_publish(b, "human", "@bob hi"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(b), AGORA_OK);
  CHECK_STR(hb.last, "@human bob here");
  char *json = NULL; /* the database is still open for b */
  CHECK_INT(agora_chats(b, &json), AGORA_OK);
  CHECK(json && strstr(json, agora_world_id(b)));
  agora_free(json);
  /* a again, on the same loop and database: its stored chat is continued */
  a = open_on(town_a, db, L, &ha);
  if (!a) goto done;
  CHECK_INT(agora_publish(a, "human", "@ann more"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(a), AGORA_OK);
  CHECK_STR(ha.last, "@human ann again");
  agora_world_close(a);
  agora_world_close(b);
  a = b = NULL;
  CHECK_INT(event_base_get_num_events(L, EVENT_BASE_COUNT_ADDED), before);
  CHECK_INT(agora_loop_worlds(L, NULL, 0), 0);
  evtimer_add(mine, &now);
  CHECK_INT(event_base_loop(L, EVLOOP_ONCE), 0);
  CHECK_INT(fired, 1);
done:
  agora_world_close(a);
  agora_world_close(b);
  event_free(mine);
  event_base_free(L);
  unit_rmrf(db);
  free(db);
}

/* The database beside the worlds of a loop (agora_loop_db), as a server lists stored worlds while it
 * serves them: one environment for all, a world open on the loop is not deleted under it, and the worlds
 * keep their database when the handle is closed (and the other way round). */
static void a_database_beside_the_worlds(void) {
  char *db = unit_tmpdir(), *json = NULL;
  struct event_base *L = event_base_new();
  agora_db *d = NULL, *d2 = NULL;
  heard ha = {0}, hb = {0};
  CHECK_INT(agora_loop_db(L, db, &d), AGORA_OK); /* before any world: the worlds share it */
  int opens = data_mdb_opens(db);
  agora_world *a = open_on(town_a, db, L, &ha), *b = open_on(town_b, db, L, &hb);
  if (!d || !a || !b) goto done;
  CHECK_INT(agora_loop_db(L, db, &d2), AGORA_OK); /* and after */
  CHECK(opens > 0);
  CHECK_INT(data_mdb_opens(db), opens);
  CHECK_INT(agora_db_worlds(d2, &json), AGORA_OK);
  CHECK(json && strstr(json, agora_world_id(a)) && strstr(json, agora_world_id(b)));
  agora_free(json);
  CHECK_INT(agora_db_world_delete(d2, "TownA", NULL, NULL), AGORA_ERR_STATE);
  CHECK_HAS(agora_errmsg(), "open on the loop");
  agora_db_close(d);
  agora_db_close(d2);
  d = d2 = NULL;
  CHECK_INT(agora_publish(a, "human", "@ann hi"), AGORA_OK); /* its database is still open */
  CHECK_INT(agora_run_until_quiet(a), AGORA_OK);
  CHECK_INT(agora_chats(a, &json), AGORA_OK);
  CHECK(json && strstr(json, "\"message_count\":2"));
  agora_free(json);
  agora_world_close(a);
  agora_world_close(b);
  a = b = NULL;
  CHECK_INT(data_mdb_opens(db), 0); /* closed with the last of its users */
  CHECK_INT(agora_loop_db(L, db, &d), AGORA_OK); /* the world closed is deleted through it */
  CHECK_INT(agora_db_world_delete(d, "TownA", NULL, NULL), AGORA_OK);
done:
  agora_db_close(d);
  agora_db_close(d2);
  close_all(a, b, L, db);
}

/* World name with one agent, who, answering from the loopback LLM server srv (OpenAI wire format). */
static void server_town(char *json, size_t cap, const char *name, const char *who, llm_server *srv) {
  snprintf(json, cap, "{\"name\": \"%s\", \"agents\": [{\"name\": \"%s\", \"provider\": \"openai\", \"model\": "
           "\"m\", \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\"}]}", name, who, llm_server_url(srv, "/v1"));
}

/* Two worlds calling an LLM over HTTP on one loop: one closed while its call is in flight, the other
 * goes on calling (its HTTP client, the process's libcurl and the loop untouched), and once both are
 * closed the loop holds only the program's event. */
static void closing_mid_call(void) {
  llm_server *srv = NULL;
  CHECK_INT(llm_server_start(&srv), 0);
  if (!srv) return;
  llm_server_rule(srv, "slow", "reply=\"@human late\" latency=60000");
  llm_server_rule(srv, NULL, "reply=\"@human quick\" latency=20");
  setenv("AGORA_TEST_KEY", "k", 1);
  char ja[1024], jb[1024], *db = unit_tmpdir();
  server_town(ja, sizeof ja, "NetA", "ann", srv);
  server_town(jb, sizeof jb, "NetB", "bob", srv);
  struct event_base *L = event_base_new();
  int fired = 0;
  struct event *mine = evtimer_new(L, fire, &fired);
  struct timeval hour = {.tv_sec = 3600};
  evtimer_add(mine, &hour);
  int before = event_base_get_num_events(L, EVENT_BASE_COUNT_ADDED);
  heard ha = {0}, hb = {0};
  agora_world *a = open_on(ja, db, L, &ha), *b = open_on(jb, db, L, &hb);
  if (!a || !b) goto done;
  CHECK_INT(agora_publish(a, "human", "@ann slow"), AGORA_OK);
  CHECK_INT(agora_publish(b, "human", "@bob hi"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(b), AGORA_OK); /* b answered while a's call waits */
  CHECK_STR(hb.last, "@human quick");
  CHECK_INT(agora_thinking(a), 1);
  agora_world_close(a);
  a = NULL;
  CHECK_INT(ha.replies, 0);
  CHECK_INT(agora_publish(b, "human", "@bob again"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(b), AGORA_OK);
  CHECK_INT(hb.replies, 2);
  agora_world_close(b);
  b = NULL;
  CHECK_INT(event_base_get_num_events(L, EVENT_BASE_COUNT_ADDED), before);
done:
  agora_world_close(a);
  agora_world_close(b);
  event_free(mine);
  event_base_free(L);
  llm_server_stop(srv);
  unit_rmrf(db);
  free(db);
}

/* A world on another thread's loop: its open and its run functions, from this thread. */
typedef struct other_thread {
  struct event_base *L;
  agora_world *w;
  int open_rc, run_rc, db_rc;
  char msg[512];
} other_thread;

static void *from_another_thread(void *arg) {
  other_thread *t = arg;
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_8 | AGORA_NO_SAVE, .loop = t->L};
  t->open_rc = agora_world_open(town_b, NULL, &o, &w);
  snprintf(t->msg, sizeof t->msg, "%s", agora_errmsg());
  agora_world_close(w);
  t->run_rc = agora_run_until_quiet(t->w);
  agora_db *d = NULL;
  t->db_rc = agora_loop_db(t->L, NULL, &d);
  agora_db_close(d);
  return NULL;
}

/* Wrong use gets a clear error: a loop used from two threads, a world run from a callback of the loop
 * it runs on, the same world twice on a loop, a loop with NATS. A loop without AGORA_OPTIONS_8 is not
 * read (the growth rule). */
static void wrong_use(void) {
  char *db = unit_tmpdir();
  struct event_base *L = event_base_new();
  heard ha = {0}, hb = {0};
  agora_world *a = open_on(town_a, db, L, &ha), *b = open_on(town_b, db, L, &hb), *w = NULL;
  if (!a || !b) goto done;
  other_thread t = {.L = L, .w = a};
  pthread_t th;
  CHECK_INT(pthread_create(&th, NULL, from_another_thread, &t), 0);
  pthread_join(th, NULL);
  CHECK_INT(t.open_rc, AGORA_ERR_STATE);
  CHECK_HAS(t.msg, "agora_options.loop", "another thread");
  CHECK_INT(t.run_rc, AGORA_ERR_STATE);
  CHECK_INT(t.db_rc, AGORA_ERR_STATE);
  /* a's reply runs b from a's callback while a's run runs the loop: refused, and a's run goes on */
  ha.other = b, ha.run_other = 1;
  CHECK_INT(agora_publish(a, "human", "@ann hi"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(a), AGORA_OK);
  CHECK_INT(ha.run_rc, AGORA_ERR_STATE);
  CHECK_HAS(agora_errmsg(), "agora_run_until_quiet", "running already");
  CHECK_INT(agora_world_open(town_a, db, &(agora_options){.flags = AGORA_OPTIONS_8, .loop = L}, &w), AGORA_ERR_EXISTS);
  CHECK_HAS(agora_errmsg(), agora_world_id(a), "open on this loop already");
  CHECK(w == NULL);
  agora_options nats = {.flags = AGORA_OPTIONS_4 | AGORA_OPTIONS_8 | AGORA_NO_SAVE, .nats_url = "nats://127.0.0.1:1",
                        .loop = L};
  CHECK_INT(agora_world_open(town_a, NULL, &nats, &w), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_options.loop", "nats_url");
  CHECK_INT(agora_loop_worlds(L, NULL, 0), 2);
  /* a's close settles a on the loop; b's reply, during it or in b's run after, runs b again: refused */
  hb.other = b, hb.run_other = 1, hb.run_rc = 0;
  CHECK_INT(agora_publish(a, "human", "@ann again"), AGORA_OK);
  CHECK_INT(agora_publish(b, "human", "@bob hi"), AGORA_OK);
  agora_world_close(a);
  a = NULL;
  CHECK_INT(agora_run_until_quiet(b), AGORA_OK);
  CHECK_INT(hb.run_rc, AGORA_ERR_STATE);
  CHECK_HAS(agora_errmsg(), "running already");
  /* without the flag the field is not read: the world makes its own loop */
  CHECK_INT(agora_world_open(town_a, NULL, &(agora_options){.flags = AGORA_NO_SAVE, .loop = L}, &w), AGORA_OK);
  CHECK(w && agora_world_loop(w) != L);
  agora_world_close(w);
done:
  close_all(a, b, L, db);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    UNIT(two_worlds_one_loop), UNIT(the_program_runs_the_loop), UNIT(closing_one_keeps_the_other), UNIT(closing_mid_call), UNIT(a_database_beside_the_worlds),
    UNIT(wrong_use),
  };
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
