/* Worlds for in-process tests: built from inline JSON, with a recorder of everything on the bus. */
#ifndef AG_TEST_TWORLD_H
#define AG_TEST_TWORLD_H

#include "world/world.h"

/* A world from world-file JSON on base; fails the running test and returns NULL on error. */
world *tworld_make(struct event_base *base, const char *json);

/* Records messages as "seq sender: text\n" and events as "-- type\n" (bounded). */
typedef struct tworld_log {
  char text[16384];
} tworld_log;

/* A bus handler (BUS_MESSAGE|BUS_EVENT, any phase) appending to a tworld_log. */
void tworld_record(void *ud, bus_topic topic, void *payload);

#endif
