/* The one place a world event becomes JSON (docs/behaviour.md §7 field names and order): the output layer
 * prints it and the chat's thread stores it. Everything below chat/ keeps events typed. */
#ifndef AG_CHAT_EVENT_JSON_H
#define AG_CHAT_EVENT_JSON_H

#include <cjson/cJSON.h>

#include "common/json_write.h"
#include "world/events.h"

/* A new object with e's fields, without "type" (the caller owns it); NULL when out of memory. */
cJSON *chat_event_fields(const world_event *e);

/* The same fields added to m without a tree, byte for byte what cJSON_PrintUnformatted writes for the
 * members of chat_event_fields(e): the stored thread's writer. Returns m->rc (AG_OK, AG_ERR_NOMEM or
 * AG_ERR_TOO_BIG past the buffer's cap). */
int chat_event_put_fields(ag_json_members *m, const world_event *e);

#endif
