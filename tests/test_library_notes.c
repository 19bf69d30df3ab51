/* libagora prints nothing of its own unless the program opens with AGORA_NOTES (docs/library.md): the
 * runtime's notes for a person at a terminal (a stored world of the same name replaced, a stored world's
 * withheld key, a world on NATS's cluster notices) stay off stderr without it, and reach it, naming the
 * program, with it. Linked against libagora.so, nothing internal included. */
#include "agora.h"
#include "support/nats_peer.h"
#include "support/nats_proc.h"
#include "support/stderr_catch.h"
#include "support/unit.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens the world "Same" in db twice, its agent changed the second time (the stored world is replaced:
 * a note), with options o and stderr caught in a file; both opens must succeed. What went to stderr
 * (caller frees). */
static char *stderr_of_replacing(const char *db, const agora_options *o) {
  stderr_catch c;
  stderr_catch_start(&c, db);
  agora_world *w = NULL;
  int a = agora_world_open("{\"name\": \"Same\", \"agents\": [{\"name\": \"a\", \"provider\": \"script\"}]}", db,
                           o, &w);
  agora_world_close(w);
  int b = agora_world_open("{\"name\": \"Same\", \"agents\": [{\"name\": \"b\", \"replies\": [\"x\"]}]}", db, o, &w);
  agora_world_close(w);
  char *err = stderr_catch_end(&c);
  CHECK_INT(a, AGORA_OK); /* checked once stderr is back, so that a failure shows */
  CHECK_INT(b, AGORA_OK);
  return err;
}

/* The library never prints: the runtime's notes for a person at a terminal (an agent with no provider
 * and no replies; a stored world of the same name replaced) stay off stderr. */
static void never_prints(void) {
  char *db = unit_tmpdir();
  char *err = stderr_of_replacing(db, NULL);
  CHECK_STR(err, "");
  free(err);
  unit_rmrf(db);
  free(db);
}

/* Stores a world whose agent's base_url is not its provider's default (the key is set), then opens it from
 * the database with flags, stderr caught in a file: the key is withheld, and the "key withheld" note is
 * said only with AGORA_NOTES. What went to stderr (caller frees). */
static char *stderr_of_stored_key(const char *db, int flags) {
  setenv("AGORA_TEST_KEY", "k", 1);
  agora_world *w = NULL;
  CHECK_INT(agora_world_open("{\"name\": \"Keyed\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\","
                             " \"model\": \"m\", \"base_url\": \"http://127.0.0.1:9/v1\","
                             " \"api_key_env\": \"AGORA_TEST_KEY\"}]}", db, NULL, &w), AGORA_OK);
  agora_world_close(w);
  stderr_catch c;
  stderr_catch_start(&c, db);
  w = NULL;
  int rc = agora_world_open("keyed", db, &(agora_options){.flags = AGORA_FROM_STORE | flags}, &w);
  agora_world_close(w);
  char *err = stderr_catch_end(&c);
  if (rc) fprintf(stderr, "%s\n", agora_errmsg());
  CHECK_INT(rc, AGORA_OK);
  return err;
}

/* A stored world's withheld key: no note without AGORA_NOTES, the note with it. */
static void stored_key_note_only_when_asked(void) {
  char *db = unit_tmpdir();
  char *err = stderr_of_stored_key(db, 0);
  CHECK_STR(err, "");
  free(err);
  err = stderr_of_stored_key(db, AGORA_NOTES);
  CHECK_HAS(err, "no API key is sent to a base_url other than the provider's default");
  free(err);
  unit_rmrf(db);
  free(db);
}

/* AGORA_NOTES: the runtime's notes reach stderr, naming the program (never_prints: without it, not). */
static void notes_on_stderr(void) {
  char *db = unit_tmpdir();
  agora_options o = {.flags = AGORA_NOTES | AGORA_OPTIONS_3, .program = "prog"};
  char *err = stderr_of_replacing(db, &o);
  CHECK_HAS(err, "prog: ", "its stored settings are replaced");
  free(err);
  unit_rmrf(db);
  free(db);
}

/* The world of the NATS cases: one agent, which nobody on the stream hosts. */
static const char libnotes[] = "{\"name\": \"libnotes\", \"agents\": [{\"name\": \"a\", \"replies\": [\"x\"]}]}";

/* Opens the world "libnotes" on the NATS server at url as a publisher with flags, stderr caught in a file:
 * the open catches up with the world's stream, so a record there that is not Agora's is refused (a cluster
 * notice) before it returns. What went to stderr (caller frees). */
static char *stderr_of_nats_open(const char *dir, const char *url, unsigned flags) {
  stderr_catch c;
  stderr_catch_start(&c, dir);
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | AGORA_NO_SAVE | flags, .nats_url = url};
  int rc = agora_world_open(libnotes, NULL, &o, &w);
  agora_world_close(w);
  char *err = stderr_catch_end(&c);
  if (rc) fprintf(stderr, "%s\n", agora_errmsg());
  CHECK_INT(rc, AGORA_OK);
  return err;
}

/* A world on NATS (a loopback nats-server): the cluster's notices follow the rule too, off stderr
 * without AGORA_NOTES (they once went there always), on it with. */
static void cluster_notices_only_when_asked(void) {
  char *dir = unit_tmpdir();
  nats_node node;
  if (!nats_available() || nats_start(dir, 1, NULL, &node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server is not installed or did not start");
    free(dir);
    return;
  }
  const char *url = nats_url(&node, 0, 1);
  free(stderr_of_nats_open(dir, url, 0)); /* makes the world's stream */
  CHECK_INT(nats_peer_publish(&(nats_peer_msg){.url = url, .subject = "agora.libnotes.c1.msg", .data = "not a record"}),
            0);
  char *err = stderr_of_nats_open(dir, url, 0);
  CHECK_STR(err, "");
  free(err);
  err = stderr_of_nats_open(dir, url, AGORA_NOTES);
  CHECK_HAS(err, "agora: NATS: record seq 1 on agora.libnotes.c1.msg refused");
  free(err);
  nats_node_stop(&node, SIGTERM);
  unit_rmrf(dir);
  free(dir);
}

/* Opens the world "libnotes" on the NATS server at url with flags (AGORA_VIEW or AGORA_HOST) on database
 * db, stderr caught in a file, and closes it. What went to stderr (caller frees). */
static char *stderr_of_nats_join(const char *url, const char *db, unsigned flags) {
  stderr_catch c;
  stderr_catch_start(&c, db);
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | AGORA_OPTIONS_5 | flags, .nats_url = url};
  int rc = agora_world_open(libnotes, db, &o, &w);
  agora_world_close(w);
  char *err = stderr_catch_end(&c);
  if (rc) fprintf(stderr, "(the open: %s)\n", agora_errmsg()); /* the line is said before it fails, if it does */
  return err;
}

/* A viewer and a host whose database cannot take the stream's chat (its lock held, as by another process
 * on that database) say "cannot store chat" only with AGORA_NOTES (they once said it always). */
static void follow_failures_only_when_asked(void) {
  char *dir = unit_tmpdir(), first[4096], db[4096], lock[8192], chat[AGORA_ID_MAX] = "";
  nats_node node;
  int fd = -1;
  if (!nats_available() || nats_start(dir, 1, NULL, &node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server is not installed or did not start");
    goto done;
  }
  const char *url = nats_url(&node, 0, 1);
  snprintf(first, sizeof first, "%s/first.db", dir);
  snprintf(db, sizeof db, "%s/held.db", dir);
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | AGORA_OPTIONS_5 | AGORA_VIEW, .nats_url = url};
  CHECK_INT(agora_world_open(libnotes, first, &o, &w), AGORA_OK);
  if (!w) goto stop;
  snprintf(chat, sizeof chat, "%s", agora_chat_current(w) ? agora_chat_current(w) : "");
  CHECK_INT(agora_publish(w, "human", "@human nobody is asked"), AGORA_OK); /* makes the chat the stream's */
  agora_run_until_quiet(w);
  agora_world_close(w);
  mkdir(db, 0700);
  snprintf(lock, sizeof lock, "%s/locks", db);
  mkdir(lock, 0700);
  snprintf(lock, sizeof lock, "%s/locks/%s", db, chat);
  fd = open(lock, O_RDWR | O_CREAT, 0600);
  CHECK(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0);
  static const unsigned roles[] = {AGORA_VIEW, AGORA_HOST};
  static const char *const said[] = {"agora: cannot store chat ", "agora: host: cannot store chat "};
  for (size_t i = 0; i < 2; i++) {
    char *err = stderr_of_nats_join(url, db, roles[i]);
    CHECK_STR(err, "");
    free(err);
    err = stderr_of_nats_join(url, db, roles[i] | AGORA_NOTES);
    CHECK_HAS(err, said[i], chat);
    free(err);
  }
stop:
  if (fd >= 0) close(fd);
  nats_node_stop(&node, SIGTERM);
done:
  unit_rmrf(dir);
  free(dir);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(never_prints), UNIT(notes_on_stderr), UNIT(stored_key_note_only_when_asked),
                                    UNIT(cluster_notices_only_when_asked),
                                    UNIT(follow_failures_only_when_asked)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
