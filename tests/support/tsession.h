/* A test world with a chat session on a real LMDB store in a temporary directory: the fixture of the
 * in-process session and archive tests. Failures fail the running test. */
#ifndef AG_TEST_TSESSION_H
#define AG_TEST_TSESSION_H

#include "support/tworld.h"

#include "chat/session.h"

typedef struct tsession {
  char *dir;                /* the store's directory (owned) */
  store *st;
  struct event_base *base;
  world *w;
  chat_session *cs;         /* open, not resumed, session mode as stored */
  tworld_log log;           /* everything on the bus at the output phase */
} tsession;

/* A fresh store, the world from world_json and its session. */
void tsession_open(tsession *f, const char *world_json);
/* A restart: the world and session made again on the same store (not resumed), the log emptied. */
void tsession_restart(tsession *f, const char *world_json);
/* Frees everything and removes the directory. */
void tsession_close(tsession *f);
/* Publishes text from sender and runs the world until it is quiet. */
void tsession_say(tsession *f, const char *sender, const char *text);

#endif
