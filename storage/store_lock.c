/* Chat locks (see store_lock.h). The file is removed on release while still locked; a taker checks
 * after flock that the file it locked is still the one at the path, and starts over otherwise, so two
 * processes can never both believe they hold a chat. */
#include "storage/store_lock.h"

#include "storage/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct store_lock {
  int fd;
  char chat[STORE_ID_MAX];
  char path[4200];
};

/* The process's name in its lock files (store_lock_set_owner): "PID NAME\n". */
static char owner[32];

void store_lock_set_owner(const char *what) { snprintf(owner, sizeof owner, "%s", what ? what : ""); }

/* The pid, and the name after it into what (may be NULL). */
static long read_holder(int fd, char *what, size_t cap) {
  char buf[64];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (what && cap) what[0] = '\0';
  if (n <= 0) return 0;
  buf[n] = '\0';
  char *end = NULL;
  long pid = strtol(buf, &end, 10);
  /* a command's name: anything else in the file (it is only a hint) is not printed */
  static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
  if (what && cap && *end == ' ') snprintf(what, cap, "%.*s", (int)strspn(end + 1, name_chars), end + 1);
  return pid;
}

void store_chat_holder(store *s, const char *chat_id, long *pid, char *what, size_t cap) {
  char path[4200];
  *pid = 0;
  if (what && cap) what[0] = '\0';
  if (!chat_id[0] || strchr(chat_id, '/') || chat_id[0] == '.') return;
  snprintf(path, sizeof path, "%s/locks/%s", s->dir, chat_id);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  *pid = read_holder(fd, what, cap);
  close(fd);
}

/* 1: fd is locked and is the file at path; 0: the file was replaced, try again; <0: error. */
static int lock_file(store_lock *l, long *holder, ag_errmsg *em) {
  l->fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (l->fd < 0) return ag_fail(em, AG_ERR_IO, "cannot open lock file %s: %s", l->path, strerror(errno));
  if (flock(l->fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    long pid = e == EWOULDBLOCK ? read_holder(l->fd, NULL, 0) : 0;
    close(l->fd);
    l->fd = -1;
    if (e != EWOULDBLOCK) return ag_fail(em, AG_ERR_IO, "cannot lock %s: %s", l->path, strerror(e));
    if (holder) *holder = pid;
    if (pid > 0)
      return ag_fail(em, AG_ERR_STATE, "chat '%s' is in use by another agora process (pid %ld)", l->chat, pid);
    return ag_fail(em, AG_ERR_STATE, "chat '%s' is in use by another agora process", l->chat);
  }
  struct stat a, b;
  if (fstat(l->fd, &a) != 0 || stat(l->path, &b) != 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
    close(l->fd);
    l->fd = -1;
    return 0;
  }
  return 1;
}

int store_chat_lock(store *s, const char *chat_id, store_lock **out, long *holder, ag_errmsg *em) {
  *out = NULL;
  if (holder) *holder = 0;
  if (!chat_id[0] || strlen(chat_id) > STORE_ID_LEN || strchr(chat_id, '/') || chat_id[0] == '.')
    return ag_fail(em, AG_ERR_INVALID, "bad chat id '%s'", chat_id);
  store_lock *l = calloc(1, sizeof *l);
  if (!l) return AG_ERR_NOMEM;
  l->fd = -1;
  snprintf(l->chat, sizeof l->chat, "%s", chat_id);
  snprintf(l->path, sizeof l->path, "%s/locks", s->dir);
  if (mkdir(l->path, 0700) != 0 && errno != EEXIST) {
    int rc = ag_fail(em, AG_ERR_IO, "cannot create %s: %s", l->path, strerror(errno));
    free(l);
    return rc;
  }
  snprintf(l->path, sizeof l->path, "%s/locks/%s", s->dir, chat_id);
  int rc = 0;
  for (int tries = 0; tries < 100 && rc == 0; tries++) rc = lock_file(l, holder, em);
  if (rc != 1) {
    if (rc == 0) rc = ag_fail(em, AG_ERR_IO, "cannot lock %s: it keeps being replaced", l->path);
    free(l);
    return rc;
  }
  char pid[64];
  int n = snprintf(pid, sizeof pid, "%ld %s\n", (long)getpid(), owner);
  if (ftruncate(l->fd, 0) != 0 || pwrite(l->fd, pid, (size_t)n, 0) != n) {
    /* only the holder's name in messages is lost; the lock itself holds */
  }
  *out = l;
  return AG_OK;
}

const char *store_lock_chat(const store_lock *l) { return l->chat; }

void store_chat_unlock(store_lock *l) {
  if (!l) return;
  unlink(l->path);
  close(l->fd);
  free(l);
}
