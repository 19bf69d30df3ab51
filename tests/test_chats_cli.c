/* End to end through the built binary: saving by `run` (titles, counts, --chat, --no-save), `chats
 * list|show|new|delete|export|import`, `replay` and `worlds list` per docs/cli.md and docs/behaviour.md §6 —
 * reuse, delete with fallback, lossless snapshots, rejected snapshots, no key ever written, usage errors. */
#include "support/proc.h"
#include "support/unit.h"
#include "support/wait.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ---- helpers ---- */

/* One test's scratch directory; the database is DIR/db. */
typedef struct env {
  char *dir;
  char db[4096];
} env;

static void env_open(env *e) {
  e->dir = unit_tmpdir();
  if (!e->dir) unit_fail_(__FILE__, __LINE__, "cannot make a temporary directory");
  snprintf(e->db, sizeof e->db, "%s/db", e->dir ? e->dir : "/nonexistent");
}

static void env_close(env *e) {
  unit_rmrf(e->dir);
  free(e->dir);
  e->dir = NULL;
}

/* Writes text to DIR/name and puts the path in out. */
static void env_file(const env *e, const char *name, const char *text, char out[4096]) {
  snprintf(out, 4096, "%s/%s", e->dir, name);
  if (unit_write_file(out, text)) unit_fail_(__FILE__, __LINE__, "cannot write %s", out);
}

/* Runs agora with the NULL-terminated arguments, then "--db DB" when db is not NULL, with extra_env. */
static void agv(proc_result *r, const char *const *extra_env, const char *db, va_list ap) {
  const char *args[40];
  size_t n = 0;
  const char *a;
  while ((a = va_arg(ap, const char *)) != NULL && n < 36) args[n++] = a;
  if (db) {
    args[n++] = "--db";
    args[n++] = db;
  }
  args[n] = NULL;
  if (proc_agora(args, NULL, extra_env, r)) {
    unit_fail_(__FILE__, __LINE__, "cannot run agora");
    r->status = -1;
    r->out = strdup("");
    r->err = strdup("");
  }
}

static void ag(proc_result *r, const char *db, ...) {
  va_list ap;
  va_start(ap, db);
  agv(r, NULL, db, ap);
  va_end(ap);
}

static void ag_env(proc_result *r, const char *const *extra_env, const char *db, ...) {
  va_list ap;
  va_start(ap, db);
  agv(r, extra_env, db, ap);
  va_end(ap);
}

/* stdout without its trailing newlines, in out. */
static void out_trim(const proc_result *r, char *out, size_t cap) {
  snprintf(out, cap, "%s", r->out);
  size_t n = strlen(out);
  while (n && out[n - 1] == '\n') out[--n] = '\0';
}

/* `chats list --json` (optionally --world) as a JSON array of the line objects (caller deletes). */
static cJSON *list_chats(const char *db, const char *world) {
  proc_result r;
  if (world) ag(&r, db, "chats", "list", "--json", "--world", world, NULL);
  else ag(&r, db, "chats", "list", "--json", NULL);
  CHECK_INT(r.status, 0);
  cJSON *arr = cJSON_CreateArray();
  for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
    cJSON *j = cJSON_Parse(line);
    if (!j) unit_fail_(__FILE__, __LINE__, "not JSON: %s", line);
    else cJSON_AddItemToArray(arr, j);
  }
  proc_result_free(&r);
  return arr;
}

/* The raw stdout of `chats list --json`, to compare before and after (caller frees). */
static char *list_raw(const char *db) {
  proc_result r;
  ag(&r, db, "chats", "list", "--json", NULL);
  CHECK_INT(r.status, 0);
  free(r.err);
  return r.out;
}

static const char *jstr(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnum(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The chat object of the list with this id, or NULL. */
static const cJSON *find_chat(const cJSON *list, const char *id) {
  const cJSON *c;
  cJSON_ArrayForEach(c, list) if (jstr(c, "id") && !strcmp(jstr(c, "id"), id)) return c;
  return NULL;
}

/* The id of the current chat in the list (into out, "" when none). */
static void current_id(const cJSON *list, char *out, size_t cap) {
  out[0] = '\0';
  const cJSON *c;
  cJSON_ArrayForEach(c, list) if (cJSON_IsTrue(cJSON_GetObjectItem(c, "current"))) snprintf(out, cap, "%s", jstr(c, "id"));
}

/* "2026-11-22T10:00:00.123Z" exactly. */
static int is_rfc3339_ms(const char *s) {
  static const char pat[] = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (!s || strlen(s) != sizeof pat - 1) return 0;
  for (size_t i = 0; pat[i]; i++)
    if (pat[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pat[i]) return 0;
  return 1;
}

/* The lines of out with "type":"message", joined with '\n' (caller frees). */
static char *message_lines(const char *out) {
  size_t cap = strlen(out) + 1, len = 0;
  char *res = malloc(cap);
  res[0] = '\0';
  const char *line = out;
  while (line && *line) {
    const char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
    if (strncmp(line, "{\"type\":\"message\"", 17) == 0) {
      memcpy(res + len, line, n);
      len += n;
      res[len] = '\0';
    }
    line = nl ? nl + 1 : NULL;
  }
  return res;
}

/* The plain transcript without its "-- event" paragraphs (caller frees). */
static char *plain_messages(const char *out) {
  size_t len = 0;
  char *res = malloc(strlen(out) + 1);
  const char *p = out;
  while (*p) {
    const char *end = strstr(p, "\n\n");
    end = end ? end + 2 : p + strlen(p);
    if (strncmp(p, "-- ", 3) != 0) {
      memcpy(res + len, p, (size_t)(end - p));
      len += (size_t)(end - p);
    }
    p = end;
  }
  res[len] = '\0';
  return res;
}

/* Reads a whole (possibly binary) file; *len its size. Caller frees. */
static char *read_bytes(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 65536, n = 0, got;
  char *buf = malloc(cap);
  while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  *len = n;
  return buf;
}

/* Runs `run WORLD --json` on db; the chat id of its messages into id, the compact transcript returned. */
static char *run_saved(const char *db, const char *world, char *id, size_t cap) {
  proc_result r;
  ag(&r, db, "run", world, "--json", NULL);
  CHECK_INT(r.status, 0);
  if (r.status) fprintf(stderr, "  stderr: %s\n", r.err);
  if (id) {
    id[0] = '\0';
    char *first = strstr(r.out, "{\"type\":\"message\"");
    cJSON *j = first ? cJSON_ParseWithLength(first, strcspn(first, "\n")) : NULL;
    if (jstr(j, "chat")) snprintf(id, cap, "%s", jstr(j, "chat"));
    cJSON_Delete(j);
  }
  char *msgs = proc_messages(r.out);
  proc_result_free(&r);
  return msgs;
}

/* A chat's snapshot (via `chats export` to stdout), parsed; caller deletes. */
static cJSON *export_chat(const char *db, const char *id) {
  proc_result r;
  ag(&r, db, "chats", "export", id, NULL);
  CHECK_INT(r.status, 0);
  cJSON *j = cJSON_Parse(r.out);
  CHECK(j != NULL);
  proc_result_free(&r);
  return j;
}

/* The snapshot's state of agent id (borrowed), or NULL. */
static const cJSON *snap_agent(const cJSON *snap, const char *id) {
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItem(snap, "agents")) if (!strcmp(jstr(a, "id"), id)) return a;
  return NULL;
}

/* Worlds used below. */
static const char trip_world[] =
  "{\"name\": \"Trip Planner\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"planner\", \"replies\": [\"Sure, Lisbon in May.\"]}],"
  " \"script\": [{\"from\": \"world\", \"text\": \"The office is quiet; nobody calls @planner yet.\"},"
  "  {\"from\": \"human\", \"text\": \"Hello, can you help me plan a trip to **Lisbon**\"}]}";

static const char counter_world[] =
  "{\"name\": \"Counter\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"a\", \"replies\": [\"one\", \"two\", \"three\"]}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@a count with me\"}]}";

/* Only a world message that addresses no one: the chat keeps the title "New Chat". */
static const char quiet_world[] =
  "{\"name\": \"Quiet\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"a\", \"replies\": [\"hm\"]}],"
  " \"script\": [{\"from\": \"world\", \"text\": \"Rain falls. Somewhere @a sleeps.\"}]}";

/* ---- run saves ---- */

static void run_saves_chat(void) {
  env e;
  env_open(&e);
  char world[4096], id[64];
  env_file(&e, "trip.json", trip_world, world);
  char *msgs = run_saved(e.db, world, id, sizeof id);
  CHECK_STR(msgs, "world|world|The office is quiet; nobody calls @planner yet.\n"
                  "human|human|Hello, can you help me plan a trip to **Lisbon**\n"
                  "planner|agent|Sure, Lisbon in May.\n");
  CHECK_INT(strlen(id), 13);
  cJSON *list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  const cJSON *c = cJSON_GetArrayItem(list, 0);
  CHECK_INT(cJSON_GetArraySize(c), 7); /* exactly the fields of docs/cli.md */
  CHECK_STR(jstr(c, "id"), id);
  CHECK_STR(jstr(c, "world"), "trip-planner");
  CHECK_STR(jstr(c, "title"), "Plan a trip to Lisbon"); /* the first human message, not the world's */
  CHECK_INT(jnum(c, "message_count"), 3);
  CHECK(is_rfc3339_ms(jstr(c, "created_at")));
  CHECK(is_rfc3339_ms(jstr(c, "updated_at")));
  CHECK(jstr(c, "created_at") && jstr(c, "updated_at") && strcmp(jstr(c, "created_at"), jstr(c, "updated_at")) <= 0);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(c, "current")));

  proc_result r;
  ag(&r, e.db, "worlds", "list", "--json", NULL);
  CHECK_INT(r.status, 0);
  cJSON *w = cJSON_Parse(r.out);
  CHECK_INT(cJSON_GetArraySize(w), 5);
  CHECK_STR(jstr(w, "id"), "trip-planner");
  CHECK_STR(jstr(w, "name"), "Trip Planner");
  CHECK_INT(jnum(w, "agents"), 1);
  CHECK_INT(jnum(w, "chats"), 1);
  CHECK_STR(jstr(w, "current_chat"), id);
  CHECK(strchr(r.out, '\n') == r.out + strlen(r.out) - 1); /* one line */
  cJSON_Delete(w);
  proc_result_free(&r);
  cJSON_Delete(list);
  free(msgs);
  env_close(&e);
}

/* Newest updated first; --world filters; worlds list has one line per world. */
static void list_order_and_filter(void) {
  env e;
  env_open(&e);
  char trip[4096], counter[4096], id1[64], id2[64], id3[64];
  env_file(&e, "trip.json", trip_world, trip);
  env_file(&e, "counter.json", counter_world, counter);
  free(run_saved(e.db, trip, id1, sizeof id1));
  free(run_saved(e.db, counter, id2, sizeof id2));
  free(run_saved(e.db, trip, id3, sizeof id3)); /* the titled chat is not reused: a new one */
  CHECK(strcmp(id1, id3) != 0);
  cJSON *list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 3);
  CHECK_STR(jstr(cJSON_GetArrayItem(list, 0), "id"), id3);
  CHECK_STR(jstr(cJSON_GetArrayItem(list, 1), "id"), id2);
  CHECK_STR(jstr(cJSON_GetArrayItem(list, 2), "id"), id1);
  for (int i = 0; i + 1 < cJSON_GetArraySize(list); i++) {
    const char *a = jstr(cJSON_GetArrayItem(list, i), "updated_at"), *b = jstr(cJSON_GetArrayItem(list, i + 1), "updated_at");
    CHECK(a && b && strcmp(a, b) >= 0);
  }
  /* Each world has its own current chat. */
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(find_chat(list, id3), "current")));
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(find_chat(list, id2), "current")));
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(find_chat(list, id1), "current")));
  cJSON_Delete(list);

  list = list_chats(e.db, "trip-planner");
  CHECK_INT(cJSON_GetArraySize(list), 2);
  const cJSON *c;
  cJSON_ArrayForEach(c, list) CHECK_STR(jstr(c, "world"), "trip-planner");
  cJSON_Delete(list);
  list = list_chats(e.db, "counter");
  CHECK_INT(cJSON_GetArraySize(list), 1);
  CHECK_STR(jstr(cJSON_GetArrayItem(list, 0), "id"), id2);
  cJSON_Delete(list);

  /* A world by its display name too; an unknown one is an error (issue 15 item 9). */
  list = list_chats(e.db, "Trip Planner");
  CHECK_INT(cJSON_GetArraySize(list), 2);
  cJSON_Delete(list);
  proc_result r;
  ag(&r, e.db, "chats", "list", "--world", "nope", NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "no world 'nope'") != NULL);
  proc_result_free(&r);
  ag(&r, e.db, "chats", "new", "--world", "Counter", NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  ag(&r, e.db, "worlds", "list", NULL);
  CHECK_INT(r.status, 0);
  CHECK(strstr(r.out, "  1 agent ") != NULL && strstr(r.out, "1 agents") == NULL);
  CHECK(strstr(r.out, "    2 chats  current") != NULL);
  proc_result_free(&r);
  ag(&r, e.db, "worlds", "list", "--json", NULL);
  CHECK_INT(r.status, 0);
  char *nl = strchr(r.out, '\n');
  CHECK(nl != NULL);
  cJSON *w1 = cJSON_Parse(r.out), *w2 = nl ? cJSON_Parse(nl + 1) : NULL;
  CHECK_STR(jstr(w1, "id"), "counter");
  CHECK_INT(jnum(w1, "chats"), 2); /* the one `chats new --world Counter` made */
  CHECK_STR(jstr(w2, "id"), "trip-planner");
  CHECK_INT(jnum(w2, "chats"), 2);
  CHECK_STR(jstr(w2, "current_chat"), id3);
  cJSON_Delete(w1);
  cJSON_Delete(w2);
  proc_result_free(&r);

  /* With two worlds, `chats new` must be told which. */
  ag(&r, e.db, "chats", "new", NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "--world") != NULL);
  CHECK_STR(r.out, "");
  proc_result_free(&r);
  env_close(&e);
}

/* ---- reuse ---- */

static void new_reuses_empty_chat(void) {
  env e;
  env_open(&e);
  proc_result r;
  ag(&r, e.db, "chats", "new", NULL); /* no world yet */
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "no world") != NULL);
  proc_result_free(&r);

  char world[4096], id1[64], id2[64], id3[64];
  env_file(&e, "trip.json", trip_world, world);
  free(run_saved(e.db, world, id1, sizeof id1));
  ag(&r, e.db, "chats", "new", NULL);
  CHECK_INT(r.status, 0);
  out_trim(&r, id2, sizeof id2);
  proc_result_free(&r);
  CHECK(strcmp(id1, id2) != 0); /* the titled chat is kept, a fresh one made */
  CHECK_INT(strlen(id2), 13);
  ag(&r, e.db, "chats", "new", "--world", "trip-planner", NULL);
  CHECK_INT(r.status, 0);
  out_trim(&r, id3, sizeof id3);
  proc_result_free(&r);
  CHECK_STR(id3, id2); /* an empty New Chat is reused */
  cJSON *list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 2);
  const cJSON *c = find_chat(list, id2);
  CHECK_STR(jstr(c, "title"), "New Chat");
  CHECK_INT(jnum(c, "message_count"), 0);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(c, "current")));
  c = find_chat(list, id1);
  CHECK_INT(jnum(c, "message_count"), 3);
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(c, "current")));
  cJSON_Delete(list);
  env_close(&e);
}

/* A chat that only holds a world message keeps "New Chat" and is reused with its messages. */
static void new_reuses_untitled_chat(void) {
  env e;
  env_open(&e);
  char world[4096], id1[64], id2[64];
  env_file(&e, "quiet.json", quiet_world, world);
  char *msgs = run_saved(e.db, world, id1, sizeof id1);
  CHECK_STR(msgs, "world|world|Rain falls. Somewhere @a sleeps.\n");
  free(msgs);
  cJSON *list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  CHECK_STR(jstr(cJSON_GetArrayItem(list, 0), "title"), "New Chat");
  CHECK_INT(jnum(cJSON_GetArrayItem(list, 0), "message_count"), 1);
  cJSON_Delete(list);

  proc_result r;
  ag(&r, e.db, "chats", "new", NULL);
  CHECK_INT(r.status, 0);
  out_trim(&r, id2, sizeof id2);
  proc_result_free(&r);
  CHECK_STR(id2, id1);
  list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  CHECK_INT(jnum(cJSON_GetArrayItem(list, 0), "message_count"), 1);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "current")));
  cJSON_Delete(list);

  /* A run reuses it too, and its seq goes on after the kept message. */
  ag(&r, e.db, "run", world, "--json", NULL);
  CHECK_INT(r.status, 0);
  CHECK(strstr(r.out, "\"event\":\"chat-reused\"") != NULL);
  CHECK(strstr(r.out, "\"seq\":2,\"sender\":\"world\"") != NULL);
  proc_result_free(&r);
  list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  CHECK_STR(jstr(cJSON_GetArrayItem(list, 0), "id"), id1);
  CHECK_INT(jnum(cJSON_GetArrayItem(list, 0), "message_count"), 2);
  cJSON_Delete(list);
  ag(&r, e.db, "replay", id1, "--json", NULL);
  CHECK_INT(r.status, 0);
  CHECK_MESSAGES(r.out, "world|world|Rain falls. Somewhere @a sleeps.\nworld|world|Rain falls. Somewhere @a sleeps.\n");
  proc_result_free(&r);
  env_close(&e);
}

/* Making a new chat (by `chats new` or by another `run`) must not touch the saved state of the chat
 * it leaves: the agents' turn counts and reply counters stay as they were stored. */
static void new_chat_keeps_old_state(void) {
  env e;
  env_open(&e);
  char id1[64], id2[64], id3[64];
  free(run_saved(e.db, unit_src_path("examples/debate.json"), id1, sizeof id1));
  cJSON *before = export_chat(e.db, id1);
  const cJSON *alice = snap_agent(before, "alice");
  CHECK_INT(jnum(alice, "turn_count"), 3);
  CHECK_INT(jnum(alice, "reply_counter"), 3);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(alice, "notice_sent")));

  proc_result r;
  ag(&r, e.db, "chats", "new", NULL);
  CHECK_INT(r.status, 0);
  out_trim(&r, id2, sizeof id2);
  proc_result_free(&r);
  CHECK(strcmp(id1, id2) != 0);
  cJSON *after = export_chat(e.db, id1);
  if (!cJSON_Compare(cJSON_GetObjectItem(before, "agents"), cJSON_GetObjectItem(after, "agents"), 1)) {
    char *a = cJSON_PrintUnformatted(cJSON_GetObjectItem(before, "agents"));
    char *b = cJSON_PrintUnformatted(cJSON_GetObjectItem(after, "agents"));
    unit_fail_(__FILE__, __LINE__, "`chats new` changed the old chat's agents:\n    before %s\n    after  %s", a, b);
    free(a);
    free(b);
  }
  CHECK(cJSON_Compare(cJSON_GetObjectItem(before, "messages"), cJSON_GetObjectItem(after, "messages"), 1));
  cJSON_Delete(after);

  /* A run reuses the empty id2 and titles it; the next run leaves it for a new chat. */
  free(run_saved(e.db, unit_src_path("examples/debate.json"), id3, sizeof id3));
  CHECK_STR(id3, id2);
  free(run_saved(e.db, unit_src_path("examples/debate.json"), id3, sizeof id3));
  CHECK(strcmp(id3, id2) != 0);
  after = export_chat(e.db, id2);
  alice = snap_agent(after, "alice");
  CHECK_INT(jnum(alice, "reply_counter"), 3);
  CHECK_INT(jnum(alice, "turn_count"), 3);
  cJSON_Delete(after);
  cJSON_Delete(before);
  env_close(&e);
}

/* ---- run --chat, --no-save ---- */

static void run_continues_chat(void) {
  env e;
  env_open(&e);
  char world[4096], id[64], id2[64];
  env_file(&e, "counter.json", counter_world, world);
  char *msgs = run_saved(e.db, world, id, sizeof id);
  CHECK_STR(msgs, "human|human|@a count with me\na|agent|one\n");
  free(msgs);

  proc_result r;
  ag(&r, e.db, "run", world, "--chat", id, "--json", NULL);
  CHECK_INT(r.status, 0);
  msgs = proc_messages(r.out);
  /* The script provider's counter goes on: the agent remembers it already said "one". */
  CHECK_STR(msgs, "human|human|@a count with me\na|agent|two\n");
  free(msgs);
  CHECK(strstr(r.out, "\"seq\":3,\"sender\":\"human\"") != NULL);
  CHECK(strstr(r.out, "\"seq\":4,\"sender\":\"a\"") != NULL);
  CHECK(strstr(r.out, "\"seq\":1,") == NULL);
  CHECK(strstr(r.out, "new-chat-created") == NULL && strstr(r.out, "chat-reused") == NULL);
  char *chat = strstr(r.out, "\"chat\":\"");
  CHECK(chat && strncmp(chat + 8, id, strlen(id)) == 0);
  proc_result_free(&r);

  cJSON *list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  CHECK_STR(jstr(cJSON_GetArrayItem(list, 0), "id"), id);
  CHECK_INT(jnum(cJSON_GetArrayItem(list, 0), "message_count"), 4);
  CHECK_STR(jstr(cJSON_GetArrayItem(list, 0), "title"), "Count with me");
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "current")));
  cJSON_Delete(list);
  /* Its memory holds the earlier messages, then the new ones. */
  cJSON *snap = export_chat(e.db, id);
  char *mem = cJSON_PrintUnformatted(cJSON_GetObjectItem(snap_agent(snap, "a"), "memory"));
  CHECK_STR(mem, "[1,2,3,4]");
  free(mem);
  cJSON_Delete(snap);

  /* A continued chat can be continued again, even after another chat became current. */
  ag(&r, e.db, "chats", "new", NULL);
  CHECK_INT(r.status, 0);
  out_trim(&r, id2, sizeof id2);
  proc_result_free(&r);
  CHECK(strcmp(id2, id) != 0);
  ag(&r, e.db, "run", world, "--chat", id, "--json", NULL);
  CHECK_INT(r.status, 0);
  msgs = proc_messages(r.out);
  CHECK_STR(msgs, "human|human|@a count with me\na|agent|three\n");
  free(msgs);
  CHECK(strstr(r.out, "\"seq\":5,\"sender\":\"human\"") != NULL);
  proc_result_free(&r);
  list = list_chats(e.db, NULL);
  CHECK_INT(jnum(find_chat(list, id), "message_count"), 6);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(find_chat(list, id), "current")));
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(find_chat(list, id2), "current")));
  cJSON_Delete(list);

  char *raw = list_raw(e.db);
  ag(&r, e.db, "run", world, "--chat", "0zzzzzzzzzzzz", NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "0zzzzzzzzzzzz") != NULL);
  CHECK_STR(r.out, "");
  proc_result_free(&r);
  ag(&r, e.db, "run", world, "--chat", id, "--no-save", NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "--no-save") != NULL);
  CHECK_STR(r.out, "");
  proc_result_free(&r);
  char *raw2 = list_raw(e.db);
  CHECK_STR(raw2, raw);
  free(raw);
  free(raw2);
  env_close(&e);
}

static void no_save_writes_nothing(void) {
  env e;
  env_open(&e);
  char world[4096];
  env_file(&e, "trip.json", trip_world, world);
  proc_result r;
  ag(&r, e.db, "run", world, "--json", "--no-save", NULL);
  CHECK_INT(r.status, 0);
  CHECK_MESSAGES(r.out, "world|world|The office is quiet; nobody calls @planner yet.\n"
                        "human|human|Hello, can you help me plan a trip to **Lisbon**\n"
                        "planner|agent|Sure, Lisbon in May.\n");
  CHECK(strstr(r.out, "state-saved") == NULL);
  proc_result_free(&r);
  struct stat sb;
  CHECK(stat(e.db, &sb) != 0); /* not even the directory */

  /* With a database already there, --no-save changes nothing in it. */
  free(run_saved(e.db, world, NULL, 0));
  char *before = list_raw(e.db);
  ag(&r, e.db, "run", world, "--no-save", NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  char *after = list_raw(e.db);
  CHECK_STR(after, before);
  cJSON *list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  cJSON_Delete(list);
  free(before);
  free(after);
  env_close(&e);
}

/* ---- delete ---- */

/* Deletes c1 (c3 becomes current), then c3 (none is), and is refused for c3 again and for an unknown
 * chat, with the id named. */
static void delete_down_to_none(const env *e, const char *c1, const char *c3) {
  proc_result r;
  char cur[64];
  ag(&r, e->db, "chats", "delete", c1, NULL);
  CHECK_INT(r.status, 0);
  out_trim(&r, cur, sizeof cur);
  CHECK_STR(cur, c3);
  proc_result_free(&r);
  ag(&r, e->db, "chats", "delete", c3, NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.out, "none\n");
  proc_result_free(&r);
  cJSON *list = list_chats(e->db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 0);
  cJSON_Delete(list);
  ag(&r, e->db, "worlds", "list", "--json", NULL);
  CHECK_INT(r.status, 0);
  cJSON *w = cJSON_Parse(r.out);
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(w, "current_chat")));
  CHECK_INT(jnum(w, "chats"), 0);
  cJSON_Delete(w);
  proc_result_free(&r);

  ag(&r, e->db, "chats", "delete", c3, NULL); /* already gone */
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, c3) != NULL);
  proc_result_free(&r);
  ag(&r, e->db, "chats", "delete", "nosuchchat", NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "nosuchchat") != NULL);
  CHECK_STR(r.out, "");
  proc_result_free(&r);
}

static void delete_with_fallback(void) {
  env e;
  env_open(&e);
  char world[4096], c1[64], c2[64], c3[64], c4[64], cur[64];
  env_file(&e, "counter.json", counter_world, world);
  free(run_saved(e.db, world, c1, sizeof c1));
  free(run_saved(e.db, world, c2, sizeof c2));
  free(run_saved(e.db, world, c3, sizeof c3));
  proc_result r;
  ag(&r, e.db, "run", world, "--chat", c1, NULL); /* c1 is now the most recently updated */
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  free(run_saved(e.db, world, c4, sizeof c4));
  CHECK(strcmp(c1, c2) && strcmp(c2, c3) && strcmp(c3, c4) && strcmp(c1, c4));
  cJSON *list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 4);
  CHECK_STR(jstr(cJSON_GetArrayItem(list, 0), "id"), c4);
  CHECK_STR(jstr(cJSON_GetArrayItem(list, 1), "id"), c1);
  cJSON_Delete(list);

  /* The current chat: the most recently updated remaining one (c1, not the newer-created c3). */
  ag(&r, e.db, "chats", "delete", c4, NULL);
  CHECK_INT(r.status, 0);
  out_trim(&r, cur, sizeof cur);
  CHECK_STR(cur, c1);
  proc_result_free(&r);
  list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 3);
  CHECK(find_chat(list, c4) == NULL);
  current_id(list, cur, sizeof cur);
  CHECK_STR(cur, c1);
  cJSON_Delete(list);
  ag(&r, e.db, "chats", "show", c4, NULL);
  CHECK_INT(r.status, 2);
  proc_result_free(&r);
  ag(&r, e.db, "replay", c4, NULL);
  CHECK_INT(r.status, 2);
  proc_result_free(&r);

  /* A chat that is not current: the current one stays. */
  ag(&r, e.db, "chats", "delete", c2, NULL);
  CHECK_INT(r.status, 0);
  out_trim(&r, cur, sizeof cur);
  CHECK_STR(cur, c1);
  proc_result_free(&r);
  list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 2);
  CHECK(find_chat(list, c2) == NULL);
  current_id(list, cur, sizeof cur);
  CHECK_STR(cur, c1);
  CHECK_INT(jnum(find_chat(list, c1), "message_count"), 4);
  cJSON_Delete(list);

  delete_down_to_none(&e, c1, c3);

  /* With session mode off, the next run starts a fresh chat that becomes current. */
  free(run_saved(e.db, world, c4, sizeof c4));
  list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  current_id(list, cur, sizeof cur);
  CHECK_STR(cur, c4);
  CHECK_INT(jnum(cJSON_GetArrayItem(list, 0), "message_count"), 2);
  cJSON_Delete(list);
  env_close(&e);
}

/* ---- show ---- */

static void show_matches_run(void) {
  env e;
  env_open(&e);
  proc_result run, r;
  ag(&run, e.db, "run", unit_src_path("examples/debate.json"), "--json", NULL);
  CHECK_INT(run.status, 0);
  char *run_lines = message_lines(run.out);
  char *run_msgs = proc_messages(run.out);
  CHECK_INT(strlen(run_msgs) > 0, 1);
  cJSON *list = list_chats(e.db, NULL);
  const char *id = jstr(cJSON_GetArrayItem(list, 0), "id");
  char *list_line = cJSON_PrintUnformatted(cJSON_GetArrayItem(list, 0));

  ag(&r, e.db, "chats", "show", id, "--json", NULL);
  CHECK_INT(r.status, 0);
  char *nl = strchr(r.out, '\n');
  CHECK(nl != NULL);
  if (nl) {
    *nl = '\0';
    CHECK_STR(r.out, list_line); /* the chat object, as in the list */
    CHECK_STR(nl + 1, run_lines); /* then the message lines, byte for byte as run printed them */
    CHECK_MESSAGES(nl + 1, run_msgs);
  }
  proc_result_free(&r);

  /* Plain: metadata, then the paragraphs. */
  ag(&r, e.db, "chats", "show", id, NULL);
  CHECK_INT(r.status, 0);
  char want[256];
  snprintf(want, sizeof want, "chat: %s\n", id);
  CHECK(strncmp(r.out, want, strlen(want)) == 0);
  CHECK(strstr(r.out, "messages: 8\n") != NULL);
  CHECK(strstr(r.out, "\n#1 human: @alice Is C still relevant in 2026? Start the debate with Bob.\n\n") != NULL);
  proc_result_free(&r);

  ag(&r, e.db, "chats", "show", "0000000000000", "--json", NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "0000000000000") != NULL);
  CHECK_STR(r.out, "");
  proc_result_free(&r);
  free(list_line);
  cJSON_Delete(list);
  free(run_lines);
  free(run_msgs);
  proc_result_free(&run);
  env_close(&e);
}

/* ---- export, import, replay ---- */

/* A world whose texts hold quotes, backslashes, newlines, tabs, emoji and accents, built with cJSON
 * so the file itself is surely valid. */
static char *quirky_world(void) {
  cJSON *w = cJSON_CreateObject();
  cJSON_AddStringToObject(w, "name", "Quirks");
  cJSON_AddStringToObject(cJSON_AddObjectToObject(w, "defaults"), "provider", "script");
  cJSON_AddStringToObject(w, "main_agent", "q");
  cJSON *agents = cJSON_AddArrayToObject(w, "agents");
  cJSON *q = cJSON_CreateObject();
  cJSON_AddStringToObject(q, "name", "q");
  const char *replies[] = {
    "She said \"hi\" and left a back\\slash: C:\\temp\\new\nSecond line\twith a tab 🎉 café naïve Ünïcödé",
    "Line one\n\n  indented \"quoted\" \\\\ end 🎉\n\ttabbed",
  };
  cJSON_AddItemToObject(q, "replies", cJSON_CreateStringArray(replies, 2));
  cJSON_AddItemToArray(agents, q);
  cJSON *script = cJSON_AddArrayToObject(w, "script");
  const char *texts[] = {"Héllo 🎉 \"quoted\" \\ back\tslash\nnext line", "Àgain, ça va? \\n is not a newline"};
  for (int i = 0; i < 2; i++) {
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "from", "human");
    cJSON_AddStringToObject(s, "text", texts[i]);
    cJSON_AddItemToArray(script, s);
  }
  char *text = cJSON_Print(w);
  cJSON_Delete(w);
  return text;
}

static const char quirky_msgs[] =
  "human|human|Héllo 🎉 \"quoted\" \\ back\tslash\nnext line\n"
  "q|agent|She said \"hi\" and left a back\\slash: C:\\temp\\new\nSecond line\twith a tab 🎉 café naïve Ünïcödé\n"
  "human|human|Àgain, ça va? \\n is not a newline\n"
  "q|agent|Line one\n\n  indented \"quoted\" \\\\ end 🎉\n\ttabbed\n";

static char *replay_msgs(const char *db, const char *what, int *status) {
  proc_result r;
  ag(&r, db, "replay", what, "--json", NULL);
  *status = r.status;
  char *m = proc_messages(r.out);
  proc_result_free(&r);
  return m;
}

/* The imported chat id2: same title and count as id, not made current; its snapshot holds the same
 * messages and agent states as snap. */
static void imported_matches(const char *db, const char *id, const char *id2, const cJSON *snap) {
  cJSON *list = list_chats(db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 2);
  const cJSON *a = find_chat(list, id), *b = find_chat(list, id2);
  CHECK(a && b);
  CHECK_STR(jstr(b, "title"), jstr(a, "title"));
  CHECK_INT(jnum(b, "message_count"), 4);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(a, "current")));
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(b, "current")));
  cJSON_Delete(list);
  cJSON *snap2 = export_chat(db, id2);
  CHECK(cJSON_Compare(cJSON_GetObjectItem(snap, "messages"), cJSON_GetObjectItem(snap2, "messages"), 1));
  CHECK(cJSON_Compare(cJSON_GetObjectItem(snap, "agents"), cJSON_GetObjectItem(snap2, "agents"), 1));
  CHECK(cJSON_Compare(cJSON_GetObjectItem(snap, "world"), cJSON_GetObjectItem(snap2, "world"), 1));
  cJSON_Delete(snap2);
}

/* Into a fresh database: the world comes with the chat, which is not made current. */
static void import_into_fresh_db(const env *e, const char *snapfile) {
  proc_result r;
  char id2[64];
  int st = -1;
  char db2[4096];
  snprintf(db2, sizeof db2, "%s/db2", e->dir);
  ag(&r, db2, "chats", "import", snapfile, NULL);
  CHECK_INT(r.status, 0);
  out_trim(&r, id2, sizeof id2);
  proc_result_free(&r);
  ag(&r, db2, "worlds", "list", "--json", NULL);
  CHECK_INT(r.status, 0);
  cJSON *w = cJSON_Parse(r.out);
  CHECK_STR(jstr(w, "id"), "quirks");
  CHECK_STR(jstr(w, "name"), "Quirks");
  CHECK_INT(jnum(w, "chats"), 1);
  CHECK_INT(jnum(w, "agents"), 1);
  cJSON_Delete(w);
  proc_result_free(&r);
  char *fresh = replay_msgs(db2, id2, &st);
  CHECK_INT(st, 0);
  CHECK_STR(fresh, quirky_msgs);
  free(fresh);
}

static void export_import_replay(void) {
  env e;
  env_open(&e);
  char world[4096], snapfile[4096], id[64], id2[64];
  char *wtext = quirky_world();
  env_file(&e, "quirks.json", wtext, world);
  free(wtext);
  char *run_msgs = run_saved(e.db, world, id, sizeof id);
  CHECK_STR(run_msgs, quirky_msgs);

  snprintf(snapfile, sizeof snapfile, "%s/snap.json", e.dir);
  proc_result r;
  ag(&r, e.db, "chats", "export", id, "-o", snapfile, NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.out, "");
  proc_result_free(&r);
  char *file = unit_read_file(snapfile);
  CHECK(file != NULL);
  cJSON *snap = cJSON_Parse(file ? file : "");
  CHECK_INT(jnum(snap, "format"), 1);
  CHECK_STR(jstr(cJSON_GetObjectItem(snap, "chat"), "id"), id);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(snap, "messages")), 4);
  cJSON *stdout_snap = export_chat(e.db, id); /* stdout carries the same document */
  CHECK(cJSON_Compare(snap, stdout_snap, 1));
  cJSON_Delete(stdout_snap);
  ag(&r, e.db, "chats", "export", "0zzzzzzzzzzzz", NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "0zzzzzzzzzzzz") != NULL);
  CHECK_STR(r.out, "");
  proc_result_free(&r);

  ag(&r, e.db, "chats", "import", snapfile, NULL);
  CHECK_INT(r.status, 0);
  out_trim(&r, id2, sizeof id2);
  proc_result_free(&r);
  CHECK_INT(strlen(id2), 13);
  CHECK(strcmp(id, id2) != 0);

  int st = -1;
  char *orig = replay_msgs(e.db, id, &st);
  CHECK_INT(st, 0);
  CHECK_STR(orig, quirky_msgs);
  char *imported = replay_msgs(e.db, id2, &st);
  CHECK_INT(st, 0);
  CHECK_STR(imported, quirky_msgs);
  char *fromfile = replay_msgs(NULL, snapfile, &st); /* a file needs no database */
  CHECK_INT(st, 0);
  CHECK_STR(fromfile, quirky_msgs);
  free(orig);
  free(imported);
  free(fromfile);

  imported_matches(e.db, id, id2, snap);

  /* Replay --json prints the lines run printed for the messages, exactly. */
  ag(&r, e.db, "replay", id, "--json", NULL);
  CHECK_INT(r.status, 0);
  char *rep_lines = message_lines(r.out);
  CHECK_STR(rep_lines, r.out); /* nothing but messages */
  free(rep_lines);
  proc_result_free(&r);

  import_into_fresh_db(&e, snapfile);

  cJSON_Delete(snap);
  free(file);
  free(run_msgs);
  env_close(&e);
}

/* Plain replay prints the message paragraphs of the plain run; --delay paces them. */
static void replay_plain_and_delay(void) {
  env e;
  env_open(&e);
  char world[4096];
  char *wtext = quirky_world();
  env_file(&e, "quirks.json", wtext, world);
  free(wtext);
  proc_result run, r;
  ag(&run, e.db, "run", world, NULL);
  CHECK_INT(run.status, 0);
  cJSON *list = list_chats(e.db, NULL);
  char id[64];
  current_id(list, id, sizeof id);
  cJSON_Delete(list);
  char *want = plain_messages(run.out);
  CHECK(strstr(run.out, "-- title-updated") != NULL && strstr(want, "-- ") == NULL);
  CHECK(strncmp(want, "human: Héllo 🎉", strlen("human: Héllo 🎉")) == 0);

  ag(&r, e.db, "replay", id, NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.out, want);
  CHECK_STR(r.err, "");
  proc_result_free(&r);

  ag(&r, e.db, "replay", id, "--delay", "1", NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.out, want);
  proc_result_free(&r);

  /* Four messages, three pauses of 150 ms. */
  double t0 = now_s();
  ag(&r, e.db, "replay", id, "--json", "--delay", "150", NULL);
  double took = now_s() - t0;
  CHECK_INT(r.status, 0);
  CHECK_MESSAGES(r.out, quirky_msgs);
  proc_result_free(&r);
  if (took < 0.44) unit_fail_(__FILE__, __LINE__, "replay --delay 150 of 4 messages took %.3f s", took);

  ag(&r, e.db, "replay", "0zzzzzzzzzzzz", NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "0zzzzzzzzzzzz") != NULL);
  CHECK_STR(r.out, "");
  proc_result_free(&r);
  ag(&r, e.db, "replay", id, "--delay", "-5", NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "--delay") != NULL);
  proc_result_free(&r);
  free(want);
  proc_result_free(&run);
  env_close(&e);
}

/* ---- bad snapshots ---- */

typedef enum mut {
  M_NONE, M_DEL, M_SET_NUM, M_SET_STR, M_SET_OBJ, M_ADD_MEM, M_ADD_FIELD
} mut;

/* Finds the item at a path like "messages.1.kind" (numbers index arrays); NULL when absent. */
static cJSON *at(cJSON *root, const char *path, cJSON **parent, char *last, size_t cap) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  cJSON *cur = root, *par = NULL;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
    par = cur;
    snprintf(last, cap, "%s", tok);
    cur = isdigit((unsigned char)tok[0]) ? cJSON_GetArrayItem(cur, atoi(tok)) : cJSON_GetObjectItemCaseSensitive(cur, tok);
  }
  *parent = par;
  return cur;
}

/* Each defect, and what the error says after the file name. */
typedef struct bad_case {
  const char *raw;  /* the whole file, or NULL: the good snapshot changed as below */
  mut op;
  const char *path;
  const char *value;
  const char *want; /* in stderr after the file name */
} bad_case;

static const bad_case bad_cases[] = {
  {"{\"format\": 1, \"world\": ", M_NONE, NULL, NULL, "malformed JSON"},
  {"[1, 2, 3]", M_NONE, NULL, NULL, "must be a JSON object"},
  {"\"snapshot\"", M_NONE, NULL, NULL, "must be a JSON object"},
  {NULL, M_DEL, "format", NULL, "format: missing"},
  {NULL, M_SET_NUM, "format", "99", "format: 99 is newer"},
  {NULL, M_SET_STR, "format", "1", "format: must be"},
  {NULL, M_DEL, "world", NULL, "world: missing"},
  {NULL, M_ADD_FIELD, "world", "colour", "colour: unknown field"},
  {NULL, M_DEL, "chat.title", NULL, "chat.title: missing"},
  {NULL, M_SET_OBJ, "messages", NULL, "messages: must be an array"},
  {NULL, M_SET_STR, "messages.1.kind", "robot", "messages[1].kind: unknown kind 'robot'"},
  {NULL, M_DEL, "messages.2.text", NULL, "messages[2].text: missing"},
  {NULL, M_SET_NUM, "messages.2.seq", "2", "messages[2].seq: must be 3 (seqs count from 1 without gaps)"},
  {NULL, M_SET_STR, "messages.0.ts", "2026-11-22 10:00:00", "messages[0].ts: must be an RFC 3339"},
  {NULL, M_SET_STR, "messages.3.text", NULL /* big */, "messages[3].text: longer than"},
  {NULL, M_ADD_MEM, "agents.0.memory", "99", "agents[0].memory[2]: must be the seq of one of the messages"},
  {NULL, M_ADD_FIELD, "", "extra", "extra: unknown field"},
};

/* The good snapshot with case i's one defect (big: the over-long text), printed (caller frees). */
static char *mutated(const char *good_text, const bad_case *c, const char *big, size_t i) {
  cJSON *snap = cJSON_Parse(good_text);
  cJSON *parent = NULL;
  char last[64] = "";
  cJSON *item = *c->path ? at(snap, c->path, &parent, last, sizeof last) : snap;
  if (!item) unit_fail_(__FILE__, __LINE__, "case %zu: no %s in the snapshot", i, c->path);
  switch (c->op) {
  case M_DEL: cJSON_DeleteItemFromObjectCaseSensitive(parent, last); break;
  case M_SET_NUM: cJSON_SetNumberValue(item, atof(c->value)); break;
  case M_SET_STR:
    cJSON_ReplaceItemInObjectCaseSensitive(parent, last, cJSON_CreateString(c->value ? c->value : big));
    break;
  case M_SET_OBJ: cJSON_ReplaceItemInObjectCaseSensitive(parent, last, cJSON_CreateObject()); break;
  case M_ADD_MEM: cJSON_AddItemToArray(item, cJSON_CreateNumber(atof(c->value))); break;
  case M_ADD_FIELD: cJSON_AddNumberToObject(item, c->value, 1); break;
  case M_NONE: break;
  }
  char *text = cJSON_PrintUnformatted(snap);
  cJSON_Delete(snap);
  return text;
}

static void bad_snapshots(void) {
  env e;
  env_open(&e);
  char id[64], good[4096], bad[4096];
  free(run_saved(e.db, unit_src_path("examples/relay.json"), id, sizeof id));
  snprintf(good, sizeof good, "%s/good.json", e.dir);
  proc_result r;
  ag(&r, e.db, "chats", "export", id, "-o", good, NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  char *good_text = unit_read_file(good);
  CHECK(good_text != NULL);
  if (!good_text) {
    env_close(&e);
    return;
  }
  char *big = malloc((1u << 20) + 2);
  memset(big, 'x', (1u << 20) + 1);
  big[(1u << 20) + 1] = '\0';
  char *before = list_raw(e.db);
  for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
    char *text = bad_cases[i].raw ? strdup(bad_cases[i].raw) : mutated(good_text, &bad_cases[i], big, i);
    snprintf(bad, sizeof bad, "%s/bad%zu.json", e.dir, i);
    if (unit_write_file(bad, text)) unit_fail_(__FILE__, __LINE__, "cannot write %s", bad);
    free(text);
    ag(&r, e.db, "chats", "import", bad, NULL);
    /* The file, then the field path and the reason. */
    const char *file_at = strstr(r.err, bad);
    if (r.status != 2 || !file_at || !strstr(file_at, bad_cases[i].want) || r.out[0])
      unit_fail_(__FILE__, __LINE__, "case %zu: status %d, stdout \"%s\", stderr \"%.300s\", want \"%s\"", i, r.status,
                 r.out, r.err, bad_cases[i].want);
    proc_result_free(&r);
    char *after = list_raw(e.db);
    if (strcmp(after, before)) unit_fail_(__FILE__, __LINE__, "case %zu: the database changed", i);
    free(after);
  }
  /* A missing file names itself. */
  ag(&r, e.db, "chats", "import", "/nonexistent/snap.json", NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "/nonexistent/snap.json") != NULL);
  proc_result_free(&r);
  /* replay of a bad file is refused the same way. */
  snprintf(bad, sizeof bad, "%s/bad4.json", e.dir);
  ag(&r, NULL, "replay", bad, NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "format: 99 is newer") != NULL);
  CHECK_STR(r.out, "");
  proc_result_free(&r);
  char *after = list_raw(e.db);
  CHECK_STR(after, before);
  free(after);
  /* The unchanged snapshot imports fine: the cases above fail for their one defect. */
  ag(&r, e.db, "chats", "import", good, NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  cJSON *list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 2);
  cJSON_Delete(list);
  free(before);
  free(big);
  free(good_text);
  env_close(&e);
}

/* seq counts messages from 1 (docs/cli.md): a snapshot whose seqs skip numbers must not give a chat whose
 * message_count differs from the messages it holds. Either refused, or stored consistently. */
static void import_seq_gap(void) {
  env e;
  env_open(&e);
  char id[64], path[4096];
  free(run_saved(e.db, unit_src_path("examples/relay.json"), id, sizeof id));
  cJSON *snap = export_chat(e.db, id);
  /* messages 1, 2, 3, 9: the last seq jumps; memories drop the moved message */
  cJSON *last = cJSON_GetArrayItem(cJSON_GetObjectItem(snap, "messages"), 3);
  cJSON_SetNumberValue(cJSON_GetObjectItem(last, "seq"), 9);
  cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItem(snap, "agents")) {
    cJSON *mem = cJSON_GetObjectItem(a, "memory");
    for (int i = cJSON_GetArraySize(mem) - 1; i >= 0; i--)
      if (cJSON_GetArrayItem(mem, i)->valuedouble == 4) cJSON_DeleteItemFromArray(mem, i);
  }
  char *text = cJSON_PrintUnformatted(snap);
  cJSON_Delete(snap);
  env_file(&e, "gap.json", text, path);
  free(text);
  proc_result r;
  ag(&r, e.db, "chats", "import", path, NULL);
  if (r.status == 0) {
    char id2[64];
    out_trim(&r, id2, sizeof id2);
    cJSON *list = list_chats(e.db, NULL);
    const cJSON *c = find_chat(list, id2);
    CHECK(c != NULL);
    if (c && jnum(c, "message_count") != 4)
      unit_fail_(__FILE__, __LINE__, "imported chat with 4 messages (seqs 1,2,3,9) has message_count %g", jnum(c, "message_count"));
    cJSON_Delete(list);
    proc_result r2;
    ag(&r2, e.db, "replay", id2, "--json", NULL);
    CHECK(strstr(r2.out, "\"seq\":4,") != NULL && strstr(r2.out, "\"seq\":9,") == NULL);
    proc_result_free(&r2);
  } else {
    CHECK_INT(r.status, 2);
    CHECK(strstr(r.err, "messages[3].seq") != NULL);
  }
  proc_result_free(&r);
  env_close(&e);
}

/* ---- keys ---- */

#define CANARY "sk-canary-7f3e9a"

static int canary_hits;
static int canary_files;

static int canary_scan(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)ftw;
  if (flag != FTW_F) return 0;
  size_t len = 0;
  char *data = read_bytes(path, &len);
  if (!data) return 0;
  canary_files++;
  if (memmem(data, len, CANARY, strlen(CANARY))) {
    unit_fail_(__FILE__, __LINE__, "the key is in %s", path);
    canary_hits++;
  }
  free(data);
  return 0;
}

static void canary_key_never_written(void) {
  env e;
  env_open(&e);
  char world[4096], snapfile[4096], id[64];
  env_file(&e, "keyed.json",
           "{\"name\": \"Keyed\", \"main_agent\": \"a\", \"defaults\": {\"provider\": \"script\"},"
           " \"agents\": [{\"name\": \"a\", \"replies\": [\"one\", \"two\"]},"
           "  {\"name\": \"k\", \"provider\": \"openai\", \"model\": \"gpt-4o-mini\", \"api_key_env\": \"CANARY_KEY\","
           "   \"base_url\": \"http://127.0.0.1:9/v1\", \"max_retries\": 0, \"timeout_ms\": 2000}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"what do you say\"}, {\"from\": \"human\", \"text\": \"@a and now\"}]}",
           world);
  const char *env_vars[] = {"CANARY_KEY=" CANARY, NULL};
  proc_result r;
  ag_env(&r, env_vars, e.db, "run", world, "--json", NULL);
  CHECK_INT(r.status, 0); /* k is never addressed: no call is made */
  CHECK_MESSAGES(r.out, "human|human|what do you say\na|agent|one\nhuman|human|@a and now\na|agent|two\n");
  CHECK(strstr(r.out, "\"agent\":\"k\"") == NULL);
  CHECK(strstr(r.out, CANARY) == NULL && strstr(r.err, CANARY) == NULL);
  char *first = strstr(r.out, "\"chat\":\"");
  snprintf(id, sizeof id, "%.13s", first ? first + 8 : "");
  proc_result_free(&r);

  snprintf(snapfile, sizeof snapfile, "%s/export.json", e.dir);
  ag_env(&r, env_vars, e.db, "chats", "export", id, "-o", snapfile, NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  ag_env(&r, env_vars, e.db, "chats", "export", id, NULL);
  CHECK_INT(r.status, 0);
  CHECK(strstr(r.out, CANARY) == NULL);
  cJSON *snapj = cJSON_Parse(r.out);
  const cJSON *k = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(snapj, "world"), "agents"), 1);
  CHECK_STR(jstr(k, "name"), "k");
  CHECK_STR(jstr(k, "api_key_env"), "CANARY_KEY"); /* the name is kept, the value is not */
  CHECK(cJSON_GetObjectItem(k, "api_key") == NULL);
  cJSON_Delete(snapj);
  proc_result_free(&r);
  ag_env(&r, env_vars, e.db, "chats", "show", id, "--json", NULL);
  CHECK_INT(r.status, 0);
  CHECK(strstr(r.out, CANARY) == NULL);
  proc_result_free(&r);

  /* Every file: the database directory (data and lock files) and the export. */
  canary_hits = canary_files = 0;
  nftw(e.db, canary_scan, 8, FTW_PHYS);
  nftw(snapfile, canary_scan, 8, FTW_PHYS);
  CHECK(canary_files >= 3);
  CHECK_INT(canary_hits, 0);
  /* The test can see a key when one is there: the world file itself names only the variable. */
  size_t len = 0;
  char *snap = read_bytes(snapfile, &len);
  CHECK(snap && memmem(snap, len, "CANARY_KEY", 10) != NULL);
  free(snap);
  env_close(&e);
}

/* ---- usage ---- */

static void usage_errors(void) {
  env e;
  env_open(&e);
  /* The default data directory points into the scratch directory, in case anything opened it. */
  char home[4200];
  snprintf(home, sizeof home, "AGORA_HOME=%s", e.db);
  const char *env_vars[] = {home, NULL};
  static const struct {
    const char *args[7];
    const char *want;
  } cases[] = {
    {{"chats", NULL}, "usage: agora chats"},
    {{"chats", "frob", NULL}, "unknown command 'frob'"},
    {{"chats", "show", NULL}, "chats show: expected 1 argument"},
    {{"chats", "show", "--json", NULL}, "chats show: expected 1 argument"},
    {{"chats", "delete", NULL}, "chats delete: expected 1 argument"},
    {{"chats", "export", NULL}, "chats export: expected 1 argument"},
    {{"chats", "import", NULL}, "chats import: expected 1 argument"},
    {{"chats", "list", "extra", NULL}, "chats list: expected 0 arguments"},
    {{"chats", "list", "--bogus", NULL}, "unknown option '--bogus'"},
    {{"chats", "export", "x", "-o", NULL}, "-o needs a value"},
    {{"chats", "list", "--world", NULL}, "--world needs a value"},
    {{"replay", NULL}, "replay: missing CHAT_ID"},
    {{"replay", "--json", NULL}, "replay: missing CHAT_ID"},
    {{"replay", "x", "--bogus", NULL}, "unknown option '--bogus'"},
    {{"replay", "x", "y", NULL}, "unexpected argument 'y'"},
    {{"replay", "x", "--delay", NULL}, "--delay needs a value"},
    {{"replay", "x", "--delay", "soon", NULL}, "--delay: 'soon'"},
    {{"worlds", NULL}, "usage: agora worlds"},
    {{"worlds", "frob", NULL}, "worlds: unknown command 'frob'"},
    {{"worlds", "list", "--x", NULL}, "unknown option '--x'"},
    {{"worlds", "list", "extra", NULL}, "unexpected argument 'extra'"},
    {{"run", "w.json", "--chat", NULL}, "--chat needs a value"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    proc_result r;
    if (proc_agora(cases[i].args, NULL, env_vars, &r)) {
      unit_fail_(__FILE__, __LINE__, "cannot run agora");
      continue;
    }
    if (r.status != 2 || !strstr(r.err, cases[i].want) || r.out[0])
      unit_fail_(__FILE__, __LINE__, "case %zu (%s %s): status %d, stdout \"%.100s\", stderr \"%.200s\", want \"%s\"", i,
                 cases[i].args[0], cases[i].args[1] ? cases[i].args[1] : "", r.status, r.out, r.err, cases[i].want);
    proc_result_free(&r);
  }
  /* None of that created a database. */
  struct stat sb;
  CHECK(stat(e.db, &sb) != 0);
  proc_result r;
  const char *help[] = {"chats", "--help", NULL};
  PROC_OK(help, NULL, env_vars, &r);
  CHECK(strstr(r.out, "import SNAPSHOT.json") != NULL);
  proc_result_free(&r);
  env_close(&e);
}

/* worlds show|export|delete (issue 15 item 13), by id or display name. */
static void worlds_show_export_delete(void) {
  env e;
  env_open(&e);
  char trip[4096], counter[4096], id[64], exported[4096], db2[4096];
  env_file(&e, "trip.json", trip_world, trip);
  env_file(&e, "counter.json", counter_world, counter);
  free(run_saved(e.db, trip, id, sizeof id));
  free(run_saved(e.db, counter, id, sizeof id));
  proc_result r;
  ag(&r, e.db, "worlds", "show", "Trip Planner", NULL);
  CHECK_INT(r.status, 0);
  CHECK(strstr(r.out, "world: trip-planner\nname: Trip Planner\nchats: 1\n") != NULL);
  CHECK(strstr(r.out, "agents: 1\n  planner ") != NULL && strstr(r.out, "provider=script") != NULL);
  proc_result_free(&r);
  ag(&r, e.db, "worlds", "show", "trip-planner", "--json", NULL);
  CHECK_INT(r.status, 0);
  cJSON *j = cJSON_Parse(r.out);
  CHECK_INT(jnum(j, "chats"), 1);
  CHECK_STR(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "settings"), "agents"), 0), "name"), "planner");
  cJSON_Delete(j);
  proc_result_free(&r);
  ag(&r, e.db, "worlds", "show", "nope", NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "no world 'nope'") != NULL);
  proc_result_free(&r);
  /* export: a world file that `run` loads again, into another database. */
  snprintf(exported, sizeof exported, "%s/exported.json", e.dir);
  snprintf(db2, sizeof db2, "%s/db2", e.dir);
  ag(&r, e.db, "worlds", "export", "Trip Planner", "-o", exported, NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  ag(&r, db2, "run", exported, NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  ag(&r, db2, "worlds", "list", "--json", NULL);
  CHECK(strstr(r.out, "\"id\":\"trip-planner\"") != NULL);
  proc_result_free(&r);
  /* delete: only with --yes; the world and its chats go, the other world stays. */
  ag(&r, e.db, "worlds", "delete", "Trip Planner", NULL);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "add --yes") != NULL);
  proc_result_free(&r);
  ag(&r, e.db, "worlds", "delete", "Trip Planner", "--yes", NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.out, "deleted world trip-planner and 1 chat\n");
  proc_result_free(&r);
  cJSON *list = list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  CHECK_STR(jstr(cJSON_GetArrayItem(list, 0), "world"), "counter");
  cJSON_Delete(list);
  ag(&r, e.db, "worlds", "list", NULL);
  CHECK(strstr(r.out, "trip-planner") == NULL && strstr(r.out, "counter") != NULL);
  proc_result_free(&r);
  env_close(&e);
}

static const unit_test tests[] = {
  UNIT(worlds_show_export_delete),
  UNIT(run_saves_chat),
  UNIT(list_order_and_filter),
  UNIT(new_reuses_empty_chat),
  UNIT(new_reuses_untitled_chat),
  UNIT(new_chat_keeps_old_state),
  UNIT(run_continues_chat),
  UNIT(no_save_writes_nothing),
  UNIT(delete_with_fallback),
  UNIT(show_matches_run),
  UNIT(export_import_replay),
  UNIT(replay_plain_and_delay),
  UNIT(bad_snapshots),
  UNIT(import_seq_gap),
  UNIT(canary_key_never_written),
  UNIT(usage_errors),
};

int main(int argc, char **argv) { return unit_main(argc, argv, tests, sizeof tests / sizeof *tests); }
