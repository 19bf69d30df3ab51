/* Agora's storage: one LMDB environment per data directory holding worlds, chats and, per chat, its
 * messages, its event thread and its agents' memories, states and contexts. Everything happens inside a
 * transaction run by store_write or store_read, so a chat's records always change together (docs/behaviour.md
 * §6). Storage gives no meaning to what it keeps: message kinds, agent states and thread steps are the
 * caller's (chat/ maps them to and from agents/ types). */
#ifndef AG_STORE_H
#define AG_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Size caps, in bytes without the NUL. Past them an operation fails with AG_ERR_TOO_BIG and writes
 * nothing. Ids (world, chat, agent, sender) must also be non-empty. */
#define STORE_ID_LEN 64
#define STORE_ID_MAX (STORE_ID_LEN + 1) /* a buffer for any id, NUL included (like PATH_MAX) */
#define STORE_TITLE_LEN 512             /* chat titles and world names */
#define STORE_TEXT_LEN (1024 * 1024)    /* message text */
/* A world's settings_json. Written by Agora from a world it has already checked (the inputs have their own
 * caps: a world file 256 MiB, a request body 1 MiB), about 300 bytes an agent: a million agents' settings
 * are about 300 MB. One LMDB value, kept on overflow pages; the cap only bounds a runaway. */
#define STORE_SETTINGS_LEN (1024u << 20)

/* The schema this code writes. A database with a higher version is refused with AG_ERR_VERSION. */
#define STORE_SCHEMA_VERSION 1

typedef struct store store;         /* an open data directory */
typedef struct store_txn store_txn; /* a transaction; exists only during a store_write/store_read callback */

/* ---- Opening ------------------------------------------------------------------------------------ */

/* When a commit reaches the disk. Every mode keeps the database consistent when the process is killed
 * (committed data is in the OS page cache by then); they differ only when the OS or the power fails. */
typedef enum store_sync {
  STORE_SYNC_FULL = 0,   /* default: each commit is on disk when store_write returns */
  STORE_SYNC_NOMETA = 1, /* data pages synced, the commit record is not: an OS crash may undo the last
                            commit but never corrupts (LMDB's MDB_NOMETASYNC) */
  STORE_SYNC_NONE = 2,   /* the OS writes when it likes; for benchmarks and bulk imports only (MDB_NOSYNC) */
  STORE_SYNC_BACKGROUND = 3 /* each commit is written at once (safe from kill -9 when store_write returns)
                            and forced to disk by a storage thread right after (store_synced says when),
                            so that an event loop never waits for the disk. An OS crash or power loss
                            before that may lose those commits and, as with MDB_NOSYNC, damage the
                            database (docs/decisions.md "Background sync"). store_close syncs the rest. */
} store_sync;

typedef struct store_options {
  size_t map_size;  /* initial map size in bytes. 0: the size the database last grew to, at least
                       64 MiB. Set: this size even for an existing database (LMDB keeps at least the
                       used size). The map doubles on demand when full, so this is only a starting
                       point (tests use a tiny one to exercise growth). */
  store_sync sync;  /* default STORE_SYNC_FULL */
  int write_map;    /* 1 = MDB_WRITEMAP: commits skip a copy but a stray pointer write in this process
                       could reach the database; benchmarks only. Default 0. */
} store_options;

/* Opens (creating if missing) the database in dir with the default options: mkdir -p with mode 0700,
 * files mode 0600, stale reader slots of killed processes cleared. Before LMDB maps data.mdb its meta
 * pages are checked against the file's size: a truncated, foreign or damaged file is refused with
 * AG_ERR_INVALID and left byte for byte as it was (never initialised over); so is a dir that is a file. A new database gets the schema
 * version; one written by a newer Agora is refused with AG_ERR_VERSION naming dir and both versions;
 * a directory holding some other LMDB database is refused with AG_ERR_STORAGE. dir is borrowed. On
 * success *out is a new handle the caller closes with store_close.
 * A handle is used by one thread at a time (the event loop; STORE_SYNC_BACKGROUND's own thread only
 * calls mdb_env_sync); several processes may open the same directory (LMDB serialises their writes). */
int store_open(const char *dir, store **out, ag_errmsg *em);
/* mkdir -p of dir, every missing component private (0700); AG_ERR_INVALID when dir is not a directory
 * after it. For the stores beside the chats (the LLM cache) too. */
int store_mkdir_p(const char *dir, ag_errmsg *em);
/* Same with options (NULL = defaults). */
int store_open_ex(const char *dir, const store_options *opt, store **out, ag_errmsg *em);
/* Opens an existing database for reading only (LMDB's MDB_RDONLY): nothing is created or repaired, a
 * missing database is AG_ERR_NOT_FOUND naming dir, and a directory this process may not write still
 * opens. Only store_read works on the handle. */
int store_open_read(const char *dir, store **out, ag_errmsg *em);
/* Closes the handle; NULL is fine. Must not be called from inside a transaction callback. */
void store_close(store *s);

/* Switches between STORE_SYNC_FULL (durable=1) and STORE_SYNC_NONE (durable=0) for later commits;
 * benchmarks and bulk imports turn durability off and call store_sync_now at the end. */
int store_set_durable(store *s, int durable, ag_errmsg *em);
/* Switches a handle opened with STORE_SYNC_FULL to STORE_SYNC_BACKGROUND for later commits (the storage
 * thread starts; store_synced counts on from the commits so far): for a server whose database was opened
 * before it knew. AG_OK when it is already; AG_ERR_STATE on a read-only handle. */
int store_set_background(store *s, ag_errmsg *em);
/* Forces everything committed so far to disk. */
int store_sync_now(store *s, ag_errmsg *em);

/* Commits made through this handle so far, and how many of them are known to be on disk: equal except
 * with STORE_SYNC_BACKGROUND, where store_synced catches up as the storage thread syncs. */
uint64_t store_commits(const store *s);
uint64_t store_synced(const store *s);
/* STORE_SYNC_BACKGROUND: a descriptor that becomes readable when store_synced has moved on or a sync
 * failed (-1 in the other modes); the event loop watches it and then calls store_sync_ack, which
 * empties it and returns AG_ERR_STORAGE (once, with the message in em) when a sync failed: the commits
 * not synced stay so until a later sync (after the next commit) succeeds. */
int store_sync_fd(const store *s);
int store_sync_ack(store *s, ag_errmsg *em);

/* The directory the database lives in (borrowed, valid until store_close). */
const char *store_dir(const store *s);
/* The current map size in bytes (grows as the database does). */
size_t store_map_size(const store *s);

/* Writes the default data directory per docs/cli.md into out: $AGORA_HOME, else $XDG_DATA_HOME/agora (an
 * absolute XDG_DATA_HOME only, per the XDG spec), else $HOME/.local/share/agora (HOME unset: the
 * password database's home). Empty variables count as unset. AG_ERR_TOO_BIG when cap is too small,
 * AG_ERR_NOT_FOUND when no home directory is known. */
int store_default_dir(char *out, size_t cap);

/* ---- Transactions ------------------------------------------------------------------------------- */

/* A transaction callback: returns AG_OK to commit (store_write) or any ag_err to abort. */
typedef int (*store_txn_fn)(store_txn *t, void *arg);

/* Runs fn(t, arg) inside one write transaction and commits it when fn returns AG_OK; when fn returns an
 * error, or any operation failed inside LMDB, nothing is written and that error is returned.
 * When the database map is full, the transaction is aborted, the map doubled and fn run again from the
 * start: fn must therefore be restartable — it may read and write through t, but any effect outside the
 * store must be safe to repeat (or done after store_write returns).
 * Operations on t write their error detail into em, so fn can just return their code. em may be NULL.
 * No nesting: calling store_write/store_read from inside fn fails with AG_ERR_STATE. */
int store_write(store *s, store_txn_fn fn, void *arg, ag_errmsg *em);
/* Runs fn(t, arg) in a read-only snapshot; write operations on t fail with AG_ERR_STATE. Returns fn's
 * result. */
int store_read(store *s, store_txn_fn fn, void *arg, ag_errmsg *em);

/* Scan callbacks return 0 to go on, STORE_STOP to end the scan early (the scan then returns AG_OK), or
 * a negative ag_err to abort (the scan returns it). Pointers they receive are borrowed from the
 * database and valid only during the call: copy what you keep. A callback must not write through t
 * (a write can move the records it is reading): collect ids, write after the scan. */
#define STORE_STOP 1

/* ---- Worlds ------------------------------------------------------------------------------------- */

/* Records use borrowed `const char *` strings throughout: for *_put they are the caller's, read during
 * the call; in scan callbacks they point into the database; after *_get they live in one allocation the
 * record owns (mem_), released by the matching *_free. */
typedef struct store_world {
  const char *id;            /* key: the world's id (name lower-cased, spaces → '-') */
  const char *name;          /* display name, ≤ STORE_TITLE_LEN */
  const char *settings_json; /* world and agent settings; never secrets (the caller guarantees it) */
  const char *current_chat;  /* "" (or NULL on put) when session mode is off */
  int64_t created_at_ms;
  int64_t updated_at_ms;
  void *mem_;                /* private: owned by records filled by store_world_get; NULL otherwise */
} store_world;

/* Inserts or replaces the record w->id. A non-empty current_chat must be an existing chat
 * (AG_ERR_NOT_FOUND) of this world (AG_ERR_INVALID). w is borrowed. */
int store_world_put(store_txn *t, const store_world *w);
/* Copies world id into *out (release with store_world_free); AG_ERR_NOT_FOUND when absent. */
int store_world_get(store_txn *t, const char *id, store_world *out);
/* Calls fn for each world in id order. */
typedef int (*store_world_fn)(const store_world *w, void *arg);
int store_world_list(store_txn *t, store_world_fn fn, void *arg);
/* Makes chat_id (a chat of this world) the world's current chat, or clears it when chat_id is NULL or
 * "". AG_ERR_NOT_FOUND for an unknown world or chat, AG_ERR_INVALID for another world's chat. */
int store_world_set_current(store_txn *t, const char *world_id, const char *chat_id);
/* Deletes world id with all its chats (as store_chat_delete each). AG_ERR_NOT_FOUND when absent. */
int store_world_delete(store_txn *t, const char *id);
/* Frees what store_world_get allocated and zeroes *w; a zeroed or put-only record is fine. */
void store_world_free(store_world *w);

/* ---- Chats -------------------------------------------------------------------------------------- */

typedef struct store_chat {
  const char *id;        /* key; see store_chat_id_new */
  const char *world_id;  /* the world it belongs to (must exist) */
  const char *title;     /* ≤ STORE_TITLE_LEN */
  uint64_t message_count;/* kept by the caller, in the same transaction as the message puts */
  int64_t created_at_ms;
  int64_t updated_at_ms; /* orders the chat lists */
  void *mem_;            /* private: owned by records filled by store_chat_get/store_chat_latest */
  int has_sim;           /* the chat's virtual clock (docs/time.md): where its simulated time stands */
  int64_t sim_ms;        /* (stored only when has_sim; records written before it have none) */
} store_chat;

/* A new chat id in out: 13 characters of lower-case Crockford base32 ([0-9a-z] without i, l, o, u),
 * 48 bits of millisecond time then 16 random bits, so ids sort by creation time and are strictly
 * increasing within a process. Unique in practice across processes (to be sure, create the chat in a
 * write transaction after store_chat_get says AG_ERR_NOT_FOUND). Never fails. */
void store_chat_id_new(char out[STORE_ID_MAX]);

/* Inserts or updates chat c->id and keeps the world's newest-first index in step (the old entry goes
 * when updated_at_ms or world_id changes). The world must exist (AG_ERR_NOT_FOUND). c is borrowed.
 * Does not touch the chat's messages: message_count is whatever the caller says. */
int store_chat_put(store_txn *t, const store_chat *c);
/* Copies chat id into *out (release with store_chat_free); AG_ERR_NOT_FOUND when absent. */
int store_chat_get(store_txn *t, const char *id, store_chat *out);
/* Calls fn for the chats of world_id (NULL: of every world), most recently updated first; chats
 * updated in the same millisecond come in id order. A range scan of the index: stopping early is cheap. */
typedef int (*store_chat_fn)(const store_chat *c, void *arg);
int store_chat_list(store_txn *t, const char *world_id, store_chat_fn fn, void *arg);
/* Number of chats of world_id (NULL: all). */
int store_chat_count(store_txn *t, const char *world_id, uint64_t *out);
/* Copies the most recently updated chat of world_id (NULL: of any world) into *out (release with
 * store_chat_free); AG_ERR_NOT_FOUND when it has none. This is the fallback after a delete. */
int store_chat_latest(store_txn *t, const char *world_id, store_chat *out);
/* Deletes chat id with its index entries, messages, memories and agent states. When it was its world's
 * current chat, the world's current_chat becomes "": to fall back as docs/behaviour.md §6 says, follow with
 * store_chat_latest and store_world_set_current in the same transaction. AG_ERR_NOT_FOUND when absent. */
int store_chat_delete(store_txn *t, const char *id);
/* Deletes chat id's messages, memories, agent states, contexts and thread, keeping its record (the
 * caller puts it again with the count it now has). */
int store_chat_clear(store_txn *t, const char *id);
void store_chat_free(store_chat *c);

/* ---- Messages ----------------------------------------------------------------------------------- */

typedef struct store_message {
  uint64_t seq;       /* 1-based position in the chat */
  int64_t ts_ms;
  uint8_t kind;       /* the sender's kind as the caller codes it; stored, never interpreted */
  const char *sender; /* ≤ STORE_ID_LEN */
  const char *text;   /* ≤ STORE_TEXT_LEN */
  size_t text_len;    /* filled by scans and get; ignored by put (strlen is used) */
  void *mem_;         /* private: owned by records filled by store_message_get */
  int has_sim;        /* a virtual clock's time (docs/time.md): stored only when set */
  int64_t sim_ms;
} store_message;

/* Stores m as message m->seq (≥ 1) of chat_id, which must exist (AG_ERR_NOT_FOUND). Messages are
 * immutable: an existing seq is AG_ERR_EXISTS. The caller updates the chat's message_count and
 * updated_at_ms with store_chat_put in the same transaction. m is borrowed. */
int store_message_put(store_txn *t, const char *chat_id, const store_message *m);
/* Copies message seq of chat_id into *out (release with store_message_free); AG_ERR_NOT_FOUND. */
int store_message_get(store_txn *t, const char *chat_id, uint64_t seq, store_message *out);
/* Calls fn for the messages of chat_id with seq ≥ from_seq, in seq order (a range scan). */
typedef int (*store_message_fn)(const store_message *m, void *arg);
int store_message_scan(store_txn *t, const char *chat_id, uint64_t from_seq, store_message_fn fn, void *arg);
/* The highest stored seq of chat_id in *out, 0 when it has none (one cursor step, no scan). */
int store_message_last_seq(store_txn *t, const char *chat_id, uint64_t *out);
void store_message_free(store_message *m);

/* ---- Agents' memories: per chat and agent, an ordered list of message seqs of that chat --------- */

/* Appends seq (a stored message of chat_id, else AG_ERR_NOT_FOUND) at the end of the agent's memory. */
int store_memory_append(store_txn *t, const char *chat_id, const char *agent_id, uint64_t seq);
/* Appends the n seqs, in order: store_memory_append of each, with the memory's end found once for all
 * of them. Every seq is checked before anything is written. */
int store_memory_append_all(store_txn *t, const char *chat_id, const char *agent_id, const uint64_t *seqs,
                            size_t n);
/* Calls fn with each seq of the agent's memory, oldest first. */
typedef int (*store_memory_fn)(uint64_t seq, void *arg);
int store_memory_scan(store_txn *t, const char *chat_id, const char *agent_id, store_memory_fn fn, void *arg);
/* Empties the agent's memory in chat_id, or every agent's when agent_id is NULL. */
int store_memory_clear(store_txn *t, const char *chat_id, const char *agent_id);

/* ---- Agents' state, per chat and agent ---------------------------------------------------------- */

/* Numbers the caller keeps per chat and agent; storage stores them as given and reads none of them. */
typedef struct store_agent_state {
  int32_t turn_count;  /* the caller's turn count (chat/: the agent's turn state) */
  uint8_t notice_sent; /* a flag of the caller's (chat/: the turn-limit notice went out) */
  uint64_t counter;    /* a counter of the caller's (chat/: the agent's scripted-reply position) */
} store_agent_state;

/* Stores the agent's state in chat_id (which must exist); st is borrowed. */
int store_agent_state_put(store_txn *t, const char *chat_id, const char *agent_id, const store_agent_state *st);
/* Copies it into *out; AG_ERR_NOT_FOUND when none was stored. */
int store_agent_state_get(store_txn *t, const char *chat_id, const char *agent_id, store_agent_state *out);
/* Calls fn for every agent with a state in chat_id, in agent id order; agent_id is borrowed. */
typedef int (*store_agent_state_fn)(const char *agent_id, const store_agent_state *st, void *arg);
int store_agent_state_scan(store_txn *t, const char *chat_id, store_agent_state_fn fn, void *arg);
/* Removes the agent's state in chat_id, or every agent's when agent_id is NULL. */
int store_agent_state_clear(store_txn *t, const char *chat_id, const char *agent_id);

/* ---- Agents' contexts (issue 7): per chat and agent, the versioned state kept by tools ---------- */

typedef struct store_context {
  uint64_t version;
  int64_t updated_at_ms;
  const char *data_json; /* a JSON object, ≤ STORE_TEXT_LEN */
  void *mem_;            /* private: owned by records filled by store_context_get */
} store_context;

/* Stores the agent's context in chat_id (which must exist); c is borrowed. */
int store_context_put(store_txn *t, const char *chat_id, const char *agent_id, const store_context *c);
/* Copies it into *out (release with store_context_free); AG_ERR_NOT_FOUND when none. */
int store_context_get(store_txn *t, const char *chat_id, const char *agent_id, store_context *out);
typedef int (*store_context_fn)(const char *agent_id, const store_context *c, void *arg);
/* Every agent's context in chat_id, in agent id order. */
int store_context_scan(store_txn *t, const char *chat_id, store_context_fn fn, void *arg);
/* Removes the agent's context in chat_id, or every agent's when agent_id is NULL. */
int store_context_clear(store_txn *t, const char *chat_id, const char *agent_id);
void store_context_free(store_context *c);

/* ---- The chat's event thread: an append-only log of JSON texts, beside the messages -------------- */

/* Appends one event (JSON text, ≤ STORE_TEXT_LEN, not checked) to chat_id's thread, which must exist.
 * The chat layer keeps its tool steps and failed calls there, each anchored to a message seq. */
int store_thread_append(store_txn *t, const char *chat_id, const char *event_json);
/* Appends n events given one after another in events, each ended by its NUL (JSON text holds none), in
 * that order: store_thread_append of each, with the chat looked up and the thread's end found once for
 * all of them (a chat session's batch of steps). Every length is checked before anything is written. */
int store_thread_append_all(store_txn *t, const char *chat_id, const char *events, size_t n);
/* Calls fn with each event of chat_id's thread, oldest first (borrowed text). */
typedef int (*store_thread_fn)(const char *event_json, size_t len, void *arg);
int store_thread_scan(store_txn *t, const char *chat_id, store_thread_fn fn, void *arg);

#endif
