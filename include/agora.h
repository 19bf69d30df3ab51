/* agora.h: Agora as a library (libagora). A world of LLM agents on a message bus, opened in your
 * process from a world file, world JSON or a stored world, driven by your thread or your event loop.
 *
 * This header is the whole public API and its documentation (docs/library.md shows it in use).
 *
 * CONVENTIONS
 *
 * - Every fallible function returns an int: AGORA_OK (0) on success, a negative AGORA_ERR_* code on
 *   failure (agora_strerror names it), and in a few documented places a positive status. After a failure
 *   agora_errmsg() holds the detail a person needs ("town.json: agents[1].provider: unknown provider
 *   'nope'"), for the calling thread, until that thread's next failing call.
 * - Ownership: every pointer argument is borrowed for the call unless a function says otherwise. A
 *   function that hands back memory through a char ** gives the caller a NUL-terminated string to
 *   release with agora_free. Pointers a function returns as const char * are borrowed and say how long
 *   they live.
 * - Threads: a world is used by one thread at a time (calls on one world must not overlap); different
 *   worlds may be used on different threads at once (but the worlds of one shared loop, API 8, from its
 *   one thread). Callbacks run on the thread that is running the
 *   world's loop (agora_run_until_quiet, agora_run_for, agora_step, agora_script_*,
 *   agora_run_until_interrupt), never from another thread, and may call any function on that world
 *   except agora_world_close (and agora_script_* and agora_run_until_interrupt, which refuse with
 *   AGORA_ERR_STATE).
 * - Nothing here prints (unless a program asks for the notes: AGORA_NOTES), and nothing installs a
 *   signal handler: Ctrl-C is yours (call agora_cancel; a program blocked in a run or script function
 *   sees its handler's flag from agora_tick).
 *
 * ABI: AGORA_API_VERSION rises when a function is added; an existing function never changes its
 * signature or meaning within libagora.so.0. Opaque handles only: no struct of the library's is ever
 * allocated by the caller, except agora_options, which is read once by agora_world_open. */
#ifndef AGORA_H
#define AGORA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The API this header describes; agora_api_version() is the one of the library loaded. */
#define AGORA_API_VERSION 14 /* 2: agora_db_* (a database without a world); 3: agora_options' API-3 fields,
                               AGORA_NOTES, a run's counters (agora_failed_calls, ...,
                               agora_thinking, agora_agent_thinking),
                               agora_db_chat_info/_transcript/_usage/_chat_state; 4: the world file's
                               script (agora_script_*), agora_tick, agora_options' NATS fields,
                               AGORA_SCRIPT and AGORA_NO_CLOCK, agora_event_sim_time,
                               agora_snapshot_transcript, agora_db_worlds/_world/_world_delete,
                               agora_cache_stats/_clear; 5: AGORA_TOOLS and agora_world_tools,
                               AGORA_HOST with agora_options' API-5 fields, agora_run_until_interrupt;
                               6: a world's settings changed while it runs
                               (agora_settings, agora_agents, agora_settings_change,
                               agora_agent_add/_change/_remove, agora_budget_set), the current
                               chat's past edited (agora_chat_edit/_retry/_cut, agora_agent_forget),
                               agora_chat_title, the clock (agora_clock, agora_clock_advance/_advancing);
                               7: what the console needs (agora_messages, agora_agent_add_like,
                               agora_world_db, agora_world_stored, agora_chat_resumed, AGORA_VIEW,
                               agora_duration_parse);
                               8: several worlds on one loop the program gives (agora_options.loop
                               with AGORA_OPTIONS_8, agora_world_loop, agora_loop_world/_worlds/_db);
                               9: what the one-shot commands need (agora_memories, agora_db_memories,
                               ...);
                               10: what a server of many worlds needs (agora_server.h);
                               11: a world's MCP servers (agora_mcp_servers/_restart, agora_server.h);
                               12: agora_db_messages (a stored chat paged, agora_db.h);
                               13: what serve needs beyond (agora_publish_seq,
                               agora_db_transcript_page, agora_db_mcp_servers, agora_server.h);
                               14: agora_db_search (a stored chat searched, agora_db.h) */

#if defined(__GNUC__)
#define AGORA_EXPORT __attribute__((visibility("default")))
#else
#define AGORA_EXPORT
#endif

/* ---- Error codes (the values of Agora's internal codes, fixed for the ABI) ---- */
#define AGORA_OK 0
#define AGORA_ERR_NOMEM (-1)      /* allocation failed */
#define AGORA_ERR_INVALID (-2)    /* bad input: a world file or JSON, a snapshot, an argument */
#define AGORA_ERR_IO (-3)         /* a file or socket error */
#define AGORA_ERR_STORAGE (-4)    /* the database failed */
#define AGORA_ERR_LLM (-5)        /* an LLM call failed after its retries */
#define AGORA_ERR_NOT_FOUND (-6)  /* no such world, chat, agent or request */
#define AGORA_ERR_TOO_BIG (-7)    /* input past its size cap */
#define AGORA_ERR_EXISTS (-8)     /* a duplicate id */
#define AGORA_ERR_VERSION (-9)    /* data from a newer Agora */
#define AGORA_ERR_CANCELLED (-10) /* agora_interrupt or agora_cancel ended the wait */
#define AGORA_ERR_STATE (-11)     /* not possible now (no database, a chat another process holds) */
/* Positive status of the run functions: an agent waits for an answer (an approval or an ask_human
 * question, see AGORA_EVENT_REQUEST) that nobody has given yet; answer it and run again. */
#define AGORA_WAITING 1
/* Positive status of agora_script_step (API 4): the world's clock reached its `until`, so the script
 * ends here (the steps after this one are not run). */
#define AGORA_ENDED 2

/* A static sentence for any code above (and "unknown error" for others); never NULL. */
AGORA_EXPORT const char *agora_strerror(int rc);
/* The detail of the calling thread's last failure ("" when none); valid until that thread's next
 * failing call into the library. */
AGORA_EXPORT const char *agora_errmsg(void);
/* "0.1.0": the library's version (static). */
AGORA_EXPORT const char *agora_version(void);
/* AGORA_API_VERSION of the library loaded (a program compiled against a newer header can check). */
AGORA_EXPORT int agora_api_version(void);
/* Releases what a function handed back through a char **. NULL is fine. */
AGORA_EXPORT void agora_free(void *p);

/* ---- Opening a world ---- */

typedef struct agora_world agora_world;
/* A database opened without a world (API version 2: the agora_db_* calls, in agora_db.h). */
typedef struct agora_db agora_db;
/* libevent's loop (<event2/event.h>), for agora_options.loop: this header needs no libevent header. */
struct event_base;

/* A read-only view of one message or event, valid only during the callback that receives it
 * (see "Events" below). */
typedef struct agora_event agora_event;
typedef void (*agora_event_fn)(const agora_event *ev, void *ctx);

/* agora_options.flags */
#define AGORA_NO_SAVE 0x01      /* no database: nothing is read or stored (db_dir ignored) */
#define AGORA_NEW_CHAT 0x02     /* start a new chat instead of continuing the world's current one */
#define AGORA_FROM_STORE 0x04   /* file_or_id names a stored world even if a file has that name */
#define AGORA_NO_MCP 0x08       /* do not start the world file's MCP servers */
#define AGORA_STREAM 0x10       /* report streamed text as llm-chunk events */
#define AGORA_AUTO_APPROVE 0x20 /* approve every tool call declared "approve": true without asking */
#define AGORA_NOTES 0x40        /* API 3: the notes meant for a person (a held chat passed over, a stored world
                                   replaced by its file, MCP servers not started, a withheld API key, a world
                                   on NATS's notices: a record refused, the agents a host holds) go to
                                   stderr, as the agora command prints them; without it nothing is printed */
#define AGORA_OPTIONS_3 0x80    /* API 3: opts has the fields marked "API 3" below (see the growth rule) */
#define AGORA_OPTIONS_4 0x100   /* API 4: opts has the fields marked "API 4" below */
#define AGORA_SCRIPT 0x200      /* API 4: the program runs the world's script (agora_script_step): a stored
                                   world, which keeps no script, is refused (AGORA_ERR_INVALID) unless it has
                                   a schedule, before any chat is touched (`agora run`) */
#define AGORA_NO_CLOCK 0x400    /* API 4: the world's schedule is not driven: its clock does not move and no
                                   scheduled message is published (`agora run --resume`, which only finishes
                                   what a chat had in flight); agora_script_* are then AGORA_ERR_STATE */
#define AGORA_OPTIONS_5 0x800   /* API 5: opts has the fields marked "API 5" below; the API-5 flags count only
                                   with it */
#define AGORA_TOOLS 0x1000      /* API 5: the world is opened to look at its tools (`agora tools`): no database
                                   (db_dir only says where the MCP servers' logs go: DB/logs), no chat, no
                                   agent will run (API keys are not checked, agora_publish is AGORA_ERR_STATE);
                                   the MCP servers start, and one that fails does not fail the open
                                   (agora_world_tools says which and why). Not with nats_url */
#define AGORA_HOST 0x2000       /* API 5: the world on NATS JetStream as a host (`agora host`,
                                   docs/distributed.md), nats_url needed: this process answers for a share of
                                   the agents (or nats_agents) while another publishes; its MCP servers are
                                   started before it joins, so that no turn it takes finds a tool missing.
                                   Without AGORA_NO_SAVE, db_dir keeps a copy of the stream's chats (no chat
                                   is made current until the stream has one); with it db_dir only says where
                                   the MCP servers' logs go. The schedule is the publisher's: no clock runs
                                   here. Events are the stream's, as it delivers them; run it with
                                   agora_run_until_interrupt */
#define AGORA_VIEW 0x4000       /* API 7 (counts with AGORA_OPTIONS_5): the world on NATS JetStream as a viewer
                                   (`agora console --nats`), nats_url and a database needed: messages anyone
                                   publishes reach the subscribers, agora_publish goes to the stream, and the
                                   stream's current chat is this world's (a chat-loaded event when another
                                   process moves it). What would hold here only is AGORA_ERR_STATE (the
                                   settings, agora_budget_set, agora_agent_forget, agora_clock_advance), and so
                                   are loading a chat other than the stream's, deleting the stream's,
                                   branching and cutting; a new chat, a deletion and a title are every
                                   process's. Not with AGORA_HOST, AGORA_TOOLS, AGORA_NO_SAVE or chat */
#define AGORA_OPTIONS_8 0x8000  /* API 8: opts has the fields marked "API 8" below (loop) */
#define AGORA_OPTIONS_10 0x10000 /* API 10: opts has the fields marked "API 10" below (sync); the API-10 flags
                                    count only with it */
#define AGORA_UNTRUSTED 0x20000 /* API 10: file_or_id is world JSON someone else wrote (an HTTP body): stored as
                                   a new world, then opened as a stored world (agora_server.h) */
/* agora_options.sync (API 10) */
#define AGORA_SYNC_FULL 0       /* each commit is on disk before the call that made it returns (default) */
#define AGORA_SYNC_BACKGROUND 1 /* commits are forced to disk by a storage thread (agora_server.h) */

/* Read by agora_world_open only (every pointer borrowed for that call). Zero is the default for every
 * field: {0} opens the world's current chat in the default database, asking approvals as events.
 *
 * Growth rule: the caller allocates this struct, so fields are only ever added at its end, and the
 * library reads a field added after the first API only when flags holds that API's AGORA_OPTIONS_N
 * flag. A program built against an older header (a smaller struct, no such flag) keeps working with a
 * newer library; a program that sets AGORA_OPTIONS_3 needs agora_api_version() >= 3 (an older library
 * ignores the flag and the fields). */
typedef struct agora_options {
  unsigned flags;         /* AGORA_* flags above */
  const char *chat;       /* continue this stored chat (its id or a unique prefix) instead */
  const char *model;      /* overrides every agent's model, provider, base_url (NULL: as in the file) */
  const char *provider;
  const char *base_url;
  const char *const *allow_env; /* names of environment variables agents may use as api_key_env */
  size_t n_allow_env;           /* beyond those that plainly are LLM keys (…_API_KEY, …_TOKEN) */
  /* API 3 (read only with AGORA_OPTIONS_3) */
  const char *program;             /* names the program in notes and errors ("say"); NULL: none (the lock
                                      files of a process's chats name it after agora_process_name) */
  const char *const *allow_key_to; /* base URLs a stored world's agents may send their API key to */
  size_t n_allow_key_to;           /* (docs/security.md; a file's or JSON world's agents always may) */
  const char *llm_cache;           /* the LLM response cache: "off", "use" or "replay" (docs/cli.md
                                      --llm-cache); NULL: as the world file says (default off) */
  const char *cache_db;            /* the cache's directory; NULL: llm-cache in the database directory */
  agora_event_fn on_event;         /* subscribed (agora_subscribe) before the world starts, so that what
                                      opening it produces (a resumed turn, an MCP server's error, a request)
                                      reaches it too: agora_event_world names the world then. May be NULL */
  void *on_event_ctx;              /* its ctx, borrowed until agora_world_close */
  /* API 4 (read only with AGORA_OPTIONS_4): the world on NATS JetStream as a publisher (`agora run
   * --nats`, docs/distributed.md): the script's steps go to the world's stream and `agora host`
   * processes answer; a step waits until every addressed agent has answered in some host. With chat,
   * the stream's current chat is continued (it must be that chat) instead of a new one. Credentials
   * come from the environment (AGORA_NATS_TOKEN, AGORA_NATS_USER/AGORA_NATS_PASSWORD). */
  const char *nats_url;   /* nats://host:port, tls://..., several joined by ','; NULL: one process */
  const char *nats_creds; /* a credentials file (JWT and NKey seed), or NULL */
  const char *nats_ca;    /* a CA file for tls://, or NULL */
  int nats_replicas;      /* copies of the stream, 1 to 5 (0: 1) */
  /* API 5 (read only with AGORA_OPTIONS_5), for AGORA_HOST: */
  const char *nats_agents; /* answer only for these agents (ids or names, joined by ','); NULL: a fair share
                              of those no other host holds */
  long nats_lease_ms;      /* an agent's lease lasts this long without a renewal: 300 to 600000 (0: 3000) */
  /* API 8 (read only with AGORA_OPTIONS_8): */
  struct event_base *loop; /* a libevent loop of the program's to run the world on, with the program's own
                              events and other worlds ("Several worlds on one loop" in agora_server.h;
                              with nats_url only as AGORA_VIEW); NULL: the world makes its own */
  /* API 10 (read only with AGORA_OPTIONS_10): */
  int sync; /* AGORA_SYNC_FULL, or AGORA_SYNC_BACKGROUND with loop and a database: the loop never waits for
               the disk, and state-saved comes once a save is synced (agora_server.h "Storage thread") */
} agora_options;

/* Opens a world and makes a chat current, ready to publish into.
 *
 * file_or_id: a world file's path; world JSON text (anything whose first non-blank character is '{');
 *   or a stored world's id or display name (with a database). Only a file or JSON given here may start
 *   programs (its mcp_servers); a stored world never does.
 * db_dir: the database directory (created when missing), or NULL for the default (docs/cli.md "Where
 *   data lives"); ignored with AGORA_NO_SAVE. opts may be NULL (all defaults).
 * API 4: with AGORA_OPTIONS_4 and opts->chat, file_or_id may be NULL: the chat's world from the database
 * (`agora run --resume CHAT_ID`). API 7: with AGORA_FROM_STORE (and no chat), file_or_id may be NULL: the
 * only world the database holds (`agora console --db DIR`); AGORA_ERR_INVALID naming the database when it
 * holds none or several.
 * On success *out is the caller's (agora_world_close). On failure *out is NULL, nothing is left open
 * and agora_errmsg() names the file, field, option or chat. AGORA_ERR_INVALID for bad input,
 * AGORA_ERR_NOT_FOUND for an unknown world or chat, AGORA_ERR_STATE for a chat another process holds. */
AGORA_EXPORT int agora_world_open(const char *file_or_id, const char *db_dir, const agora_options *opts,
                                  agora_world **out);
/* Cancels the replies in flight, delivers and saves what was published (for at most half a second),
 * and frees everything. Subscribers still receive what closing produces (the cancelled turns' ends);
 * once it returns, no callback runs and no ctx is used again. Not from a callback. NULL is fine. */
AGORA_EXPORT void agora_world_close(agora_world *w);

/* The world's id and display name; borrowed, alive until agora_world_close. */
AGORA_EXPORT const char *agora_world_id(const agora_world *w);
AGORA_EXPORT const char *agora_world_name(const agora_world *w);

/* ---- What a run came to (API version 3) ----
 * What a command-line program needs for its exit status (docs/cli.md "Exit status"). */
/* The LLM calls that failed after their retries since agora_world_open (each also an llm-error event). */
AGORA_EXPORT size_t agora_failed_calls(const agora_world *w);
/* Messages and thread steps of this session that could not be stored (each also a storage-error
 * event); 0 without a database. */
AGORA_EXPORT size_t agora_unsaved(const agora_world *w);
/* 1 when the world's budget ("budget" in the world file) is spent, so that no new LLM call starts,
 * else 0. tokens and usd (each may be NULL) receive what the current chat has spent. */
AGORA_EXPORT int agora_budget_spent(const agora_world *w, int64_t *tokens, double *usd);
/* A sentence for a person when the world runs on a virtual clock with something scheduled that a
 * program which never moves the clock will not deliver (docs/architecture.md "Parity"), or NULL.
 * Static. */
AGORA_EXPORT const char *agora_clock_note(const agora_world *w);
/* What a progress display shows (API version 3): the number of agents with an LLM call in flight, and
 * whether agent (an id or a name) is one of them (1) or not (0, also for an unknown agent). A turn that
 * ends without an event of its own (a cancelled call) shows here at once; an llm-start event names
 * the agent that began to think. */
AGORA_EXPORT size_t agora_thinking(const agora_world *w);
AGORA_EXPORT int agora_agent_thinking(const agora_world *w, const char *agent);

/* ---- Publishing and running ---- */

/* Publishes text from sender ("human", "world" or an agent's id) into the current chat. Agents answer
 * as the loop runs (agora_run_until_quiet and friends); nothing is delivered from inside this call. */
AGORA_EXPORT int agora_publish(agora_world *w, const char *sender, const char *text);
/* Runs the loop until the world is quiet: nothing queued, no agent thinking (and, API 6, no
 * agora_clock_advance under way). Returns AGORA_OK;
 * AGORA_WAITING when agents wait for answers to requests (and nothing else can move); AGORA_ERR_CANCELLED
 * when agora_interrupt was called (from a callback, or before); AGORA_ERR_STATE if the loop has
 * nothing left to wait for while the world is not quiet. */
AGORA_EXPORT int agora_run_until_quiet(agora_world *w);
/* Runs the loop for up to ms milliseconds, returning early (AGORA_OK) once the world is quiet.
 * Otherwise as agora_run_until_quiet. */
AGORA_EXPORT int agora_run_for(agora_world *w, long ms);
/* One turn of the loop without blocking: runs whatever is ready (replies that arrived, messages
 * queued, timers due). Returns 1 when the world is quiet afterwards, 0 when it is not, or an error. */
AGORA_EXPORT int agora_step(agora_world *w);
/* 1 when the world is quiet (nothing queued, no agent thinking), else 0. */
AGORA_EXPORT int agora_is_quiet(const agora_world *w);
/* Makes the run function now running (or the next one) return AGORA_ERR_CANCELLED. For a callback
 * that wants the loop to stop; replies in flight go on (see agora_cancel). */
AGORA_EXPORT void agora_interrupt(agora_world *w);
/* Cancels every reply in flight (each cancelled turn ends with a turn-end event, and a "cancelled"
 * event names the agents) and withdraws their pending requests; called from a callback, it also makes
 * the run function return AGORA_ERR_CANCELLED. The world stays usable: run it until quiet to deliver
 * and save what the cancel produced, publish again. */
AGORA_EXPORT int agora_cancel(agora_world *w);

/* Embedding in a foreign event loop (poll, epoll, asyncio): watch agora_fd for reading and wake after
 * agora_next_timeout milliseconds; on either, call agora_step. The fd is the library's, valid until
 * agora_world_close; do not read or close it. agora_fd returns a negative code when it cannot be made.
 * agora_next_timeout returns -1 when nothing is timed, 0 when work is ready now. */
AGORA_EXPORT int agora_fd(agora_world *w);
AGORA_EXPORT long agora_next_timeout(agora_world *w);

/* ---- The world file's script and schedule (API version 4) ----
 * What `agora run` does: the file's `script` steps in order, each run until the world is quiet, on the
 * world's clock (docs/time.md): a virtual clock jumps to the scheduled items due between steps, a
 * `wait` step lets its time pass (delivering what falls due), a `new_chat` step starts a new chat (a
 * fresh conversation with AGORA_NO_SAVE). A stored world keeps no script (0 steps): its schedule alone
 * runs, from agora_script_finish. These block like agora_run_until_quiet and run callbacks (events,
 * agora_tick) on the calling thread; a request left unanswered holds the step until it is answered
 * or times out. AGORA_ERR_STATE with AGORA_NO_CLOCK, or from a callback. */
/* The number of steps of the world's script (0 for a stored world, or a file without one). */
AGORA_EXPORT size_t agora_script_steps(const agora_world *w);
/* Runs step i (0-based) until the world is quiet. Returns AGORA_OK; AGORA_ENDED when the clock reached
 * its `until` (the script ends there); AGORA_ERR_CANCELLED after agora_cancel or agora_interrupt (from
 * a callback or a tick, or before the call); AGORA_ERR_NOT_FOUND past the last step; or the error of
 * the step (agora_errmsg says why: a template variable, the database). */
AGORA_EXPORT int agora_script_step(agora_world *w, size_t i);
/* After the steps: runs the world's schedule until the clock's `until` (a virtual clock delivers
 * everything due before it, at once); returns AGORA_OK at once when the world has no `until`.
 * Otherwise as agora_script_step. */
AGORA_EXPORT int agora_script_finish(agora_world *w);

/* A periodic callback (API version 4): fn(w, ctx) every ms milliseconds while the world's loop runs
 * (the run functions, agora_step, agora_script_*), on that thread, for a progress display or to look
 * at a flag a signal handler set (then agora_cancel: Ctrl-C). One per world: a new call replaces it,
 * ms 0 or fn NULL ends it. ctx is borrowed until then or agora_world_close, which ends it first. While
 * a tick is set the loop always has something to wait for: a world that can never be quiet makes the
 * run functions wait (not AGORA_ERR_STATE). AGORA_ERR_INVALID for a negative ms. */
typedef void (*agora_tick_fn)(agora_world *w, void *ctx);
AGORA_EXPORT int agora_tick(agora_world *w, long ms, agora_tick_fn fn, void *ctx);

/* ---- Events ---- */


/* agora_event_type */
#define AGORA_EVENT_MESSAGE 1   /* a message published in the chat (human, world, agent, system) */
#define AGORA_EVENT_WORLD 2     /* a world event (docs/behaviour.md §7): llm-error, tool-call, ... */
#define AGORA_EVENT_REQUEST 3   /* an approval or ask_human question waiting for agora_answer/_reply */
#define AGORA_EVENT_WITHDRAWN 4 /* a request ended unanswered (its turn was cancelled, or timed out) */

AGORA_EXPORT int agora_event_type(const agora_event *ev);
/* The world the event comes from (API 3): during agora_world_open, before *out is set, it is the one
 * agora_world_open will hand back; a callback given as agora_options.on_event answers requests with it. */
AGORA_EXPORT agora_world *agora_event_world(const agora_event *ev);
/* "message", an event's wire name ("llm-error", "title-updated", ...), "approval-request",
 * "ask-human" or "request-withdrawn". Static. */
AGORA_EXPORT const char *agora_event_kind(const agora_event *ev);
/* A message's sender and text; NULL for the other types. */
AGORA_EXPORT const char *agora_event_sender(const agora_event *ev);
AGORA_EXPORT const char *agora_event_text(const agora_event *ev);
/* A message's number in its chat; 0 for the other types. */
AGORA_EXPORT uint64_t agora_event_seq(const agora_event *ev);
/* A message's time on the world's virtual clock, in milliseconds since the Unix epoch (its JSON line's
 * "sim_time"), into *ms: 1; 0 (and *ms untouched) on a real clock and for the other types (API 4). */
AGORA_EXPORT int agora_event_sim_time(const agora_event *ev, int64_t *ms);
/* The agent the message, event or request is about; NULL when none. */
AGORA_EXPORT const char *agora_event_agent(const agora_event *ev);
/* A request's id (AGORA_EVENT_REQUEST, AGORA_EVENT_WITHDRAWN), for agora_answer; 0 otherwise. */
AGORA_EXPORT uint64_t agora_event_request(const agora_event *ev);
/* The event as one line of JSON, the object `agora run --json` prints (docs/cli.md); requests are
 * {"type":"approval-request"|"ask-human","id":N,"agent","tool","args","question"}. Made on first use,
 * borrowed for the callback; NULL when out of memory. */
AGORA_EXPORT const char *agora_event_json(const agora_event *ev);

/* Calls fn(ev, ctx) for every message and event from now on, after the agents have seen it and it is
 * stored, in order. Returns a subscription number (> 0) for agora_unsubscribe, or a negative code.
 * ctx is borrowed until agora_unsubscribe or agora_world_close. */
AGORA_EXPORT int agora_subscribe(agora_world *w, agora_event_fn fn, void *ctx);
/* Ends subscription sub (safe from inside a callback); AGORA_ERR_NOT_FOUND for an unknown one. */
AGORA_EXPORT int agora_unsubscribe(agora_world *w, int sub);

/* A pull-style consumer for bindings: collects every event's JSON line (as agora_event_json) in a
 * buffer of at most max_bytes (0 turns it off and drops what it holds). agora_events_take hands the
 * lines collected so far to the caller (*out, "\n"-terminated lines, "" when none; agora_free) and
 * empties the buffer. AGORA_ERR_TOO_BIG from take when lines were dropped because the buffer was full
 * (what it holds is still handed over). */
AGORA_EXPORT int agora_events_buffer(agora_world *w, size_t max_bytes);
AGORA_EXPORT int agora_events_take(agora_world *w, char **out, size_t *len);

/* ---- Approvals and ask_human ----
 * A tool call declared "approve": true and an ask_human question reach subscribers as an
 * AGORA_EVENT_REQUEST; the agent's turn waits (the rest of the world goes on) until one of these is
 * called, now or later. With no subscriber, no buffer and no AGORA_AUTO_APPROVE, requests are denied. */
/* Answers request id: allow 1 runs the tool, 0 denies it. AGORA_ERR_NOT_FOUND when it is not pending
 * (ended, cancelled, timed out), AGORA_ERR_STATE when already answered. */
AGORA_EXPORT int agora_answer(agora_world *w, uint64_t id, int allow);
/* Answers an ask_human question with text (copied); allow 0 says nobody answers (text may say why). */
AGORA_EXPORT int agora_reply(agora_world *w, uint64_t id, int allow, const char *text);

/* ---- Chats (need a database: AGORA_ERR_STATE with AGORA_NO_SAVE) ----
 * A chat is named by its id or a unique prefix; NULL means the current chat. JSON handed back is the
 * caller's (agora_free). */
#define AGORA_ID_MAX 65 /* a buffer for any chat or world id, NUL included */

/* The current chat's id (borrowed until the next call on w), or NULL when there is none. */
AGORA_EXPORT const char *agora_chat_current(agora_world *w);
/* This world's chats, most recently updated first: a JSON array of the objects `agora chats list
 * --json` prints ({"id","world","title","message_count","created_at","updated_at","current"}). */
AGORA_EXPORT int agora_chats(agora_world *w, char **json);
/* A chat's transcript: a JSON array of its messages and thread steps (tool calls, results, failed
 * calls) in order, each the object `agora run --json` prints. */
AGORA_EXPORT int agora_transcript(agora_world *w, const char *chat, char **json);
/* A chat's snapshot (the document `agora chats export` writes). */
AGORA_EXPORT int agora_chat_export(agora_world *w, const char *chat, char **json);
/* Imports a snapshot document (JSON text) as a new chat; its id into id. Nothing is written when it is
 * invalid (AGORA_ERR_INVALID, agora_errmsg names the field; AGORA_ERR_VERSION for a newer format). */
AGORA_EXPORT int agora_chat_import(agora_world *w, const char *snapshot_json, char id[AGORA_ID_MAX]);
/* A new chat holding messages 1..seq of chat with the agents' state right after seq; its id into id. */
AGORA_EXPORT int agora_chat_branch(agora_world *w, const char *chat, uint64_t seq, char id[AGORA_ID_MAX]);
/* Deletes a chat; when it was current, the most recently updated remaining chat of this world becomes
 * current (or none). Call it when the world is quiet. */
AGORA_EXPORT int agora_chat_delete(agora_world *w, const char *chat);
/* Makes a new chat current (an empty "New Chat" is reused). Call it when the world is quiet. */
AGORA_EXPORT int agora_chat_new(agora_world *w);
/* Makes chat current (this world's), restoring the agents' memories from it. */
AGORA_EXPORT int agora_chat_load(agora_world *w, const char *chat);
/* Token usage of a chat per agent: a JSON array of {"agent","calls","input_tokens","output_tokens"}. */
AGORA_EXPORT int agora_usage(agora_world *w, const char *chat, char **json);

/* ---- Tools and hosting (API version 5) ---- */

/* The tools each agent of w may call, and the world's MCP servers (`agora tools` prints them), as
 * {"agents":[{"name","tools":[{"name","source","approve","description","input_schema"}]}],
 *  "servers":[{"name","ready","error"}]}: a tool's name as the model sees it, its source ("built-in", or
 * "SERVER.TOOL" for an MCP server's), approve true when a call is asked first (AGORA_EVENT_REQUEST), its
 * description and its input schema (a JSON object); servers in the world file's order, error (why it
 * failed) only when one is not ready, none when they were not started (a stored world, AGORA_NO_MCP).
 * Agents and tools in the world's order. Any open world; with AGORA_TOOLS this is all it is for.
 * *json is the caller's (agora_free). */
AGORA_EXPORT int agora_world_tools(agora_world *w, char **json);

/* Runs w's loop, quiet or not, until agora_interrupt or agora_cancel is called (from a callback or a
 * tick: a program that stops on a signal looks at its handler's flag from agora_tick), then returns
 * AGORA_OK: what a host does (AGORA_HOST) between joining and agora_world_close. Callbacks run on the
 * calling thread. AGORA_ERR_STATE when the loop has nothing left to wait for (no tick, nothing joined),
 * or from a callback. */
AGORA_EXPORT int agora_run_until_interrupt(agora_world *w);

/* ---- Changing a world while it runs (API version 6) ----
 * What `agora console`'s /set, /add, /remove, /turnlimit and /budget do, and PATCH /api/worlds/{id} of
 * `agora serve` (docs/serve.md "Building worlds"), by the same code: a change edits the world's settings
 * in world-file form, the whole document is checked again by the world file's own readers (agora_errmsg
 * names the JSON path: "agora_agent_change: agents[0].temperature: ..."), then the change is made to the
 * open world and stored with it (with a database: the next open of the stored world, `agora say` and
 * `agora console` see it; a world opened again from its file takes the file's settings again).
 *
 * A change is held to the rules of untrusted input, as an HTTP body is: it names only the fields below;
 * a new agent sends its API key only to its provider's default URL, to an agora_options.base_url or to an
 * allow_key_to URL given at the open (else its calls go without a key), and names only key variables
 * that are plainly LLM keys or in allow_env; a changed agent keeps the rule it had. JSON text is at most
 * 1 MiB (AGORA_ERR_TOO_BIG) and may not hold \u0000.
 *
 * AGORA_ERR_STATE while replies are in flight (an agent thinking: agora_cancel, or run until quiet
 * first; a message only published is delivered with the new settings), and on a world on NATS (its
 * settings are its file's). Nothing changes on failure. From a callback too, on the thread running the
 * world. The agents' memories and turn counts stay. */
/* The world's settings and agents in world-file form, as the database stores them: no script; keys and
 * secrets only as the file names them (api_key_env, an MCP server's ${VAR}), never their values. *json
 * is the caller's (agora_free). */
AGORA_EXPORT int agora_settings(agora_world *w, char **json);
/* The agents as they are now, in the order they were added (what `agora serve`'s GET /api/worlds/{id}
 * lists, and the tokens): a JSON array of {"id","name","provider","model" (when set),"key_withheld",
 * "turns" (LLM calls since the last human message),"thinking","phase","memory","mcp_tools":[names],
 * "input_tokens","output_tokens" (what its calls reported since the open)}. *json the caller's. */
AGORA_EXPORT int agora_agents(agora_world *w, char **json);
/* Replaces the world's settings named in json, an object with any of "turn_limit", "main_agent",
 * "memory_window" and "variables" (as in a world file); a field given as null takes the file's default. */
AGORA_EXPORT int agora_settings_change(agora_world *w, const char *json);
/* Adds an agent: json is one object as the world file's "agents" array holds them ({"name": "carol",
 * "provider": "openai", "model": ..., "system_prompt": ...}). AGORA_ERR_EXISTS when its id is taken.
 * agent_json (may be NULL) receives the agent as the world now has it (agora_free). */
AGORA_EXPORT int agora_agent_add(agora_world *w, const char *json, char **agent_json);
/* Changes agent (its name or id): json is an object with any of "provider", "model", "system_prompt",
 * "temperature" and "tools"; null takes the default. AGORA_ERR_NOT_FOUND for an unknown agent. */
AGORA_EXPORT int agora_agent_change(agora_world *w, const char *agent, const char *json, char **agent_json);
/* Removes agent (its name or id), cancelling nothing: the world is quiet. AGORA_ERR_NOT_FOUND for an
 * unknown agent; AGORA_ERR_STATE when the world cannot do without it (it is the main_agent). */
AGORA_EXPORT int agora_agent_remove(agora_world *w, const char *agent);
/* Sets the world's budget (docs/world-file.md "Budget and pricing"): tokens and usd for the current chat, 0 for no
 * limit; prices and what was spent are kept, and a limit above the spend lets LLM calls start again.
 * Stored with the world. AGORA_ERR_INVALID for a negative limit (or a usd that is not a number). */
AGORA_EXPORT int agora_budget_set(agora_world *w, int64_t tokens, double usd);


/* The current chat's past edited (API version 6; the console's /edit, /retry and /clear, agora serve's
 * PUT/DELETE …/messages/{seq} and POST …/retry, by the same code). Need a database (AGORA_ERR_STATE with
 * AGORA_NO_SAVE) and no reply in flight (AGORA_ERR_STATE); the chat is cut in one transaction, then the
 * text is published again as the human, so the agents answer it afresh as the loop runs. */
/* Human message seq (0: the last human one) is replaced by text and sent again; kept (may be NULL)
 * receives the last message kept. AGORA_ERR_NOT_FOUND for no such message, AGORA_ERR_INVALID when it
 * is not the human's or text is empty. */
AGORA_EXPORT int agora_chat_edit(agora_world *w, uint64_t seq, const char *text, uint64_t *kept);
/* The last human message is sent again (what came after it goes). */
AGORA_EXPORT int agora_chat_retry(agora_world *w, uint64_t *kept);
/* Message seq and every one after it go, any sender's; nothing is sent. */
AGORA_EXPORT int agora_chat_cut(agora_world *w, uint64_t seq);
/* Forgets agent's (name or id) memory, turn count and saved context in the current chat (a
 * memory-cleared event). AGORA_ERR_NOT_FOUND for an unknown agent. */
AGORA_EXPORT int agora_agent_forget(agora_world *w, const char *agent);


/* Renames the current chat (the console's /title; API version 6). AGORA_ERR_NOT_FOUND without one. */
AGORA_EXPORT int agora_chat_title(agora_world *w, const char *title);

/* The world's clock (API version 6; the console's /clock and /advance, docs/time.md). Its state as
 * {"mode":"virtual"|"real","now","next_due","until","advancing"}, times ISO 8601 (null: nothing
 * scheduled, no until); *json the caller's (agora_free). */
AGORA_EXPORT int agora_clock(agora_world *w, char **json);
/* Lets ms pass on a virtual clock without blocking: returns at once, and the world's loop (agora_step,
 * agora_run_for, a foreign loop on agora_fd) delivers the items that fall due one instant at a time,
 * each when the world has fallen quiet, then sets the clock to now + ms. Until then the run functions
 * do not count the world quiet (agora_run_until_quiet returns once the advance has ended, agora_step
 * returns 0) and agora_clock_advancing returns 1. AGORA_ERR_STATE on
 * a real clock, with AGORA_NO_CLOCK or while an advance runs; AGORA_ERR_INVALID for ms <= 0. */
AGORA_EXPORT int agora_clock_advance(agora_world *w, int64_t ms);
AGORA_EXPORT int agora_clock_advancing(const agora_world *w);

/* ---- What `agora console` needs (API version 7) ---- */
/* A window of a chat's messages (the console's /show N and what it shows of a chat it resumes), chat
 * named as for agora_transcript (NULL: the current one): from > 0, the messages from number from on;
 * from 0, the last max. At most max of them (0: no limit), in order, as a JSON array of the objects
 * `agora run --json` prints (each with its "seq"), without the thread's steps; [] past the last. Needs a
 * database (AGORA_ERR_STATE with AGORA_NO_SAVE); AGORA_ERR_NOT_FOUND for an unknown chat or no current
 * one. *json is the caller's (agora_free); nothing is handed back on failure. */
AGORA_EXPORT int agora_messages(agora_world *w, const char *chat, uint64_t from, size_t max, char **json);
/* The database directory the world was opened on, as the library resolved it (db_dir, or the default);
 * NULL with AGORA_NO_SAVE or AGORA_TOOLS. Borrowed, alive until agora_world_close. */
AGORA_EXPORT const char *agora_world_db(const agora_world *w);
/* 1 when the world came from the database (a stored world's id or name), 0 from a file or world JSON
 * (whose settings replace the stored world's at every open: a change made now lasts until then). */
AGORA_EXPORT int agora_world_stored(const agora_world *w);
/* 1 when the chat made current at the open continues a saved one (the world's current chat, the chat
 * named, the stream's), 0 when it is new (also with AGORA_NEW_CHAT, without a database). */
AGORA_EXPORT int agora_chat_resumed(const agora_world *w);
/* A duration as world files write it ("90s", "1h30m", "2d": units d, h, m, s in that order, whole numbers,
 * above 0 and at most 100 years) into *ms, for the delays a person types (the console's /advance 3h).
 * AGORA_ERR_INVALID with agora_errmsg saying why; *ms untouched on failure. Any thread. */
AGORA_EXPORT int agora_duration_parse(const char *text, int64_t *ms);
/* Adds a copy of agent like (its name or id; the console's /add NAME --like OTHER): like's settings in
 * world-file form, without its scripted "replies" (its own), with json's fields on top (an object as the
 * "agents" array holds them, at least "name"; a field given as null is taken away). Unlike agora_agent_add,
 * whose new agent is held to the untrusted rules, the copy's API key goes wherever like's goes (a world
 * file's agent at its own base_url keeps its key), unless json gives "provider", "base_url",
 * "api_key_env" or "memory" a value (null is fine): then the rules of agora_agent_add hold. Otherwise
 * as agora_agent_add (AGORA_ERR_EXISTS for a taken name, AGORA_ERR_STATE with replies in flight or on
 * NATS, nothing changes on failure); AGORA_ERR_NOT_FOUND for an unknown like. agent_json (may be NULL)
 * as agora_agent_add's. */
AGORA_EXPORT int agora_agent_add_like(agora_world *w, const char *like, const char *json, char **agent_json);
/* ---- An agent's memories (API version 9; the calls that need no world are in agora_db.h) ---- */
/* What agent (a name or id) remembers in the world's current chat (an agent with "memory": {"mode":
 * "stream"}, docs/memory.md), as a JSON object into *json (the caller's, agora_free):
 *   {"chat": ID, "agent": AGENT, "query": Q (when given), "relevance_left_out": WHY (see below),
 *    "memories": [{"seq","time","sender","text","importance", "sources" (when it is a reflection)}, ...]}
 * oldest first. With query (not NULL) the 50 that score best for it at the world's time, best first, each
 * also with "scores" {"recency","importance","relevance","total"}. Reads only and sends nothing anywhere:
 * an agent with a hosted embedder is ranked without relevance, and "relevance_left_out" says so (what the
 * HTTP API's .../agents/{name}/memory returns; agora_db_memories asks the embedder). AGORA_ERR_NOT_FOUND
 * for an unknown agent, AGORA_ERR_INVALID for one whose memory keeps no stream, AGORA_ERR_STATE with no
 * current chat. From the world's thread; not blocking. */
AGORA_EXPORT int agora_memories(agora_world *w, const char *agent, const char *query, char **json);

#ifdef __cplusplus
}
#endif

/* What needs no world: a database, the LLM response cache, a snapshot file, a program's arguments (API
 * versions 2, 4 and 9). */
#include "agora_db.h"
/* Several worlds on one loop, and what a server of them needs (API versions 8 and 10). */
#include "agora_server.h"

#endif
