/* libagora: opening, running and closing a world through the one runtime (include/agora.h). The
 * library is a door like `agora say`: rt_open builds the world, and this file only translates. */
#include "lib/agora_int.h"

#include "chat/archive.h"
#include "common/error.h"
#include "cluster/cluster.h"
#include "llm/cache.h"
#include "llm/llm.h"
#include "world/world_budget.h"

#include <event2/event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef AGORA_VERSION
#define AGORA_VERSION "0.0.0"
#endif

/* The public codes are the internal ones: a change of either is a compile error here. */
_Static_assert(AGORA_ERR_NOMEM == AG_ERR_NOMEM && AGORA_ERR_INVALID == AG_ERR_INVALID && AGORA_ERR_IO == AG_ERR_IO &&
                 AGORA_ERR_STORAGE == AG_ERR_STORAGE && AGORA_ERR_LLM == AG_ERR_LLM &&
                 AGORA_ERR_NOT_FOUND == AG_ERR_NOT_FOUND && AGORA_ERR_TOO_BIG == AG_ERR_TOO_BIG &&
                 AGORA_ERR_EXISTS == AG_ERR_EXISTS && AGORA_ERR_VERSION == AG_ERR_VERSION &&
                 AGORA_ERR_CANCELLED == AG_ERR_CANCELLED && AGORA_ERR_STATE == AG_ERR_STATE,
               "agora.h's error codes are ag_err's");

static _Thread_local ag_errmsg last_error;

/* The core's process-wide hooks, in this library's copy of the core (a program like agora links another
 * copy, whose hooks are its own). A warning of the LLM layer (insecure: true) is a note for a person:
 * printed while a world opened with AGORA_NOTES is being opened on this thread, as agora prints it. */
static _Thread_local int opening_with_notes;
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static void print_warning(const char *message) {
  if (opening_with_notes) fprintf(stderr, "agora: warning: %s\n", message);
}

static void hooks_set(void) { llm_set_warning_sink(print_warning); }

int agora__rt_open(const rt_opts *ro, int notes, runtime **rt, ag_errmsg *em) {
  pthread_once(&hooks_once, hooks_set);
  opening_with_notes = notes;
  int rc = rt_open(ro, rt, em);
  opening_with_notes = 0;
  return rc;
}

/* The NATS client (opened by the first world that joins NATS, cluster_lib_open) is closed once, at the
 * exit (or when the library is unloaded): libnats' threads and the relays they post into live until
 * then. An atexit handler registered after libnats' own, not a destructor: those run after libnats has
 * torn itself down. */
static pthread_once_t nats_once = PTHREAD_ONCE_INIT;

static void nats_end(void) { cluster_lib_close(); }
static void nats_end_at_exit(void) { atexit(nats_end); }

int agora__fail(int rc, const ag_errmsg *em) {
  if (rc < 0) snprintf(last_error.text, sizeof last_error.text, "%s", em && em->text[0] ? em->text : ag_strerror(rc));
  return rc;
}

const char *agora_strerror(int rc) {
  if (rc == AGORA_ENDED) return "the world's clock reached its until";
  return rc == AGORA_WAITING ? "an agent waits for an answer" : ag_strerror(rc);
}
const char *agora_errmsg(void) { return last_error.text; }
const char *agora_version(void) { return AGORA_VERSION; }
int agora_api_version(void) { return AGORA_API_VERSION; }
void agora_free(void *p) { free(p); }

/* A string that is world JSON rather than a file's name or a stored world's. */
static int is_json_text(const char *s) {
  if (!s) return 0;
  s += strspn(s, " \t\r\n");
  return *s == '{';
}

/* The world is built: the handle knows it before anything can be delivered or asked. With AGORA_SCRIPT
 * a stored world is refused here, before any chat is touched: it keeps no script, and without a
 * schedule too the program would do nothing (the words are `agora run`'s, its one user). */
static int on_world(void *ud, runtime *rt, ag_errmsg *em) {
  agora_world *aw = ud;
  const world_spec *spec = rt_spec(rt);
  aw->rt = rt;
  aw->w = rt_world(rt);
  int rc = agora__loop_unique(aw, em);
  if (rc) return rc;
  if (!(aw->flags & AGORA_SCRIPT) || rt_source_of(rt) != RT_FROM_STORE || spec->n_steps || spec->n_sched)
    return AG_OK;
  const char *id = world_id(aw->w);
  return ag_fail(em, AG_ERR_INVALID, "%s%sstored world '%s' has no script to run (the database keeps a world's "
                 "agents and settings, not its script): run its world file, talk to it with agora say %s TEXT "
                 "or agora console %s, or finish a stopped chat with --resume CHAT_ID", aw->program ? aw->program : "",
                 aw->program ? ": " : "", id, id, id);
}

/* The world on NATS (API 4): run --nats's publisher. With chat, the stream's chat is continued: the
 * runtime then starts no chat of its own (it follows the stream's). */
static void nats_opts(unsigned flags, const agora_options *o, rt_opts *ro, cluster_opts *n) {
  if (!(o->flags & AGORA_OPTIONS_4) || !o->nats_url) return;
  *n = (cluster_opts){.url = o->nats_url, .creds = o->nats_creds, .ca_file = o->nats_ca, .replicas = o->nats_replicas};
  ro->nats = n;
  ro->nats_role = RT_NATS_PUBLISH;
  if (ro->pick == RT_CHAT_ID) ro->pick = RT_CHAT_NEW;
  if (!(flags & AGORA_VIEW)) return;
  ro->nats_role = RT_NATS_VIEW; /* API 7: the console's join; the stream's chat becomes current */
  ro->on_stream_chat = agora__stream_chat;
}

/* The API-5 modes, as `agora tools` and `agora host` opened their worlds on the runtime: neither runs
 * the world's schedule nor asks a turn again (a host's stream does), and both start the MCP servers
 * with the logs in db_dir even when nothing else is stored there. */
static void mode_opts(unsigned flags, const agora_options *o, rt_opts *ro, cluster_opts *n) {
  if (!(flags & (AGORA_TOOLS | AGORA_HOST))) return;
  ro->no_save = 0;
  ro->rerun_turns = 0;
  ro->clock = 0;
  if (flags & AGORA_TOOLS) { /* no database, no chat, no LLM: only the tools */
    ro->open_db = 0;
    ro->pick = RT_CHAT_NONE;
    ro->inert = 1;
    ro->mcp_failures_ok = 1;
    return;
  }
  ro->pick = flags & AGORA_NO_SAVE ? RT_CHAT_NONE : RT_CHAT_ATTACH; /* the copy follows the stream's chat */
  ro->nats_role = RT_NATS_HOST;
  n->agents = o->nats_agents;
  n->lease_ms = o->nats_lease_ms;
  n->hosting = 1;
}

static rt_opts open_opts(agora_world *aw, const char *file_or_id, const char *db_dir, const agora_options *o,
                         rt_allow_env *allow) {
  unsigned f = o->flags;
  rt_chat pick = f & AGORA_NO_SAVE ? RT_CHAT_NONE : o->chat ? RT_CHAT_ID : f & AGORA_NEW_CHAT ? RT_CHAT_NEW
                                                                                              : RT_CHAT_CURRENT;
  int text = is_json_text(file_or_id), v3 = !!(f & AGORA_OPTIONS_3), v4 = !!(f & AGORA_OPTIONS_4);
  return (rt_opts){.cmd = v3 ? o->program : NULL, .world = text ? NULL : file_or_id, .world_text = text ? file_or_id : NULL,
                   .from_store = !!(f & AGORA_FROM_STORE), .quiet = !(f & AGORA_NOTES), .open_db = !(f & AGORA_NO_SAVE), .db = db_dir,
                   .no_save = !!(f & AGORA_NO_SAVE),
                   .over = {.model = o->model, .provider = o->provider, .base_url = o->base_url,
                            .llm_cache = v3 ? o->llm_cache : NULL, .cache_db = v3 ? o->cache_db : NULL},
                   .allow = allow, .pick = pick, .chat = o->chat, .rerun_turns = 1, .mcp = !(f & AGORA_NO_MCP),
                   .clock = !(v4 && (f & AGORA_NO_CLOCK)), .emit_chunks = !!(f & AGORA_STREAM), .approver = &agora__approver,
                   .approver_ud = aw, .on_world = on_world, .on_bus = agora__on_bus, .on_bus_ud = aw,
                   .on_idle = agora__on_idle};
}

/* The API-3 fields, checked as the command line checks its flags (cli/args.c), naming the field. */
static int check_options_3(const agora_options *o, ag_errmsg *em) {
  llm_cache_mode mode;
  if (!(o->flags & AGORA_OPTIONS_3)) return AG_OK;
  if (o->n_allow_key_to > RT_ALLOW_ENV_MAX)
    return ag_fail(em, AG_ERR_INVALID, "agora_options.allow_key_to: %zu URLs, at most %d", o->n_allow_key_to,
                   RT_ALLOW_ENV_MAX);
  for (size_t i = 0; i < o->n_allow_key_to; i++) {
    const char *u = o->allow_key_to[i];
    if (!u || (strncmp(u, "http://", 7) && strncmp(u, "https://", 8)))
      return ag_fail(em, AG_ERR_INVALID, "agora_options.allow_key_to[%zu]: '%s': expected an http:// or https:// "
                     "URL (an agent's base_url)", i, u ? u : "(null)");
  }
  if (o->llm_cache && llm_cache_mode_parse(o->llm_cache, &mode))
    return ag_fail(em, AG_ERR_INVALID, "agora_options.llm_cache: unknown mode '%s' (expected off, use or replay)",
                   o->llm_cache);
  return AG_OK;
}

/* The API-5 flags and fields, as cli/args.c checks --lease-ms. */
static int check_options_5(const agora_options *o, ag_errmsg *em) {
  unsigned f = o->flags;
  if (!(f & AGORA_OPTIONS_5)) return AG_OK;
  if ((f & AGORA_TOOLS) && (f & AGORA_HOST))
    return ag_fail(em, AG_ERR_INVALID, "agora_options.flags: AGORA_TOOLS and AGORA_HOST cannot go together");
  if ((f & AGORA_TOOLS) && (f & AGORA_OPTIONS_4) && o->nats_url)
    return ag_fail(em, AG_ERR_INVALID, "agora_options.nats_url: not with AGORA_TOOLS (it joins nothing)");
  if ((f & AGORA_HOST) && !((f & AGORA_OPTIONS_4) && o->nats_url))
    return ag_fail(em, AG_ERR_INVALID, "agora_options.nats_url: AGORA_HOST needs the NATS server to join");
  if ((f & AGORA_HOST) && o->chat)
    return ag_fail(em, AG_ERR_INVALID, "agora_options.chat: not with AGORA_HOST (a host follows the stream's chat)");
  if ((f & AGORA_TOOLS) && o->chat)
    return ag_fail(em, AG_ERR_INVALID, "agora_options.chat: not with AGORA_TOOLS (it opens no chat)");
  if ((f & AGORA_VIEW) && (!((f & AGORA_OPTIONS_4) && o->nats_url) || (f & (AGORA_HOST | AGORA_TOOLS | AGORA_NO_SAVE))))
    return ag_fail(em, AG_ERR_INVALID, "agora_options.flags: AGORA_VIEW needs nats_url and a database, and goes "
                   "with neither AGORA_HOST nor AGORA_TOOLS");
  if ((f & AGORA_VIEW) && o->chat)
    return ag_fail(em, AG_ERR_INVALID, "agora_options.chat: not with AGORA_VIEW (a viewer follows the stream's chat)");
  if (o->nats_lease_ms && (o->nats_lease_ms < 300 || o->nats_lease_ms > 600000))
    return ag_fail(em, AG_ERR_INVALID, "agora_options.nats_lease_ms: %ld, expected 300 to 600000 (0: 3000)",
                   o->nats_lease_ms);
  return AG_OK;
}

/* The flags o's API knows (the growth rule): those of a later API count only with its AGORA_OPTIONS_N. */
static unsigned known_flags(unsigned f) {
  if (f & AGORA_OPTIONS_5) return f;
  return f & AGORA_OPTIONS_4 ? f & (AGORA_OPTIONS_5 - 1) : f & (AGORA_OPTIONS_4 - 1);
}

/* The API-8 field: a loop of the program's. A world on NATS joins it as a viewer only (AGORA_VIEW, what
 * agora serve --nats needs; docs/decisions.md "A NATS viewer on a shared loop"): a host gives its leases
 * back at the close and waits for the server's answers, which would stall every world of the loop, and a
 * publisher's script (agora run --nats) runs a world's own loop. */
static int check_options_8(const agora_options *o, ag_errmsg *em) {
  if (!(o->flags & AGORA_OPTIONS_8) || !o->loop || !(o->flags & AGORA_OPTIONS_4) || !o->nats_url) return AG_OK;
  if (!(o->flags & AGORA_OPTIONS_5) || !(o->flags & AGORA_VIEW))
    return ag_fail(em, AG_ERR_INVALID, "agora_options.loop: with nats_url only as a viewer (AGORA_VIEW): a host or a "
                   "publisher on NATS runs on a loop of its own");
  return AG_OK;
}

/* The API-10 flag and field: untrusted world JSON is stored first, so a database is needed; a storage
 * thread's news comes on a loop of the program's, to a database. */
static int check_options_10(const char *file_or_id, const agora_options *o, ag_errmsg *em) {
  unsigned f = o->flags;
  if ((f & AGORA_OPTIONS_10) && (f & AGORA_UNTRUSTED) && !is_json_text(file_or_id))
    return ag_fail(em, AG_ERR_INVALID, "agora_world_open: AGORA_UNTRUSTED takes world JSON text (an HTTP body), not "
                   "a file or a stored world's name");
  if ((f & AGORA_OPTIONS_10) && (f & AGORA_UNTRUSTED) && (f & (AGORA_NO_SAVE | AGORA_TOOLS | AGORA_HOST | AGORA_VIEW)))
    return ag_fail(em, AG_ERR_INVALID, "agora_options.flags: AGORA_UNTRUSTED stores the world first: it needs a "
                   "database (not with AGORA_NO_SAVE, AGORA_TOOLS, AGORA_HOST or AGORA_VIEW)");
  if ((f & AGORA_OPTIONS_10) && (f & AGORA_UNTRUSTED) && o->chat)
    return ag_fail(em, AG_ERR_INVALID, "agora_options.chat: not with AGORA_UNTRUSTED (the world is new: it has no chat)");
  if (!(o->flags & AGORA_OPTIONS_10) || o->sync == AGORA_SYNC_FULL) return AG_OK;
  if (o->sync != AGORA_SYNC_BACKGROUND)
    return ag_fail(em, AG_ERR_INVALID, "agora_options.sync: %d, expected AGORA_SYNC_FULL (0) or AGORA_SYNC_BACKGROUND "
                   "(1)", o->sync);
  if (!(o->flags & AGORA_OPTIONS_8) || !o->loop)
    return ag_fail(em, AG_ERR_INVALID, "agora_options.sync: AGORA_SYNC_BACKGROUND needs agora_options.loop (the "
                   "storage thread's news comes on the program's loop)");
  if (o->flags & (AGORA_NO_SAVE | AGORA_TOOLS))
    return ag_fail(em, AG_ERR_INVALID, "agora_options.sync: AGORA_SYNC_BACKGROUND needs a database (not with %s)",
                   o->flags & AGORA_NO_SAVE ? "AGORA_NO_SAVE" : "AGORA_TOOLS");
  return AG_OK;
}

/* The API-4 fields, as cli/args.c checks --nats-replicas. */
static int check_options_4(const agora_options *o, ag_errmsg *em) {
  if (!(o->flags & AGORA_OPTIONS_4)) return AG_OK;
  if (o->nats_url && !*o->nats_url) return ag_fail(em, AG_ERR_INVALID, "agora_options.nats_url: empty");
  if (o->nats_replicas < 0 || o->nats_replicas > 5)
    return ag_fail(em, AG_ERR_INVALID, "agora_options.nats_replicas: %d, expected 1 to 5 (0: 1)", o->nats_replicas);
  if (o->nats_url && o->chat && (o->flags & AGORA_NO_CLOCK))
    return ag_fail(em, AG_ERR_INVALID, "agora_options.nats_url: a chat's turns in flight are finished by its hosts, "
                   "not with AGORA_NO_CLOCK");
  return AG_OK;
}

int agora_world_open(const char *file_or_id, const char *db_dir, const agora_options *opts, agora_world **out) {
  ag_errmsg em = {""};
  agora_options none = {0};
  const agora_options *o = opts ? opts : &none;
  rt_allow_env allow = {.n = 0};
  agora_world *aw = NULL;
  int rc = AG_OK;
  if (!out) return agora__fail(AG_ERR_INVALID, &(ag_errmsg){"agora_world_open: out is NULL"});
  *out = NULL;
  int by_chat = (o->flags & AGORA_OPTIONS_4) && o->chat && !file_or_id; /* the chat's stored world */
  int only = (o->flags & AGORA_FROM_STORE) && !(o->flags & AGORA_NO_SAVE) && !file_or_id; /* API 7 */
  int untrusted = (o->flags & AGORA_OPTIONS_10) && (o->flags & AGORA_UNTRUSTED);
  if (!by_chat && !only && (!file_or_id || !*file_or_id)) {
    rc = ag_fail(&em, AG_ERR_INVALID, "agora_world_open: no world named (a file, world JSON or a stored world)");
    goto fail;
  }
  if (o->n_allow_env > RT_ALLOW_ENV_MAX) {
    rc = ag_fail(&em, AG_ERR_INVALID, "agora_options.allow_env: %zu names, at most %d", o->n_allow_env,
                 RT_ALLOW_ENV_MAX);
    goto fail;
  }
  if (o->chat && (o->flags & (AGORA_NO_SAVE | AGORA_NEW_CHAT))) {
    rc = ag_fail(&em, AG_ERR_INVALID, "agora_options.chat continues a stored chat and cannot go with %s",
                 o->flags & AGORA_NO_SAVE ? "AGORA_NO_SAVE" : "AGORA_NEW_CHAT");
    goto fail;
  }
  if ((rc = check_options_3(o, &em)) || (rc = check_options_4(o, &em)) || (rc = check_options_5(o, &em)) ||
      (rc = check_options_8(o, &em)) || (rc = check_options_10(file_or_id, o, &em)))
    goto fail;
  for (size_t i = 0; i < o->n_allow_env; i++) allow.names[allow.n++] = o->allow_env[i];
  for (size_t i = 0; (o->flags & AGORA_OPTIONS_3) && i < o->n_allow_key_to; i++)
    allow.key_urls[allow.n_key_urls++] = o->allow_key_to[i];
  if (!(aw = calloc(1, sizeof *aw))) {
    rc = ag_fail(&em, AG_ERR_NOMEM, "out of memory");
    goto fail;
  }
  aw->flags = known_flags(o->flags);
  aw->program = o->flags & AGORA_OPTIONS_3 ? o->program : NULL;
  aw->epfd = aw->inner = -1;
  if ((o->flags & AGORA_OPTIONS_3) && o->on_event && (rc = agora_subscribe(aw, o->on_event, o->on_event_ctx)) < 0)
    goto fail;
  if ((rc = agora__allow_keep(aw, o->base_url, &allow))) {
    ag_fail(&em, rc, "out of memory");
    goto fail;
  }
  cluster_opts nats = {.url = NULL};
  rt_opts ro = open_opts(aw, file_or_id, db_dir, o, &allow);
  nats_opts(aw->flags, o, &ro, &nats);
  mode_opts(aw->flags, o, &ro, &nats);
  if ((o->flags & AGORA_OPTIONS_8) && o->loop) { /* the program's loop, and the database its worlds share */
    int background = (o->flags & AGORA_OPTIONS_10) && o->sync == AGORA_SYNC_BACKGROUND;
    if ((rc = agora__loop_join(aw, o->loop, db_dir, ro.open_db, background, &ro.st, &em))) goto fail;
    ro.base = o->loop;
    ro.open_db = 0;
  }
  char made[AGORA_ID_MAX]; /* AGORA_UNTRUSTED: stored first, then opened as the stored world it is */
  if (untrusted && (rc = agora__world_create(file_or_id, db_dir, ro.st, made, &em))) goto fail;
  if (untrusted) ro.world = made, ro.world_text = NULL, ro.from_store = 1;
  rc = agora__rt_open(&ro, !!(o->flags & AGORA_NOTES), &aw->rt, &em);
  /* after nats_Open, whose own exit handler must run after ours (they run in reverse order) */
  if (ro.nats) pthread_once(&nats_once, nats_end_at_exit);
  aw->program = NULL; /* borrowed for the open only */
  if (rc == AG_ERR_STATE && ro.base) { /* the program's loop is running: the open was in its callback */
    ag_errmsg was = em;
    rc = ag_fail(&em, rc, "agora_options.loop: %s", was.text);
  }
  if (rc) goto fail;
  *out = aw;
  return AG_OK;
fail:
  if (aw) agora__loop_leave(aw), agora__events_free(aw), agora__allow_free(aw);
  free(aw);
  return agora__fail(rc, &em);
}

void agora_world_close(agora_world *w) {
  if (!w || w->closing) return; /* a world closing later is the library's now */
  agora_tick(w, 0, NULL, NULL); /* no tick during the settle: its ctx may be half gone */
  /* The settle runs a shared loop: the other worlds' callbacks may not run it again meanwhile. */
  int held = w->loop && agora__loop_enter(w, "agora_world_close") == AG_OK;
  rt_close(w->rt); /* settles: its last events still reach the subscribers */
  if (held) agora__loop_exit(w);
  agora__world_free(w);
}

void agora__world_free(agora_world *w) {
  agora__loop_free(w);
  agora__loop_leave(w); /* after the runtime: the database it shared is closed with its last world */
  agora__events_free(w);
  agora__allow_free(w);
  free(w);
}

/* A world closing later (agora_close.c) has no world once its runtime is closed: its id and name stay. */
const char *agora_world_id(const agora_world *w) { return w->w ? world_id(w->w) : agora__closing_id(w, 0); }
const char *agora_world_name(const agora_world *w) { return w->w ? world_name(w->w) : agora__closing_id(w, 1); }
/* API 7: how the open went, for a program that tells a person (the console's history, its notes). */
const char *agora_world_db(const agora_world *w) {
  const store *st = rt_store(w->rt);
  return st ? chat_store_dir(st) : NULL;
}
int agora_world_stored(const agora_world *w) { return rt_source_of(w->rt) == RT_FROM_STORE; }
int agora_chat_resumed(const agora_world *w) { return rt_session(w->rt) && rt_resumed(w->rt); }
int agora_is_quiet(const agora_world *w) { return !w->w || world_is_quiet(w->w); }
void agora_interrupt(agora_world *w) {
  w->interrupted = 1;
  if (w->stepping) world_interrupt(w->w); /* a script step runs the world's own loop */
}

int agora__publish(agora_world *w, const char *fn, const char *sender, const char *text, ag_msg **out) {
  ag_errmsg em = {""};
  if (!sender || !text) return agora__fail(ag_fail(&em, AG_ERR_INVALID, "%s: %s is NULL", fn,
                                                   sender ? "text" : "sender"), &em);
  if (!text[strspn(text, " \t\r\n")]) return agora__fail(ag_fail(&em, AG_ERR_INVALID, "%s: the text is empty", fn), &em);
  if (w->flags & AGORA_TOOLS)
    return agora__fail(ag_fail(&em, AG_ERR_STATE, "%s: the world was opened with AGORA_TOOLS: no agent runs", fn), &em);
  if (w->closing)
    return agora__fail(ag_fail(&em, AG_ERR_STATE, "%s: world '%s' is closing (agora_world_close_later)", fn,
                               world_id(w->w)), &em);
  int rc = world_publish(w->w, sender, text, out);
  return rc ? agora__fail(ag_fail(&em, rc, "%s: %s", fn, ag_strerror(rc)), &em) : AG_OK;
}

int agora_publish(agora_world *w, const char *sender, const char *text) {
  return agora__publish(w, "agora_publish", sender, text, NULL);
}

static void deadline_hit(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  *(int *)arg = 1;
}

/* Every agent still thinking waits for an answer, and nothing is queued: only an answer moves the world
 * now (timers of a schedule or a deadline may still be pending, so the loop alone would not say so). */
static int waiting(const agora_world *w) {
  return w->asked && world_thinking(w->w) <= w->asked && !bus_pending(world_bus(w->w));
}

/* Quiet, and no advance of the clock under way (agora_clock_advance): what the run functions wait for. */
static int settled(const agora_world *w) { return world_is_quiet(w->w) && !agora_clock_advancing(w); }

/* The run functions' loop: until quiet, interrupted, waiting on a request, or past ms (< 0: no deadline). The
 * deadline's timer is made once the loop is known to be this thread's to run. */
static int run_loop(agora_world *w, long ms, const char *fn) {
  struct event_base *base = rt_base(w->rt);
  int rc = agora__loop_enter(w, fn), late = 0;
  if (rc) return rc;
  struct event *deadline = ms >= 0 ? evtimer_new(base, deadline_hit, &late) : NULL;
  struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
  if (ms >= 0 && (!deadline || evtimer_add(deadline, &tv))) rc = AG_ERR_NOMEM;
  w->running = !rc;
  while (!rc && !settled(w)) {
    if (w->interrupted || late) break;
    if (waiting(w)) {
      rc = AGORA_WAITING;
      break;
    }
    int r = event_base_loop(base, EVLOOP_ONCE);
    if (r < 0) rc = AG_ERR_STATE;
    if (r < 0) break;
    if (r == 1 && !settled(w)) { /* nothing left that could make it quiet */
      rc = w->asked ? AGORA_WAITING : AG_ERR_STATE;
      break;
    }
  }
  if (!rc && w->interrupted) rc = AG_ERR_CANCELLED;
  w->interrupted = w->running = 0;
  if (deadline) event_free(deadline);
  agora__loop_exit(w);
  agora__loop_sync(w);
  if (rc == AG_ERR_NOMEM) return agora__fail(rc, NULL);
  if (rc == AG_ERR_STATE)
    return agora__fail(rc, &(ag_errmsg){"the loop has nothing left to wait for while the world is not quiet"});
  return rc == AG_ERR_CANCELLED ? agora__fail(rc, &(ag_errmsg){"interrupted"}) : rc;
}

int agora_run_until_quiet(agora_world *w) { return run_loop(w, -1, "agora_run_until_quiet"); }

int agora_run_until_interrupt(agora_world *w) {
  if (w->running || w->stepping)
    return agora__fail(AG_ERR_STATE, &(ag_errmsg){"agora_run_until_interrupt: the loop is running already (a callback)"});
  int rc = agora__loop_enter(w, "agora_run_until_interrupt");
  if (rc) return rc;
  w->running = 1;
  while (!w->interrupted && !rc)
    if (event_base_loop(rt_base(w->rt), EVLOOP_ONCE)) rc = AG_ERR_STATE; /* 1: nothing left to wait for */
  w->interrupted = w->running = 0;
  agora__loop_exit(w);
  agora__loop_sync(w);
  return rc ? agora__fail(rc, &(ag_errmsg){"the loop has nothing left to wait for"}) : AG_OK;
}

int agora_run_for(agora_world *w, long ms) { return run_loop(w, ms < 0 ? 0 : ms, "agora_run_for"); }

int agora_step(agora_world *w) {
  int rc = agora__loop_enter(w, "agora_step");
  if (rc) return rc;
  rc = event_base_loop(rt_base(w->rt), EVLOOP_NONBLOCK);
  agora__loop_exit(w);
  if (rc < 0) return agora__fail(AG_ERR_STATE, &(ag_errmsg){"the event loop failed"});
  agora__loop_sync(w);
  return settled(w);
}

int agora_cancel(agora_world *w) {
  char names[512];
  if (!w->rt) return AG_OK; /* closing later, its runtime closed already: nothing in flight */
  rt_cancel(w->rt, names, sizeof names);
  if (w->running) w->interrupted = 1; /* from a callback: the run function returns */
  if (w->stepping) world_interrupt(w->w);
  int rc = world_emit(w->w, &(world_event){EV_CANCELLED, .u.cancelled = {names[0] ? names : NULL}});
  return rc ? agora__fail(rc, NULL) : AG_OK;
}

size_t agora_failed_calls(const agora_world *w) { return world_failed_calls(w->w); }
size_t agora_unsaved(const agora_world *w) { return rt_unsaved(w->rt); }
const char *agora_clock_note(const agora_world *w) { return rt_clock_still(w->rt); }
size_t agora_thinking(const agora_world *w) { return world_thinking(w->w); }

int agora_agent_thinking(const agora_world *w, const char *id) {
  agent *a = id ? world_agent_find(w->w, id) : NULL;
  return a && agent_is_thinking(a);
}

int agora_budget_spent(const agora_world *w, int64_t *tokens, double *usd) {
  world_budget_view b = world_budget(w->w);
  if (tokens) *tokens = b.tokens;
  if (usd) *usd = b.usd;
  return !!b.reached;
}
