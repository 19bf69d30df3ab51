/* Chat snapshots: the whole state of one chat — world settings, agents (settings without secrets,
 * memories, turn counts), messages and chat metadata — as one JSON document with a format version.
 * Export reads the store; import validates everything first and writes a new chat in one transaction. */
#ifndef AG_SNAPSHOT_H
#define AG_SNAPSHOT_H

#include <cjson/cJSON.h>

#include "chat/archive.h"

#define SNAPSHOT_FORMAT 1          /* the format this code writes and the newest it reads */
#define SNAPSHOT_MAX (256u << 20)  /* bytes of a snapshot file */

/* The snapshot of chat_id as a new JSON object (caller frees with cJSON_Delete). */
int chat_snapshot_export(store *st, const char *chat_id, cJSON **out, ag_errmsg *em);
/* Checks a snapshot completely (types, required fields, references, format version); label names the
 * source in em ("snap.json: messages[3].kind: ..."). AG_ERR_VERSION for a newer format. */
int chat_snapshot_validate(const cJSON *snap, const char *label, ag_errmsg *em);
/* Validates, then stores the snapshot as a new chat (its world is created if the database has none
 * of that id; an existing world keeps its settings). The new chat's id goes to id_out. Nothing is
 * written when anything is wrong. The world's current chat is not changed. */
int chat_snapshot_import(store *st, const cJSON *snap, const char *label, char id_out[CHAT_ID_MAX],
                         ag_errmsg *em);
/* Reads and parses a snapshot file with the size cap; *out is the document (caller frees). */
int chat_snapshot_load(const char *path, cJSON **out, ag_errmsg *em);

#endif
