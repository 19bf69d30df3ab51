/* The one place a world event becomes JSON (docs/behaviour.md §7 field names and order): the output layer
 * prints it and the chat's thread stores it. Everything below chat/ keeps events typed. */
#ifndef AG_CHAT_EVENT_JSON_H
#define AG_CHAT_EVENT_JSON_H

#include <cjson/cJSON.h>

#include "world/events.h"

/* A new object with e's fields, without "type" (the caller owns it); NULL when out of memory. */
cJSON *chat_event_fields(const world_event *e);

#endif
