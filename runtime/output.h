/* The transcript printer: watches the bus at the output phase and writes each message and event as a
 * plain paragraph or one NDJSON line (docs/cli.md "Transcript output"). The commands on libagora (run,
 * say) print from its events instead (cli/event_print.c, and cli/event_screen.c's status line). */
#ifndef AG_OUTPUT_H
#define AG_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "agents/msg.h"
#include <cjson/cJSON.h>

#include "chat/archive.h"
#include "world/bus.h"
#include "world/events.h"

typedef struct output output;

typedef struct output_opts {
  int json;     /* NDJSON instead of plain text */
  int stream;   /* show llm-chunk events (as NDJSON, or plain "-- llm-chunk:" lines) */
  int batch;    /* do not flush after each line (replay, show: output that is not live) */
  int seqs;     /* plain text: each message starts with its number, "#3 " (chats show, /show) */
} output_opts;

/* f is borrowed. world_id is copied. */
int output_new(FILE *f, const char *world_id, const output_opts *o, output **out);
void output_free(output *o);
/* The chat id shown on each line (NULL: none, e.g. --no-save). Copied. */
void output_set_chat(output *o, const char *chat_id);
/* A bus_handler for BUS_MESSAGE|BUS_EVENT; ud is the output. */
void output_on_bus(void *ud, bus_topic topic, void *payload);
/* Prints one message or event directly (replay). Everything is borrowed. A plain message is
 * "[#SEQ ][[YYYY-MM-DD HH:MM] ]SENDER: TEXT": the number with opts.seqs, the time on a virtual clock. */
void output_message(output *o, const ag_msg *m);
void output_event(output *o, const world_event *e);
/* A stored thread step (tool call, tool result, failed call): its kind and its fields as stored. */
void output_thread_step(output *o, ev_kind kind, const cJSON *fields);
/* Flushes what was printed. */
void output_done(output *o);

/* The objects `run --json` prints, one per line, for other transports (agora serve's event stream):
 * a message, and a thread step or event (kind and its fields, e.g. from chat_event_fields). world and
 * chat (chat NULL: null) are copied; the caller owns the result (NULL when out of memory). */
cJSON *output_message_json(const char *world, const char *chat, const ag_msg *m);
cJSON *output_step_json(const char *world, const char *chat, ev_kind kind, const cJSON *fields);
/* A chat as `chats list --json` prints it (caller owns; NULL when out of memory). */
cJSON *output_chat_json(const chat_info *c);
/* j as one line of text, valid UTF-8 (caller frees; NULL when out of memory). */
char *output_json_text(const cJSON *j);

#endif
