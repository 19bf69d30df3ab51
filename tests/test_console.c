/* End to end: `agora console` with stdin not a terminal (a pipe), through the built binary. Each case
 * feeds a script of lines and checks the transcript, the command output, the one-line errors, and what
 * the database holds afterwards (through `agora chats`). The terminal side is in test_console_tty.c. */
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;

/* alice answers "one", "two", "three" in turn (the counter shows memory across restarts); pinger
 * starts a ping-pong with bob, which turns back to alice. */
static const char world_json[] =
  "{\"name\": \"Console Test\", \"turn_limit\": 3, \"defaults\": {\"provider\": \"script\"},\n"
  " \"agents\": [{\"name\": \"alice\", \"replies\": [\"one\", \"two\", \"three\"]},\n"
  "            {\"name\": \"bob\", \"replies\": [\"@alice pong\"]},\n"
  "            {\"name\": \"pinger\", \"replies\": [\"@bob ping\"]}]}\n";

static char *world_file(void) {
  char *p = strdup(suite_file(tmp, "world.json", NULL));
  if (unit_write_file(p, world_json)) unit_fail_(__FILE__, __LINE__, "cannot write %s", p);
  return p;
}

/* A fresh database directory for one case (caller frees). */
static char *fresh_db(const char *name) {
  char *p = strdup(suite_file(tmp, name, NULL));
  unit_rmrf(p);
  return p;
}

/* agora console [world] --db db < input */
static void console(const char *world, const char *db, const char *input, proc_result *r) {
  const char *args[] = {"console", "--db", db, world, NULL};
  if (proc_agora(args, input, NULL, r)) unit_fail_(__FILE__, __LINE__, "cannot run agora");
}

static int contains(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

static int count_lines(const char *s) {
  int n = 0;
  for (; s && *s; s++) n += *s == '\n';
  return n;
}

/* The id after "-- <event>: id=" in a transcript (the n-th occurrence, from 0), into out. */
static int event_id(const char *out, const char *event, int nth, char id[64]) {
  char key[96];
  snprintf(key, sizeof key, "-- %s: id=", event);
  const char *p = out;
  for (int i = 0; p && i <= nth; i++) {
    p = strstr(p, key);
    if (p && i < nth) p += strlen(key);
  }
  if (!p) return -1;
  p += strlen(key);
  size_t n = strspn(p, "0123456789abcdefghijklmnopqrstuvwxyz");
  if (!n || n > 63) return -1;
  memcpy(id, p, n);
  id[n] = '\0';
  return 0;
}

static const cJSON *chat_by_id(const cJSON *list, const char *id) {
  const cJSON *c;
  cJSON_ArrayForEach(c, list) {
    if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "id")), id)) return c;
  }
  return NULL;
}

/* The saved transcript of a chat as "sender|kind|text" lines (caller frees). */
static char *saved_messages(const char *db, const char *id) {
  const char *args[] = {"chats", "show", id, "--db", db, "--json", NULL};
  proc_result r;
  if (proc_agora(args, NULL, NULL, &r)) return strdup("");
  char *m = proc_messages(r.out);
  proc_result_free(&r);
  return m;
}

/* Messages are answered, printed as `run` prints them, and saved in the chat the console started. */
static void piped_messages_saved(void) {
  char *w = world_file(), *db = fresh_db("db-messages");
  proc_result r;
  console(w, db, "@alice hi\n\n   \n@alice how are you\n", &r);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.err, "");
  CHECK(contains(r.out, "human: @alice hi\n\nalice: one\n\n"));
  /* The first human message with more than a greeting titles the chat (the event comes from the store
   * phase, after alice started on it). */
  CHECK(contains(r.out, "human: @alice how are you\n\n-- title-updated: title=How are you\n\nalice: two\n\n"));
  char id[64] = "";
  CHECK_INT(event_id(r.out, "new-chat-created", 0, id), 0);
  cJSON *list = proc_chats_list(db);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  const cJSON *chat = chat_by_id(list, id);
  CHECK(chat != NULL);
  CHECK_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(chat, "message_count")), 4);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(chat, "current")));
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(chat, "title")), "How are you");
  char *saved = saved_messages(db, id);
  CHECK_STR(saved, "human|human|@alice hi\nalice|agent|one\nhuman|human|@alice how are you\nalice|agent|two\n");
  free(saved);
  cJSON_Delete(list);
  proc_result_free(&r);
  free(w);
  free(db);
}

/* `chats export ID` as JSON (caller deletes). */
static cJSON *chat_export(const char *db, const char *id) {
  const char *args[] = {"chats", "export", id, "--db", db, NULL};
  proc_result r;
  if (proc_agora(args, NULL, NULL, &r)) return NULL;
  cJSON *j = cJSON_Parse(r.out);
  proc_result_free(&r);
  return j;
}

static const cJSON *snap_agent(const cJSON *snap, const char *id) {
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItem(snap, "agents")) {
    if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(a, "id")), id)) return a;
  }
  return NULL;
}

/* /agent shows one agent; /set changes its model, prompt, temperature; /add --like copies another's
 * settings; /clear forgets its memory of the chat. All of it is stored (issue 15 item 13). */
static void piped_agent_settings(void) {
  char *w = world_file(), *db = fresh_db("db-agent-settings");
  proc_result r;
  console(w, db,
          "@alice hi\n/agent alice\n/set alice model big-model\n/set alice temperature 0.5\n"
          "/set alice prompt You are terse.\n/set alice temperature 9\n/set alice colour red\n/set nobody model x\n"
          "/add dave --like alice\n/agent dave\n@bob hello\n/clear bob\n",
          &r);
  CHECK_INT(r.status, 0);
  CHECK(contains(r.out, "alice (alice)\n  provider: script\n  model: (provider default)\n  base_url: (provider "
                        "default)\n  temperature: (provider default)\n  prompt: (none)\n  turns: 1/3\n"));
  CHECK_HAS(r.out, "alice: model = big-model\n", "dave (dave)\n  provider: script\n  model: big-model\n",
                   "  temperature: 0.5\n  prompt: You are terse.\n  turns: 0/3\n", "-- memory-cleared: agent=bob\n");
  CHECK_HAS(r.err, "error: /set: the temperature must be a number from 0 to 2, not '9'\n",
                   "error: /set: unknown setting 'colour' (model, prompt or temperature)\n",
                   "error: /set: no agent 'nobody' in this world (see /agents)\n");
  char id[64] = "";
  CHECK_INT(event_id(r.out, "new-chat-created", 0, id), 0);
  proc_result_free(&r);
  /* Stored with the world: the world record has the new settings and dave. */
  const char *show[] = {"worlds", "show", "Console Test", "--db", db, NULL};
  CHECK_INT(proc_agora(show, NULL, NULL, &r), 0);
  CHECK_HAS(r.out, "  alice            provider=script model=big-model base_url=-\n",
                   "  dave             provider=script model=big-model base_url=-\n");
  proc_result_free(&r);
  const char *json[] = {"worlds", "show", "console-test", "--db", db, "--json", NULL};
  CHECK_INT(proc_agora(json, NULL, NULL, &r), 0);
  cJSON *j = cJSON_Parse(r.out);
  const cJSON *alice = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "settings"), "agents"), 0);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(alice, "system_prompt")), "You are terse.");
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(alice, "temperature")) == 0.5);
  cJSON_Delete(j);
  proc_result_free(&r);
  /* /clear is stored: bob's memory and turns are empty in the chat, alice's are not. */
  cJSON *snap = chat_export(db, id);
  CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(snap_agent(snap, "alice"), "memory")) >= 2);
  const cJSON *bob = snap_agent(snap, "bob");
  CHECK(!bob || cJSON_GetArraySize(cJSON_GetObjectItem(bob, "memory")) == 0);
  cJSON_Delete(snap);
  free(w);
  free(db);
}

/* /agents lists them; /add makes an agent that answers as the script provider does with no replies;
 * /remove takes it away again (a mention of it is then unknown). */
static void piped_agents_add_remove(void) {
  char *w = world_file(), *db = fresh_db("db-agents");
  proc_result r;
  console(w, db, "/agents\n/add carol\n/agents\n@carol hello\n/add Madame Pedagogue script\n/remove carol\n@carol are you there\n/agents\n", &r);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.err, "");
  CHECK_HAS(r.out, "  alice  script  turns 0/3\n  bob  script  turns 0/3\n  pinger  script  turns 0/3\n\n",
                   "-- agent-added: agent=carol name=carol provider=script",
                   "  pinger  script  turns 0/3\n  carol  script  turns 0/3\n", "carol: (carol has nothing to say)\n",
                   "-- agent-added: agent=madame-pedagogue name=Madame Pedagogue provider=script",
                   "-- agent-removed: agent=carol", "-- unknown-mention: sender=human names=[\"carol\"]");
  const char *last = strstr(r.out, "-- unknown-mention");
  CHECK(last && !contains(last, "carol  script"));
  proc_result_free(&r);
  free(w);
  free(db);
}

/* /new reuses an empty chat (same id), creates one after messages; /load goes back; /delete of the
 * current chat falls back to the latest other one, and of the last one turns saving off until /new. */
static void piped_chats_new_load_delete(void) {
  char *w = world_file(), *db = fresh_db("db-chats");
  proc_result r;
  console(w, db, "/new\n@alice first chat\n/new\n@alice second chat\n/chats\n", &r);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.err, "");
  char x[64] = "", reused[64] = "", y[64] = "";
  CHECK_INT(event_id(r.out, "new-chat-created", 0, x), 0);
  CHECK_INT(event_id(r.out, "chat-reused", 0, reused), 0);
  CHECK_STR(reused, x);
  CHECK_INT(event_id(r.out, "new-chat-created", 1, y), 0);
  CHECK(strcmp(x, y) != 0);
  char line[256];
  snprintf(line, sizeof line, "* %s      2 messages", y);
  CHECK(contains(r.out, line));
  snprintf(line, sizeof line, "  %s      2 messages", x);
  CHECK(contains(r.out, line));
  proc_result_free(&r);

  /* Again: the current chat (y) is resumed; load x, whose state goes on (alice answered once there, so
   * "two"); delete x → y; delete y → none. */
  char script[512];
  snprintf(script, sizeof script, "/load %s\n@alice back again\n/delete %s\n/delete %s\n@alice anyone\n/chats\n/new\n",
           x, x, y);
  console(w, db, script, &r);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.err, "");
  snprintf(line, sizeof line, "-- chat-resumed: id=%s title=Second chat messages=2", y);
  CHECK(contains(r.out, line));
  snprintf(line, sizeof line, "-- chat-loaded: id=%s title=First chat messages=2", x);
  CHECK(contains(r.out, line));
  CHECK(contains(r.out, "human: @alice back again\n\nalice: two\n\n"));
  snprintf(line, sizeof line, "-- chat-deleted: id=%s current=%s", x, y);
  CHECK(contains(r.out, line));
  snprintf(line, sizeof line, "-- chat-deleted: id=%s current=null", y);
  CHECK(contains(r.out, line));
  CHECK_HAS(r.out, "-- no current chat: messages are not saved until /new", "no chats yet (/new starts one)\n");
  char z[64] = "";
  CHECK_INT(event_id(r.out, "new-chat-created", 0, z), 0);
  cJSON *list = proc_chats_list(db);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  const cJSON *chat = chat_by_id(list, z);
  CHECK(chat && cJSON_GetNumberValue(cJSON_GetObjectItem(chat, "message_count")) == 0);
  cJSON_Delete(list);
  proc_result_free(&r);
  free(w);
  free(db);
}

/* /title renames the chat; /export writes a snapshot that `chats import` accepts. */
static void piped_title_export(void) {
  char *w = world_file(), *db = fresh_db("db-export"), *db2 = fresh_db("db-import");
  char *snap_path = strdup(suite_file(tmp, "snap.json", NULL));
  remove(snap_path);
  proc_result r;
  console(w, db, "@alice hello\n/title A chat with Alice\n", &r);
  char id[64] = "";
  CHECK_INT(event_id(r.out, "new-chat-created", 0, id), 0);
  CHECK(contains(r.out, "-- title-updated: title=A chat with Alice"));
  proc_result_free(&r);
  char script[4200];
  snprintf(script, sizeof script, "/export %s %s\n", id, snap_path);
  console(w, db, script, &r);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.err, "");
  char line[4200];
  snprintf(line, sizeof line, "exported chat %s to %s\n", id, snap_path);
  CHECK(contains(r.out, line));
  proc_result_free(&r);
  char *text = unit_read_file(snap_path);
  cJSON *snap = cJSON_Parse(text);
  CHECK(snap != NULL);
  CHECK(text && !strncmp(text, "{\n\t\"", 4)); /* indented for a person, as /export always wrote it */
  CHECK_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(snap, "format")), 1);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(snap, "messages")), 2);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(snap, "chat"), "title")),
            "A chat with Alice");
  const char *args[] = {"chats", "import", snap_path, "--db", db2, NULL};
  PROC_OK(args, NULL, NULL, &r);
  proc_result_free(&r);
  cJSON_Delete(snap);
  free(text);
  free(snap_path);
  free(w);
  free(db);
  free(db2);
}

/* /show [N] prints the last messages with their numbers; /export FILE writes the current chat; /load
 * takes a unique prefix of a chat id. */
static void piped_show_export_prefix(void) {
  char *w = world_file(), *db = fresh_db("db-show");
  char *snap_path = strdup(suite_file(tmp, "current.json", NULL));
  remove(snap_path);
  proc_result r;
  char script[4400];
  snprintf(script, sizeof script, "@alice hi\n@alice again\n/show 2\n/show\n/show 0\n/export %s\n", snap_path);
  console(w, db, script, &r);
  CHECK_INT(r.status, 0);
  char id[64] = "";
  CHECK_INT(event_id(r.out, "new-chat-created", 0, id), 0);
  CHECK(contains(r.out, "alice: two\n\n#3 human: @alice again\n\n#4 alice: two\n\n#1 human: @alice hi\n\n"
                        "#2 alice: one\n\n#3 human: @alice again\n\n#4 alice: two\n\n"));
  CHECK(contains(r.err, "error: /show: usage: /show [N]"));
  char line[4400];
  snprintf(line, sizeof line, "exported chat %s to %s\n", id, snap_path);
  CHECK(contains(r.out, line));
  char *text = unit_read_file(snap_path);
  cJSON *snap = cJSON_Parse(text);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(snap, "chat"), "id")), id);
  cJSON_Delete(snap);
  free(text);
  proc_result_free(&r);
  /* ids made close together share their start (a time): a short prefix names both */
  snprintf(script, sizeof script, "/new\n@alice other\n/load %.3s\n/load %.12s\n", id, id);
  console(w, db, script, &r);
  snprintf(line, sizeof line, "-- chat-loaded: id=%s", id);
  CHECK(contains(r.out, line));
  snprintf(line, sizeof line, "error: /load: chat id prefix '%.3s' is ambiguous: ", id);
  CHECK(contains(r.err, line) && contains(r.err, id) && count_lines(r.err) == 1);
  proc_result_free(&r);
  free(snap_path);
  free(w);
  free(db);
}

/* /turnlimit 1: a ping-pong between agents stops at the first repeat with the notice. */
static void piped_turnlimit(void) {
  char *w = world_file(), *db = fresh_db("db-turnlimit");
  proc_result r;
  console(w, db, "/turnlimit\n/turnlimit 1\n@pinger go\n", &r);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.err, "");
  CHECK_HAS(r.out, "turn limit: 3\n\nturn limit: 1\n\n", "pinger: @bob ping\n\nbob: @alice pong\n\nalice: @bob one\n\n",
                   "-- turn-limit: agent=bob limit=1",
                   "bob: @human Turn limit reached (1 LLM calls). Please take control of the conversation.\n");
  CHECK(!contains(r.out, "alice: @bob two"));
  proc_result_free(&r);
  free(w);
  free(db);
}

/* Bad commands print one error line each on stderr and the console goes on. */
static void piped_bad_commands(void) {
  char *w = world_file(), *db = fresh_db("db-bad");
  proc_result r;
  console(w, db,
          "/frobnicate\n/load nosuch\n/turnlimit x\n/turnlimit 0\n/add\n/add dave opanai\n"
          "/add alice\n/remove nobody\n/delete\n/export\n/new extra\n@alice still here\n",
          &r);
  CHECK_INT(r.status, 0);
  CHECK_INT(count_lines(r.err), 11);
  CHECK_HAS(r.err, "error: unknown command '/frobnicate' (try /help)\n",
                   "error: /load: no chat 'nosuch' in world 'console-test'\n",
                   "error: /turnlimit: the limit must be a whole number from 1 to 1000000, not 'x'\n",
                   "error: /turnlimit: the limit must be a whole number from 1 to 1000000, not '0'\n",
                   "error: /add: usage: /add NAME [provider]\n",
                   "error: /add: an agent with id 'alice' already exists\n",
                   "error: /remove: no agent 'nobody' in this world (see /agents)\n",
                   "error: /delete: usage: /delete ID\n",
                   "error: /export: usage: /export [ID] FILE (the current chat without ID)\n",
                   "error: /new: usage: /new\n");
  CHECK(contains(r.err, "error: /add: unknown provider 'opanai' (script, openai, anthropic, gemini or ollama; "
                        "a name with spaces needs its provider after it)\n"));
  CHECK(!contains(r.out, "agent-added"));
  CHECK(contains(r.out, "alice: one\n"));
  proc_result_free(&r);
  free(w);
  free(db);
}

/* /quit ends the console: later lines are not read. */
static void piped_quit(void) {
  char *w = world_file(), *db = fresh_db("db-quit");
  proc_result r;
  console(w, db, "@alice hi\n/quit\n@alice hi again\n", &r);
  CHECK_INT(r.status, 0);
  CHECK(contains(r.out, "alice: one\n"));
  CHECK(!contains(r.out, "hi again"));
  proc_result_free(&r);
  free(w);
  free(db);
}

/* Quitting and starting again continues the same chat with the agents' memory: alice's script goes
 * on from where it was; without the world file the one stored world opens. */
static void piped_resume(void) {
  char *w = world_file(), *db = fresh_db("db-resume");
  proc_result r;
  console(w, db, "@alice hi\n", &r);
  char id[64] = "";
  CHECK_INT(event_id(r.out, "new-chat-created", 0, id), 0);
  proc_result_free(&r);
  console(w, db, "@alice hi again\n", &r);
  CHECK_INT(r.status, 0);
  char line[256];
  snprintf(line, sizeof line, "-- chat-resumed: id=%s title=New Chat messages=2", id);
  CHECK(contains(r.out, line));
  CHECK(!contains(r.out, "new-chat-created"));
  CHECK(contains(r.out, "alice: two\n"));
  proc_result_free(&r);
  console(NULL, db, "@alice and again\n", &r);
  CHECK_INT(r.status, 0);
  CHECK(contains(r.out, line) || contains(r.out, "messages=4"));
  CHECK(contains(r.out, "alice: three\n"));
  proc_result_free(&r);
  char *saved = saved_messages(db, id);
  CHECK_STR(saved, "human|human|@alice hi\nalice|agent|one\nhuman|human|@alice hi again\nalice|agent|two\n"
                   "human|human|@alice and again\nalice|agent|three\n");
  free(saved);
  free(w);
  free(db);
}

/* Without a world file the database must hold exactly one world; usage errors exit 2. */
static void usage_and_world_choice(void) {
  char *db = fresh_db("db-choice");
  proc_result r;
  console(NULL, db, "", &r);
  CHECK_INT(r.status, 2);
  CHECK(contains(r.err, "holds no world yet: pass a world file"));
  proc_result_free(&r);
  char *other = strdup(suite_file(tmp, "other.json", NULL));
  unit_write_file(other, "{\"name\": \"Other\", \"agents\": [{\"name\": \"zed\"}]}");
  char *w = world_file();
  console(w, db, "", &r);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  console(other, db, "", &r);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  console(NULL, db, "", &r);
  CHECK_INT(r.status, 2);
  CHECK(contains(r.err, "holds 2 worlds: pass the world file"));
  proc_result_free(&r);
  char *bad = strdup(suite_file(tmp, "bad.json", NULL));
  unit_write_file(bad, "{\"name\": \"Bad\", \"agents\": [{\"name\": \"x\", \"provider\": \"nope\"}]}");
  console(bad, db, "", &r);
  CHECK_INT(r.status, 2);
  CHECK(contains(r.err, "agents[0].provider"));
  proc_result_free(&r);
  const char *extra[] = {"console", w, w, NULL};
  CHECK_INT(proc_agora(extra, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 2);
  proc_result_free(&r);
  const char *help[] = {"console", "--help", NULL};
  PROC_OK(help, NULL, NULL, &r);
  CHECK(contains(r.out, "usage: agora console"));
  proc_result_free(&r);
  free(other);
  free(bad);
  free(w);
  free(db);
}

/* A line starting with // is sent with one '/' less; plain run output is unchanged by the console. */
/* A file whose world name is a different stored world's (other agents): the console names the stored
 * world whose settings it replaces; opening the same world again (same agents) says nothing. */
static void names_the_stored_world_it_replaces(void) {
  char *db = fresh_db("db-replace");
  char first[4200], second[4200];
  snprintf(first, sizeof first, "%s", suite_file(tmp, "shared-a.json", NULL));
  snprintf(second, sizeof second, "%s", suite_file(tmp, "shared-b.json", NULL));
  unit_write_file(first, "{\"name\": \"Shared\", \"agents\": [{\"name\": \"Ann\", \"provider\": \"script\"}]}");
  unit_write_file(second, "{\"name\": \"Shared\", \"agents\": [{\"name\": \"Bob\", \"provider\": \"script\"}]}");
  proc_result r;
  console(first, db, "", &r);
  CHECK_INT(r.status, 0);
  CHECK(!contains(r.err, "different world"));
  proc_result_free(&r);
  console(second, db, "", &r);
  CHECK_INT(r.status, 0);
  if (!contains(r.err, "is world 'Shared', which the database holds as a different world (id shared, 1 agent: Ann;") ||
      !contains(r.err, "its stored settings are replaced by the file's"))
    unit_fail_(__FILE__, __LINE__, "stderr: %s", r.err);
  proc_result_free(&r);
  console(second, db, "", &r);
  CHECK(!contains(r.err, "different world"));
  proc_result_free(&r);
  free(db);
}

static void piped_slash_escape(void) {
  char *w = world_file(), *db = fresh_db("db-slash");
  proc_result r;
  console(w, db, "//alice is a path\n", &r);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.err, "");
  CHECK(contains(r.out, "human: /alice is a path\n"));
  proc_result_free(&r);
  free(w);
  free(db);
}

/* The world's main_agent cannot go (issue 27: agora_agent_remove refuses it); the refusal is the library's
 * reason under the command's name, never the library function's. Another agent goes. */
static void piped_remove_main_agent(void) {
  char *w = strdup(suite_file(tmp, "main.json", NULL)), *db = fresh_db("db-main");
  unit_write_file(w, "{\"name\": \"Main Town\", \"main_agent\": \"alice\", \"agents\": ["
                     "{\"name\": \"alice\", \"replies\": [\"one\"]}, {\"name\": \"bob\", \"replies\": [\"bee\"]}]}");
  proc_result r;
  console(w, db, "/remove alice\n/remove bob\n/agents\n", &r);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.err, "error: /remove: main_agent: 'alice' is not an agent of this world\n");
  CHECK_HAS(r.out, "-- agent-removed: agent=bob", "  alice  script  turns 0/");
  proc_result_free(&r);
  free(w);
  free(db);
}

/* A tool declared "approve": true asks; the next input line answers (y approves, anything else not). */
static void piped_approval(void) {
  char *w = strdup(suite_file(tmp, "approve.json", NULL));
  unit_write_file(w, "{\"name\": \"Approvals\", \"agents\": [{\"name\": \"careful\", \"tools\": ["
                     "{\"name\": \"save_context\", \"approve\": true}], \"replies\": ["
                     "{\"tool\": \"save_context\", \"args\": {\"message\": \"saved it\", \"notes\": [\"x\"]}}, \"not saved\"]}]}");
  char *db = fresh_db("db-approve");
  proc_result r;
  console(w, db, "@careful remember x\ny\n@careful remember y\nno\n", &r);
  CHECK_INT(r.status, 0);
  CHECK_HAS(r.out, "approve: careful wants to call save_context {\"message\":\"saved it\",\"notes\":[\"x\"]} [y/N] y",
                   "careful: saved it", "-- approval: agent=careful tool=save_context approved=true",
                   "-- approval: agent=careful tool=save_context approved=false", "careful: not saved");
  proc_result_free(&r);
  free(w);
  free(db);
}

/* ask_human asks the person: the question shows and the next line is the answer, which goes back to
 * the model as the tool's result; an approval question meanwhile still takes y/n. */
static void piped_ask_human(void) {
  char *w = strdup(suite_file(tmp, "ask.json", NULL));
  unit_write_file(w, "{\"name\": \"Ask\", \"agents\": [{\"name\": \"asker\", \"tools\": [\"ask_human\"], \"replies\": ["
                     "{\"tool\": \"ask_human\", \"args\": {\"question\": \"Which city?\"}}, \"Thanks, noted.\"]}]}");
  char *db = fresh_db("db-ask");
  proc_result r;
  console(w, db, "@asker plan a trip\nPorto, maybe\n", &r);
  CHECK_INT(r.status, 0);
  CHECK_HAS(r.out, "asker asks: Which city? > Porto, maybe\n",
                   "-- tool-result: agent=asker tool=ask_human call_id=call_1 result={\"answer\":\"Porto, maybe\"} error=false",
                   "asker: Thanks, noted.");
  CHECK(!contains(r.out, "human: Porto")); /* the answer is not a message */
  proc_result_free(&r);
  free(w);
  free(db);
}

SUITE_RUN((UNIT(piped_approval), UNIT(piped_ask_human), UNIT(piped_agent_settings), UNIT(piped_messages_saved),
  UNIT(piped_agents_add_remove), UNIT(piped_chats_new_load_delete), UNIT(piped_title_export), UNIT(piped_turnlimit),
  UNIT(piped_bad_commands), UNIT(piped_quit), UNIT(piped_resume), UNIT(usage_and_world_choice),
  UNIT(piped_slash_escape), UNIT(piped_show_export_prefix), UNIT(names_the_stored_world_it_replaces),
  UNIT(piped_remove_main_agent)), .tmp = &tmp)
