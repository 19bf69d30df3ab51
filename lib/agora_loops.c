/* libagora's shared loops (API version 8): worlds opened on an event loop the program gives
 * (agora_options.loop), as `agora serve` runs many worlds on one. The process keeps one record per such
 * loop: the thread its worlds belong to, its worlds in the order they were opened (found by id), whether
 * a run function is running it, and one database handle per directory, shared by its worlds (LMDB
 * allows one environment per file per process, and serve's worlds share one store the same way). */
#include "lib/agora_int.h"

#include "chat/archive.h"
#include "common/error.h"
#include "runtime/db.h"
#include "storage/store.h"

#include <event2/event.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A database's storage thread watched on the loop (AGORA_SYNC_BACKGROUND): on the heap, as the loop_db
 * records move when the array grows. */
typedef struct sync_watch {
  agora_loop *lp;
  store *st;
  struct event *ev;
} sync_watch;

/* One database directory open for the worlds of a loop. */
typedef struct loop_db {
  char dir[PATH_MAX]; /* its real path: two spellings of one directory are one database */
  store *st;
  size_t refs;
  sync_watch *sync; /* NULL until a world asks for background syncs */
} loop_db;

struct agora_loop {
  struct event_base *base; /* the program's, never freed here */
  pthread_t thread;        /* the one thread its worlds are used from */
  agora_world **worlds;    /* in the order they were opened */
  size_t n_worlds, cap_worlds;
  loop_db *dbs;
  size_t n_dbs;
  int running; /* a run function of one of its worlds is running it */
  agora_loop *next;
};

/* Every shared loop of the process. The lock guards the list and the records: worlds on different loops
 * may be opened and closed on different threads at once. */
static pthread_mutex_t loops_lock = PTHREAD_MUTEX_INITIALIZER;
static agora_loop *loops;

static agora_loop *loop_find(const struct event_base *base) {
  agora_loop *lp = loops;
  while (lp && lp->base != base) lp = lp->next;
  return lp;
}

/* The loop's record, made with the calling thread as its owner when it has none; what names the
 * caller's argument in the error. */
static int loop_get(struct event_base *base, const char *what, agora_loop **out, ag_errmsg *em) {
  agora_loop *lp = loop_find(base);
  if (lp && !pthread_equal(lp->thread, pthread_self()))
    return ag_fail(em, AG_ERR_STATE, "%s: the worlds on this loop are used from another thread (one loop, one thread: "
                   "open, run and close them on the thread that opened the first)", what);
  if (!lp) {
    if (!(lp = calloc(1, sizeof *lp))) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
    *lp = (agora_loop){.base = base, .thread = pthread_self(), .next = loops};
    loops = lp;
  }
  *out = lp;
  return AG_OK;
}

static void loop_drop_if_empty(agora_loop *lp) {
  if (lp->n_worlds || lp->n_dbs) return;
  agora_loop **p = &loops;
  while (*p != lp) p = &(*p)->next;
  *p = lp->next;
  free(lp->worlds);
  free(lp->dbs);
  free(lp);
}

/* The storage thread synced more commits (or failed to): each world of the loop on that database
 * emits the state-saved events now due, and hears of a failure (serve's on_synced, for the library). */
static void on_synced(evutil_socket_t fd, short what, void *arg) {
  (void)fd, (void)what;
  sync_watch *sw = arg;
  ag_errmsg em = {""};
  int rc = store_sync_ack(sw->st, &em);
  for (size_t i = 0; i < sw->lp->n_worlds; i++) {
    agora_world *w = sw->lp->worlds[i];
    if (w->shared_st != sw->st || !w->rt) continue;
    if (rc) world_emit(w->w, &(world_event){EV_STORAGE_ERROR, .u.storage = {em.text}});
    if (rt_session(w->rt)) chat_session_synced(rt_session(w->rt));
  }
}

/* d's database switched to background syncs, its thread watched on the loop. */
static int loop_db_background(agora_loop *lp, loop_db *d, ag_errmsg *em) {
  if (d->sync) return AG_OK;
  int rc = chat_store_background(d->st, em);
  sync_watch *sw = rc ? NULL : calloc(1, sizeof *sw);
  if (!rc && !sw) rc = ag_fail(em, AG_ERR_NOMEM, "out of memory");
  if (!rc) {
    *sw = (sync_watch){.lp = lp, .st = d->st};
    sw->ev = event_new(lp->base, store_sync_fd(d->st), EV_READ | EV_PERSIST, on_synced, sw);
    if (!sw->ev || event_add(sw->ev, NULL)) rc = ag_fail(em, AG_ERR_NOMEM, "cannot watch the storage thread");
  }
  if (rc && sw) {
    if (sw->ev) event_free(sw->ev);
    free(sw);
  } else if (!rc) {
    d->sync = sw;
  }
  return rc;
}

/* The database in db_dir (NULL: the default directory), shared with the loop's other worlds: opened
 * (created when missing) by the first, closed with the last. */
static int loop_db_get(agora_loop *lp, const char *db_dir, int background, store **out, ag_errmsg *em) {
  char dflt[PATH_MAX], real[PATH_MAX];
  if (!db_dir && chat_store_default_dir(dflt, sizeof dflt))
    return ag_fail(em, AG_ERR_INVALID, "no data directory: pass db_dir or set AGORA_HOME");
  const char *dir = db_dir ? db_dir : dflt;
  store *st = NULL;
  int rc = AG_OK;
  if (!realpath(dir, real)) { /* not there yet, so not open: made now */
    if ((rc = rt_store_open(dir, &st, em))) return rc;
    if (!realpath(dir, real)) snprintf(real, sizeof real, "%s", dir);
  }
  for (size_t i = 0; !st && i < lp->n_dbs; i++) {
    if (strcmp(lp->dbs[i].dir, real)) continue;
    if (background && (rc = loop_db_background(lp, &lp->dbs[i], em))) return rc;
    lp->dbs[i].refs++;
    *out = lp->dbs[i].st;
    return AG_OK;
  }
  loop_db *dbs = realloc(lp->dbs, (lp->n_dbs + 1) * sizeof *dbs);
  if (!dbs) rc = ag_fail(em, AG_ERR_NOMEM, "out of memory");
  else lp->dbs = dbs;
  if (!rc && !st) rc = rt_store_open(real, &st, em);
  if (rc) {
    chat_store_close(st);
    return rc;
  }
  loop_db *d = &lp->dbs[lp->n_dbs++];
  *d = (loop_db){.st = st, .refs = 1};
  snprintf(d->dir, sizeof d->dir, "%s", real);
  if (background && (rc = loop_db_background(lp, d, em))) {
    lp->n_dbs--;
    chat_store_close(st);
    return rc;
  }
  *out = st;
  return AG_OK;
}

static void loop_db_put(agora_loop *lp, store *st) {
  for (size_t i = 0; st && i < lp->n_dbs; i++) {
    if (lp->dbs[i].st != st) continue;
    if (--lp->dbs[i].refs) return;
    if (lp->dbs[i].sync) event_free(lp->dbs[i].sync->ev);
    free(lp->dbs[i].sync);
    chat_store_close(st);
    lp->dbs[i] = lp->dbs[--lp->n_dbs];
    return;
  }
}

int agora__loop_join(agora_world *w, struct event_base *base, const char *db_dir, int wants_db, int background,
                     store **st, ag_errmsg *em) {
  agora_loop *lp = NULL;
  *st = NULL;
  pthread_mutex_lock(&loops_lock);
  int rc = loop_get(base, "agora_options.loop", &lp, em);
  if (!rc && lp->n_worlds == lp->cap_worlds) {
    size_t cap = lp->cap_worlds ? lp->cap_worlds * 2 : 4;
    agora_world **ws = realloc(lp->worlds, cap * sizeof *ws);
    if (!ws) rc = ag_fail(em, AG_ERR_NOMEM, "out of memory");
    else lp->worlds = ws, lp->cap_worlds = cap;
  }
  if (!rc && wants_db) rc = loop_db_get(lp, db_dir, background, st, em);
  if (!rc) {
    lp->worlds[lp->n_worlds++] = w;
    w->loop = lp;
    w->shared_st = *st;
  } else if (lp) {
    loop_drop_if_empty(lp);
  }
  pthread_mutex_unlock(&loops_lock);
  return rc;
}

void agora__loop_leave(agora_world *w) {
  agora_loop *lp = w->loop;
  if (!lp) return;
  pthread_mutex_lock(&loops_lock);
  for (size_t i = 0; i < lp->n_worlds; i++)
    if (lp->worlds[i] == w) {
      memmove(&lp->worlds[i], &lp->worlds[i + 1], (lp->n_worlds - i - 1) * sizeof *lp->worlds);
      lp->n_worlds--;
      break;
    }
  loop_db_put(lp, w->shared_st);
  loop_drop_if_empty(lp);
  pthread_mutex_unlock(&loops_lock);
  w->loop = NULL;
  w->shared_st = NULL;
}

/* A world is opened once per loop (as serve serves a world once): its id is the key agora_loop_world
 * finds it by, and a second copy would hold a second chat of one world on one loop. */
int agora__loop_unique(agora_world *w, ag_errmsg *em) {
  agora_loop *lp = w->loop;
  for (size_t i = 0; lp && i < lp->n_worlds; i++) {
    const agora_world *o = lp->worlds[i];
    if (o != w && agora__loop_id(o) && !strcmp(agora__loop_id(o), world_id(w->w)))
      return ag_fail(em, AG_ERR_EXISTS, o->closing ? "world '%s' is closing on this loop (agora_world_close_later): "
                     "open it again once it is closed" : "world '%s' is open on this loop already (agora_loop_world "
                     "finds it)", world_id(w->w));
  }
  return AG_OK;
}

int agora__loop_enter(agora_world *w, const char *fn) {
  ag_errmsg em = {""};
  agora_loop *lp = w->loop;
  if (lp && !pthread_equal(lp->thread, pthread_self())) /* before anything the loop's thread writes is read */
    return agora__fail(ag_fail(&em, AG_ERR_STATE, "%s: the world's loop belongs to another thread (one loop, one "
                               "thread)", fn), &em);
  if (lp ? lp->running : w->running || w->stepping)
    return agora__fail(ag_fail(&em, AG_ERR_STATE, "%s: the loop is running already (called from a callback on it)%s",
                               fn, lp ? ": every world on a shared loop progresses while it runs" : ""), &em);
  if (lp) lp->running = 1;
  return AG_OK;
}

void agora__loop_exit(agora_world *w) {
  if (w->loop) w->loop->running = 0;
}

int agora_loop_db(struct event_base *loop, const char *db_dir, agora_db **out) {
  ag_errmsg em = {""};
  agora_loop *lp = NULL;
  agora_db *db = NULL;
  if (!loop || !out) return agora__fail(AG_ERR_INVALID, &(ag_errmsg){"agora_loop_db: loop or out is NULL"});
  *out = NULL;
  if (!(db = calloc(1, sizeof *db))) return agora__fail(AG_ERR_NOMEM, NULL);
  pthread_mutex_lock(&loops_lock);
  int rc = loop_get(loop, "agora_loop_db", &lp, &em);
  if (!rc) rc = loop_db_get(lp, db_dir, 0, &db->st, &em);
  if (!rc) db->loop = lp;
  else if (lp) loop_drop_if_empty(lp);
  pthread_mutex_unlock(&loops_lock);
  if (rc) {
    free(db);
    return agora__fail(rc, &em);
  }
  *out = db;
  return AG_OK;
}

void agora__loop_db_close(agora_db *db) {
  pthread_mutex_lock(&loops_lock);
  loop_db_put(db->loop, db->st);
  loop_drop_if_empty(db->loop);
  pthread_mutex_unlock(&loops_lock);
}

const char *agora__loop_id(const agora_world *w) {
  return w->closing ? agora__closing_id(w, 0) : w->w ? world_id(w->w) : NULL;
}

int agora__loop_has_world(const agora_loop *lp, const char *id) {
  for (size_t i = 0; lp && i < lp->n_worlds; i++)
    if (agora__loop_id(lp->worlds[i]) && !strcmp(agora__loop_id(lp->worlds[i]), id)) return 1;
  return 0;
}

struct event_base *agora_world_loop(const agora_world *w) { return rt_base(w->rt); }

/* The record of base when the calling thread owns it (a loop of another thread is not looked at). */
static agora_loop *loop_of_thread(const struct event_base *base) {
  pthread_mutex_lock(&loops_lock);
  agora_loop *lp = base ? loop_find(base) : NULL;
  if (lp && !pthread_equal(lp->thread, pthread_self())) lp = NULL;
  pthread_mutex_unlock(&loops_lock);
  return lp;
}

/* Opened (not still opening) and not closing (agora_world_close_later): a world the program may use. */
static int shown(const agora_world *w) { return w->w && !w->closing; }

agora_world *agora_loop_world(const struct event_base *loop, const char *id) {
  agora_loop *lp = loop_of_thread(loop);
  for (size_t i = 0; lp && id && i < lp->n_worlds; i++) /* by id first, then by display name */
    if (shown(lp->worlds[i]) && !strcmp(world_id(lp->worlds[i]->w), id)) return lp->worlds[i];
  for (size_t i = 0; lp && id && i < lp->n_worlds; i++)
    if (shown(lp->worlds[i]) && !strcmp(world_name(lp->worlds[i]->w), id)) return lp->worlds[i];
  return NULL;
}

size_t agora_loop_worlds(const struct event_base *loop, agora_world **out, size_t max) {
  agora_loop *lp = loop_of_thread(loop);
  size_t n = 0;
  for (size_t i = 0; lp && i < lp->n_worlds; i++) {
    if (!shown(lp->worlds[i])) continue;
    if (out && n < max) out[n] = lp->worlds[i];
    n++;
  }
  return n;
}
