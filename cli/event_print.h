/* The transcript of a world opened through libagora (include/agora.h), printed from its agora_event
 * views: the plain paragraphs or NDJSON lines of docs/cli.md "Transcript output", as runtime/output.c
 * prints them for the doors that still run on the core itself. */
#ifndef AG_CLI_EVENT_PRINT_H
#define AG_CLI_EVENT_PRINT_H

#include "agora.h"

#include <cjson/cJSON.h>
#include <stdio.h>

typedef struct cli_event_print {
  FILE *f;     /* borrowed */
  int json;    /* NDJSON: agora_event_json's line for every message and event */
  int stream;  /* show llm-chunk events */
  int tty;     /* plain text to a terminal: control characters are shown, not obeyed */
  int color;   /* dim the events (a terminal, NO_COLOR unset) */
  int seqs;    /* plain text: each message starts with its number, "#3 " (chats show) */
  int batch;   /* not flushed after each line (a stored transcript: output that is not live) */
} cli_event_print;

/* The printer for f, with --json and --stream as given. */
cli_event_print cli_event_print_make(FILE *f, int json, int stream);
/* Prints one event (requests and their withdrawals are not part of the transcript). */
void cli_event_print_one(const cli_event_print *p, const agora_event *ev);
/* Prints one entry of a stored transcript (an element of agora_transcript's or agora_db_transcript's
 * array: a message or an event object as `agora run --json` prints it). j is borrowed. */
void cli_event_print_entry(const cli_event_print *p, const cJSON *j);
/* j as one JSON line on p->f (j borrowed). */
void cli_event_print_line(const cli_event_print *p, const cJSON *j);

#endif
