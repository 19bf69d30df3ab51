/* The database as the commands see it: opening the data directory, and reading its worlds, its chats
 * and each chat's agent contexts, copied out of the store (a chat's transcript is in transcript.h).
 * With session.h and snapshot.h this is the commands' only door to storage: no transaction, row or
 * storage header reaches cli/. Every call runs in one read transaction of its own. */
#ifndef AG_CHAT_ARCHIVE_H
#define AG_CHAT_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "agents/context.h"
#include "common/error.h"
#include "world/world_file.h"

typedef struct store store; /* an open data directory (opaque here) */

#define CHAT_ID_MAX 65     /* a buffer for any world or chat id, NUL included */
#define CHAT_TITLE_MAX 513 /* a buffer for any chat title or world name, NUL included */
#define CHAT_TEXT_LEN (1024 * 1024) /* the longest message text, in bytes */

/* Callbacks of the *_each calls return 0 to go on, CHAT_STOP to end early (the call then returns
 * AG_OK), or a negative ag_err to abort (the call returns it). They must not call into the archive,
 * a session or a snapshot (the read transaction is still open). What they receive is borrowed for the
 * call. */
#define CHAT_STOP 1

/* ---- the data directory ---- */

/* The default data directory (docs/cli.md "Where data lives") into out; AG_ERR_NOT_FOUND when no home
 * directory is known, AG_ERR_TOO_BIG when cap is too small. */
int chat_store_default_dir(char *out, size_t cap);
/* Opens (creating if missing) the database in dir (borrowed); *out is closed with chat_store_close. */
int chat_store_open(const char *dir, store **out, ag_errmsg *em);
/* The same with the disk syncs on a storage thread (STORE_SYNC_BACKGROUND): for a server whose loop must
 * not wait for the disk; its sessions then need chat_session_synced when store_sync_fd says so. */
int chat_store_open_background(const char *dir, store **out, ag_errmsg *em);
/* Switches an open database to background syncs, as chat_store_open_background opens one (a server that
 * opened it before a world asked); nothing when it is already. */
int chat_store_background(store *st, ag_errmsg *em);
/* The same, read-only: creates nothing; fails when there is no database in dir. */
int chat_store_open_read(const char *dir, store **out, ag_errmsg *em);
/* Closes it; NULL is fine. */
void chat_store_close(store *st);
/* The directory (borrowed, valid until chat_store_close). */
const char *chat_store_dir(const store *st);

/* ---- chats ---- */

typedef struct chat_info {
  char id[CHAT_ID_MAX];
  char world_id[CHAT_ID_MAX];
  char title[CHAT_TITLE_MAX];
  uint64_t message_count;
  int64_t created_at_ms;
  int64_t updated_at_ms;
  int current; /* it is its world's current chat */
} chat_info;

/* Chat chat_id into *out (caller's). AG_ERR_NOT_FOUND, em saying "no chat 'ID' in the database". */
int chat_info_get(store *st, const char *chat_id, chat_info *out, ag_errmsg *em);
/* Calls fn for the chats of world_id (NULL: of every world), most recently updated first. */
typedef int (*chat_info_fn)(const chat_info *c, void *arg);
int chat_list(store *st, const char *world_id, chat_info_fn fn, void *arg, ag_errmsg *em);
/* Calls fn with each agent's saved context in chat_id, in agent id order. A context that is not JSON
 * is AG_ERR_STORAGE. */
typedef int (*chat_context_fn)(const char *agent_id, const context_state *cx, void *arg);
int chat_contexts_each(store *st, const char *chat_id, chat_context_fn fn, void *arg, ag_errmsg *em);

/* ---- worlds ---- */

typedef struct chat_world_info {
  char id[CHAT_ID_MAX];
  char name[CHAT_TITLE_MAX];
  char current_chat[CHAT_ID_MAX]; /* "" when session mode is off */
  int agents;                     /* in its stored settings */
  uint64_t chats;
} chat_world_info;

/* Calls fn for each world in id order. */
typedef int (*chat_world_fn)(const chat_world_info *w, void *arg);
int chat_worlds_each(store *st, chat_world_fn fn, void *arg, ag_errmsg *em);
/* The number of worlds in *n, and the first one's id in first ("" when there is none). */
int chat_worlds_count(store *st, size_t *n, char first[CHAT_ID_MAX], ag_errmsg *em);
/* World world_id's stored settings parsed into *out (release with world_spec_free), as if read from
 * its file. AG_ERR_NOT_FOUND, em saying "no world 'ID' in the database". */
int chat_world_spec(store *st, const char *world_id, world_spec *out, ag_errmsg *em);
/* World world_id's stored settings as JSON text (a world file: no script, never secrets) into *out
 * (caller frees). AG_ERR_NOT_FOUND, em saying "no world 'ID' in the database". */
int chat_world_settings(store *st, const char *world_id, char **out, ag_errmsg *em);
/* Stores spec's settings (world-file form, no script, never secrets) as a new world spec->id, with no
 * chat (a world created over HTTP). AG_ERR_EXISTS, em naming it, when the database has that world
 * already. spec is borrowed. */
int chat_world_create(store *st, const world_spec *spec, ag_errmsg *em);
/* Deletes world world_id with all its chats; *n_chats (may be NULL) gets how many. Refused with
 * AG_ERR_STATE, em naming the chat and the holder's pid, when another process holds one of its chats
 * (docs/decisions.md "One process per chat"); nothing is deleted then. */
int chat_world_delete(store *st, const char *world_id, size_t *n_chats, ag_errmsg *em);

#endif
