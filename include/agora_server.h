/* libagora: several worlds on one loop (API version 8), and what a server of them needs beyond that (API
 * versions 10, 11 and 13), as `agora serve` uses it (include "agora.h": it includes this file, which is not meant to be included on its own).
 * The rules of agora.h hold: ownership, threads and error codes as there, and every call here is made on
 * the thread of the loop ("Several worlds on one loop", below). */
#ifndef AGORA_SERVER_H
#define AGORA_SERVER_H

#include "agora.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Several worlds on one loop (API version 8) ----
 * A program with a libevent loop of its own (a game server, an HTTP server, a test harness) opens any
 * number of worlds on it (agora_options.loop with AGORA_OPTIONS_8), beside its own events. The loop stays
 * the program's: never freed here, and a world's close removes every event the world added to it.
 * - The program may run the loop itself (event_base_dispatch: the worlds answer as it runs, as `agora
 *   serve`'s do), or call a run function on one world (agora_run_*, agora_step, agora_script_*): that runs
 *   the shared loop, so the other worlds progress and the program's events fire too, and returns when
 *   *that* world is quiet (agora_interrupt and agora_cancel stop their own world's run only). agora_fd and
 *   agora_next_timeout describe the whole loop. agora_world_close settles its world on the loop (at most
 *   half a second, the others going on); the other worlds and the loop go on.
 * - One loop, one thread: its worlds are opened, run and closed on the thread that opened the first of
 *   them (AGORA_ERR_STATE from another, naming agora_options.loop or the function); the loop is free
 *   again once its last world is closed. The run functions are AGORA_ERR_STATE while the library runs
 *   the loop (from a callback of a world on it, or during a close). From a callback of the program's own
 *   events while it runs the loop, call no run function (libevent runs a loop once at a time);
 *   agora_publish, the chat calls and API 6's changes are fine anywhere on the thread. A close there does
 *   not wait: replies in flight are cancelled, and MCP servers are told to end (stdin closed) and handed
 *   to the library's process-wide reaper (a thread of its own: SIGTERM after 0.5 s, SIGKILL 0.5 s later,
 *   reaped), so nothing of theirs stays on the loop: the program may free the loop as soon as the close
 *   returns.
 * - Worlds of one loop on the same db_dir share one database handle (a process opens a database once); a
 *   world is open once per loop (AGORA_ERR_EXISTS for a second world of its id). libcurl and the NATS
 *   client are started once per process (the client is closed once, at the exit); MCP servers' children are watched by their pidfds (no SIGCHLD is taken from the
 *   program), so worlds with MCP servers may be on any number of loops. They are opened outside the
 *   loop's callbacks: starting the
 *   servers waits on the loop, so opening such a world while the loop runs (from any callback on it) is
 *   AGORA_ERR_STATE naming agora_options.loop, nothing started, nothing printed (a loop made with
 *   EVENT_BASE_FLAG_NO_CACHE_TIME is told apart by libevent's "reentrant invocation" warning instead, on
 *   its log callback: libevent has no "is running" query, and such a loop keeps no cached time).
 * - A world on NATS joins a shared loop as a viewer (nats_url with AGORA_VIEW, what `agora serve --nats`
 *   does), beside worlds on NATS or not: libnats' threads hand what they receive to the loop through a
 *   pipe watched on it, the leases and consumers are asked for on a thread of the world's own, and its
 *   close (agora_world_close, or agora_world_close_later from a callback) removes its events from the
 *   loop. Joining waits on the loop until the stream has caught up, so it is opened outside the loop's
 *   callbacks, as a world with MCP servers is (AGORA_ERR_STATE naming agora_options.loop otherwise,
 *   nothing joined). A host (AGORA_HOST) or a publisher (nats_url without AGORA_VIEW) is AGORA_ERR_INVALID
 *   with a loop: a host gives its leases back at the close and waits for the server's answers, which
 *   would stall every world of the loop, and a publisher's script runs a world's own loop. */
/* The loop w runs on: agora_options.loop, or the world's own (borrowed, alive until agora_world_close). */
AGORA_EXPORT struct event_base *agora_world_loop(const agora_world *w);
/* The world open on loop whose id (else display name) is id, or NULL: what a server of many worlds looks
 * a request's world up by. From the loop's thread (NULL from another). */
AGORA_EXPORT agora_world *agora_loop_world(const struct event_base *loop, const char *id);
/* The worlds open on loop, in the order they were opened: the first max of them into out (out may be
 * NULL with max 0); returns how many there are. From the loop's thread (0 from another). */
AGORA_EXPORT size_t agora_loop_worlds(const struct event_base *loop, agora_world **out, size_t max);
/* The database in db_dir (NULL: the default) as the worlds of loop share it, for the agora_db_* calls
 * while they are open (a server's lists of stored worlds and chats): opened, created when missing, if none
 * of them holds it yet, and shared with the worlds opened on loop later. agora_db_close releases it (the
 * database closes with the last of its users). From the loop's thread only (AGORA_ERR_STATE). Deleting a
 * world open on the loop is AGORA_ERR_STATE (close it first). */
AGORA_EXPORT int agora_loop_db(struct event_base *loop, const char *db_dir, agora_db **out);

/* ---- Closing a world from a callback of its loop ----
 * agora_world_close from a callback of the running loop cannot run the loop, so it cancels the replies in
 * flight and does not wait for the MCP servers. A server deleting a world from an HTTP handler wants the
 * world settled instead: agora_world_close_later. */

/* Called once w is closed and freed: world_id is its id (borrowed for the call), rc AGORA_OK, or
 * AGORA_ERR_CANCELLED when replies still in flight after ms were cancelled (what was published before is
 * stored), or AGORA_ERR_STORAGE when messages could not be stored or synced (agora_errmsg says why). It
 * runs on the loop, from one of its callbacks: it may open worlds without MCP servers, close others and
 * delete the world from the database (agora_loop_db, agora_db_world_delete). */
typedef void (*agora_closed_fn)(const char *world_id, int rc, void *ctx);
/* Closes w, which is on a loop the program gave (agora_options.loop; AGORA_ERR_STATE otherwise: close a
 * world on its own loop with agora_world_close), without running the loop: returns at once, and the steps
 * go on as the loop runs. From then on w takes no message (agora_publish is AGORA_ERR_STATE), its tick
 * ends, agora_loop_world and agora_loop_worlds no longer show it, and another world of its id cannot be
 * opened on the loop (AGORA_ERR_EXISTS) until done is called. The steps: the replies in flight finish,
 * for at most ms (0: none waits; they are cancelled, a cancelled event), and what they publish is
 * delivered and stored; its MCP servers are ended (stdin closed, SIGTERM and SIGKILL by timers on the
 * loop) and reaped; the chat is let go and, on a database opened with AGORA_SYNC_BACKGROUND, synced to
 * disk; then w is freed and done(id, rc, ctx) called (done may be NULL; ctx is borrowed until then). The
 * loop must run until then (every world's subscribers still see w's last events). w may be used only by
 * agora_world_id, agora_world_name, agora_is_quiet and agora_cancel meanwhile; a second
 * agora_world_close_later is AGORA_ERR_STATE and agora_world_close does nothing (the handle is the
 * library's until done). AGORA_ERR_INVALID for ms < 0. */
AGORA_EXPORT int agora_world_close_later(agora_world *w, long ms, agora_closed_fn done, void *ctx);

/* ---- The event stream of a chat ----
 * What a server's live stream (agora serve's SSE) needs of a subscription: the events of one chat, each
 * with the chat it is in and its position there (a resumable stream id), and a mark when the world's bus
 * has delivered what it had (flush a batch of frames then, not after each event). As agora_subscribe,
 * events come after the agents have seen them and they are stored, in order, including the events the
 * library makes itself: cancelled (agora_cancel), chat-loaded (a world on NATS), state-saved (a save on
 * disk, with AGORA_SYNC_BACKGROUND once synced) and storage-error. */
#define AGORA_EVENT_IDLE 5 /* agora_event_type, only with AGORA_SUB_IDLE: the bus has delivered every message
                              and event it had (agora_event_kind "idle"; no JSON: agora_event_json is NULL) */
#define AGORA_SUB_IDLE 0x01 /* agora_subscribe_chat: AGORA_EVENT_IDLE too */
/* As agora_subscribe, for the events of chat only (its id, as agora_chat_current gives it: the events
 * while it is w's current chat; NULL: every chat's), with flags 0 or AGORA_SUB_IDLE. Returns the
 * subscription's number (> 0, for agora_unsubscribe) or a negative code: AGORA_ERR_INVALID for a NULL
 * fn, unknown flags or a chat that is no id. */
AGORA_EXPORT int agora_subscribe_chat(agora_world *w, const char *chat, unsigned flags, agora_event_fn fn, void *ctx);
/* The chat the event is in (w's current chat when it was delivered), or NULL when there is none
 * (AGORA_NO_SAVE). Borrowed for the callback. */
AGORA_EXPORT const char *agora_event_chat(const agora_event *ev);
/* The event's position in its chat: a message's own number, else the number of the chat's last message
 * delivered before it (on a change of chat: the chat's last message then). With agora_event_chat, what a
 * stream resumes from (the messages after it are agora_messages(w, chat, position + 1, ...)). */
AGORA_EXPORT uint64_t agora_event_position(const agora_event *ev);

/* ---- Worlds created over HTTP ----
 * World JSON someone else wrote (an HTTP body, a message) is untrusted input: as a world file it could
 * start programs (mcp_servers) and send an API key to any base_url. These calls hold it to the rules of a
 * stored world instead (docs/security.md): it is checked by the world file's own readers (agora_errmsg
 * names the JSON path, "world: agents[0].provider: unknown provider 'nope'"), at most 1 MiB
 * (AGORA_ERR_TOO_BIG) with no \u0000, and stored as a new world (its settings, never a script or
 * secrets: AGORA_ERR_EXISTS when the database has its id); opened, it never starts its MCP servers, and
 * its agents send their key only to their provider's default URL, agora_options.base_url or an
 * allow_key_to URL (else their calls go without one); they name only key variables that plainly are LLM
 * keys or are in allow_env. */
/* Stores json as a new world in db (agora_db_open, or agora_loop_db beside open worlds) without opening
 * it (POST /api/worlds); its id into id (may be NULL). */
AGORA_EXPORT int agora_db_world_create(agora_db *db, const char *json, char id[AGORA_ID_MAX]);
/* agora_world_open(json, db_dir, opts, &w) with AGORA_UNTRUSTED | AGORA_OPTIONS_10 in opts->flags does
 * the same, then opens the stored world as AGORA_FROM_STORE would (on opts->loop: in the database the
 * loop's worlds share), its first chat new. json must be world JSON text (AGORA_ERR_INVALID otherwise);
 * not with AGORA_NO_SAVE, AGORA_TOOLS, AGORA_HOST, AGORA_VIEW or chat. The world stays stored when the
 * open after it fails (agora_db_world_delete removes it). */

/* ---- What a server reads beside its worlds ----
 * agora serve's GET …/chats/{chat}/graph and /metrics, by the same code. JSON handed back is the
 * caller's (agora_free); numbers are counts since the open, not persisted. */
/* A stored chat's graph (an id or a unique prefix), cut to a size a page can draw whatever the chat's
 * length: {"chat","last_seq","nodes":[{"id","messages","input_tokens","output_tokens"}] (the nodes
 * senders with most messages, then tokens),"more_nodes","edges":[{"from","to","messages"}] (who named
 * whom, among those nodes),"tokens":{"seqs":[...],"agents":[{"id","tokens":[...]}]} (the 8 senders with
 * most tokens, summed at points message numbers),"timeline":null|{"count","ticks":[{"seq","sim_ms",
 * "fire"}]} (the last 500 simulated-time stamps of the schedule's deliveries and of the rest)}. nodes 1 to
 * 500 (0: 50), points 1 to 1000 (0: 100): AGORA_ERR_INVALID past them; AGORA_ERR_NOT_FOUND for no such
 * chat. On agora_loop_db's handle while the worlds are open. */
AGORA_EXPORT int agora_db_chat_graph(agora_db *db, const char *chat, size_t nodes, size_t points, char **json);
/* What w did since it was opened: {"agents","thinking" (LLM calls in flight),"messages","events"
 * (delivered),"llm_calls_done","llm_calls_failed","rate_limited" (429s that paused an endpoint),
 * "input_tokens","output_tokens" (as the providers reported them)}. */
AGORA_EXPORT int agora_world_counts(const agora_world *w, char **json);
/* The commits made through db's handle since it was opened and how many of them are on disk
 * ({"commits","synced"}: equal but with AGORA_SYNC_BACKGROUND). agora_loop_db's handle is the one the
 * loop's worlds write through: it counts theirs. */
AGORA_EXPORT int agora_db_counts(agora_db *db, char **json);

/* ---- Storage thread (agora_options.sync = AGORA_SYNC_BACKGROUND, with AGORA_OPTIONS_10) ----
 * As `agora serve` opens its database: each commit is written at once (safe from a killed process when
 * the call returns) and forced to disk by a storage thread right after, so that a callback of the loop
 * never waits on a disk sync (docs/decisions.md "Background sync": an OS crash or power loss before the
 * sync may lose those commits). Only for a world on a loop the program gave, with a database
 * (AGORA_ERR_INVALID otherwise, naming agora_options.sync): the thread's news comes on that loop, an
 * event the library adds while the database is open there and removes with its last user. A save's
 * state-saved event comes once the save is on disk; a failed sync is a storage-error event to every
 * world of the loop on that database (the commits stay unsynced until a later sync succeeds). The
 * database the loop's worlds share (agora_loop_db) is switched to it when the first world that asks is
 * opened, and stays so until it closes; agora_loop_db shares it as it is. agora_world_close_later waits
 * for the world's commits to be synced; the database's close (with its last user) syncs what is left. */

/* ---- A world's MCP servers over a door (API version 11) ----
 * What `agora serve`'s GET /api/worlds/{id}/mcp and POST …/mcp/{server}/restart answer, on the same code.
 * Only a world opened from a file or world JSON starts its servers (a stored world, AGORA_NO_MCP and
 * AGORA_UNTRUSTED never start a program). */
/* w's servers into *json (the caller's, agora_free): {"started","reason" (why they were not started, or
 * null),"servers":[{"name","transport" ("stdio"|"http"),"state" ("not started"|"starting"|"ready"|
 * "failed"),"tools":[names],"error" (the last, or null)}]}, in the world file's order. AGORA_ERR_STATE for
 * a world closing (agora_world_close_later). */
AGORA_EXPORT int agora_mcp_servers(agora_world *w, char **json);
/* Starts w's server again at once (a crashed or stuck one): its agents get its tools again once it is
 * ready (agora_mcp_servers says "starting" until then; run the loop), a failure is an mcp-error event as at
 * the first start. From the thread of w's loop, outside a run function's callbacks or inside them alike
 * (it does not wait). AGORA_ERR_NOT_FOUND (no such server), AGORA_ERR_STATE (the servers were not started,
 * replies are in flight: run until quiet first, or it could not be set up at the start), AGORA_ERR_INVALID
 * (server NULL). */
AGORA_EXPORT int agora_mcp_restart(agora_world *w, const char *server);

/* ---- API 13 ----
 * What `agora serve` needs beyond API 12 to answer on this API alone: POST …/messages's number, GET
 * …/chats/{c}/messages?steps=1 and GET /api/worlds/{id}/mcp for a world it has not opened, on the code it
 * answered them with before (the same bytes). */
/* As agora_publish; *seq (seq may be NULL) receives the message's number in the current chat, what
 * agora serve's POST .../messages answers, or 0 when it is not known yet (a world joined over NATS,
 * AGORA_VIEW: the stream numbers it when it brings it back). Nothing is delivered from inside the call.
 * *seq is 0 on failure; the errors are agora_publish's (agora_errmsg naming agora_publish_seq). */
AGORA_EXPORT int agora_publish_seq(agora_world *w, const char *sender, const char *text, uint64_t *seq);

/* A page of a stored chat's transcript with its thread's steps, what agora serve's
 * GET .../chats/{c}/messages?steps=1 answers: {"messages":[...],"steps":[...]}. messages: from number from
 * (>= 1) on, at most max (>= 1), each the object agora_db_messages gives; steps: the thread's steps stored
 * after message from - 1 up to the first message past the page (tool calls, results, failed calls: each the
 * object agora_db_transcript gives), each with "after_seq", the number of the message it follows (from - 1
 * for those before the page's first message). chat named as for agora_db_messages (an unknown one
 * AGORA_ERR_NOT_FOUND); from 0 or max 0 AGORA_ERR_INVALID. Reads only (fine on agora_loop_db's handle).
 * *json the caller's (agora_free), NULL on failure.
 * The steps anchored after message from - 1 itself (from > 1) are the page before's: they end that page,
 * so that paging on from the last message's number + 1 hands every step over once. A from past the last
 * message gives two empty arrays. */
AGORA_EXPORT int agora_db_transcript_page(agora_db *db, const char *chat, uint64_t from, size_t max, char **json);

/* A stored world's MCP servers as agora_mcp_servers gives them for a world that did not start them (what
 * agora serve's GET /api/worlds/{id}/mcp answers for a world it has not opened): {"started": false,
 * "reason": why (a stored world never starts a program; or "the world has no mcp_servers"), "servers":
 * [{"name","transport","state":"not started","tools":[],"error":null}]}. world is a stored world's id or
 * display name; an unknown one is AGORA_ERR_NOT_FOUND ("no world 'X'"). *json the caller's (agora_free). */
AGORA_EXPORT int agora_db_mcp_servers(agora_db *db, const char *world, char **json);

#ifdef __cplusplus
}
#endif

#endif
