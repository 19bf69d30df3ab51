/* The one runtime (see runtime.h): a world opened for any door in one order, closed in reverse. */
#include "runtime/runtime.h"

#include "chat/archive.h"
#include "chat/id_prefix.h"
#include "common/heap.h"
#include "common/loop_running.h"
#include "runtime/db.h"
#include "runtime/llm_cache.h"
#include "runtime/mcp_log.h"
#include "runtime/nats_chats.h"
#include "storage/store_lock.h"
#include "world/world_mcp.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct runtime {
  world_spec spec;
  int has_spec;
  rt_source src;
  char label[CHAT_ID_MAX + 32]; /* names the world in messages: its file, or "stored world 'ID'" */
  struct event_base *base;
  int own_base;
  world *w;
  store *st;            /* the database: opts.st (borrowed) or own_st */
  store *own_st;        /* opened here with opts.open_db */
  chat_session *cs;
  cluster *cl;          /* publish or host */
  rt_nats_join *nj;     /* view (or run --nats --chat) */
  rt_nats_chats *records; /* host --db: the chat records */
  world_clock *clock;
  int mcp_started;
  const char *mcp_why;
  int resumed; /* the chat made current continues a saved one */
  cache_db *cache; /* the response cache, when on: closed after the world */
  int quiet;       /* opts.quiet: no notes on stderr (for the lines said after rt_open) */
};

/* Prefixes em with the command's name, unless it already names a file or stored world. */
static int with_cmd(const rt_opts *o, int rc, ag_errmsg *em) {
  if (!rc || !o->cmd) return rc;
  ag_errmsg was = *em;
  if (!was.text[0]) snprintf(was.text, sizeof was.text, "%s", ag_strerror(rc));
  return ag_fail(em, rc, "%s: %s", o->cmd, was.text);
}

/* ---- the world's spec: a file, or the database ---- */

/* A name that is not a file, with a database open: a stored world's id or display name (issue 23
 * item 4). Anything that looks like a path stays a file, so its error names the file. */
static int looks_like_file(const char *s) {
  struct stat sb;
  size_t n = strlen(s);
  return strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".json")) || stat(s, &sb) == 0;
}

static int is_stored_name(const runtime *rt, const rt_opts *o) {
  return o->from_store || (rt->st && !looks_like_file(o->world));
}

static int spec_from_store(runtime *rt, const rt_opts *o, ag_errmsg *em) {
  char id[CHAT_ID_MAX];
  int rc;
  if (o->world && o->from_store) rc = snprintf(id, sizeof id, "%s", o->world) >= (int)sizeof id ? AG_ERR_NOT_FOUND : AG_OK;
  else if (o->world) rc = rt_pick_world(rt->st, o->world, id, em);
  else if (o->pick == RT_CHAT_ID && o->chat) rc = rt_chat_world(rt->st, o->chat, id, em);
  else {
    size_t n = 0;
    if ((rc = chat_worlds_count(rt->st, &n, id, em))) return rc;
    if (n == 0)
      return ag_fail(em, AG_ERR_INVALID, "the database in %s holds no world yet: pass a world file (agora %s "
                     "WORLD.json)", chat_store_dir(rt->st), o->cmd ? o->cmd : "run");
    if (n > 1)
      return ag_fail(em, AG_ERR_INVALID, "the database in %s holds %zu worlds: pass the world file of the one to "
                     "open (agora %s WORLD.json), or its id or name", chat_store_dir(rt->st), n,
                     o->cmd ? o->cmd : "run");
  }
  if (rc) return rc;
  snprintf(rt->label, sizeof rt->label, "stored world '%s'", id);
  rt->src = RT_FROM_STORE;
  return chat_world_spec(rt->st, id, &rt->spec, em);
}

static int load_spec(runtime *rt, const rt_opts *o, ag_errmsg *em) {
  int rc;
  if (o->world_text) {
    snprintf(rt->label, sizeof rt->label, "world JSON");
    rt->src = RT_FROM_FILE;
    if ((rc = world_spec_parse(o->world_text, strlen(o->world_text), rt->label, &rt->spec, em))) return rc;
  } else if (o->world && !rt->st && !looks_like_file(o->world)) { /* neither a file nor, without a database, a name */
    return ag_fail(em, AG_ERR_INVALID, "%s%sno world file '%s', and a stored world's id or name needs the database%s",
                   o->cmd ? o->cmd : "", o->cmd ? ": " : "", o->world, o->no_save ? " (not with --no-save)" : "");
  } else if (o->world && !is_stored_name(rt, o)) {
    snprintf(rt->label, sizeof rt->label, "%s", o->world);
    rt->src = RT_FROM_FILE;
    if ((rc = world_spec_load(o->world, &rt->spec, em))) return rc;
  } else if (!rt->st) {
    return ag_fail(em, AG_ERR_INVALID, "%s: a stored world needs the database", o->cmd);
  } else if ((rc = spec_from_store(rt, o, em))) {
    return with_cmd(o, rc, em);
  }
  rt->has_spec = 1;
  if ((rc = rt_spec_prepare(&rt->spec, &o->over, o->quiet))) return ag_fail(em, rc, "%s", ag_strerror(rc));
  /* Keys go only where the person sends them (issue 28 item 2a): a stored world's base_url may be
   * anyone's. Nothing is called by an inert door but a memory embedder (opts.embeds). */
  if (rt->src == RT_FROM_STORE && (!o->inert || o->embeds)) {
    if (o->quiet) rt_key_withhold_quiet(&rt->spec, o->over.base_url, o->allow);
    else rt_key_withhold(&rt->spec, o->cmd, rt->label, o->over.base_url, o->allow);
  }
  return AG_OK;
}

/* ---- the world and the door's output ---- */

/* Finds the stored world info of id (chat_worlds_each callback). */
static int stored_row(const chat_world_info *w, void *arg) {
  chat_world_info *out = arg;
  if (strcmp(w->id, out->id)) return 0;
  *out = *w;
  return CHAT_STOP;
}

/* A file's world shares its id (its name) with the stored world it updates. When that stored world has
 * other agents it is most likely another world of the same name (two starters): said on stderr before
 * its settings are replaced, naming it. */
static void note_replaced_world(runtime *rt, const rt_opts *o) {
  world_spec old;
  ag_errmsg em = {""};
  const world *w = rt->w;
  if (!rt->st || rt->src != RT_FROM_FILE || chat_world_spec(rt->st, world_id(w), &old, &em)) return;
  int same = old.n_agents == world_agent_count(w);
  for (size_t i = 0; same && i < old.n_agents; i++) same = world_agent_find(w, old.agents[i].name) != NULL;
  if (!same) {
    chat_world_info info = {0};
    snprintf(info.id, sizeof info.id, "%s", world_id(w));
    chat_worlds_each(rt->st, stored_row, &info, &em);
    fprintf(stderr, "%s: %s is world '%s', which the database holds as a different world (id %s, %d agent%s",
            o->cmd ? o->cmd : "agora", rt->label, old.name, info.id, (int)old.n_agents, old.n_agents == 1 ? "" : "s");
    for (size_t i = 0; i < old.n_agents && i < 5; i++) fprintf(stderr, "%s%s", i ? ", " : ": ", old.agents[i].name);
    fprintf(stderr, "%s; %llu chat%s): its stored settings are replaced by the file's\n", old.n_agents > 5 ? ", ..." : "",
            (unsigned long long)info.chats, info.chats == 1 ? "" : "s");
  }
  world_spec_free(&old);
}

static int build_world(runtime *rt, const rt_opts *o, ag_errmsg *em) {
  rt->base = o->base;
  if (!rt->base) {
    if (!(rt->base = event_base_new())) return ag_fail(em, AG_ERR_NOMEM, "cannot create the event loop");
    rt->own_base = 1;
  }
  ag_errmsg detail = {""};
  int rc = world_new(rt->base, &rt->spec, &rt->w, &detail);
  if (rc) return ag_fail(em, rc == AG_ERR_NOMEM ? rc : AG_ERR_INVALID, "%s: %s", rt->label, detail.text);
  ag_heap_reserve(world_agent_count(rt->w) * WORLD_WAVE_BYTES); /* at load, not inside the first message */
  /* A stored world may come from an imported snapshot: its key variables are checked like a file's,
   * before anything is stored. */
  if (!o->inert && (rc = rt_key_env_check(rt->w, rt->label, o->allow ? o->allow : &(rt_allow_env){0}, em)))
    return rc;
  if (!o->inert && !o->quiet) note_replaced_world(rt, o);
  world_set_emit_chunks(rt->w, o->emit_chunks);
  if (o->approver) world_set_approver(rt->w, o->approver, o->approver_ud);
  return AG_OK;
}

static int attach_output(runtime *rt, const rt_opts *o, ag_errmsg *em) {
  bus *b = world_bus(rt->w);
  int rc = AG_OK;
  if (o->on_idle) rc = bus_on_idle(b, BUS_IDLE_OUTPUT, o->on_idle, o->on_bus_ud);
  if (!rc && o->on_bus) rc = bus_subscribe(b, BUS_MESSAGE | BUS_EVENT, BUS_PHASE_OUTPUT, o->on_bus, o->on_bus_ud, NULL);
  return rc ? ag_fail(em, rc, "%s", ag_strerror(rc)) : AG_OK;
}

/* ---- NATS ---- */

/* host --db: the copy follows the chat the stream is on; one it cannot store is a note for a person (not
 * said by a quiet library, as the cluster's notices are not). */
static void host_follow(void *ud, const char *chat) {
  runtime *rt = ud;
  ag_errmsg em = {""};
  int rc = chat_session_follow(rt->cs, chat, &em);
  if (rc && !rt->quiet)
    fprintf(stderr, "agora: host: cannot store chat %s: %s\n", chat, em.text[0] ? em.text : ag_strerror(rc));
}

static int join_publish(runtime *rt, const rt_opts *o, cluster_opts *n, ag_errmsg *em) {
  if (!o->chat) {
    int rc = cluster_open(rt->w, n, &rt->cl, em);
    return rc ? rc : cluster_wait_ready(rt->cl, 60000, em);
  }
  /* --chat ID: the copy follows the stream, whose chat must be ID. */
  if (!rt->cs) return ag_fail(em, AG_ERR_INVALID, "--chat continues a saved chat and cannot go with --no-save");
  int rc = rt_nats_join_open(rt->w, rt->st, rt->cs, n, NULL, NULL, &rt->nj, em);
  if (rc) return rc;
  const char *now = chat_session_current(rt->cs);
  if (!now || strncmp(now, o->chat, strlen(o->chat))) /* the stream has one chat: a prefix names it */
    return ag_fail(em, AG_ERR_INVALID, "--chat %s: the world's stream on NATS is on chat %s; only that chat can be "
                   "continued with --nats", o->chat, rt_nats_join_fresh(rt->nj) ? "(none yet)" : now);
  return AG_OK;
}

static int join_nats(runtime *rt, const rt_opts *o, ag_errmsg *em) {
  /* Joining waits on the world's loop until the stream has caught up, which a loop running now (a world
   * opened from one of its callbacks, on a program's shared loop) cannot do: refused before connecting,
   * as starting MCP servers is (world_mcp_start). */
  if (ag_loop_running(rt->base))
    return ag_fail(em, AG_ERR_STATE, "NATS: the world's loop is running (the world is opened from a callback on "
                   "it), and joining over NATS waits on that loop for the stream: open a world on NATS before "
                   "running the loop or outside its callbacks");
  cluster_opts n = *o->nats;
  if (!n.replicas) n.replicas = 1;
  if (!n.lease_ms) n.lease_ms = 3000;
  n.hosting = o->nats_role == RT_NATS_HOST;
  n.quiet = o->quiet;
  if (o->nats_role == RT_NATS_PUBLISH) return join_publish(rt, o, &n, em);
  if (o->nats_role == RT_NATS_VIEW)
    return rt_nats_join_open(rt->w, rt->st, rt->cs, &n, o->on_stream_chat, o->on_bus_ud, &rt->nj, em);
  int rc = cluster_open(rt->w, &n, &rt->cl, em);
  if (!rc && rt->cs) {
    cluster_on_chat(rt->cl, host_follow, rt);
    rc = rt_nats_chats_open(rt->cl, rt->st, rt->cs, &rt->records);
  }
  return rc ? rc : cluster_wait_ready(rt->cl, 60000, em);
}

/* ---- MCP servers: only a file the person named starts programs ---- */

const char rt_mcp_why_stored[] =
  "the world comes from the database (an imported snapshot, another process or the API), and such a world never "
  "starts programs: open it from its file to use its MCP servers";

static int start_mcp(runtime *rt, const rt_opts *o, ag_errmsg *em) {
  if (!world_time_spec(rt->w)->n_mcp) {
    rt->mcp_why = "the world has no mcp_servers";
    return AG_OK;
  }
  if (rt->src != RT_FROM_FILE) {
    rt->mcp_why = rt_mcp_why_stored;
    /* Said once by every door that would have started them, so that missing tools are explained (not by
     * the library, which prints only when asked: it reads rt_mcp_started). */
    if (o->mcp && !o->quiet)
      fprintf(stderr, "%s: %s: its %zu MCP server%s %s not started: %s\n", o->cmd ? o->cmd : "agora", rt->label,
              world_time_spec(rt->w)->n_mcp, world_time_spec(rt->w)->n_mcp == 1 ? "" : "s",
              world_time_spec(rt->w)->n_mcp == 1 ? "was" : "were", rt->mcp_why);
    return AG_OK;
  }
  if (!o->mcp) {
    rt->mcp_why = "this command does not start MCP servers";
    return AG_OK;
  }
  /* A publisher or viewer on NATS answers for no agent: the hosts run the tools. Starting the servers here
   * too only made `run --nats` wait in silence (up to 2 minutes for a slow one) before its first message. */
  if (o->nats && o->nats->url && (o->nats_role == RT_NATS_PUBLISH || o->nats_role == RT_NATS_VIEW)) {
    rt->mcp_why = "this process joined the world over NATS and answers for no agent: its hosts start the MCP "
                  "servers and run the tools";
    return AG_OK;
  }
  int rc = rt_mcp_start(rt->w, o->db, o->no_save, em);
  /* AG_ERR_STATE: not started at all (opened from a callback of the running loop), never an open without them. */
  if (rc && o->mcp_failures_ok && rc != AG_ERR_INVALID && rc != AG_ERR_NOMEM && rc != AG_ERR_STATE) rc = AG_OK;
  if (rc) {
    if (rc != AG_ERR_STATE) world_run_until_quiet(rt->w); /* the mcp-error events reach the output before the exit */
    rt->mcp_why = "an MCP server failed to start (see the mcp-error events)";
    return rc;
  }
  rt->mcp_started = 1;
  return AG_OK;
}

/* ---- the chat ---- */

static int pick_chat(runtime *rt, const rt_opts *o, ag_errmsg *em) {
  if (rt->nj) rt->resumed = !rt_nats_join_fresh(rt->nj);
  int rc = AG_OK;
  if (rt->cs && !rt->nj && o->pick != RT_CHAT_ATTACH) { /* joined: the stream's chat is current */
    char was[CHAT_ID_MAX];
    snprintf(was, sizeof was, "%s", chat_session_current(rt->cs) ? chat_session_current(rt->cs) : "");
    char id[CHAT_ID_MAX];
    if (o->pick == RT_CHAT_ID) { /* an id or a unique prefix */
      if (!(rc = chat_id_resolve(rt->st, o->chat, id, em))) rc = chat_session_load(rt->cs, id, em);
    } else if (o->pick == RT_CHAT_CURRENT && was[0]) {
      rc = chat_session_resume(rt->cs, em);
    } else {
      rc = chat_session_new(rt->cs, em);
    }
    /* A current chat another process holds gives a new one: then nothing was resumed. */
    if (!rc && o->pick != RT_CHAT_NEW) rt->resumed = o->pick == RT_CHAT_ID || !strcmp(was, chat_session_current(rt->cs));
  }
  /* On NATS the chat stored here is the chat published to (none without a database). */
  if (!rc && rt->cl && o->nats_role == RT_NATS_PUBLISH)
    rc = cluster_use_chat(rt->cl, rt->cs ? chat_session_current(rt->cs) : NULL);
  return rc;
}

/* The current chat was held by another process, so a new one was started (issue 23 item 7): said on
 * stderr, naming the holder, so that a person knows why the conversation is not where it was. */
static void note_passed_over(runtime *rt, const rt_opts *o) {
  const char *passed = rt->cs ? chat_session_passed_over(rt->cs) : NULL;
  if (!passed || o->quiet) return;
  long pid = 0;
  char what[32] = "";
  store_chat_holder(rt->st, passed, &pid, what, sizeof what);
  char who[64] = "another agora process";
  if (pid) snprintf(who, sizeof who, "pid %ld%s%s%s", pid, what[0] ? " (" : "", what, what[0] ? ")" : "");
  fprintf(stderr, "agora: %s%schat %s is in use by %s: started chat %s\n", o->cmd ? o->cmd : "", o->cmd ? ": " : "",
          passed, who, chat_session_current(rt->cs));
}

static int open_session(runtime *rt, const rt_opts *o, ag_errmsg *em) {
  if (!rt->st || o->pick == RT_CHAT_NONE) return AG_OK;
  int rc = chat_session_open(rt->st, rt->w, &rt->cs, em);
  if (rc) return rc;
  chat_session_rerun_turns(rt->cs, o->rerun_turns);
  if (o->nats_role == RT_NATS_PUBLISH) chat_session_fresh_only(rt->cs, 1); /* the copy's seqs are the stream's */
  return AG_OK;
}

/* opts.open_db: the runtime's own database. */
static int open_db(runtime *rt, const rt_opts *o, ag_errmsg *em) {
  int rc = rt_store_open(o->db, &rt->own_st, em);
  rt->st = rt->own_st;
  return rc;
}

int rt_open(const rt_opts *o, runtime **out, ag_errmsg *em) {
  *out = NULL;
  runtime *rt = calloc(1, sizeof *rt);
  if (!rt) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  rt->st = o->st;
  rt->quiet = o->quiet;
  int nats = o->nats_role != RT_NATS_OFF && o->nats && o->nats->url;
  /* Publishing a file's world on NATS: nothing is written until the stream is joined. */
  int late_db = o->open_db && nats && o->nats_role == RT_NATS_PUBLISH && !o->chat && o->world &&
                looks_like_file(o->world);
  int rc = o->open_db && !late_db ? open_db(rt, o, em) : AG_OK;
  /* The NATS library starts before the world's HTTP clients (libcurl), as libnats' TLS needs. */
  if (!rc && nats && cluster_lib_open()) rc = ag_fail(em, AG_ERR_NOMEM, "%s: cannot start the NATS client", o->cmd);
  if (!rc) rc = load_spec(rt, o, em);
  if (!rc) rc = build_world(rt, o, em);
  if (!rc && (!o->inert || o->embeds)) rc = rt_llm_cache_open(rt->w, &rt->spec, &o->over, o->db, o->no_save, &rt->cache, em);
  if (rc) goto fail; /* these messages name the file or the stored world */
  world_spec_free_agents(&rt->spec); /* the world has its own; what is kept is the script (rt_spec) */
  if (o->on_world && (rc = o->on_world(o->on_bus_ud, rt, em))) goto fail;
  /* A host prints the stream as it comes; a viewer's or publisher's catch-up is stored, not printed. */
  if (o->nats_role == RT_NATS_HOST && (rc = attach_output(rt, o, em))) goto fail;
  /* A host's tools are ready before it joins: once joined it takes turns, and one taken while its MCP
   * servers were still starting answered "unknown tool" (start_mcp runs the loop while it waits). */
  int mcp_first = o->nats_role == RT_NATS_HOST;
  if ((rc = open_session(rt, o, em)) || (mcp_first && (rc = start_mcp(rt, o, em))) ||
      (nats && (rc = join_nats(rt, o, em))))
    goto fail_cmd;
  if (late_db && ((rc = open_db(rt, o, em)) || (rc = open_session(rt, o, em)))) goto fail_cmd;
  if (o->nats_role != RT_NATS_HOST && (rc = attach_output(rt, o, em))) goto fail;
  if ((!mcp_first && (rc = start_mcp(rt, o, em))) || (rc = pick_chat(rt, o, em))) goto fail_cmd;
  note_passed_over(rt, o);
  if (o->clock && (rc = world_clock_new(rt->w, &rt->clock, em))) goto fail_cmd;
  *out = rt;
  return AG_OK;
fail_cmd:
  rc = with_cmd(o, rc, em);
fail:
  rt_close(rt);
  return rc;
}

static void settle_deadline(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  *(int *)arg = 1;
}

void rt_settle(runtime *rt, long ms) {
  if (!rt || !rt->w || world_is_quiet(rt->w)) return;
  if (ag_loop_running(rt->base)) { /* closed from a callback of its loop: nothing can be waited for */
    world_cancel_all(rt->w);
    return;
  }
  int late = 0;
  struct event *deadline = evtimer_new(rt->base, settle_deadline, &late);
  struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
  if (!deadline || evtimer_add(deadline, &tv)) late = 1;
  for (;;) {
    world_cancel_all(rt->w); /* again each time: a message delivered may have started a turn */
    if (world_is_quiet(rt->w) || late || event_base_loop(rt->base, EVLOOP_ONCE) < 0) break;
  }
  if (deadline) event_free(deadline);
}

void rt_close(runtime *rt) {
  if (!rt) return;
  rt_settle(rt, RT_SETTLE_MS);
  world_clock_free(rt->clock);
  if (rt->w) world_mcp_stop(rt->w, 4000); /* the servers end while the world is whole */
  rt_nats_join_free(rt->nj);              /* leaves the stream while the world is whole */
  rt_nats_chats_free(rt->records);
  cluster_free(rt->cl);
  chat_session_free(rt->cs);
  world_free(rt->w);
  cache_db_close(rt->cache); /* after the world: its LLM client borrowed it */
  chat_store_close(rt->own_st);
  if (rt->own_base && rt->base) event_base_free(rt->base);
  if (rt->has_spec) world_spec_free(&rt->spec);
  free(rt);
}

struct event_base *rt_base(const runtime *rt) { return rt->base; }
store *rt_store(const runtime *rt) { return rt->st; }
world *rt_world(const runtime *rt) { return rt->w; }
chat_session *rt_session(const runtime *rt) { return rt->cs; }
world_clock *rt_clock(const runtime *rt) { return rt->clock; }
rt_nats_join *rt_join(const runtime *rt) { return rt->nj; }
cluster *rt_cluster(const runtime *rt) { return rt->cl; }
const world_spec *rt_spec(const runtime *rt) { return &rt->spec; }
rt_source rt_source_of(const runtime *rt) { return rt->src; }

const char *rt_clock_still(const runtime *rt) {
  int64_t due;
  /* On NATS the publisher's script drives the schedule, and this process's clock follows the stream. */
  if (!rt->clock || rt->cl || !world_is_virtual(rt->w) || world_clock_next_due(rt->clock, &due)) return NULL;
  return "its clock is virtual and moves only with run's script or the console's /advance: its schedule is "
         "not delivered here";
}

int rt_mcp_started(const runtime *rt, const char **why) {
  if (why) *why = rt->mcp_started ? NULL : rt->mcp_why;
  return rt->mcp_started;
}

void rt_cancel(runtime *rt, char *names, size_t cap) {
  world_thinking_names(rt->w, names, cap);
  world_cancel_all(rt->w);
}

int rt_resumed(const runtime *rt) { return rt->resumed; }

size_t rt_unsaved(const runtime *rt) { return rt->cs ? chat_session_failures(rt->cs) : 0; }
