/* Opening the database named by --db (or the default place), and finding stored worlds and chats'
 * worlds by id or name: what every door needs before the runtime opens a world. */
#ifndef AG_RT_DB_H
#define AG_RT_DB_H

#include "chat/archive.h"
#include "chat/session.h"
#include "world/world.h"

/* Opens --db DIR, or the default directory (docs/cli.md "Where data lives"). */
int rt_store_open(const char *db, store **out, ag_errmsg *em);
/* The same, syncing on a storage thread (chat_store_open_background): for serve. */
int rt_store_open_background(const char *db, store **out, ag_errmsg *em);
/* The same for commands that only read (list, show, export, replay): opened read-only, so a read-only
 * directory works and nothing is created; a missing database is AG_ERR_NOT_FOUND. */
int rt_store_open_read(const char *db, store **out, ag_errmsg *em);

/* The world a chat belongs to (copied into world_id). AG_ERR_NOT_FOUND names the chat. */
int rt_chat_world(store *st, const char *chat_id, char world_id[CHAT_ID_MAX], ag_errmsg *em);
/* The world named world_id (its id or its display name) into out, AG_ERR_INVALID "no world 'X'" when
 * there is none; the only world in the database when world_id is NULL (AG_ERR_INVALID if there are
 * several or none). */
int rt_pick_world(store *st, const char *world_id, char out[CHAT_ID_MAX], ag_errmsg *em);

#endif
