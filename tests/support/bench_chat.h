/* A durable chat for a benchmark's world: an LMDB store in a fresh temporary directory (every commit
 * fsynced, unless $BENCH_NOSYNC is set) and a new current chat, so that what a benchmark times includes the
 * storage a user's run pays for. */
#ifndef AG_TEST_BENCH_CHAT_H
#define AG_TEST_BENCH_CHAT_H

#include "chat/session.h"
#include "storage/store.h"
#include "world/world.h"

typedef struct bench_chat {
  char dir[64];
  store *st;
  chat_session *cs;
} bench_chat;

/* Opens the store and the chat of w into *c, then runs w until quiet; prints the error and exits on failure. */
void bench_chat_open(world *w, bench_chat *c);
/* Frees the session (call it before the world is freed). */
void bench_chat_end(bench_chat *c);
/* Closes the store and removes the directory (after the world is freed). */
void bench_chat_close(bench_chat *c);

#endif
