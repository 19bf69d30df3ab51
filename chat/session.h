/* The chat session manager (docs/behaviour.md §6): one current chat per world, new chats with reuse,
 * titles from the first human message, every published message saved with the chat's count and the
 * agents' memories and turn counts in one LMDB transaction, load/restore, delete with fallback.
 * It watches the world's bus at the store phase; everything it does is announced as a bus event.
 * session.c holds the current-chat rules, save.c the group-commit saving, restore.c the restoring; the
 * §6 decisions themselves are pure functions in rules.h. */
#ifndef AG_SESSION_H
#define AG_SESSION_H

#include "world/world.h"

typedef struct store store; /* an open data directory (storage/store.h, opened with chat/archive.h) */

typedef struct chat_session chat_session;

/* Attaches to w with store st (both borrowed, must outlive the session). Creates or updates the
 * world's record (settings without secrets) and keeps its current chat; does not restore anything
 * into the agents yet (see chat_session_resume). */
int chat_session_open(store *st, world *w, chat_session **out, ag_errmsg *em);
void chat_session_free(chat_session *cs);

/* The current chat id (borrowed), or NULL when session mode is off. */
const char *chat_session_current(const chat_session *cs);
/* The current chat's title (borrowed), or NULL. */
const char *chat_session_title(const chat_session *cs);

/* From now on, opening a chat (resume, load, the fallback of a delete) runs again, once, the turns it
 * had in flight when it was last left: an agent whose LLM call had started and whose turn never ended
 * (docs/time.md "Resume after a crash"). For the commands that talk to the world (run, say, console);
 * off by default, so that managing chats never calls an LLM. */
void chat_session_rerun_turns(chat_session *cs, int on);

/* From now on, a new chat never reuses a current chat that holds messages (one titled "New Chat" would
 * be reusable by the rules): for a copy that mirrors a NATS stream, whose counting starts at 1 with a
 * chat's first message, so that the copy's seqs and the stream's stay the same (docs/distributed.md). */
void chat_session_fresh_only(chat_session *cs, int on);

/* The clock the session stamps chats' created and updated times with: now(ud) in epoch ms, or the wall
 * clock (ag_now_ms) when now is NULL, as it is from the start. Tests give one that ticks on demand, so
 * that "updated last" never depends on two saves landing in different milliseconds. */
void chat_session_set_clock(chat_session *cs, int64_t (*now)(void *ud), void *ud);

/* Restores the current chat (if any) into the agents: memories, turn counts, seq. When another process
 * holds it, starts a new chat instead (as chat_session_new), which the world's current chat stays: see
 * chat_session_passed_over. */
int chat_session_resume(chat_session *cs, ag_errmsg *em);
/* The world's current chat that chat_session_resume or chat_session_new passed over because another
 * process held it (borrowed; the latest), or NULL: a door says why it started a new chat
 * (store_chat_holder names the holder). */
const char *chat_session_passed_over(const chat_session *cs);
/* New chat (§6): reuses the current chat if its title is still "New Chat" or it has no messages
 * (memories and turn counts reset, event chat-reused), otherwise creates a fresh "New Chat" and makes
 * it current (event new-chat-created). A current chat held by another process is never reused, nor
 * replaced as the world's current chat in the database: the fresh chat is this session's only, so that
 * two processes on one database agree on which chat is current (issue 23 item 8).
 * One process holds its current chat at a time (a lock that dies with the process, see
 * docs/decisions.md "One process per chat"). */
int chat_session_new(chat_session *cs, ag_errmsg *em);
/* Saves the current chat, then makes chat_id current and restores agents' memories and counts from it.
 * AG_ERR_NOT_FOUND (em names the id) when there is no such chat in this world; AG_ERR_STATE (em names
 * the holder's pid) when another process holds it. */
int chat_session_load(chat_session *cs, const char *chat_id, ag_errmsg *em);
/* Deletes chat_id with its messages and memories; if it was current, the most recently updated
 * remaining chat becomes current and is restored, or session mode goes off when none remains (event
 * chat-deleted names the fallback; a fallback another process holds is not taken: session mode goes
 * off). AG_ERR_STATE when another process holds chat_id. */
int chat_session_delete(chat_session *cs, const char *chat_id, ag_errmsg *em);
/* Cuts the current chat after message keep (0: empties it): its later messages, the memory entries
 * naming them, the thread steps after them, and the agents' turn counts and contexts as they were right
 * after keep (as chats branch rebuilds them) — one write transaction — then restores the agents from it.
 * When the first human message goes and the title was made from it, the title is "New Chat" again
 * (event title-updated), so the next human message names the chat. Call it when the world is quiet.
 * AG_ERR_INVALID when keep is past the last message. */
int chat_session_truncate(chat_session *cs, uint64_t keep, ag_errmsg *em);
/* Sets the current chat's title by hand (event title-updated). */
int chat_session_set_title(chat_session *cs, const char *title, ag_errmsg *em);
/* Makes chat_id current as a chat whose messages arrive from elsewhere with their seqs (a world spread
 * over NATS): created when new, its stored memories and agent states dropped (the delivery rebuilds
 * them), and from now on messages are saved at their own seqs, idempotently (chat/follow.c). Call it
 * with the conversation reset. */
int chat_session_follow(chat_session *cs, const char *chat_id, ag_errmsg *em);
/* A chat record kept elsewhere (a world spread over NATS, docs/distributed.md "Chat records"): chat_id
 * is created when the store has none (empty, not made current), else it takes title, except that a
 * title never goes back to "New Chat" this way. When that changes the current chat's title, the event
 * title-updated says so and *changed is 1 (else 0). */
int chat_session_adopt(chat_session *cs, const char *chat_id, const char *title, int64_t created_ms, int *changed,
                       ag_errmsg *em);
/* Turns session mode off: nothing more is saved until a chat is made current again. */
void chat_session_detach(chat_session *cs);

/* Stores the world's settings as they are now (after agents were added or removed, or the turn
 * limit changed), keeping its current chat. */
int chat_session_save_world(chat_session *cs, ag_errmsg *em);

/* Forgets agent name's memory, turn count and context in the current chat, in memory and in the store
 * (event memory-cleared). AG_ERR_NOT_FOUND for an unknown agent. */
int chat_session_clear_agent(chat_session *cs, const char *name, ag_errmsg *em);

/* With a store opened with STORE_SYNC_BACKGROUND, a save's state-saved event waits until the commit
 * is on disk: call this when the store says more is synced (store_sync_fd) to emit the events now due.
 * A report for a chat that is no longer current is dropped (its messages are safe; only the event goes). */
void chat_session_synced(chat_session *cs);

/* Messages not stored: those given up on plus the batch of a failed save still waiting for its retry
 * (a failed save is retried with the next one; anything here makes `run` exit 1). */
size_t chat_session_failures(const chat_session *cs);

#endif
