/* The console and the commands carry on where a person left off (issue 23 items 3, 4, 6, 7, 8), end to
 * end through the binary, on a pseudo-terminal where it is the console: a stored world opened by id or
 * name through every door; the note that a world file's settings win over the console's changes; a
 * chat another process holds named with its holder, and left the world's current chat; the replies a
 * crash left in flight said to be re-run, by every door. */
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/serve_client.h"
#include "support/suite.h"
#include "support/tty.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *tmp;
static llm_server *srv;

static const char world_json[] =
  "{\"name\": \"Product Team\", \"turn_limit\": 3, \"defaults\": {\"provider\": \"script\"},\n"
  " \"agents\": [{\"name\": \"alice\", \"replies\": [\"one\", \"two\", \"three\", \"four\", \"five\"]}],\n"
  " \"script\": [{\"from\": \"human\", \"text\": \"@alice hello\"}]}\n";

static char *write_tmp(const char *name, const char *text) { return strdup(suite_file(tmp, name, text)); }

static char *fresh_db(const char *name) { return suite_fresh(tmp, name); }

static int contains(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

/* agora ARGS... (NULL-terminated) with input on stdin; fails the case when it cannot run. */
static void agora(proc_result *r, const char *input, const char *const *args) {
  if (proc_agora(args, input, NULL, r)) unit_fail_(__FILE__, __LINE__, "cannot run agora");
}

/* The world's current chat as the database says (`chats list --json`, "current": true) into id. */
static void current_chat(const char *db, char id[64]) {
  const char *args[] = {"chats", "list", "--json", "--db", db, NULL};
  proc_result r;
  id[0] = '\0';
  agora(&r, NULL, args);
  for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
    cJSON *j = cJSON_Parse(line);
    if (cJSON_IsTrue(cJSON_GetObjectItem(j, "current")))
      snprintf(id, 64, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(j, "id")));
    cJSON_Delete(j);
  }
  proc_result_free(&r);
}

/* ---- item 4: a stored world by id or name, through every door ---- */

static void stored_world_every_door(void) {
  char *w = write_tmp("world.json", world_json), *db = fresh_db("db-doors");
  proc_result r;
  agora(&r, NULL, (const char *[]){"run", w, "--db", db, NULL});
  CHECK_INT(r.status, 0);
  proc_result_free(&r);

  agora(&r, NULL, (const char *[]){"say", "product-team", "@alice by id", "--db", db, NULL});
  CHECK_INT(r.status, 0);
  CHECK(contains(r.out, "alice: two\n"));
  CHECK_STR(r.err, "");
  proc_result_free(&r);
  agora(&r, NULL, (const char *[]){"say", "Product Team", "@alice by name", "--db", db, NULL});
  CHECK_INT(r.status, 0);
  CHECK(contains(r.out, "alice: three\n"));
  proc_result_free(&r);

  /* The database keeps no script: run refuses before it touches a chat, and says what works. */
  char before[64], after[64];
  current_chat(db, before);
  agora(&r, NULL, (const char *[]){"run", "product-team", "--db", db, NULL});
  CHECK_INT(r.status, 2);
  CHECK(contains(r.err, "agora: run: stored world 'product-team' has no script to run"));
  CHECK(contains(r.err, "agora say product-team TEXT or agora console product-team"));
  CHECK_STR(r.out, "");
  proc_result_free(&r);
  current_chat(db, after);
  CHECK_STR(after, before);
  agora(&r, NULL, (const char *[]){"run", "product-team", "--resume", before, "--db", db, NULL});
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  agora(&r, NULL, (const char *[]){"say", "product-team", "hi", "--no-save", NULL});
  CHECK_INT(r.status, 2);
  CHECK_STR(r.err, "agora: say: no world file 'product-team', and a stored world's id or name needs the database "
                   "(not with --no-save)\n");
  proc_result_free(&r);
  agora(&r, NULL, (const char *[]){"run", "nosuch", "--db", db, NULL});
  CHECK_INT(r.status, 2);
  CHECK(contains(r.err, "no world 'nosuch' in the database"));
  proc_result_free(&r);

  tty t;
  CHECK_INT(tty_start(&t, tmp, (const char *[]){"console", "Product Team", "--db", db, NULL}, NULL), 0);
  CHECK(tty_expect(&t, "-- chat-resumed: id="));
  tty_send(&t, "@alice on a terminal\r");
  CHECK(tty_expect(&t, "alice: four\n"));
  tty_send(&t, "\004");
  CHECK_INT(tty_exit(&t), 0);
  tty_close(&t);

  for (int i = 0; i < 3; i++) {
    const char *cmd = i == 0 ? "run" : i == 1 ? "say" : "console";
    agora(&r, NULL, (const char *[]){cmd, "--help", NULL});
    CHECK(contains(r.out, "WORLD-ID"));
    proc_result_free(&r);
  }
  free(w);
  free(db);
}

/* ---- item 3: the console's changes and the world file ---- */

static void file_settings_win_said(void) {
  char *w = write_tmp("world.json", world_json), *db = fresh_db("db-settings");
  tty t;
  CHECK_INT(tty_start(&t, tmp, (const char *[]){"console", w, "--db", db, NULL}, NULL), 0);
  CHECK(tty_expect(&t, "-- new-chat-created: id="));
  tty_send(&t, "/turnlimit 7\r");
  CHECK(tty_expect(&t, "turn limit: 7\n"));
  char note[8400];
  snprintf(note, sizeof note, "-- /turnlimit is stored with world 'product-team' (agora console product-team and "
           "agora say product-team use it), but opening %s again replaces the world's settings with the file's", w);
  CHECK(tty_expect(&t, note));
  tty_send(&t, "/set alice model m2\r");
  CHECK(tty_expect(&t, "alice: model = m2\n"));
  tty_send(&t, "/add carol\r");
  CHECK(tty_expect(&t, "-- agent-added: agent=carol"));
  tty_send(&t, "\004");
  CHECK_INT(tty_exit(&t), 0);
  CHECK_INT(unit_count(t.text, "is stored with world"), 1); /* once a session */
  tty_close(&t);

  /* By id the changes hold, and nothing is noted; from the file, the file's settings are back. */
  proc_result r;
  agora(&r, "/turnlimit\n/agents\n/turnlimit 6\n", (const char *[]){"console", "product-team", "--db", db, NULL});
  CHECK_INT(r.status, 0);
  CHECK(contains(r.out, "turn limit: 7\n"));
  CHECK(contains(r.out, "alice  script/m2  turns") && contains(r.out, "carol"));
  CHECK(!contains(r.out, "is stored with world"));
  proc_result_free(&r);
  agora(&r, "/turnlimit\n/agents\n", (const char *[]){"console", w, "--db", db, NULL});
  CHECK(contains(r.out, "turn limit: 3\n"));
  CHECK(!contains(r.out, "carol"));
  proc_result_free(&r);
  free(w);
  free(db);
}

/* ---- items 7 and 8: a chat another process holds ---- */

static void held_chat_named_and_kept_current(void) {
  char *w = write_tmp("world.json", world_json), *db = fresh_db("db-held");
  tty t;
  char held[64] = "", id[64];
  CHECK_INT(tty_start(&t, tmp, (const char *[]){"console", w, "--db", db, NULL}, NULL), 0);
  CHECK_INT(tty_event_id(&t, "new-chat-created", held), 0);
  tty_send(&t, "@alice hi\r");
  CHECK(tty_expect(&t, "alice: one\n"));

  char said[256];
  snprintf(said, sizeof said, "chat %s is in use by pid %ld (console): started chat ", held, (long)t.pid);
  proc_result r;
  agora(&r, NULL, (const char *[]){"say", w, "@alice meanwhile", "--db", db, NULL});
  CHECK_INT(r.status, 0);
  CHECK(contains(r.out, "-- new-chat-created: id="));
  if (!contains(r.err, "agora: say: ") || !contains(r.err, said)) unit_fail_(__FILE__, __LINE__, "stderr: %s", r.err);
  proc_result_free(&r);
  current_chat(db, id);
  CHECK_STR(id, held); /* the holder's chat is still the world's current one */

  agora(&r, "/chats\n", (const char *[]){"console", "product-team", "--db", db, NULL});
  CHECK_INT(r.status, 0);
  CHECK(contains(r.err, "agora: console: ") && contains(r.err, said));
  proc_result_free(&r);
  current_chat(db, id);
  CHECK_STR(id, held);

  tty_send(&t, "\004");
  CHECK_INT(tty_exit(&t), 0);
  tty_close(&t);
  /* Free again: the next say continues it, with nothing to say about holders. */
  agora(&r, NULL, (const char *[]){"say", w, "@alice back", "--db", db, NULL});
  CHECK_INT(r.status, 0);
  CHECK(contains(r.out, "alice: two\n"));
  CHECK(!contains(r.err, "in use"));
  proc_result_free(&r);
  current_chat(db, id);
  CHECK_STR(id, held);
  free(w);
  free(db);
}

/* Two servers on one database: the second takes a chat of its own, says whose the current one is, and
 * leaves it the world's current chat (what the first one serves). */
static void two_serves_agree(void) {
  char *w = write_tmp("world.json", world_json), *db = fresh_db("db-serves"), held[64], id[64];
  serve_proc a, b;
  SERVE_START(tmp, (const char *[]){w, "--db", db, NULL}, NULL, &a);
  current_chat(db, held);
  CHECK(held[0] != '\0');
  SERVE_START(tmp, (const char *[]){w, "--db", db, NULL}, NULL, &b);
  current_chat(db, id);
  CHECK_STR(id, held);
  http_reply r;
  CHECK_INT(http_call(b.base, "GET", "/api/worlds/product-team", NULL, 0, NULL, &r), 0);
  cJSON *j = cJSON_Parse(r.body);
  const char *mine = cJSON_GetStringValue(cJSON_GetObjectItem(j, "current_chat"));
  CHECK(mine && strcmp(mine, held) != 0); /* b's own chat */
  char said[256];
  snprintf(said, sizeof said, "agora: chat %s is in use by pid %ld (serve): started chat %s\n", held, (long)a.pid,
           mine ? mine : "?");
  char *err = unit_read_file(b.err_path);
  if (!contains(err, said)) unit_fail_(__FILE__, __LINE__, "serve's stderr: %s", err);
  free(err);
  cJSON_Delete(j);
  http_reply_free(&r);
  CHECK_INT(serve_proc_stop(&b), 0);
  CHECK_INT(serve_proc_stop(&a), 0);
  current_chat(db, id);
  CHECK_STR(id, held);
  free(w);
  free(db);
}

/* ---- item 6: replies in flight at a crash ---- */

/* A world of n agents on the loopback server, all addressed by its script's one step: a1, a2, ... or,
 * with a prefix, PREFIX1, PREFIX2, ... */
static char *crash_world(const char *file, int n, const char *prefix) {
  char json[16384], agents[2048] = "", mentions[2048] = "";
  size_t la = 0, lm = 0;
  for (int i = 1; i <= n; i++) {
    la += (size_t)snprintf(agents + la, sizeof agents - la, "%s{\"name\": \"%s%d\"}", i > 1 ? ", " : "", prefix, i);
    lm += (size_t)snprintf(mentions + lm, sizeof mentions - lm, "@%s%d ", prefix, i);
  }
  snprintf(json, sizeof json,
           "{\"name\": \"Crash Team\", \"defaults\": {\"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\","
           " \"api_key_env\": \"\", \"stream\": false, \"max_retries\": 0},"
           " \"agents\": [%s], \"script\": [{\"from\": \"human\", \"text\": \"%sreport in\"}]}",
           llm_server_url(srv, "/v1"), agents, mentions);
  return write_tmp(file, json);
}

/* A fresh database db whose current chat had all n replies in flight when its process was SIGKILLed
 * (once the server had seen the n requests, and none from an earlier step); the server answers at once
 * from then on. */
static void crash(const char *w, const char *db, size_t n) {
  unit_rmrf(db);
  /* No request of an earlier step may still be on its way in: recorded after the reset, it would count
   * as this run's, which would then be killed before it had sent (or stored) anything. */
  CHECK(llm_server_wait_closed(srv, 10000));
  llm_server_reset(srv);
  llm_server_rule(srv, "", "stall=1");
  tty t;
  CHECK_INT(tty_start(&t, tmp, (const char *[]){"run", w, "--db", db, NULL}, NULL), 0);
  CHECK(llm_server_wait_requests(srv, n, 20000));
  CHECK_INT(llm_server_request_count(srv), n);
  kill(t.pid, SIGKILL);
  CHECK_INT(tty_exit(&t), 128 + SIGKILL);
  tty_close(&t);
  /* The crashed chat is never found empty: its message was stored before any request went out. */
  proc_result r;
  agora(&r, NULL, (const char *[]){"chats", "list", "--json", "--db", db, NULL});
  if (!contains(r.out, "\"message_count\":1,")) unit_fail_(__FILE__, __LINE__, "chats after the crash: %s", r.out);
  proc_result_free(&r);
  llm_server_reset(srv);
  llm_server_rule(srv, "", "reply=\"@human here\"");
}

static void resumed_replies_said(void) {
  char *w = crash_world("crash.json", 3, "a"), *db = fresh_db("db-crash"), chat[64];
  const char *line = "-- resumed 3 replies in flight at the crash (a1, a2, a3)\n";
  proc_result r;
  crash(w, db, 3);
  current_chat(db, chat);
  agora(&r, NULL, (const char *[]){"run", "--resume", chat, "--db", db, NULL});
  CHECK_INT(r.status, 0);
  if (!contains(r.out, line)) unit_fail_(__FILE__, __LINE__, "run --resume: %s", r.out);
  CHECK_INT(unit_count(r.out, "here\n"), 3);
  proc_result_free(&r);

  crash(w, db, 3);
  agora(&r, NULL, (const char *[]){"say", w, "@a1 and now?", "--db", db, "--json", NULL});
  CHECK_INT(r.status, 0);
  CHECK(contains(r.out, "\"event\":\"turns-resumed\"") && contains(r.out, "\"replies\":3") &&
        contains(r.out, "\"agents\":\"a1, a2, a3\""));
  proc_result_free(&r);

  crash(w, db, 3);
  agora(&r, NULL, (const char *[]){"say", "crash-team", "@a1 and now?", "--db", db, NULL});
  CHECK(contains(r.out, line));
  proc_result_free(&r);

  crash(w, db, 3);
  tty t;
  CHECK_INT(tty_start(&t, tmp, (const char *[]){"console", w, "--db", db, NULL}, NULL), 0);
  CHECK(tty_expect(&t, "-- chat-resumed: id="));
  CHECK(tty_expect(&t, "-- resumed 3 replies in flight at the crash (a1, a2, a3)"));
  CHECK(tty_expect_count(&t, ": @human here\n", 3)); /* re-run, not cancelled by the quit */
  tty_send(&t, "\004");
  CHECK_INT(tty_exit(&t), 0);
  tty_close(&t);

  /* serve re-runs them too, and a page opened later is told (GET /api/worlds/ID "resumed"). */
  crash(w, db, 3);
  serve_proc sp;
  SERVE_START(tmp, (const char *[]){w, "--db", db, NULL}, NULL, &sp);
  /* until the three re-run replies are in and the world is quiet (observed, against a deadline) */
  CHECK(llm_server_wait_requests(srv, 3, 10000));
  CHECK(serve_wait_body(&sp, "/api/worlds/crash-team", "\"thinking\":0", 10000));
  CHECK_INT(llm_server_request_count(srv), 3);
  http_reply h;
  CHECK_INT(http_call(sp.base, "GET", "/api/worlds/crash-team", NULL, 0, NULL, &h), 0);
  if (!contains(h.body, "\"resumed\":{\"replies\":3,\"agents\":\"a1, a2, a3\"}"))
    unit_fail_(__FILE__, __LINE__, "GET world: %s", h.body);
  http_reply_free(&h);
  CHECK_INT(serve_proc_stop(&sp), 0);

  /* Nothing in flight: nothing said. */
  agora(&r, NULL, (const char *[]){"say", w, "@a1 still?", "--db", db, NULL});
  CHECK(!contains(r.out, "resumed"));
  proc_result_free(&r);

  /* Many long names: the line stays short, cut with ", ...". */
  char *many = crash_world("many.json", 12, "a-rather-long-agent-name-");
  crash(many, db, 12);
  agora(&r, NULL, (const char *[]){"say", many, "@a-rather-long-agent-name-1 so?", "--db", db, NULL});
  CHECK(contains(r.out, "-- resumed 12 replies in flight at the crash (a-rather-long-agent-name-1, "));
  CHECK(contains(r.out, ", ...)\n"));
  proc_result_free(&r);
  free(many);
  free(w);
  free(db);
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  tmp = unit_tmpdir();
  if (llm_server_start(&srv)) {
    fprintf(stderr, "cannot start the loopback server\n");
    return 1;
  }
  static const unit_test tests[] = {
    UNIT(stored_world_every_door),
    UNIT(file_settings_win_said),
    UNIT(held_chat_named_and_kept_current),
    UNIT(two_serves_agree),
    UNIT(resumed_replies_said),
  };
  int rc = unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
  llm_server_stop(srv);
  unit_rmrf(tmp);
  free(tmp);
  return rc;
}
