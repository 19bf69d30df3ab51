/* Background sync (STORE_SYNC_BACKGROUND): commits are written with MDB_NOSYNC on the caller's thread
 * (so they are in the OS page cache, safe from kill -9, when store_write returns) and one storage
 * thread forces them to disk with mdb_env_sync just after, so that an event loop never waits for the
 * disk. A pipe tells the loop when more commits are on disk (store_sync_fd, store_sync_ack). */
#include "storage/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

struct store_syncer {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int pipe[2];          /* [0]: readable when synced moved on or a sync failed; [1]: the thread's */
  int stop;             /* under mu */
  uint64_t commits;     /* under mu: commits so far */
  _Atomic uint64_t synced; /* commits known to be on disk */
  int err;              /* under mu: the last failed sync's errno, until acknowledged */
};

static void *syncer_main(void *arg) {
  store *s = arg;
  store_syncer *y = s->bg;
  /* After a failed sync the next try waits for a new commit: no loop while the disk keeps failing. */
  uint64_t failed_at = 0;
  pthread_mutex_lock(&y->mu);
  for (;;) {
    while (!y->stop && (y->commits == atomic_load(&y->synced) || y->commits == failed_at))
      pthread_cond_wait(&y->cv, &y->mu);
    if (y->stop) break;
    uint64_t target = y->commits; /* every commit counted here has returned from mdb_txn_commit */
    pthread_mutex_unlock(&y->mu);
    int rc = mdb_env_sync(s->env, 1);
    pthread_mutex_lock(&y->mu);
    if (rc) {
      y->err = rc;
      failed_at = target;
    } else {
      atomic_store(&y->synced, target);
    }
    ssize_t w = write(y->pipe[1], "s", 1); /* a full pipe already says it */
    (void)w;
  }
  pthread_mutex_unlock(&y->mu);
  return NULL;
}

int store__syncer_start(store *s, ag_errmsg *em) {
  store_syncer *y = calloc(1, sizeof *y);
  if (!y) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  y->pipe[0] = y->pipe[1] = -1;
  if (pipe2(y->pipe, O_CLOEXEC | O_NONBLOCK)) {
    free(y);
    return ag_fail(em, AG_ERR_IO, "%s: cannot create the sync pipe: %s", s->dir, strerror(errno));
  }
  pthread_mutex_init(&y->mu, NULL);
  pthread_cond_init(&y->cv, NULL);
  y->commits = s->commits; /* a handle switched to background later (store_set_background) counts on */
  atomic_store(&y->synced, s->commits);
  s->bg = y;
  int rc = pthread_create(&y->thread, NULL, syncer_main, s);
  if (rc) {
    s->bg = NULL;
    close(y->pipe[0]), close(y->pipe[1]);
    pthread_mutex_destroy(&y->mu);
    pthread_cond_destroy(&y->cv);
    free(y);
    return ag_fail(em, AG_ERR_IO, "%s: cannot start the sync thread: %s", s->dir, strerror(rc));
  }
  return AG_OK;
}

/* Ends the thread, then syncs what is left on this thread: nothing committed is left unsynced. */
void store__syncer_stop(store *s) {
  store_syncer *y = s->bg;
  if (!y) return;
  pthread_mutex_lock(&y->mu);
  y->stop = 1;
  pthread_cond_signal(&y->cv);
  pthread_mutex_unlock(&y->mu);
  pthread_join(y->thread, NULL);
  if (y->commits != atomic_load(&y->synced)) mdb_env_sync(s->env, 1);
  close(y->pipe[0]), close(y->pipe[1]);
  pthread_mutex_destroy(&y->mu);
  pthread_cond_destroy(&y->cv);
  free(y);
  s->bg = NULL;
}

void store__syncer_committed(store *s) {
  store_syncer *y = s->bg;
  if (!y) {
    s->commits++;
    return;
  }
  pthread_mutex_lock(&y->mu);
  s->commits = ++y->commits;
  pthread_cond_signal(&y->cv);
  pthread_mutex_unlock(&y->mu);
}

uint64_t store_commits(const store *s) { return s->commits; }

uint64_t store_synced(const store *s) { return s->bg ? atomic_load(&s->bg->synced) : s->commits; }

int store_sync_fd(const store *s) { return s->bg ? s->bg->pipe[0] : -1; }

int store_sync_ack(store *s, ag_errmsg *em) {
  store_syncer *y = s->bg;
  if (!y) return AG_OK;
  char drain[64];
  while (read(y->pipe[0], drain, sizeof drain) > 0) {
  }
  pthread_mutex_lock(&y->mu);
  int err = y->err;
  y->err = 0;
  pthread_mutex_unlock(&y->mu);
  if (err) return ag_fail(em, AG_ERR_STORAGE, "%s: sync: %s", s->dir, store__strerror(s, err));
  return AG_OK;
}
