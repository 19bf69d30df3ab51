/* agora serve under load it did not choose (issue 28, items 5-9), each case an attack reproduced on
 * loopback, bounded in count and time: NUL escapes and invalid UTF-8 in and out, a full disk at stop,
 * silent connections past the descriptor limit, stream clients that never read, and resumes that would
 * replay a whole chat at once. Bounds asserted are generous: they tell a bounded server from an unbounded
 * one, not a fast machine from a slow one. */
#include "common/utf8.h"
#include "support/serve_client.h"
#include "support/unit.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char *tmp;

static const char counter_world[] =
  "{\"name\": \"Counter\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"a\", \"replies\": [\"one\", \"two\", \"three\", \"four\", \"five\", \"six\"]}]}";

/* Starts serve on world text (name.json) with its database at db (NULL: in the scratch directory). */
static int start_at(const char *name, const char *world, const char *db, const char *const *env, serve_proc *sp) {
  char wpath[1024], dbdef[1024];
  snprintf(wpath, sizeof wpath, "%s/%s.json", tmp, name);
  snprintf(dbdef, sizeof dbdef, "%s/db-%s", tmp, name);
  if (unit_write_file(wpath, world)) return -1;
  const char *args[] = {wpath, "--db", db ? db : dbdef, NULL};
  int rc = serve_proc_start(tmp, args, env, sp);
  if (rc) unit_fail_(__FILE__, __LINE__, "agora serve did not start");
  return rc;
}

static cJSON *call_json(const serve_proc *sp, const char *method, const char *path, const char *body, long *status) {
  http_reply r;
  http_call(sp->base, method, path, body, body ? strlen(body) : 0, NULL, &r);
  *status = r.status;
  cJSON *j = cJSON_Parse(r.body);
  http_reply_free(&r);
  return j;
}

static int utf8_valid(const char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i < n;) {
    size_t k = ag_utf8_seq_len(s + i, n - i);
    if (!k) return 0;
    i += k;
  }
  return 1;
}

/* ---- item 9: NUL escapes refused, invalid UTF-8 never sent ---- */

static void nul_refused_and_utf8_repaired(void) {
  serve_proc sp;
  if (start_at("nul", counter_world, NULL, NULL, &sp)) return;
  long st;
  /* "before\u0000after" would be stored as "before": refused, saying where */
  cJSON *j = call_json(&sp, "POST", "/api/worlds/counter/messages", "{\"text\": \"before\\u0000after\"}", &st);
  CHECK_INT(st, 400);
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
  CHECK(cJSON_IsString(msg) && strstr(msg->valuestring, "\\u0000") && strstr(msg->valuestring, "column 17"));
  cJSON_Delete(j);
  /* an escaped backslash before u0000 is text */
  j = call_json(&sp, "POST", "/api/worlds/counter/messages", "{\"text\": \"a\\\\u0000b\"}", &st);
  CHECK_INT(st, 202);
  cJSON_Delete(j);
  /* the snapshot of this chat, edited: \u0000 in a message is refused as `chats import` does */
  j = call_json(&sp, "GET", "/api/worlds/counter", NULL, &st);
  const cJSON *cur = cJSON_GetObjectItemCaseSensitive(j, "current_chat");
  char chat[128] = "", path[512];
  if (cJSON_IsString(cur)) snprintf(chat, sizeof chat, "%s", cur->valuestring);
  cJSON_Delete(j);
  snprintf(path, sizeof path, "/api/worlds/counter/chats/%s/snapshot", chat);
  http_reply r;
  http_call(sp.base, "GET", path, NULL, 0, NULL, &r);
  CHECK_INT(r.status, 200);
  char *snap = r.body ? strdup(r.body) : strdup("");
  http_reply_free(&r);
  char *at = strstr(snap, "a\\\\u0000b"); /* the message posted above, as JSON text: a\\u0000b */
  CHECK(at != NULL);
  if (!at) {
    free(snap);
    serve_proc_stop(&sp);
    return;
  }
  memcpy(at, "a\\u0000bb", 9); /* same length: a real \u0000 escape now */
  j = call_json(&sp, "POST", "/api/snapshots", snap, &st);
  CHECK_INT(st, 400);
  cJSON_Delete(j);
  /* the same with bytes that are not UTF-8: stored as they are (as `chats import` does); every reply that
   * carries them is valid UTF-8 (U+FFFD in their place) */
  memcpy(at, "a\xff\xc3(     ", 9);
  http_call(sp.base, "POST", "/api/snapshots", snap, strlen(snap), NULL, &r);
  free(snap);
  CHECK_INT(r.status, 201);
  j = cJSON_Parse(r.body);
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
  chat[0] = '\0';
  if (cJSON_IsString(id)) snprintf(chat, sizeof chat, "%s", id->valuestring);
  cJSON_Delete(j);
  http_reply_free(&r);
  CHECK(chat[0]);
  const char *paths[] = {"/api/worlds/counter/chats/%s/messages", "/api/worlds/counter/chats/%s/snapshot",
                         "/api/worlds/counter/chats"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(path, sizeof path, paths[i], chat);
    http_call(sp.base, "GET", path, NULL, 0, NULL, &r);
    CHECK_INT(r.status, 200);
    if (i < 2) CHECK(r.body && strstr(r.body, "\xef\xbf\xbd")); /* U+FFFD */
    if (!r.body || !utf8_valid(r.body)) unit_fail_(__FILE__, __LINE__, "GET %s: not valid UTF-8", path);
    http_reply_free(&r);
  }
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* ---- item 8: a full disk at stop ---- */

/* Writes filler until the file system is full; returns the bytes written. */
static size_t fill(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return 0;
  static char chunk[16384];
  memset(chunk, 'f', sizeof chunk);
  size_t total = 0;
  for (;;) {
    ssize_t n = write(fd, chunk, sizeof chunk);
    if (n <= 0) break;
    total += (size_t)n;
  }
  close(fd);
  return total;
}

static void full_disk_at_stop_reported(void) {
  char mnt[1024], db[1100], filler[1100];
  snprintf(mnt, sizeof mnt, "%s/mnt", tmp);
  snprintf(db, sizeof db, "%s/db", mnt);
  snprintf(filler, sizeof filler, "%s/filler", mnt);
  CHECK_INT(mkdir(mnt, 0700), 0);
  if (mount("tmpfs", mnt, "tmpfs", 0, "size=16m") != 0) {
    fprintf(stderr, "  SKIPPED: cannot mount a tmpfs here (%s); run as root to test a full disk\n", strerror(errno));
    return;
  }
  serve_proc sp;
  if (start_at("full", counter_world, db, NULL, &sp)) goto done;
  CHECK(fill(filler) > 0);
  /* posts are accepted (202: delivered) while their saves fail */
  char body[8300];
  int n = snprintf(body, sizeof body, "{\"text\": \"");
  memset(body + n, 'z', 8000);
  strcpy(body + n + 8000, "\"}");
  long st = 202;
  for (int i = 0; i < 40 && st == 202; i++) cJSON_Delete(call_json(&sp, "POST", "/api/worlds/counter/messages", body, &st));
  CHECK_INT(st, 202);
  CHECK_INT(serve_proc_stop(&sp), 1);
  char *err = unit_read_file(sp.err_path);
  CHECK(err && strstr(err, "could not be saved"));
  CHECK(err && strstr(err, "No space left on device"));
  CHECK(err && !strstr(err, "Input/output error"));
  if (err) fprintf(stderr, "  stderr: %s", err);
  free(err);
done:
  unlink(filler);
  CHECK_INT(umount2(mnt, MNT_DETACH), 0);
}

static const unit_test tests[] = {
  UNIT(nul_refused_and_utf8_repaired),
  UNIT(full_disk_at_stop_reported),
};

int main(int argc, char **argv) {
  unit_raise_fd_limit();
  tmp = unit_tmpdir();
  if (!tmp) return 1;
  int rc = unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
  unit_rmrf(tmp);
  free(tmp);
  return rc;
}
