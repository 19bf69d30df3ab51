/* Stored chats printed the way run printed them (see transcript.h); chat/transcript.c puts the
 * messages and tool steps in order, this file paces and prints them. */
#include "cli/transcript.h"

#include "chat/transcript.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void pace(long ms) {
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

typedef struct print_ctx {
  output *o;
  long delay;
  int seen; /* a message was printed: the next one waits */
} print_ctx;

static int print_entry(const chat_entry *e, void *arg) {
  print_ctx *pc = arg;
  if (!e->msg) {
    output_thread_step(pc->o, e->kind, e->fields);
    return 0;
  }
  if (pc->seen) pace(pc->delay);
  pc->seen = 1;
  output_message(pc->o, e->msg);
  return 0;
}

int transcript_print_stored(store *st, const char *chat_id, output *o, long delay_ms, ag_errmsg *em) {
  print_ctx pc = {o, delay_ms, 0};
  return chat_transcript_each(st, chat_id, print_entry, &pc, em);
}

int transcript_print_snapshot(const cJSON *snap, output *o, long delay_ms) {
  print_ctx pc = {o, delay_ms, 0};
  return chat_snapshot_each(snap, print_entry, &pc);
}
