/* A chat's transcript as `run` printed it, from the library's JSON (agora_db_transcript's or
 * agora_snapshot_transcript's array): replay paces it, chats show prints it whole; and a snapshot
 * file read for the library (replay, chats import). */
#ifndef AG_CLI_TRANSCRIPT_H
#define AG_CLI_TRANSCRIPT_H

#include <cjson/cJSON.h>

#include "cli/event_print.h"
#include "common/error.h"

/* Prints every entry of entries (borrowed) with p, waiting delay_ms between messages (0: none). */
void cli_transcript_print(const cli_event_print *p, const cJSON *entries, long delay_ms);
/* The snapshot file at path as text into *text (the caller's to free), at most AGORA_SNAPSHOT_MAX bytes and
 * without a NUL byte. A file that cannot be read is AG_ERR_INVALID (a bad argument: exit 2); em names
 * the file. */
int cli_snapshot_read(const char *path, char **text, ag_errmsg *em);

#endif
