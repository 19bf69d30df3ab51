/* A world's MCP servers (see world_mcp.h). */
#include "world/world_mcp.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/loop_running.h"
#include "mcp/child.h"
#include "mcp/expand.h"
#include "mcp/stdio.h"
#if __has_include("mcp/http.h")
#include "mcp/http.h"
#include "net/net_fetch.h"
#define WORLD_MCP_HTTP 1
#endif

#define WORLD_MCP_WAIT_MS 120000L

typedef struct server {
  world_mcp *m;
  const world_mcp_server *spec; /* borrowed from the world's spec */
  mcp_client *c;
  int started, ready;
  int needed; /* an agent refers to it and it is not ready: the start fails */
  char why[256];
} server;

struct world_mcp {
  world *w;
  server *servers;
  size_t n;
  size_t started;
  char *log_path;
};

world_mcp **world__mcp_slot(world *w);

static int connect_stdio(server *s, struct event_base *base, const mcp_transport_sink *sink, void *sud,
                         mcp_transport **out, ag_errmsg *em) {
  const world_mcp_server *sp = s->spec;
  mcp_stdio_config cfg = {sp->command, (const char *const *)sp->args, sp->n_args,
                          (const char *const *)sp->env_names, (const char *const *)sp->env_values, sp->n_env,
                          sp->cwd, s->m->log_path, sp->name};
  return mcp_stdio_open(base, &cfg, sink, sud, out, em);
}

#ifdef WORLD_MCP_HTTP
/* The headers with ${VAR} read now; the values are wiped once the transport copied them. */
static int connect_http(server *s, const mcp_transport_sink *sink, void *sud, mcp_transport **out, ag_errmsg *em) {
  const world_mcp_server *sp = s->spec;
  mcp_http_header *h = calloc(sp->n_headers + 1, sizeof *h);
  char **vals = calloc(sp->n_headers + 1, sizeof *vals);
  int rc = h && vals ? AG_OK : ag_fail(em, AG_ERR_NOMEM, "out of memory");
  for (size_t i = 0; !rc && i < sp->n_headers; i++) {
    char what[300];
    snprintf(what, sizeof what, "mcp_servers.%s.headers.%s", sp->name, sp->header_names[i]);
    if (!(rc = mcp_expand(sp->header_values[i], what, &vals[i], em))) h[i] = (mcp_http_header){sp->header_names[i], vals[i]};
  }
  mcp_http_options opt = {.url = sp->url, .headers = h, .n_headers = sp->n_headers, .timeout_ms = sp->timeout_ms};
  if (!rc && (rc = mcp_http_open(llm_client_net(world_llm(s->m->w)), &opt, sink, sud, out)))
    ag_fail(em, rc, "%s: cannot reach %s", sp->name, sp->url);
  for (size_t i = 0; vals && i < sp->n_headers; i++)
    if (vals[i]) memset(vals[i], 0, strlen(vals[i])), free(vals[i]);
  free(vals);
  free(h);
  return rc;
}
#endif

/* The values of the server's ${VAR}s, read as the start reads them, for the client to scrub. */
static int redact_server_vars(server *s) {
  const world_mcp_server *sp = s->spec;
  const char **all = calloc(sp->n_env + sp->n_headers + 1, sizeof *all);
  if (!all) return AG_ERR_NOMEM;
  for (size_t i = 0; i < sp->n_env; i++) all[i] = sp->env_values[i];
  for (size_t i = 0; i < sp->n_headers; i++) all[sp->n_env + i] = sp->header_values[i];
  int rc = mcp_client_redact_vars(s->c, all, sp->n_env + sp->n_headers);
  free(all);
  return rc;
}

static int connect_server(void *ud, struct event_base *base, const mcp_transport_sink *sink, void *sud,
                          mcp_transport **out, ag_errmsg *em) {
  server *s = ud;
  if (redact_server_vars(s)) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  if (s->spec->command) return connect_stdio(s, base, sink, sud, out, em);
#ifdef WORLD_MCP_HTTP
  return connect_http(s, sink, sud, out, em);
#else
  return ag_fail(em, AG_ERR_INVALID, "Streamable HTTP servers (url) are not in this build");
#endif
}

static server *find(world_mcp *m, const char *name) {
  for (size_t i = 0; i < m->n; i++)
    if (!strcmp(m->servers[i].spec->name, name)) return &m->servers[i];
  return NULL;
}

/* Resolves agent a's references (index ai) into its tool set. A server that is not ready is marked
 * needed (when note_needed) and skipped. */
static int resolve_agent(world_mcp *m, agent *a, size_t ai, int note_needed, ag_errmsg *em) {
  const agent_settings *st = agent_settings_of(a);
  if (!st->n_mcp) return AG_OK;
  const char *taken[TOOL_COUNT];
  size_t n_taken = 0;
  for (int t = 0; t < TOOL_COUNT; t++)
    if (st->tools & TOOL_BIT(t)) taken[n_taken++] = tool_name((tool_id)t);
  agent_mcp_set set = {0};
  int rc = AG_OK;
  for (size_t j = 0; j < st->n_mcp && !rc; j++) {
    server *s = find(m, st->mcp[j].server);
    if (!s || !s->ready || !s->c) {
      if (s && note_needed) s->needed = 1;
      continue;
    }
    ag_errmsg why = {""};
    rc = agent_mcp_set_add(&set, &st->mcp[j], s->c, taken, n_taken, &why);
    if (rc == AG_ERR_NOT_FOUND || rc == AG_ERR_EXISTS) rc = ag_fail(em, AG_ERR_INVALID, "agents[%zu] (%s): %s", ai, st->name, why.text);
  }
  if (!rc) rc = agent_set_mcp_tools(a, &set);
  agent_mcp_set_free(&set);
  return rc;
}

static int resolve_all(world_mcp *m, int note_needed, ag_errmsg *em) {
  for (size_t i = 0; i < world_agent_count(m->w); i++) {
    int rc = resolve_agent(m, world_agent_at(m->w, i), i, note_needed, em);
    if (rc) return rc;
  }
  return AG_OK;
}

static void emit_error(server *s, const char *why) {
  world_emit(s->m->w, &(world_event){EV_MCP_ERROR, .u.mcp = {s->spec->name, why}});
}

static void on_start(void *ud, mcp_client *c, int err, const char *why) {
  (void)c;
  server *s = ud;
  if (!s->started) s->m->started++;
  s->started = 1;
  s->ready = !err;
  snprintf(s->why, sizeof s->why, "%s", err ? why : "");
  if (err) emit_error(s, why);
}

/* The server's list changed: every agent gets its tools again (a clash is an mcp-error). */
static void on_tools(void *ud, mcp_client *c) {
  (void)c;
  server *s = ud;
  ag_errmsg em = {""};
  if (resolve_all(s->m, 0, &em)) emit_error(s, em.text[0] ? em.text : "cannot update the tools");
}

static void on_deadline(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  *(int *)arg = 1;
}

/* Runs the loop until every server finished its first start or ms passed. A turn that returns -1 is
 * libevent refusing a nested run of a loop that is running: the wait ends (world_mcp_start refused that
 * case before spawning; this keeps the wait from spinning at 100% CPU all the same). */
static void wait_started(world_mcp *m, long ms) {
  struct event_base *base = world_base(m->w);
  int expired = 0;
  struct event *t = evtimer_new(base, on_deadline, &expired);
  struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
  if (t) evtimer_add(t, &tv);
  while (t && m->started < m->n && !expired)
    if (event_base_loop(base, EVLOOP_ONCE) < 0) break;
  if (t) event_free(t);
  for (size_t i = 0; i < m->n; i++) {
    server *s = &m->servers[i];
    if (s->started) continue;
    snprintf(s->why, sizeof s->why, "not ready within %ld ms", ms);
    emit_error(s, s->why);
  }
}

/* The agents that refer to server s, "a, b", each once. */
static int needers(world_mcp *m, const server *s, ag_buf *out) {
  int rc = AG_OK;
  for (size_t i = 0; i < world_agent_count(m->w) && !rc; i++) {
    const agent_settings *st = agent_settings_of(world_agent_at(m->w, i));
    for (size_t j = 0; j < st->n_mcp; j++)
      if (!strcmp(st->mcp[j].server, s->spec->name)) {
        rc = ag_buf_printf(out, "%s%s", out->len ? ", " : "", st->name);
        break;
      }
  }
  return rc;
}

/* AG_ERR_IO naming each needed server that failed once, with why and who needs it: "MCP server fs
 * failed: command 'npxx' not found (needed by Librarian)". */
static int needed_failed(world_mcp *m, ag_errmsg *em) {
  ag_buf why, who;
  ag_buf_init(&why, 64 * 1024);
  ag_buf_init(&who, 64 * 1024);
  for (size_t i = 0; i < m->n; i++) {
    server *s = &m->servers[i];
    if (!s->needed) continue;
    ag_buf_reset(&who);
    needers(m, s, &who);
    ag_buf_printf(&why, "%sMCP server %s failed: %s (needed by %s)", why.len ? "; " : "", s->spec->name, s->why,
                  ag_buf_str(&who));
  }
  int rc = why.len ? ag_fail(em, AG_ERR_IO, "%s", ag_buf_str(&why)) : AG_OK;
  ag_buf_free(&who);
  ag_buf_free(&why);
  return rc;
}

static int start_all(world_mcp *m, const world_mcp_opts *o, ag_errmsg *em) {
  for (size_t i = 0; i < m->n; i++) {
    server *s = &m->servers[i];
    mcp_client_config cfg = {s->spec->name, s->spec->timeout_ms, 0, o->version, connect_server, s};
    mcp_client_events ev = {s, on_start, on_tools};
    if (mcp_client_new(world_base(m->w), &cfg, &ev, &s->c)) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < m->n; i++) mcp_client_start(m->servers[i].c); /* all at once: they start in parallel */
  return AG_OK;
}

int world_mcp_start(world *w, const world_mcp_opts *o, ag_errmsg *em) {
  const world_spec *spec = world_time_spec(w);
  if (!spec->n_mcp || *world__mcp_slot(w)) return AG_OK;
  /* Starting waits on the world's loop, which cannot be run from one of its own callbacks (the world
   * opened from one): refused before any server is spawned. ag_loop_running asks without running the
   * loop (a nested run is refused with a warning on stderr, and the library prints nothing); the turn
   * that does not block stays as the guard for a loop that keeps no cached time, and when the loop is
   * not running it only runs what is ready, as the wait below would have. */
  if (ag_loop_running(world_base(w)) || event_base_loop(world_base(w), EVLOOP_NONBLOCK) < 0)
    return ag_fail(em, AG_ERR_STATE, "mcp_servers: the world's loop is running (the world is opened from a "
                   "callback on it), and starting MCP servers waits on that loop: open a world with mcp_servers "
                   "before running the loop or outside its callbacks");
  world_mcp *m = calloc(1, sizeof *m);
  if (!m || !(m->servers = calloc(spec->n_mcp, sizeof *m->servers)) ||
      (o->log_path && !(m->log_path = strdup(o->log_path)))) {
    world_mcp_free(m);
    return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  }
  m->w = w;
  m->n = spec->n_mcp;
  for (size_t i = 0; i < m->n; i++) m->servers[i] = (server){.m = m, .spec = &spec->mcp[i]};
  *world__mcp_slot(w) = m;
  int rc = start_all(m, o, em);
  if (rc) return rc;
  wait_started(m, o->wait_ms > 0 ? o->wait_ms : WORLD_MCP_WAIT_MS);
  rc = resolve_all(m, 1, em);
  if (!rc) rc = needed_failed(m, em);
  return rc;
}

size_t world_mcp_count(const world *w) {
  world_mcp *m = *world__mcp_slot((world *)w);
  return m ? m->n : 0;
}

int world_mcp_server_at(const world *w, size_t i, const char **name, int *ready, const char **why,
                        mcp_client **client) {
  world_mcp *m = *world__mcp_slot((world *)w);
  if (!m || i >= m->n) return AG_ERR_NOT_FOUND;
  *name = m->servers[i].spec->name;
  *ready = m->servers[i].ready;
  *why = m->servers[i].why;
  *client = m->servers[i].c;
  return AG_OK;
}

int world_mcp_restart(world *w, const char *name) {
  world_mcp *m = *world__mcp_slot(w);
  server *s = m ? find(m, name) : NULL;
  if (!s) return m ? AG_ERR_NOT_FOUND : AG_ERR_STATE;
  if (!s->c) return AG_ERR_STATE;
  s->ready = 0;
  s->why[0] = '\0';
  mcp_client_restart(s->c);
  return AG_OK;
}

/* Whether an HTTP server's session DELETE is still going (a stdio server's process is the reaper's). */
static int stopping(world *w) {
#ifdef WORLD_MCP_HTTP
  return net_fetch_live(llm_client_net(world_llm(w))) > 0;
#else
  (void)w;
  return 0;
#endif
}

int world_mcp_ending(world *w) { return *world__mcp_slot(w) && stopping(w); }

void world_mcp_release(world *w) {
  world_mcp *m = *world__mcp_slot(w);
  if (!m) return;
  world_cancel_all(w); /* no agent keeps a call of a client freed below */
  agent_mcp_set none = {0};
  for (size_t i = 0; i < world_agent_count(w); i++) agent_set_mcp_tools(world_agent_at(w, i), &none);
  for (size_t i = 0; i < m->n; i++) {
    mcp_client_free(m->servers[i].c); /* stdio: stdin closed, the child the reaper's; HTTP: DELETE */
    m->servers[i].c = NULL;
  }
}

void world_mcp_stop(world *w, long ms) {
  if (!*world__mcp_slot(w)) return;
  world_mcp_release(w);
  struct event_base *base = world_base(w);
  int expired = 0, refused = ag_loop_running(base); /* asked first: a nested run would warn on stderr */
  struct event *t = evtimer_new(base, on_deadline, &expired);
  struct timeval tv = {ms / 2000, (ms / 2 % 1000) * 1000};
  if (t) evtimer_add(t, &tv);
  while (t && stopping(w) && !expired && !refused) refused = event_base_loop(base, EVLOOP_ONCE) < 0;
  if (t) event_free(t);
  /* The loop is running (the world is closed from a callback on it): nothing is waited for. Nothing of
   * the released children is on the loop: the process-wide reaper ends them (stdin closed now, SIGTERM
   * and SIGKILL by its timers) and reaps them, even once the program has freed the loop. Otherwise they
   * have half of ms to end by themselves, then SIGTERM, and SIGKILL at the end. */
  if (!refused && !mcp_child_wait_released(ms / 2)) mcp_child_drain(ms / 2);
}

void world_mcp_free(world_mcp *m) {
  if (!m) return;
  for (size_t i = 0; m->servers && i < m->n; i++) mcp_client_free(m->servers[i].c);
  free(m->servers);
  free(m->log_path);
  free(m);
}
