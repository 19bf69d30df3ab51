/* Internals shared by the session manager's files: session.c (the current-chat rules: open, new, load,
 * delete, title), save.c (group-commit saving from the bus) and restore.c (a stored chat back into the
 * agents). Not for use outside chat/. */
#ifndef AG_CHAT_SESSION_INT_H
#define AG_CHAT_SESSION_INT_H

#include "chat/session.h"
#include "common/buf.h"
#include "storage/store.h"
#include "storage/store_lock.h"

/* The most thread step text a session holds unsaved (a batch kept by failing saves grows): a step past it
 * is dropped and counted, as when memory runs out. The store takes steps of up to 1 MiB each. */
#define CHAT_PENDING_STEPS_MAX ((size_t)1 << 30)

/* What the store knows of one agent in the current chat, to write only what changed. */
typedef struct session_track {
  agent *a;
  size_t saved_mem;   /* memory entries already stored */
  turn_state saved_turn;
  size_t saved_counter;
  int saved_state;    /* a state record exists */
  uint64_t saved_ctx; /* context version stored */
  /* Pending values computed in a transaction, applied after commit. */
  size_t pend_mem;
  int pend_state;
} session_track;

struct chat_session {
  store *st;
  world *w;
  unsigned sub;
  int has_current;
  char current[STORE_ID_MAX];
  char *title;
  int64_t created_at;
  uint64_t count;
  session_track *tracks;
  size_t n_tracks;
  size_t failures;    /* messages given up on (a last save that failed) */
  int save_failed;    /* the last save failed: pending[] holds its batch, retried by the next save */
  int sim_moved;      /* the virtual clock moved (clock-advanced): the chat's row is written with its time */
  int64_t saved_sim;  /* the chat's simulated time as last stored */
  size_t failed_batch; /* n_pending + n_pending_steps when it failed */
  /* Messages delivered since the last commit (references). They are committed together when the bus
   * has drained — group commit: one transaction, one fsync, for all the replies that arrived at once. */
  ag_msg **pending;
  size_t n_pending, cap_pending;
  /* Tool steps delivered since the last commit, saved with them: n_pending_steps thread steps' JSON
   * texts one after the other, each ended by its NUL (JSON text holds none), written straight in. */
  ag_buf pending_steps;
  size_t n_pending_steps;
  /* A commit held while a long fan-out is part-way (ag_defer_batching): the rounds held so far, and the
   * event that looks again from the loop when no bus activity would. */
  unsigned held;
  struct event *recheck;
  uint64_t last_delivered; /* seq of the last message delivered, to anchor thread steps */
  /* The agents hold the current chat's state (it was restored or started here). Until then their
   * in-memory state is not the chat's, and must not be written over it. */
  int live;
  /* Opening a chat re-runs the turns it had in flight (chat_session_rerun_turns). */
  int rerun_turns;
  /* The lock on the current chat (docs/decisions.md "One process per chat"), or NULL. */
  store_lock *lock;
  /* Messages come with their seqs (chat_session_follow): saved where they say, never moved. */
  int seqs_fixed;
  /* With seqs_fixed: the messages the copy held when it began to follow the chat (the stream delivers
   * them again, and the memory steps of other processes between them, which are stored already). */
  uint64_t followed_upto;
  int fresh_only; /* chat_session_fresh_only */
  char passed[STORE_ID_MAX]; /* chat_session_passed_over ("" when none) */
  /* With a store syncing in the background, what was committed but is not known to be on disk yet:
   * its state-saved event waits for it (chat_session_synced). Saves merge into one report. */
  uint64_t unsynced_commit, unsynced_upto; /* store_commits after the last such save; its seq */
  size_t unsynced_n;                        /* messages in them; 0: nothing waits */
  char unsynced_chat[STORE_ID_MAX];         /* the chat they were saved in */
  int64_t (*now)(void *ud);                 /* the clock of stored times (chat_session_set_clock) */
  void *now_ud;
};

/* session.c */
/* Now, in epoch ms, on the session's clock: what created and updated times are stamped with. */
int64_t chat_session__now(const chat_session *cs);
/* Replaces the in-memory title with a copy of title. */
int chat_session__set_title(chat_session *cs, const char *title);
/* Keeps tracks[] parallel to the world's agents; agents added or removed since are re-matched. */
int chat_session__sync_tracks(chat_session *cs);
/* Marks every agent's current memory and state as what the store holds (after a restore or reset). */
void chat_session__mark_saved(chat_session *cs, int saved_state);

/* save.c */
/* Subscribes to the world's bus at the store phase and to its idle hook (and back). */
int chat_session__watch(chat_session *cs);
void chat_session__unwatch(chat_session *cs);
/* Commits the pending messages with everything the agents changed, in one transaction. Without
 * pending messages it stores memories and turn states only. */
int chat_session__save(chat_session *cs, ag_errmsg *em);
/* Forgets the pending messages and thread steps without saving them. */
void chat_session__drop_pending(chat_session *cs);
/* A last try to save what is pending (the chat is closed or left): what fails counts as a failure
 * and is forgotten. */
void chat_session__save_last(chat_session *cs);
/* Messages not stored: given up on, plus the batch of a failed save still waiting for its retry. */
size_t chat_session__unsaved(const chat_session *cs);

/* restore.c */
/* Replaces the agents' conversation with chat_id's and makes it the session's current chat (in
 * memory; the caller records it in the world), holding its lock. AG_ERR_NOT_FOUND (em names it) when
 * it is not a chat of this world; AG_ERR_STATE (em names the holder) when another process holds it. */
int chat_session__restore(chat_session *cs, const char *chat_id, ag_errmsg *em);

#endif
