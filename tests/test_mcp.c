/* The MCP client and stdio transport against real servers: the npm reference servers
 * (mcp-server-everything, mcp-server-filesystem from $AGORA_PEERS) and a small misbehaving server
 * (tests/mcp/fake_server.js): handshake, tool list, calls, structured content, progress, errors,
 * cancellation, faults (exit at start, death mid-call and restart, silence, garbage), 200 calls in flight. */
#include <cjson/cJSON.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp/child.h"
#include "mcp/client.h"
#include "mcp/stdio.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wait.h"

typedef struct server {
  struct event_base *base;
  mcp_client *c;
  mcp_stdio_config cfg;
  const char *args[4];
  char log[4200];
  int starts, start_err;
  char why[256];
  int tools_changed;
} server;

typedef struct result {
  int done, is_error;
  char *text;
} result;

static char *g_tmp;

static int connect_stdio(void *ud, struct event_base *base, const mcp_transport_sink *sink, void *sud,
                         mcp_transport **out, ag_errmsg *em) {
  server *s = ud;
  return mcp_stdio_open(base, &s->cfg, sink, sud, out, em);
}

static void on_start(void *ud, mcp_client *c, int err, const char *why) {
  (void)c;
  server *s = ud;
  s->starts++;
  s->start_err = err;
  snprintf(s->why, sizeof s->why, "%s", why);
}

static void on_tools(void *ud, mcp_client *c) {
  (void)c;
  ((server *)ud)->tools_changed++;
}

static void on_result(void *ud, const mcp_result *r) {
  result *res = ud;
  res->done++;
  res->is_error = r->is_error;
  free(res->text);
  res->text = strdup(r->text);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  *(int *)arg = 1;
}

/* Runs the loop until *flag reaches want or ms pass; returns whether it did. */
static int loop_until(struct event_base *base, const int *flag, int want, long ms) {
  int expired = 0;
  struct event *t = evtimer_new(base, on_deadline, &expired);
  struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
  evtimer_add(t, &tv);
  while (*flag < want && !expired) event_base_loop(base, EVLOOP_ONCE);
  event_free(t);
  return *flag >= want;
}

static const char *peer(const char *bin) {
  static char path[4096];
  const char *peers = getenv("AGORA_PEERS");
  snprintf(path, sizeof path, "%s/node_modules/.bin/%s", peers ? peers : "build/peers", bin);
  return path;
}

/* Starts a server: command with up to three arguments, and waits for its handshake. */
static void server_open(server *s, const char *command, const char *a1, const char *a2, const char *a3,
                        long timeout_ms) {
  memset(s, 0, sizeof *s);
  s->base = event_base_new();
  s->args[0] = a1, s->args[1] = a2, s->args[2] = a3;
  snprintf(s->log, sizeof s->log, "%s/servers.log", g_tmp);
  s->cfg = (mcp_stdio_config){.command = command, .args = s->args, .n_args = a3 ? 3 : a2 ? 2 : a1 ? 1 : 0,
                              .log_path = s->log, .name = "t"};
  mcp_client_config cc = {.name = "t", .timeout_ms = timeout_ms, .version = "0.1.0", .connect = connect_stdio,
                          .connect_ud = s};
  mcp_client_events ev = {s, on_start, on_tools};
  CHECK_INT(mcp_client_new(s->base, &cc, &ev, &s->c), AG_OK);
  mcp_client_start(s->c);
  CHECK(loop_until(s->base, &s->starts, 1, 20000));
}

static void server_close(server *s) {
  mcp_client_free(s->c);
  mcp_child_drain(3000);
  CHECK_INT(mcp_child_count(), 0);
  event_base_free(s->base);
}

/* One call, waited for. */
static void call(server *s, const char *tool, const char *args, result *r) {
  memset(r, 0, sizeof *r);
  CHECK_INT(mcp_client_call(s->c, tool, args, 0, on_result, r, NULL), AG_OK);
  CHECK(loop_until(s->base, &r->done, 1, 20000));
}

static void everything_tools_and_calls(void) {
  server s;
  result r;
  server_open(&s, peer("mcp-server-everything"), NULL, NULL, NULL, 0);
  CHECK_INT(s.start_err, AG_OK);
  CHECK(mcp_client_ready(s.c));
  const mcp_tool *echo = mcp_client_tool(s.c, "echo");
  CHECK(echo && echo->read_only && strstr(echo->input_schema, "\"message\""));
  CHECK(mcp_client_tool(s.c, "get-sum") != NULL);
  const mcp_tool *toggle = mcp_client_tool(s.c, "toggle-simulated-logging");
  CHECK(toggle && !toggle->read_only);
  call(&s, "echo", "{\"message\":\"hello there\"}", &r);
  CHECK(!r.is_error && r.text && strstr(r.text, "hello there"));
  free(r.text);
  call(&s, "get-sum", "{\"a\":2,\"b\":40}", &r);
  CHECK(!r.is_error && r.text && strstr(r.text, "42"));
  free(r.text);
  /* Structured content shows as JSON once, not again as the text that repeats it. */
  call(&s, "get-structured-content", "{\"location\":\"New York\"}", &r);
  CHECK(!r.is_error && r.text && strstr(r.text, "\"temperature\""));
  CHECK(r.text && strstr(r.text, "\"temperature\"") == strrchr(r.text, '{') + 1);
  free(r.text);
  /* A long task reporting progress (each progress restarts the 1.5 s timeout of this call). */
  memset(&r, 0, sizeof r);
  CHECK_INT(mcp_client_call(s.c, "trigger-long-running-operation", "{\"duration\":3,\"steps\":6}", 1500, on_result,
                            &r, NULL), AG_OK);
  CHECK(loop_until(s.base, &r.done, 1, 20000));
  CHECK(!r.is_error && r.text && strstr(r.text, "completed"));
  free(r.text);
  /* Errors: an unknown tool, and arguments the tool refuses. */
  call(&s, "no-such-tool", "{}", &r);
  CHECK(r.is_error && r.text);
  free(r.text);
  call(&s, "get-sum", "{\"a\":\"two\"}", &r);
  CHECK(r.is_error && r.text);
  free(r.text);
  server_close(&s);
}

static void everything_cancel_then_call(void) {
  server s;
  result slow = {0}, r;
  server_open(&s, peer("mcp-server-everything"), NULL, NULL, NULL, 0);
  mcp_call *pending;
  CHECK_INT(mcp_client_call(s.c, "trigger-long-running-operation", "{\"duration\":5,\"steps\":5}", 0, on_result,
                            &slow, &pending), AG_OK);
  int zero = 0;
  loop_until(s.base, &zero, 1, 300);
  mcp_call_cancel(pending);
  CHECK_INT(mcp_client_pending(s.c), 0);
  call(&s, "echo", "{\"message\":\"after\"}", &r);
  CHECK(!r.is_error && r.text && strstr(r.text, "after"));
  free(r.text);
  loop_until(s.base, &zero, 1, 300);
  CHECK_INT(slow.done, 0); /* a cancelled call never reports */
  server_close(&s);
}

static char *write_tree(void) {
  char *root = malloc(4200);
  snprintf(root, 4200, "%s/root", g_tmp);
  mkdir(root, 0700);
  char path[4400];
  snprintf(path, sizeof path, "%s/notes.txt", root);
  unit_write_file(path, "first note");
  return root;
}

static void filesystem_list_read_write_outside(void) {
  char *root = write_tree(), args[8800];
  server s;
  result r;
  server_open(&s, peer("mcp-server-filesystem"), root, NULL, NULL, 0);
  CHECK_INT(s.start_err, AG_OK);
  const mcp_tool *w = mcp_client_tool(s.c, "write_file"), *rd = mcp_client_tool(s.c, "read_text_file");
  CHECK(w && !w->read_only);
  CHECK(rd && rd->read_only);
  snprintf(args, sizeof args, "{\"path\":\"%s\"}", root);
  call(&s, "list_directory", args, &r);
  CHECK(!r.is_error && r.text && strstr(r.text, "notes.txt"));
  free(r.text);
  snprintf(args, sizeof args, "{\"path\":\"%s/notes.txt\"}", root);
  call(&s, "read_text_file", args, &r);
  CHECK(!r.is_error && r.text && strstr(r.text, "first note"));
  free(r.text);
  snprintf(args, sizeof args, "{\"path\":\"%s/new.txt\",\"content\":\"written by agora\"}", root);
  call(&s, "write_file", args, &r);
  CHECK(!r.is_error);
  free(r.text);
  snprintf(args, sizeof args, "%s/new.txt", root);
  char *got = unit_read_file(args);
  CHECK(got && !strcmp(got, "written by agora"));
  free(got);
  call(&s, "read_text_file", "{\"path\":\"/etc/hostname\"}", &r);
  CHECK(r.is_error && r.text && strstr(r.text, "ccess denied"));
  free(r.text);
  server_close(&s);
  free(root);
}

static const char *fake(void) { return unit_src_path("tests/mcp/fake_server.js"); }

static void fault_exit_at_start(void) {
  server s;
  result r;
  server_open(&s, "node", fake(), "exit", NULL, 0);
  CHECK(s.start_err != AG_OK);
  CHECK(strstr(s.why, "status 3") != NULL);
  call(&s, "echo", "{}", &r); /* started again after the backoff, fails again: an error result */
  CHECK(r.is_error && r.text && strstr(r.text, "status 3"));
  free(r.text);
  server_close(&s);
  /* No such command: the start fails with the name. */
  server_open(&s, "no-such-mcp-server-here", NULL, NULL, NULL, 0);
  CHECK(s.start_err != AG_OK && strstr(s.why, "no-such-mcp-server-here"));
  server_close(&s);
}

static void fault_garbage(void) {
  server s;
  server_open(&s, "node", fake(), "garbage", NULL, 0);
  CHECK(s.start_err != AG_OK);
  CHECK(strstr(s.why, "garbage") != NULL);
  char *log = unit_read_file(s.log);
  CHECK(log && strstr(log, "not JSON-RPC"));
  free(log);
  server_close(&s);
}

/* Requests from the server are answered with their id exactly (cJSON alone would write 9000000001999981
 * as 9.00000000199998e+15 and -1e999 as null); a request whose id cannot be echoed (not a string or a
 * whole number within +-(2^53-1)) gets Invalid Request with id null, never an answer to another id. */
static void server_request_ids_echoed_exactly(void) {
  server s;
  result r;
  char seen[4096];
  snprintf(seen, sizeof seen, "%s/asks.log", g_tmp);
  remove(seen);
  server_open(&s, "node", fake(), "asks", seen, 0);
  CHECK_INT(s.start_err, AG_OK);
  call(&s, "echo", "{}", &r);
  CHECK(!r.is_error && r.text && !strcmp(r.text, "asked"));
  free(r.text);
  char *log = unit_read_file(seen);
  CHECK(log != NULL);
  static const char *const want[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":9000000001999981,\"result\":{}}\n",
      "{\"jsonrpc\":\"2.0\",\"id\":-9007199254740991,\"result\":{}}\n",
      "{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"result\":{}}\n",
      "{\"jsonrpc\":\"2.0\",\"id\":8999999999999999,\"result\":{}}\n",
      "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: a request whose "
      "id is not a string or a whole number within +-(2^53-1)\"}}\n"};
  for (size_t i = 0; log && i < sizeof want / sizeof *want; i++)
    if (!strstr(log, want[i])) unit_fail_(__FILE__, __LINE__, "no line %s in:\n%s", want[i], log);
  /* Three refused (-1e999, 2^53 + 1, 1.5), and no answer carries a reprinted number. */
  size_t refused = 0;
  for (const char *p = log; p && (p = strstr(p, "-32600")); p++) refused++;
  CHECK_INT(refused, 3);
  CHECK(log && !strstr(log, "e+") && !strstr(log, "9007199254740992"));
  free(log);
  server_close(&s);
}

static void fault_silent_times_out(void) {
  server s;
  result r;
  server_open(&s, "node", fake(), "silent", NULL, 0); /* the handshake has the default time (node starts slowly) */
  CHECK_INT(s.start_err, AG_OK);
  memset(&r, 0, sizeof r);
  CHECK_INT(mcp_client_call(s.c, "echo", "{}", 600, on_result, &r, NULL), AG_OK);
  CHECK(loop_until(s.base, &r.done, 1, 20000));
  CHECK(r.is_error && r.text && strstr(r.text, "no answer within 600 ms"));
  free(r.text);
  CHECK(mcp_client_ready(s.c)); /* a slow call is not a dead server */
  server_close(&s);
}

static void fault_dies_mid_call_then_restarts(void) {
  server s;
  result r;
  char marker[4200];
  snprintf(marker, sizeof marker, "%s/died", g_tmp);
  server_open(&s, "node", fake(), "die-once", marker, 0);
  int pid1 = mcp_stdio_pid(mcp_client_transport(s.c));
  call(&s, "echo", "{\"text\":\"one\"}", &r);
  CHECK(r.is_error && r.text && strstr(r.text, "status 9"));
  free(r.text);
  call(&s, "echo", "{\"text\":\"two\"}", &r);
  CHECK(!r.is_error && r.text && strstr(r.text, "echo: two"));
  free(r.text);
  CHECK_INT(s.starts, 2);
  CHECK(pid1 != mcp_stdio_pid(mcp_client_transport(s.c)));
  server_close(&s);
}

static void paged_list_and_list_changed(void) {
  server s;
  result r;
  server_open(&s, "node", fake(), "paged", NULL, 0);
  size_t n;
  mcp_client_tools(s.c, &n);
  CHECK_INT(n, 2);
  call(&s, "grow", "{}", &r);
  free(r.text);
  CHECK(loop_until(s.base, &s.tools_changed, 1, 5000));
  mcp_client_tools(s.c, &n);
  CHECK_INT(n, 3);
  CHECK(mcp_client_tool(s.c, "extra2") != NULL);
  server_close(&s);
}

#define CONCURRENT 200

static void two_hundred_calls_one_server(void) {
  server s;
  static result rs[CONCURRENT];
  static int answered;
  memset(rs, 0, sizeof rs);
  answered = 0;
  server_open(&s, "node", fake(), "ok", NULL, 0);
  int pid = mcp_stdio_pid(mcp_client_transport(s.c));
  char args[64];
  for (int i = 0; i < CONCURRENT; i++) {
    snprintf(args, sizeof args, "{\"text\":\"n%d\"}", i);
    CHECK_INT(mcp_client_call(s.c, "echo", args, 0, on_result, &rs[i], NULL), AG_OK);
  }
  CHECK_INT(mcp_client_pending(s.c), CONCURRENT);
  for (long waited = 0; waited < 20000 && mcp_client_pending(s.c); waited += 50) loop_until(s.base, &answered, 1, 50);
  CHECK_INT(mcp_client_pending(s.c), 0);
  char want[64], pidtext[32];
  snprintf(pidtext, sizeof pidtext, "pid %d", pid);
  for (int i = 0; i < CONCURRENT; i++) {
    snprintf(want, sizeof want, "echo: n%d ", i);
    CHECK_INT(rs[i].done, 1);
    CHECK(!rs[i].is_error && rs[i].text && strstr(rs[i].text, want) && strstr(rs[i].text, pidtext));
    free(rs[i].text);
  }
  server_close(&s);
}

/* An in-memory transport playing an HTTP server whose session expires at the first tool call: the
 * contract of mcp/http.h (on_closed "session expired"; the client closes it and initializes again). */
typedef struct mem_transport {
  mcp_transport hdr;
  const mcp_transport_sink *sink;
  void *ud;
  struct event *tick;
  char *pending;   /* one answer to deliver from the loop */
  int expire;      /* close with "session expired" from the loop */
} mem_transport;

static int g_inits, g_mem_calls;

static void mem_tick(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  mem_transport *t = arg;
  if (t->expire) {
    t->expire = 0;
    t->sink->on_closed(t->ud, MCP_SESSION_EXPIRED);
    return;
  }
  char *msg = t->pending;
  t->pending = NULL;
  if (msg) t->sink->on_message(t->ud, msg, strlen(msg));
  free(msg);
}

static int mem_send(mcp_transport *tr, const char *json, size_t len) {
  mem_transport *t = (mem_transport *)tr;
  cJSON *m = cJSON_ParseWithLength(json, len);
  const char *method = cJSON_GetStringValue(cJSON_GetObjectItem(m, "method"));
  int id = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(m, "id"));
  char buf[512] = "";
  if (!strcmp(method, "initialize")) {
    g_inits++;
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"protocolVersion\":\"2025-06-18\"}}", id);
  } else if (!strcmp(method, "tools/list")) {
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"tools\":[{\"name\":\"t\"}]}}", id);
  } else if (!strcmp(method, "tools/call") && g_mem_calls++ == 0) {
    t->expire = 1;
  } else if (!strcmp(method, "tools/call")) {
    snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"fine\"}]}}", id);
  }
  cJSON_Delete(m);
  if (buf[0]) t->pending = strdup(buf);
  if (buf[0] || t->expire) event_active(t->tick, EV_TIMEOUT, 0);
  return AG_OK;
}

static void mem_close(mcp_transport *tr) {
  mem_transport *t = (mem_transport *)tr;
  event_free(t->tick);
  free(t->pending);
  free(t);
}

static const mcp_transport_ops mem_ops = {mem_send, mem_close};

static int connect_mem(void *ud, struct event_base *base, const mcp_transport_sink *sink, void *sud,
                       mcp_transport **out, ag_errmsg *em) {
  (void)ud, (void)em;
  mem_transport *t = calloc(1, sizeof *t);
  t->hdr.ops = &mem_ops;
  t->sink = sink;
  t->ud = sud;
  t->tick = event_new(base, -1, 0, mem_tick, t);
  *out = &t->hdr;
  return AG_OK;
}

static void session_expiry_initializes_again_once(void) {
  server s;
  memset(&s, 0, sizeof s);
  s.base = event_base_new();
  mcp_client_config cc = {.name = "h", .version = "0", .connect = connect_mem};
  mcp_client_events ev = {&s, on_start, NULL};
  CHECK_INT(mcp_client_new(s.base, &cc, &ev, &s.c), AG_OK);
  mcp_client_start(s.c);
  CHECK(loop_until(s.base, &s.starts, 1, 5000));
  CHECK_INT(g_inits, 1);
  result r;
  call(&s, "t", "{}", &r); /* the session expires under it: an error result, and a new session at once */
  CHECK(r.is_error && r.text && strstr(r.text, "session expired"));
  free(r.text);
  CHECK(loop_until(s.base, &s.starts, 2, 5000));
  CHECK_INT(g_inits, 2);
  CHECK(mcp_client_ready(s.c));
  call(&s, "t", "{}", &r);
  CHECK(!r.is_error && r.text && !strcmp(r.text, "fine"));
  free(r.text);
  mcp_client_free(s.c);
  event_base_free(s.base);
}

/* Whether pid is gone or a zombie (its parent, init, may reap it later): /proc/PID/stat's state. */
static int process_ended(long pid) {
  char path[64], *stat;
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  if (!(stat = unit_read_file(path))) return 1;
  const char *paren = strrchr(stat, ')');
  int ended = paren && (paren[2] == 'Z' || paren[2] == 'X');
  free(stat);
  return ended;
}

static void on_exit_seen(void *ud, int status) {
  (void)status;
  (*(int *)ud)++;
}

/* An npx-style server: sh starts `sleep 777` in its group, writes its pid, and ends when its stdin
 * does (released) or at once (exited on its own). The sleep must end too, though the leader is gone
 * by then; returns the sleep's pid. */
static long spawn_npx_like(struct event_base *base, int exit_at_once, mcp_child **child, int *exited, int *in_w) {
  char pidfile[4200], script[13000];
  snprintf(pidfile, sizeof pidfile, "%s/sleep%d.pid", g_tmp, exit_at_once);
  remove(pidfile);
  snprintf(script, sizeof script, "sleep 777 & echo $! > '%s.tmp' && mv '%s.tmp' '%s'; %s", pidfile, pidfile,
           pidfile, exit_at_once ? "exit 0" : "read x");
  int in[2];
  CHECK_INT(pipe(in), 0);
  int null = open("/dev/null", O_WRONLY);
  char *argv[] = {"sh", "-c", script, NULL}, *envp[] = {"PATH=/usr/bin:/bin", NULL};
  mcp_spawn sp = {.path = "/bin/sh", .argv = argv, .envp = envp, .fd_in = in[0], .fd_out = null, .fd_err = null};
  ag_errmsg em = {""};
  CHECK_INT(mcp_child_spawn(base, &sp, on_exit_seen, exited, child, &em), AG_OK);
  close(in[0]);
  close(null);
  *in_w = in[1];
  char *text = NULL;
  for (long long end = now_ms() + wait_budget_ms(5000); !(text = unit_read_file(pidfile)) && now_ms() < end;)
    wait_nap_ms(1); /* the file appears */
  long pid = text ? strtol(text, NULL, 10) : 0;
  free(text);
  CHECK(pid > 0);
  return pid;
}

/* Polls the sleep's state (an observation, not a sleep to wait out) for up to ms (stretched on slow
 * builds). */
static int ends_within(struct event_base *base, long pid, long ms) {
  for (long long end = now_ms() + wait_budget_ms(ms); now_ms() < end; wait_nap_ms(10)) {
    if (process_ended(pid)) return 1;
    event_base_loop(base, EVLOOP_NONBLOCK);
  }
  return process_ended(pid);
}

static void server_group_ends_with_its_leader(void) {
  struct event_base *base = event_base_new();
  mcp_child *child = NULL;
  int exited = 0, in_w = -1;
  /* Released: stdin closes, sh ends, and its sleep is signalled though its leader is reaped. */
  long pid = spawn_npx_like(base, 0, &child, &exited, &in_w);
  close(in_w);
  mcp_child_release(child, 5000);
  /* As world_mcp_stop does: the loop runs until the leader is reaped, then the drain. */
  for (int i = 0; i < 500 && mcp_child_count() > 0; i++) event_base_loop(base, EVLOOP_ONCE);
  mcp_child_drain(3000);
  CHECK_INT(mcp_child_count(), 0);
  CHECK(ends_within(base, pid, 3000));
  if (!process_ended(pid)) kill((pid_t)pid, SIGKILL);
  /* Exited on its own while in use (a crash): the exit is reported and its group does not stay. */
  pid = spawn_npx_like(base, 1, &child, &exited, &in_w);
  CHECK(loop_until(base, &exited, 1, 5000));
  CHECK(ends_within(base, pid, 3000));
  if (!process_ended(pid)) kill((pid_t)pid, SIGKILL);
  close(in_w);
  mcp_child_drain(3000);
  CHECK_INT(mcp_child_count(), 0);
  event_base_free(base);
}

SUITE_RUN((UNIT(everything_tools_and_calls), UNIT(everything_cancel_then_call),
  UNIT(filesystem_list_read_write_outside), UNIT(fault_exit_at_start), UNIT(fault_garbage),
  UNIT(fault_silent_times_out), UNIT(server_request_ids_echoed_exactly), UNIT(fault_dies_mid_call_then_restarts),
  UNIT(paged_list_and_list_changed), UNIT(two_hundred_calls_one_server), UNIT(session_expiry_initializes_again_once),
  UNIT(server_group_ends_with_its_leader)), .tmp = &g_tmp)
