/* MCP servers of worlds on a loop the program runs (API 8, include/agora_server.h "Several worlds on one loop"):
 * a world with mcp_servers opened from a callback of the program's running loop is refused (starting its
 * servers would wait on that loop), and one closed from such a callback stops its server without waiting,
 * the child reaped as the loop goes on (no zombie); so does one closed from a callback of another world
 * while a run function runs the loop, and a Streamable HTTP server's. Closing one of two such worlds
 * leaves the other's server running. Both waits used to spin at 100% CPU, libevent refusing
 * the nested run: each case has a watchdog (alarm) that fails the test. Linked against libagora.so. */
#include "agora.h"
#include "support/mcp_fault.h"
#include "support/proc.h"
#include "support/stderr_catch.h"
#include "support/unit.h"
#include "support/wait.h"

#include <ctype.h>
#include <dirent.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WATCHDOG_S 30

static void on_watchdog(int sig) {
  (void)sig;
  static const char msg[] = "FAIL: watchdog: the loop hung (a wait that spins instead of returning)\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(2);
  _exit(1);
}

/* A world named name whose one server is tests/mcp/fake_server.js (node, ends when its stdin closes). */
static const char *mcp_world_named(const char *name) {
  static char json[2048];
  snprintf(json, sizeof json, "{\"name\": \"%s\", \"mcp_servers\": {\"fake\": {\"command\": \"node\", \"args\":"
           " [\"%s\", \"ok\"]}}, \"agents\": [{\"name\": \"t\", \"provider\": \"script\","
           " \"tools\": [\"fake.echo\"]}]}",
           name, unit_src_path("tests/mcp/fake_server.js"));
  return json;
}

static int open_named(struct event_base *L, const char *name, agora_world **w) {
  agora_options o = {.flags = AGORA_NO_SAVE | AGORA_OPTIONS_3 | AGORA_OPTIONS_8, .loop = L};
  return agora_world_open(mcp_world_named(name), NULL, &o, w);
}

static int open_on(struct event_base *L, agora_world **w) { return open_named(L, "Tooled", w); }

static int no_child(void *arg) {
  (void)arg;
  return proc_children() == 0;
}

/* What a callback of the program's did, and saw, on its loop. */
typedef struct in_cb {
  struct event_base *L;
  agora_world *w;
  int rc;
  char msg[512];
  int children; /* right after the call */
  long took_ms;
} in_cb;

static void open_in_callback(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  in_cb *c = arg;
  long long t0 = now_ms();
  c->rc = open_on(c->L, &c->w);
  c->took_ms = now_ms() - t0;
  snprintf(c->msg, sizeof c->msg, "%s", agora_errmsg());
  c->children = proc_children();
  event_base_loopbreak(c->L);
}

/* Runs the program's loop L with stderr caught: what the library (and libevent for it) printed, which
 * must be nothing (caller frees). */
static char *dispatch_quietly(struct event_base *L) {
  char *dir = unit_tmpdir();
  stderr_catch sc;
  stderr_catch_start(&sc, dir);
  CHECK_INT(event_base_dispatch(L), 0);
  char *err = stderr_catch_end(&sc);
  unit_rmrf(dir);
  free(dir);
  return err;
}

/* Opened from a timer of the program's while it runs event_base_dispatch: AGORA_ERR_STATE naming the
 * option and the callback, no server spawned, nothing on stderr (libevent's "reentrant invocation"
 * warning used to be how the running loop was found out); the same world then opens outside the
 * callbacks. */
static void open_from_a_callback(void) {
  struct event_base *L = event_base_new();
  in_cb c = {.L = L, .rc = 1};
  alarm(WATCHDOG_S);
  CHECK_INT(event_base_once(L, -1, EV_TIMEOUT, open_in_callback, &c, &(struct timeval){.tv_sec = 0}), 0);
  char *err = dispatch_quietly(L);
  CHECK_STR(err, "");
  free(err);
  CHECK_INT(c.rc, AGORA_ERR_STATE);
  CHECK(c.w == NULL);
  CHECK(strstr(c.msg, "agora_options.loop") && strstr(c.msg, "callback") && strstr(c.msg, "mcp_servers"));
  CHECK_INT(c.children, 0); /* refused before anything was spawned */
  CHECK_INT(agora_loop_worlds(L, NULL, 0), 0);
  agora_world *w = NULL; /* the loop is not running now: the same open works */
  CHECK_INT(open_on(L, &w), AGORA_OK);
  CHECK_INT(proc_children(), 1);
  agora_world_close(w);
  CHECK_INT(proc_children(), 0); /* a close outside the callbacks still waits the server out */
  alarm(0);
  event_base_free(L);
}

static void close_in_callback(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  in_cb *c = arg;
  long long t0 = now_ms();
  agora_world_close(c->w);
  c->took_ms = now_ms() - t0;
  c->w = NULL;
  c->children = proc_children();
}

/* The program's poll: ends its loop once this process has no child left, reaped or not. */
static void until_no_child(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  if (!proc_children()) event_base_loopbreak(arg);
}

/* Closed from a timer of the program's while it runs event_base_dispatch: the close returns without
 * waiting, prints nothing, the server ends and is reaped as the loop goes on (no zombie), and nothing of
 * the world's stays on the loop. */
static void close_from_a_callback(void) {
  struct event_base *L = event_base_new();
  in_cb c = {.L = L};
  alarm(WATCHDOG_S);
  int before = event_base_get_num_events(L, EVENT_BASE_COUNT_ADDED);
  CHECK_INT(open_on(L, &c.w), AGORA_OK);
  if (!c.w) goto done;
  CHECK_INT(proc_children(), 1);
  CHECK_INT(event_base_once(L, -1, EV_TIMEOUT, close_in_callback, &c, &(struct timeval){.tv_sec = 0}), 0);
  struct event *poll = event_new(L, -1, EV_PERSIST, until_no_child, L);
  evtimer_add(poll, &(struct timeval){.tv_usec = 20 * 1000});
  long long t0 = now_ms();
  char *err = dispatch_quietly(L);
  CHECK_STR(err, "");
  free(err);
  fprintf(stderr, "  close in the callback: %ld ms (%d child right after); reaped %lld ms after the dispatch began\n",
          c.took_ms, c.children, now_ms() - t0);
  CHECK(c.w == NULL);
  CHECK_INT(proc_children(), 0);
  event_free(poll);
  CHECK_INT(agora_loop_worlds(L, NULL, 0), 0);
  CHECK_INT(event_base_get_num_events(L, EVENT_BASE_COUNT_ADDED), before); /* the SIGCHLD event went too */
done:
  alarm(0);
  event_base_free(L);
}

static void close_on_reply(const agora_event *ev, void *ctx) {
  in_cb *c = ctx;
  const char *sender = agora_event_sender(ev);
  if (agora_event_type(ev) != AGORA_EVENT_MESSAGE || !sender || !strcmp(sender, "human") || !c->w) return;
  agora_world_close(c->w);
  c->w = NULL;
}

/* Closed from a callback of another world on the loop, while a run function of the library runs it:
 * the same, without the program's dispatch (the run returns, the server is reaped as the loop goes on). */
static void close_from_a_run(void) {
  static const char town[] = "{\"name\": \"Town\", \"defaults\": {\"provider\": \"script\"}, \"agents\": ["
                             " {\"name\": \"ann\", \"replies\": [\"@human ann here\"]}]}";
  struct event_base *L = event_base_new();
  in_cb c = {.L = L};
  agora_world *b = NULL;
  alarm(WATCHDOG_S);
  agora_options o = {.flags = AGORA_NO_SAVE | AGORA_OPTIONS_3 | AGORA_OPTIONS_8, .loop = L,
                     .on_event = close_on_reply, .on_event_ctx = &c};
  CHECK_INT(open_on(L, &c.w), AGORA_OK);
  CHECK_INT(agora_world_open(town, NULL, &o, &b), AGORA_OK);
  if (!c.w || !b) goto done;
  CHECK_INT(agora_publish(b, "human", "@ann hi"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(b), AGORA_OK);
  CHECK(c.w == NULL);
  struct event *poll = event_new(L, -1, EV_PERSIST, until_no_child, L);
  evtimer_add(poll, &(struct timeval){.tv_usec = 20 * 1000});
  CHECK_INT(event_base_dispatch(L), 0);
  CHECK_INT(proc_children(), 0);
  event_free(poll);
  CHECK_INT(agora_loop_worlds(L, NULL, 0), 1);
done:
  agora_world_close(c.w);
  agora_world_close(b);
  alarm(0);
  event_base_free(L);
}

static void break_now(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  event_base_loopbreak(arg);
}

/* A Streamable HTTP server closed from a timer of the program's: the session's DELETE is not waited for
 * (it goes with the world), and nothing of the world's stays on the loop, which goes on. */
static void close_http_from_a_callback(void) {
  mcp_fault *srv = NULL;
  if (mcp_fault_start(&srv)) {
    CHECK(!"mcp_fault_start");
    return;
  }
  char json[1024];
  snprintf(json, sizeof json, "{\"name\": \"Web\", \"mcp_servers\": {\"f\": {\"url\": \"%s\"}}, \"agents\":"
           " [{\"name\": \"t\", \"provider\": \"script\"}]}", mcp_fault_url(srv));
  struct event_base *L = event_base_new();
  in_cb c = {.L = L};
  alarm(WATCHDOG_S);
  int before = event_base_get_num_events(L, EVENT_BASE_COUNT_ADDED);
  agora_options o = {.flags = AGORA_NO_SAVE | AGORA_OPTIONS_3 | AGORA_OPTIONS_8, .loop = L};
  CHECK_INT(agora_world_open(json, NULL, &o, &c.w), AGORA_OK);
  CHECK(mcp_fault_count_method(srv, "POST") >= 1); /* its session was opened */
  CHECK_INT(event_base_once(L, -1, EV_TIMEOUT, close_in_callback, &c, &(struct timeval){.tv_sec = 0}), 0);
  CHECK_INT(event_base_once(L, -1, EV_TIMEOUT, break_now, L, &(struct timeval){.tv_usec = 50 * 1000}), 0);
  CHECK_INT(event_base_dispatch(L), 0);
  CHECK(c.w == NULL);
  CHECK_INT(event_base_get_num_events(L, EVENT_BASE_COUNT_ADDED), before);
  alarm(0);
  agora_world_close(c.w);
  event_base_free(L);
  mcp_fault_stop(srv);
}

/* Two worlds with MCP servers on one loop: closing one (outside the callbacks) waits out its own server
 * only; the other's keeps running (the process-wide children are not all the closing world's). */
static void closing_one_keeps_the_others_server(void) {
  struct event_base *L = event_base_new();
  agora_world *a = NULL, *b = NULL;
  alarm(WATCHDOG_S);
  CHECK_INT(open_named(L, "ToolsA", &a), AGORA_OK);
  CHECK_INT(open_named(L, "ToolsB", &b), AGORA_OK);
  if (!a || !b) goto done;
  CHECK_INT(proc_children(), 2);
  long long t0 = now_ms();
  agora_world_close(a);
  a = NULL;
  fprintf(stderr, "  closing one of two: %lld ms\n", now_ms() - t0);
  CHECK_INT(proc_children(), 1); /* b's server, not reaped: still running */
  agora_world_close(b);
  b = NULL;
  CHECK_INT(proc_children(), 0);
done:
  agora_world_close(a);
  agora_world_close(b);
  alarm(0);
  event_base_free(L);
}

/* A world of the tool agent's on loop L named name: its agent calls fake.echo with text name, then says
 * done; *seen counts the tool results that carry the echo. */
typedef struct tooled {
  const char *name;
  int seen;
} tooled;

static void count_echo(const agora_event *ev, void *ctx) {
  tooled *t = ctx;
  const char *json = agora_event_json(ev);
  char want[64];
  snprintf(want, sizeof want, "echo: %s pid", t->name);
  if (agora_event_type(ev) == AGORA_EVENT_WORLD && json && strstr(json, want)) t->seen++;
}

static int open_calling(struct event_base *L, tooled *t, agora_world **w) {
  char json[2048];
  snprintf(json, sizeof json, "{\"name\": \"%s\", \"mcp_servers\": {\"fake\": {\"command\": \"node\", \"args\":"
           " [\"%s\", \"ok\"]}}, \"agents\": [{\"name\": \"t\", \"provider\": \"script\", \"tools\": [\"fake.echo\"],"
           " \"replies\": [{\"tool\": \"echo\", \"args\": {\"text\": \"%s\"}}, \"done\"]}]}",
           t->name, unit_src_path("tests/mcp/fake_server.js"), t->name);
  agora_options o = {.flags = AGORA_NO_SAVE | AGORA_OPTIONS_3 | AGORA_OPTIONS_8, .loop = L,
                     .on_event = count_echo, .on_event_ctx = t};
  int rc = agora_world_open(json, NULL, &o, w);
  if (rc) fprintf(stderr, "agora_world_open %s: %s\n", t->name, agora_errmsg());
  return rc;
}

/* Worlds with MCP servers on two loops: both servers start, both agents' tool calls are answered, and
 * closing the second loop's world (its loop alone run) reaps its server at once, the first's going on;
 * then the first's, no zombie left. Children used to be reaped by one SIGCHLD event on the loop that
 * started the first server: the second loop's server stayed a zombie until that loop ran. */
static void servers_on_two_loops(void) {
  struct event_base *L1 = event_base_new(), *L2 = event_base_new();
  tooled ta = {.name = "LoopOne"}, tb = {.name = "LoopTwo"};
  agora_world *a = NULL, *b = NULL;
  alarm(WATCHDOG_S);
  CHECK_INT(open_calling(L1, &ta, &a), AGORA_OK);
  CHECK_INT(open_calling(L2, &tb, &b), AGORA_OK);
  if (!a || !b) goto done;
  CHECK_INT(proc_children(), 2);
  CHECK_INT(agora_publish(a, "human", "@t go"), AGORA_OK);
  CHECK_INT(agora_publish(b, "human", "@t go"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(b), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(a), AGORA_OK);
  CHECK_INT(ta.seen, 1);
  CHECK_INT(tb.seen, 1);
  long long t0 = now_ms();
  agora_world_close(b);
  b = NULL;
  fprintf(stderr, "  closing the second loop's world: %lld ms\n", now_ms() - t0);
  CHECK_INT(proc_children(), 1); /* the second's server reaped (no zombie), the first's running */
  agora_world_close(a);
  a = NULL;
  CHECK_INT(proc_children(), 0);
done:
  agora_world_close(b);
  agora_world_close(a);
  alarm(0);
  event_base_free(L2);
  event_base_free(L1);
}

static void close_and_stop(evutil_socket_t fd, short what, void *arg) {
  in_cb *c = arg;
  close_in_callback(fd, what, arg);
  event_base_loopbreak(c->L);
}

/* The program frees its loop right after closing a world with an MCP server from a callback on it (the
 * close does not wait): the server is still running (a shell around fake_server.js that lingers a second
 * after its stdin closes), and nothing of it was on the loop. It gets its SIGTERM half a second later and
 * is reaped all the same (no zombie), and a world with a server on a new loop then starts, stops and is
 * reaped (the process-wide reaper was not left pointing into the freed loop). Under ASan, a use of the
 * freed loop fails the test. */
static void loop_freed_while_a_server_ends(void) {
  struct event_base *L = event_base_new();
  in_cb c = {.L = L};
  alarm(WATCHDOG_S);
  char json[2048];
  snprintf(json, sizeof json, "{\"name\": \"Slow\", \"mcp_servers\": {\"fake\": {\"command\": \"sh\", \"args\":"
           " [\"-c\", \"node \\\"$0\\\" ok; sleep 1\", \"%s\"]}}, \"agents\": [{\"name\": \"t\", \"provider\":"
           " \"script\", \"tools\": [\"fake.echo\"]}]}", unit_src_path("tests/mcp/fake_server.js"));
  agora_options o = {.flags = AGORA_NO_SAVE | AGORA_OPTIONS_3 | AGORA_OPTIONS_8, .loop = L};
  CHECK_INT(agora_world_open(json, NULL, &o, &c.w), AGORA_OK);
  CHECK_INT(event_base_once(L, -1, EV_TIMEOUT, close_and_stop, &c, &(struct timeval){.tv_sec = 0}), 0);
  CHECK_INT(event_base_dispatch(L), 0);
  CHECK(c.w == NULL);
  CHECK_INT(c.children, 1); /* still ending when the loop is freed */
  event_base_free(L);
  CHECK(wait_until(no_child, NULL, 3000));
  struct event_base *L2 = event_base_new();
  agora_world *w = NULL;
  CHECK_INT(open_on(L2, &w), AGORA_OK);
  CHECK_INT(proc_children(), 1);
  agora_world_close(w);
  CHECK_INT(proc_children(), 0);
  event_base_free(L2);
  alarm(0);
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_watchdog);
  static const unit_test tests[] = {
    UNIT(open_from_a_callback), UNIT(close_from_a_callback), UNIT(close_from_a_run), UNIT(close_http_from_a_callback),
    UNIT(closing_one_keeps_the_others_server), UNIT(servers_on_two_loops), UNIT(loop_freed_while_a_server_ends),
  };
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
