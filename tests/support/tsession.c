/* The session test fixture (see tsession.h). */
#include "support/tsession.h"

#include "support/unit.h"

#include "chat/archive.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

static void session_make(tsession *f, const char *world_json) {
  ag_errmsg em = {""};
  f->w = tworld_make(f->base, world_json);
  CHECK_INT(chat_session_open(f->st, f->w, &f->cs, &em), AG_OK);
  f->log.text[0] = '\0';
  bus_subscribe(world_bus(f->w), BUS_MESSAGE | BUS_EVENT, BUS_PHASE_OUTPUT, tworld_record, &f->log, NULL);
}

void tsession_open(tsession *f, const char *world_json) {
  memset(f, 0, sizeof *f);
  f->dir = unit_tmpdir();
  ag_errmsg em = {""};
  CHECK_INT(chat_store_open(f->dir, &f->st, &em), AG_OK);
  f->base = event_base_new();
  session_make(f, world_json);
}

void tsession_restart(tsession *f, const char *world_json) {
  chat_session_free(f->cs);
  world_free(f->w);
  session_make(f, world_json);
}

void tsession_close(tsession *f) {
  chat_session_free(f->cs);
  world_free(f->w);
  event_base_free(f->base);
  chat_store_close(f->st);
  unit_rmrf(f->dir);
  free(f->dir);
}

void tsession_say(tsession *f, const char *sender, const char *text) {
  CHECK_INT(world_publish(f->w, sender, text, NULL), AG_OK);
  CHECK_INT(world_run_until_quiet(f->w), AG_OK);
}
