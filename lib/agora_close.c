/* libagora: closing a world from a callback of the shared loop it runs on (API version 10), as agora
 * serve's DELETE /api/worlds/{id} needs. A state machine driven by a short timer on the loop, never by
 * running the loop: the replies in flight finish (or are cancelled after the program's bound), the MCP
 * servers end and are reaped, the runtime closes (the chat's last save), the storage thread syncs what
 * the world committed, and only then is the handle freed and the program told. */
#include "lib/agora_int.h"

#include "common/error.h"
#include "storage/store.h"
#include "world/world_mcp.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CLOSE_POLL_MS 10   /* how often the state is looked at: the loop runs other work meanwhile */
#define CLOSE_SYNC_MS 5000 /* a sync that does not come in this long (a failing disk) ends the wait */

typedef enum close_step { CLOSE_REPLIES, CLOSE_SERVERS, CLOSE_SYNC } close_step;

struct agora_closing {
  struct event *poll;
  close_step step; /* set by step_to only */
  long long wait_until, sync_until; /* monotonic ms: the replies' bound, the sync's */
  int cancelled;                    /* replies were cancelled at the bound */
  long long give_up;                /* monotonic ms: what is still not quiet then is left (set at the cancel) */
  store *st;                        /* the loop's shared database (NULL: none) */
  uint64_t target;                  /* its commits to see synced */
  int rc;
  ag_errmsg em;
  agora_closed_fn done;
  void *ctx;
  char id[AGORA_ID_MAX];
  char name[256]; /* its display name (cut), for agora_world_name once the world is gone */
};

static long long mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void step_to(struct agora_closing *c, close_step s) { c->step = s; }

/* The replies' bound passed: cancelled as agora_cancel does (a cancelled event), then again on every
 * poll until quiet, as rt_settle does (a message delivered may have started a turn). */
static void cancel_replies(agora_world *w, struct agora_closing *c) {
  if (!c->cancelled) agora_cancel(w);
  else world_cancel_all(w->w);
  if (!c->cancelled && !c->rc)
    c->rc = ag_fail(&c->em, AG_ERR_CANCELLED, "agora_world_close_later: world '%s': the replies still in flight at "
                    "the bound were cancelled", c->id);
  if (!c->cancelled) c->give_up = mono_ms() + RT_SETTLE_MS;
  c->cancelled = 1;
}

/* Quiet; or, cancelled and still not quiet once the settle time passed, as rt_settle stops: what a world
 * on NATS publishes is pending until the stream brings it back, and no cancel ends that wait (a server
 * gone: it never ends). Those messages are given up, and the close goes on. */
static int settled(agora_world *w, struct agora_closing *c) {
  if (world_is_quiet(w->w)) return 1;
  if (!c->cancelled || mono_ms() < c->give_up) return 0;
  size_t left = bus_pending(world_bus(w->w));
  if (left && c->rc == AG_ERR_CANCELLED)
    ag_fail(&c->em, AG_ERR_CANCELLED, "agora_world_close_later: world '%s': %zu message(s) still on their way to the "
            "world's stream were given up", c->id, left);
  return 1;
}

/* Quiet: the servers are told to end, without running the loop. */
static void after_replies(agora_world *w, struct agora_closing *c) {
  world_mcp_release(w->w);
  step_to(c, CLOSE_SERVERS);
}

/* The servers reaped: the runtime closes (settled already, so nothing runs the loop), and what the
 * world committed is waited for on a database that syncs in the background. */
static void after_servers(agora_world *w, struct agora_closing *c) {
  size_t unsaved = rt_unsaved(w->rt);
  rt_close(w->rt);
  w->rt = NULL;
  w->w = NULL; /* freed with the runtime: the handle answers from c->id and c->name now */
  if (unsaved && !c->rc)
    c->rc = ag_fail(&c->em, AG_ERR_STORAGE, "agora_world_close_later: %zu message(s) of world '%s' could not be "
                    "stored", unsaved, c->id);
  c->st = w->shared_st;
  c->target = c->st ? store_commits(c->st) : 0;
  c->sync_until = mono_ms() + CLOSE_SYNC_MS;
  step_to(c, CLOSE_SYNC);
}

static void finish(agora_world *w, struct agora_closing *c) {
  event_free(c->poll);
  w->closing = NULL;
  agora__world_free(w); /* leaves the loop: its shared database closes with its last user */
  if (c->rc) agora__fail(c->rc, &c->em);
  if (c->done) c->done(c->id, c->rc, c->ctx);
  free(c);
}

static void on_poll(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  agora_world *w = arg;
  struct agora_closing *c = w->closing;
  switch (c->step) {
  case CLOSE_REPLIES:
    if (settled(w, c)) return after_replies(w, c);
    if (mono_ms() >= c->wait_until) cancel_replies(w, c);
    return;
  case CLOSE_SERVERS:
    if (!world_is_quiet(w->w)) cancel_replies(w, c); /* a message of the schedule's started a turn */
    if (settled(w, c) && !world_mcp_ending(w->w)) after_servers(w, c); /* bounded by the children's SIGKILL timers */
    return;
  case CLOSE_SYNC:
    if (c->st && store_synced(c->st) < c->target && mono_ms() < c->sync_until) return;
    if (c->st && store_synced(c->st) < c->target && !c->rc)
      c->rc = ag_fail(&c->em, AG_ERR_STORAGE, "agora_world_close_later: world '%s': the storage thread did not sync "
                      "its last commits within %d ms", c->id, CLOSE_SYNC_MS);
    return finish(w, c);
  }
}

int agora_world_close_later(agora_world *w, long ms, agora_closed_fn done, void *ctx) {
  ag_errmsg em = {""};
  if (!w) return agora__fail(ag_fail(&em, AG_ERR_INVALID, "agora_world_close_later: w is NULL"), &em);
  if (ms < 0) return agora__fail(ag_fail(&em, AG_ERR_INVALID, "agora_world_close_later: ms is %ld, expected >= 0", ms), &em);
  if (w->closing) return agora__fail(ag_fail(&em, AG_ERR_STATE, "agora_world_close_later: world '%s' is closing already",
                                             world_id(w->w)), &em);
  if (!w->loop)
    return agora__fail(ag_fail(&em, AG_ERR_STATE, "agora_world_close_later: world '%s' runs on its own loop, which "
                               "nothing would run: close it with agora_world_close", world_id(w->w)), &em);
  struct agora_closing *c = calloc(1, sizeof *c);
  struct event *poll = c ? event_new(rt_base(w->rt), -1, EV_PERSIST, on_poll, w) : NULL;
  struct timeval tv = {.tv_sec = 0, .tv_usec = CLOSE_POLL_MS * 1000};
  if (!poll || event_add(poll, &tv)) {
    if (poll) event_free(poll);
    free(c);
    return agora__fail(AG_ERR_NOMEM, NULL);
  }
  *c = (struct agora_closing){.poll = poll, .step = CLOSE_REPLIES, .wait_until = mono_ms() + ms, .done = done,
                              .ctx = ctx};
  snprintf(c->id, sizeof c->id, "%s", world_id(w->w));
  snprintf(c->name, sizeof c->name, "%s", world_name(w->w));
  agora_tick(w, 0, NULL, NULL); /* the program's tick ctx may go before the world does */
  w->closing = c;
  return AG_OK;
}

const char *agora__closing_id(const agora_world *w, int name) {
  return w->closing ? (name ? w->closing->name : w->closing->id) : NULL;
}
