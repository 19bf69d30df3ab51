/* A chat's transcript as it happened: its messages in order, each followed by the thread steps
 * (tool calls, tool results, failed calls) anchored after it — read from the database or from a
 * snapshot document, so that replay and chats show print both the same way. */
#ifndef AG_CHAT_TRANSCRIPT_H
#define AG_CHAT_TRANSCRIPT_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "agents/msg.h"
#include "chat/archive.h"
#include "world/events.h"

/* One step of a transcript: a message, or a thread step. Everything is borrowed for the call. */
typedef struct chat_entry {
  const ag_msg *msg;    /* the message, or NULL for a thread step */
  ev_kind kind;         /* a thread step's kind (EV_TOOL_CALL, EV_TOOL_RESULT, EV_LLM_ERROR) */
  const cJSON *fields;  /* a thread step's fields, without its type and anchor */
} chat_entry;

/* fn returns as archive.h says (0, CHAT_STOP or a negative ag_err). */
typedef int (*chat_entry_fn)(const chat_entry *e, void *arg);

/* Calls fn for every message and thread step of chat_id, in order, in one read transaction (fn must
 * not call into the archive). AG_ERR_NOT_FOUND, em saying "no chat 'ID' in the database". */
int chat_transcript_each(store *st, const char *chat_id, chat_entry_fn fn, void *arg, ag_errmsg *em);
/* The same for a snapshot document that chat_snapshot_validate accepted (borrowed). */
int chat_snapshot_each(const cJSON *snap, chat_entry_fn fn, void *arg);
/* Calls fn with the messages of chat_id from seq from_seq on (no thread steps); e.g. the last few. */
int chat_messages_each(store *st, const char *chat_id, uint64_t from_seq, chat_entry_fn fn, void *arg,
                       ag_errmsg *em);
/* The same with the thread steps: each message from from_seq on followed by the steps anchored after it
 * (and, from seq 1, the steps anchored before every message first). Steps anchored before from_seq are
 * not handed over: a page of a long chat costs its messages and one read of the (small) thread. */
int chat_transcript_from(store *st, const char *chat_id, uint64_t from_seq, chat_entry_fn fn, void *arg,
                         ag_errmsg *em);

#endif
