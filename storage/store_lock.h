/* Chat locks: a chat is held by one process at a time (docs/decisions.md "One process per chat"). A
 * lock is an flock on DIR/locks/CHAT_ID taken by the process that writes the chat; the kernel drops it
 * when the process ends, even on SIGKILL, so a crashed holder never blocks anyone. The file holds the
 * holder's pid, only to name it in error messages. */
#ifndef AG_STORE_LOCK_H
#define AG_STORE_LOCK_H

#include "storage/store.h"

typedef struct store_lock store_lock;

/* Takes chat_id's lock for this process. AG_ERR_STATE when another process (or another lock handle of
 * this one) holds it, em naming the chat and the holder's pid; *holder (may be NULL) gets that pid (0
 * when unknown). On success *out is released with store_chat_unlock. Works on read-only handles too
 * as long as the directory is writable. */
int store_chat_lock(store *s, const char *chat_id, store_lock **out, long *holder, ag_errmsg *em);
/* Names this process in the lock files it writes from now on ("serve", "console"; at most 31 bytes
 * kept), so that a process refused a chat can say who holds it (store_chat_holder). Process-wide: the
 * runtime sets it from its command's name when it opens a world. NULL or "": no name. */
void store_lock_set_owner(const char *what);
/* Who holds chat_id's lock, read from its file: *pid (0 when unknown) and the holder's name into what
 * (cap bytes, "" when it gave none). Only a hint for messages: the holder may end at any time. */
void store_chat_holder(store *s, const char *chat_id, long *pid, char *what, size_t cap);
/* The chat the lock is for (borrowed). */
const char *store_lock_chat(const store_lock *l);
/* Releases the lock and removes its file; NULL is fine. */
void store_chat_unlock(store_lock *l);

#endif
