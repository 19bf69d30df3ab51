/* libagora: a NATS viewer on the program's loop (agora_options.loop with nats_url and AGORA_VIEW, what
 * `agora serve --nats` needs), against a real nats-server and an `agora host` process. Beside a plain
 * world of scripted replies on the same loop, both answer while the program runs the loop; the viewer
 * sees the hosted agent's reply; closing it from a callback (agora_world_close_later) leaves the other
 * running and none of its events on the loop, as does agora_world_close. Joining from a callback of the
 * running loop is refused, and so are a host and a publisher on a shared loop. Linked against
 * libagora.so, nothing internal included. */
#include "agora.h"
#include "agora_server.h"
#include "support/nats_proc.h"
#include "support/stderr_catch.h"
#include "support/unit.h"
#include "support/wait.h"

#include <event2/event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WATCHDOG_S 60

static const char hosted[] =
  "{\"name\": \"loopnats\", \"agents\": [{\"name\": \"a0\", \"replies\": [\"@human a0 from the host\"]}]}";
static const char plain[] =
  "{\"name\": \"loopplain\", \"agents\": [{\"name\": \"b0\", \"replies\": [\"@human b0 one\", \"@human b0 two\"]}]}";

/* What the program saw on its loop. */
typedef struct prog {
  struct event_base *L;
  agora_world *view, *plain;
  char view_text[8192], plain_text[8192]; /* "sender: text\n" per message */
  int close_rc, closed, closed_rc;
  char closed_id[AGORA_ID_MAX];
  const char *want_view, *want_plain; /* what run_until waits for (NULL: nothing) */
  int want_closed;
  const char *url, *db;
  int open_rc; /* a viewer opened from a callback */
} prog;

static void add_line(char *buf, size_t cap, const agora_event *ev) {
  if (agora_event_type(ev) != AGORA_EVENT_MESSAGE) return;
  size_t n = strlen(buf);
  snprintf(buf + n, cap - n, "%s: %s\n", agora_event_sender(ev), agora_event_text(ev));
}

static void on_view(const agora_event *ev, void *ctx) {
  prog *p = ctx;
  add_line(p->view_text, sizeof p->view_text, ev);
}

static void on_plain(const agora_event *ev, void *ctx) {
  prog *p = ctx;
  add_line(p->plain_text, sizeof p->plain_text, ev);
}

static int wanted(const prog *p) {
  return (!p->want_view || strstr(p->view_text, p->want_view)) &&
         (!p->want_plain || strstr(p->plain_text, p->want_plain)) && (!p->want_closed || p->closed);
}

static void watch(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  prog *p = arg;
  if (wanted(p)) event_base_loopbreak(p->L);
}

static void give_up(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  event_base_loopbreak(((prog *)arg)->L);
}

/* The program runs its loop (event_base_dispatch, as a server does) until what p wants is seen: 1, or 0
 * at the watchdog-bounded deadline. */
static int run_until(prog *p, long ms) {
  struct event *t = event_new(p->L, -1, EV_PERSIST, watch, p), *end = evtimer_new(p->L, give_up, p);
  struct timeval tick = {0, 10000}, tv = {ms / 1000, (ms % 1000) * 1000};
  alarm(WATCHDOG_S);
  if (t && end && !event_add(t, &tick) && !evtimer_add(end, &tv)) event_base_dispatch(p->L);
  alarm(0);
  if (t) event_free(t);
  if (end) event_free(end);
  p->want_view = p->want_plain = NULL;
  p->want_closed = 0;
  return wanted(p);
}

static int count_event(const struct event_base *b, const struct event *e, void *arg) {
  (void)b, (void)e;
  (*(int *)arg)++;
  return 0;
}

/* The events on L now: a closed world must leave none of its own. */
static int events_on(struct event_base *L) {
  int n = 0;
  event_base_foreach_event(L, count_event, &n);
  return n;
}

static int open_view(prog *p, agora_world **out) {
  agora_options o = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | AGORA_OPTIONS_5 | AGORA_OPTIONS_8 | AGORA_VIEW,
                     .nats_url = p->url, .on_event = on_view, .on_event_ctx = p, .loop = p->L};
  int rc = agora_world_open(hosted, p->db, &o, out);
  if (rc) fprintf(stderr, "agora_world_open (viewer): %s\n", agora_errmsg());
  return rc;
}

/* A nats-server under dir and p's viewer joined to it: 0 once the server runs (p->view NULL when the
 * open failed), -1 when it did not start; either failure is a failed check. */
static int view_a_server(prog *p, const char *dir, nats_node *node) {
  if (nats_start(dir, 1, NULL, node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server did not start");
    return -1;
  }
  p->url = nats_url(node, 0, 1);
  CHECK_INT(open_view(p, &p->view), AGORA_OK);
  return 0;
}

static void on_closed(const char *world_id, int rc, void *ctx) {
  prog *p = ctx;
  p->closed++;
  p->closed_rc = rc;
  snprintf(p->closed_id, sizeof p->closed_id, "%s", world_id);
}

/* The program's handler: closes the viewer later and talks to the plain world at once. */
static void close_viewer(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  prog *p = arg;
  p->close_rc = agora_world_close_later(p->view, 5000, on_closed, p);
  agora_publish(p->plain, "human", "@b0 again");
}

static void view_beside_a_plain_world(void) {
  char *dir = unit_tmpdir(), db[4096], file[4096], out[4096], err[4096];
  nats_node node;
  prog p = {.L = event_base_new()};
  pid_t host = -1;
  snprintf(db, sizeof db, "%s/db", dir);
  snprintf(file, sizeof file, "%s/hosted.json", dir);
  snprintf(out, sizeof out, "%s/host.out", dir);
  snprintf(err, sizeof err, "%s/host.err", dir);
  p.db = db;
  if (nats_start(dir, 1, NULL, &node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server did not start");
    goto done;
  }
  p.url = nats_url(&node, 0, 1);
  CHECK_INT(unit_write_file(file, hosted), 0);
  const char *args[] = {"host", file, "--nats", p.url, NULL};
  host = agora_spawn(args, out, err, NULL);
  CHECK(host > 0 && file_wait_for(err, "agora: hosting world", 30000));
  agora_options po = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_8, .on_event = on_plain, .on_event_ctx = &p,
                      .loop = p.L};
  CHECK_INT(agora_world_open(plain, db, &po, &p.plain), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(p.plain), AGORA_OK); /* what its open left to do is done */
  int alone = events_on(p.L);                          /* the plain world's, quiet */
  CHECK_INT(open_view(&p, &p.view), AGORA_OK);
  if (!p.plain || !p.view) goto stop;
  CHECK(agora_loop_world(p.L, "loopnats") == p.view);
  CHECK(events_on(p.L) > alone);
  /* both answer while the program runs its loop: the hosted agent in the other process */
  CHECK_INT(agora_publish(p.view, "human", "@a0 hello over NATS"), AGORA_OK);
  CHECK_INT(agora_publish(p.plain, "human", "@b0 hello here"), AGORA_OK);
  p.want_view = "a0: @human a0 from the host\n";
  p.want_plain = "b0: @human b0 one\n";
  CHECK(run_until(&p, 30000));
  CHECK_HAS(p.view_text, "human: @a0 hello over NATS\n");
  /* closed from a callback: the plain world goes on, and the viewer leaves no event on the loop */
  CHECK_INT(event_base_once(p.L, -1, EV_TIMEOUT, close_viewer, &p, &(struct timeval){0, 0}), 0);
  p.want_plain = "b0: @human b0 two\n";
  p.want_closed = 1;
  CHECK(run_until(&p, 30000));
  CHECK_INT(p.close_rc, AGORA_OK);
  CHECK_INT(p.closed, 1);
  CHECK_INT(p.closed_rc, AGORA_OK);
  CHECK_STR(p.closed_id, "loopnats");
  CHECK(agora_loop_world(p.L, "loopnats") == NULL);
  CHECK(agora_is_quiet(p.plain));
  CHECK_INT(events_on(p.L), alone);
  /* joined again on the same loop, it catches up with the stream's chat; agora_world_close leaves it clean */
  p.view = NULL;
  p.view_text[0] = '\0';
  CHECK_INT(open_view(&p, &p.view), AGORA_OK);
  CHECK(agora_chat_resumed(p.view));
  agora_world_close(p.view);
  p.view = NULL;
  CHECK_INT(events_on(p.L), alone);
  agora_world_close(p.plain);
  p.plain = NULL;
  CHECK_INT(events_on(p.L), 0);
stop:
  if (p.view) agora_world_close(p.view);
  agora_world_close(p.plain);
  if (host > 0) CHECK_INT(agora_stop(host, SIGTERM), 0);
  nats_node_stop(&node, SIGTERM);
done:
  event_base_free(p.L);
  unit_rmrf(dir);
  free(dir);
}

/* The server gone, a message the viewer publishes never comes back from the stream: the close gives it
 * up once the bound and the settle time have passed (it waited for it forever), says so, and leaves no
 * event on the loop; nothing is printed. */
static void close_with_the_server_gone(void) {
  char *dir = unit_tmpdir(), db[4096];
  nats_node node;
  prog p = {.L = event_base_new(), .db = db};
  snprintf(db, sizeof db, "%s/db", dir);
  if (view_a_server(&p, dir, &node)) goto done;
  nats_node_stop(&node, SIGTERM);
  if (!p.view) goto done;
  CHECK_INT(agora_publish(p.view, "human", "@a0 into the void"), AGORA_OK);
  CHECK(!agora_is_quiet(p.view)); /* on its way to the stream */
  stderr_catch caught;
  stderr_catch_start(&caught, dir);
  CHECK_INT(agora_world_close_later(p.view, 100, on_closed, &p), AGORA_OK);
  p.want_closed = 1;
  CHECK(run_until(&p, 10000));
  char *said = stderr_catch_end(&caught);
  CHECK_STR(said ? said : "?", ""); /* no nested run of the loop (libevent's reentrant warning) */
  free(said);
  CHECK_INT(p.closed_rc, AGORA_ERR_CANCELLED);
  CHECK_HAS(agora_errmsg(), "world 'loopnats': 1 message(s) still on their way to the world's stream were given up");
  CHECK_INT(events_on(p.L), 0);
done:
  event_base_free(p.L);
  unit_rmrf(dir);
  free(dir);
}

/* One of two program threads, each with a loop of its own: opens and closes a viewer of its own world
 * (its own database) round after round, beside the other thread doing the same. */
typedef struct viewer_thread {
  const char *url;
  char db[4096], world[256];
  int opened, rc;
} viewer_thread;

enum { THREAD_ROUNDS = 4 };

static void *viewer_rounds(void *arg) {
  viewer_thread *v = arg;
  struct event_base *L = event_base_new();
  agora_options o = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | AGORA_OPTIONS_5 | AGORA_OPTIONS_8 | AGORA_VIEW,
                     .nats_url = v->url, .loop = L};
  for (int i = 0; L && !v->rc && i < THREAD_ROUNDS; i++) {
    agora_world *w = NULL;
    if ((v->rc = agora_world_open(v->world, v->db, &o, &w))) fprintf(stderr, "viewer: %s\n", agora_errmsg());
    if (w) v->opened++;
    agora_world_close(w);
  }
  if (L) event_base_free(L);
  return NULL;
}

/* The process's NATS client is one for all its worlds: two threads joining and leaving NATS at once (a
 * server's worlds on loops of their threads) share it without a race (ThreadSanitizer, the threaded
 * label: the record of the client and of its parked queues had no lock). */
static void viewers_on_two_threads(void) {
  char *dir = unit_tmpdir();
  nats_node node;
  viewer_thread v[2];
  pthread_t th[2];
  int started = 0;
  if (nats_start(dir, 1, NULL, &node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server did not start");
    goto done;
  }
  for (int i = 0; i < 2; i++) {
    v[i] = (viewer_thread){.url = nats_url(&node, 0, 1)};
    snprintf(v[i].db, sizeof v[i].db, "%s/db%d", dir, i);
    snprintf(v[i].world, sizeof v[i].world,
             "{\"name\": \"threads%d\", \"agents\": [{\"name\": \"a0\", \"replies\": [\"hi\"]}]}", i);
  }
  alarm(WATCHDOG_S);
  for (; started < 2; started++)
    if (pthread_create(&th[started], NULL, viewer_rounds, &v[started])) break;
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  alarm(0);
  CHECK_INT(started, 2);
  for (int i = 0; i < started; i++) {
    CHECK_INT(v[i].rc, AGORA_OK);
    CHECK_INT(v[i].opened, THREAD_ROUNDS);
  }
  nats_node_stop(&node, SIGTERM);
done:
  unit_rmrf(dir);
  free(dir);
}

/* The longest the program's loop went without running its own 50 ms timer. */
typedef struct ticker {
  long long last, worst;
  int ticks;
} ticker;

static void tick(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  ticker *t = arg;
  long long now = now_ms();
  if (now - t->last > t->worst) t->worst = now - t->last;
  t->last = now;
  t->ticks++;
}

/* The server killed, a viewer's close on the program's loop does not hold the loop past the bound: a
 * request of the close (the stream's consumer deleted, with nobody to answer) waited for libnats' 5 s
 * timeout inside the loop's callback, and the program's other worlds and timers with it. */
static void close_holds_not_the_loop(void) {
  char *dir = unit_tmpdir(), db[4096];
  nats_node node;
  prog p = {.L = event_base_new(), .db = db};
  ticker t = {0};
  struct event *ev = event_new(p.L, -1, EV_PERSIST, tick, &t);
  snprintf(db, sizeof db, "%s/db", dir);
  if (view_a_server(&p, dir, &node)) goto done;
  nats_node_stop(&node, SIGKILL);
  if (!p.view || !ev) goto done;
  CHECK_INT(event_add(ev, &(struct timeval){0, 50000}), 0);
  long long from = t.last = now_ms();
  CHECK_INT(agora_world_close_later(p.view, 100, on_closed, &p), AGORA_OK);
  p.want_closed = 1;
  CHECK(run_until(&p, 10000));
  long long took = now_ms() - from;
  /* and once more after the close: a wait inside one of its callbacks shows as a late tick */
  for (int ticks = t.ticks; t.ticks == ticks;) event_base_loop(p.L, EVLOOP_ONCE);
  fprintf(stderr, "close took %lld ms, the loop's timer waited at most %lld ms\n", took, t.worst);
  CHECK(t.worst < 1000);
  CHECK_INT(events_on(p.L), 1); /* the program's timer alone */
done:
  if (ev) event_free(ev);
  event_base_free(p.L);
  unit_rmrf(dir);
  free(dir);
}

static void open_in_callback(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  prog *p = arg;
  agora_world *w = NULL;
  p->open_rc = open_view(p, &w);
  if (w) agora_world_close(w);
}

/* Joining waits on the loop: from a callback of the running loop it is refused before connecting (the
 * URL leads nowhere: an attempt would be AGORA_ERR_IO). A host and a publisher need a loop of their own. */
static void refused_on_a_shared_loop(void) {
  char *db = unit_tmpdir();
  prog p = {.L = event_base_new(), .url = "nats://127.0.0.1:1", .db = db};
  CHECK_INT(event_base_once(p.L, -1, EV_TIMEOUT, open_in_callback, &p, &(struct timeval){0, 0}), 0);
  alarm(WATCHDOG_S);
  CHECK(event_base_dispatch(p.L) >= 0);
  alarm(0);
  CHECK_INT(p.open_rc, AGORA_ERR_STATE);
  CHECK_HAS(agora_errmsg(), "agora_options.loop: NATS: the world's loop is running");
  agora_world *w = NULL;
  unsigned f = AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | AGORA_OPTIONS_5 | AGORA_OPTIONS_8;
  CHECK_INT(agora_world_open(hosted, db, &(agora_options){.flags = f | AGORA_HOST, .nats_url = p.url, .loop = p.L}, &w),
            AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_options.loop: with nats_url only as a viewer (AGORA_VIEW)");
  CHECK_INT(agora_world_open(hosted, db, &(agora_options){.flags = f, .nats_url = p.url, .loop = p.L}, &w),
            AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_options.loop: with nats_url only as a viewer (AGORA_VIEW)");
  CHECK(!w);
  CHECK_INT(events_on(p.L), 0);
  event_base_free(p.L);
  unit_rmrf(db);
  free(db);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(refused_on_a_shared_loop), UNIT(view_beside_a_plain_world),
                                    UNIT(close_with_the_server_gone),
                                    UNIT(close_holds_not_the_loop),
                                    UNIT(viewers_on_two_threads)};
  if (!nats_available()) {
    fprintf(stderr, "nats-server is not installed (apt-get install nats-server)\n");
    return 1;
  }
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
