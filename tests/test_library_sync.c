/* agora_options.sync = AGORA_SYNC_BACKGROUND (API version 10, include/agora_server.h "Storage thread"):
 * the database of a loop's worlds synced by a storage thread, as agora serve opens its own, so that a
 * callback of the loop never waits on the disk. A save's state-saved event comes once the thread has
 * synced it (the library watches the thread on the loop: without that it never comes), a database the
 * program opened first with agora_loop_db is switched to it, a close waits for the sync, and wrong use
 * names the field. Linked against libagora.so, nothing internal included. */
#include "agora.h"
#include "support/unit.h"

#include <dirent.h>
#include <signal.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WATCHDOG_S 10

static const char town[] = "{\"name\": \"Synced\", \"defaults\": {\"provider\": \"script\"}, \"agents\": ["
                           " {\"name\": \"ann\", \"replies\": [\"@human ann here\"]}]}";

static void on_watchdog(int sig) {
  (void)sig;
  static const char msg[] = "FAIL: watchdog: no state-saved event (the storage thread's news not watched)\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(2);
  _exit(1);
}

typedef struct seen {
  struct event_base *L;
  int replies, saved, closed, closed_rc;
} seen;

static void on_event(const agora_event *ev, void *ctx) {
  seen *s = ctx;
  const char *sender = agora_event_sender(ev);
  if (agora_event_type(ev) == AGORA_EVENT_MESSAGE && sender && strcmp(sender, "human")) s->replies++;
  /* the reply's save on disk: the program's loop has nothing more to wait for */
  if (!strcmp(agora_event_kind(ev), "state-saved") && s->replies && ++s->saved == 1) event_base_loopbreak(s->L);
}

static void on_closed(const char *world_id, int rc, void *ctx) {
  (void)world_id;
  seen *s = ctx;
  s->closed++;
  s->closed_rc = rc;
  event_base_loopbreak(s->L);
}

/* The threads of this process. */
static int threads(void) {
  DIR *d = opendir("/proc/self/task");
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

/* The program lists the database first (agora_loop_db opens it with full syncs), then opens a world
 * asking for background syncs: the storage thread starts, the reply's state-saved event comes as the
 * program runs its loop, and a close later waits for the sync. */
static void state_saved_once_synced(void) {
  char *db = unit_tmpdir();
  seen s = {.L = event_base_new()};
  agora_db *d = NULL;
  agora_world *w = NULL;
  CHECK_INT(agora_loop_db(s.L, db, &d), AGORA_OK);
  int before = threads();
  agora_options o = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_8 | AGORA_OPTIONS_10, .loop = s.L,
                     .sync = AGORA_SYNC_BACKGROUND, .on_event = on_event, .on_event_ctx = &s};
  CHECK_INT(agora_world_open(town, db, &o, &w), AGORA_OK);
  if (!w) goto done;
  CHECK_INT(threads(), before + 1); /* the storage thread */
  CHECK_INT(agora_publish(w, "human", "@ann hi"), AGORA_OK);
  alarm(WATCHDOG_S);
  CHECK_INT(event_base_dispatch(s.L), 0);
  CHECK_INT(s.replies, 1);
  CHECK_INT(s.saved, 1);
  CHECK_INT(agora_world_close_later(w, 1000, on_closed, &s), AGORA_OK);
  CHECK_INT(event_base_dispatch(s.L), 0);
  alarm(0);
  w = NULL;
  CHECK_INT(s.closed, 1);
  CHECK_INT(s.closed_rc, AGORA_OK);
  char *chats = NULL;
  CHECK_INT(agora_db_chats(d, "Synced", &chats), AGORA_OK); /* the handle still shares the database */
  CHECK_HAS(chats ? chats : "", "\"message_count\":2");
  agora_free(chats);
done:
  agora_world_close(w);
  agora_db_close(d);
  CHECK_INT(threads(), before - 0); /* the thread ends with the database's last user */
  event_base_free(s.L);
  unit_rmrf(db);
  free(db);
}

/* Without a loop of the program's, without a database, or a value that is no mode: refused, naming the
 * field; without AGORA_OPTIONS_10 the field is not read (the growth rule). */
static void wrong_use(void) {
  char *db = unit_tmpdir();
  struct event_base *L = event_base_new();
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_10, .sync = AGORA_SYNC_BACKGROUND};
  CHECK_INT(agora_world_open(town, db, &o, &w), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_options.sync", "agora_options.loop");
  o = (agora_options){.flags = AGORA_OPTIONS_8 | AGORA_OPTIONS_10 | AGORA_NO_SAVE, .loop = L, .sync = AGORA_SYNC_BACKGROUND};
  CHECK_INT(agora_world_open(town, db, &o, &w), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_options.sync", "AGORA_NO_SAVE");
  o = (agora_options){.flags = AGORA_OPTIONS_8 | AGORA_OPTIONS_10, .loop = L, .sync = 7};
  CHECK_INT(agora_world_open(town, db, &o, &w), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_options.sync", "7");
  CHECK(w == NULL);
  int before = threads();
  o = (agora_options){.flags = AGORA_OPTIONS_8, .loop = L, .sync = 7};
  CHECK_INT(agora_world_open(town, db, &o, &w), AGORA_OK);
  CHECK_INT(threads(), before); /* no storage thread */
  agora_world_close(w);
  event_base_free(L);
  unit_rmrf(db);
  free(db);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(state_saved_once_synced), UNIT(wrong_use)};
  signal(SIGALRM, on_watchdog);
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
