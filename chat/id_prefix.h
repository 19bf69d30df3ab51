/* Chat ids by a unique prefix, as git takes commit ids: a person types the first few characters of the
 * id `chats list` shows. Used by every command that names a chat. */
#ifndef AG_CHAT_ID_PREFIX_H
#define AG_CHAT_ID_PREFIX_H

#include "chat/archive.h"

#define CHAT_PREFIX_LIST 8 /* candidates an ambiguity error lists */

/* The chat whose id is arg, or else the one chat whose id starts with arg, into out. An exact id wins
 * over longer ids it starts. AG_ERR_NOT_FOUND with chat_info_get's message when no chat matches;
 * AG_ERR_INVALID with "chat id prefix 'P' is ambiguous: ID (TITLE), ..." when several do. arg is
 * borrowed and may be out itself. */
int chat_id_resolve(store *st, const char *arg, char out[CHAT_ID_MAX], ag_errmsg *em);

#endif
