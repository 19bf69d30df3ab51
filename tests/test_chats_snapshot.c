/* End to end through the built binary: chat snapshots — `chats export|import` lossless, `replay` (plain,
 * JSON, --delay), rejected snapshots with the field they name, message numbers without gaps, and no API
 * key ever written to the database or a snapshot (docs/cli.md, docs/behaviour.md §6). */
#include "support/proc.h"
#include "support/suite.h"
#include "support/tchats.h"
#include "support/tjson.h"
#include "support/unit.h"
#include "support/wait.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- helpers ---- */

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
  tchats_ag(&r, db, "replay", what, "--json", NULL);
  *status = r.status;
  char *m = proc_messages(r.out);
  proc_result_free(&r);
  return m;
}

/* The imported chat id2: same title and count as id, not made current; its snapshot holds the same
 * messages and agent states as snap. */
static void imported_matches(const char *db, const char *id, const char *id2, const cJSON *snap) {
  cJSON *list = tchats_list_chats(db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 2);
  const cJSON *a = tchats_find_chat(list, id), *b = tchats_find_chat(list, id2);
  CHECK(a && b);
  CHECK_STR(tjson_str(b, "title"), tjson_str(a, "title"));
  CHECK_INT(tjson_num(b, "message_count"), 4);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(a, "current")));
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(b, "current")));
  cJSON_Delete(list);
  cJSON *snap2 = tchats_export_chat(db, id2);
  CHECK(cJSON_Compare(cJSON_GetObjectItem(snap, "messages"), cJSON_GetObjectItem(snap2, "messages"), 1));
  CHECK(cJSON_Compare(cJSON_GetObjectItem(snap, "agents"), cJSON_GetObjectItem(snap2, "agents"), 1));
  CHECK(cJSON_Compare(cJSON_GetObjectItem(snap, "world"), cJSON_GetObjectItem(snap2, "world"), 1));
  cJSON_Delete(snap2);
}

/* Into a fresh database: the world comes with the chat, which is not made current. */
static void import_into_fresh_db(const tchats_env *e, const char *snapfile) {
  proc_result r;
  char id2[64];
  int st = -1;
  char db2[4096];
  snprintf(db2, sizeof db2, "%s/db2", e->dir);
  tchats_ag(&r, db2, "chats", "import", snapfile, NULL);
  CHECK_INT(r.status, 0);
  tchats_out_trim(&r, id2, sizeof id2);
  proc_result_free(&r);
  tchats_ag(&r, db2, "worlds", "list", "--json", NULL);
  CHECK_INT(r.status, 0);
  cJSON *w = cJSON_Parse(r.out);
  CHECK_STR(tjson_str(w, "id"), "quirks");
  CHECK_STR(tjson_str(w, "name"), "Quirks");
  CHECK_INT(tjson_num(w, "chats"), 1);
  CHECK_INT(tjson_num(w, "agents"), 1);
  cJSON_Delete(w);
  proc_result_free(&r);
  char *fresh = replay_msgs(db2, id2, &st);
  CHECK_INT(st, 0);
  CHECK_STR(fresh, quirky_msgs);
  free(fresh);
}

static void export_import_replay(void) {
  tchats_env e;
  tchats_env_open(&e);
  char world[4096], snapfile[4096], id[64], id2[64];
  char *wtext = quirky_world();
  tchats_env_file(&e, "quirks.json", wtext, world);
  free(wtext);
  char *run_msgs = tchats_run_saved(e.db, world, id, sizeof id);
  CHECK_STR(run_msgs, quirky_msgs);

  snprintf(snapfile, sizeof snapfile, "%s/snap.json", e.dir);
  proc_result r;
  tchats_ag(&r, e.db, "chats", "export", id, "-o", snapfile, NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.out, "");
  proc_result_free(&r);
  char *file = unit_read_file(snapfile);
  CHECK(file != NULL);
  cJSON *snap = cJSON_Parse(file ? file : "");
  CHECK_INT(tjson_num(snap, "format"), 1);
  CHECK_STR(tjson_str(cJSON_GetObjectItem(snap, "chat"), "id"), id);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(snap, "messages")), 4);
  cJSON *stdout_snap = tchats_export_chat(e.db, id); /* stdout carries the same document */
  CHECK(cJSON_Compare(snap, stdout_snap, 1));
  cJSON_Delete(stdout_snap);
  TCHATS_REFUSED(e.db, "0zzzzzzzzzzzz", "chats", "export", "0zzzzzzzzzzzz", NULL);

  tchats_ag(&r, e.db, "chats", "import", snapfile, NULL);
  CHECK_INT(r.status, 0);
  tchats_out_trim(&r, id2, sizeof id2);
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
  tchats_ag(&r, e.db, "replay", id, "--json", NULL);
  CHECK_INT(r.status, 0);
  char *rep_lines = tchats_message_lines(r.out);
  CHECK_STR(rep_lines, r.out); /* nothing but messages */
  free(rep_lines);
  proc_result_free(&r);

  import_into_fresh_db(&e, snapfile);

  cJSON_Delete(snap);
  free(file);
  free(run_msgs);
  tchats_env_close(&e);
}

/* Plain replay prints the message paragraphs of the plain run; --delay paces them. */
static void replay_plain_and_delay(void) {
  tchats_env e;
  tchats_env_open(&e);
  char world[4096];
  char *wtext = quirky_world();
  tchats_env_file(&e, "quirks.json", wtext, world);
  free(wtext);
  proc_result run, r;
  tchats_ag(&run, e.db, "run", world, NULL);
  CHECK_INT(run.status, 0);
  cJSON *list = tchats_list_chats(e.db, NULL);
  char id[64];
  tchats_current_id(list, id, sizeof id);
  cJSON_Delete(list);
  char *want = plain_messages(run.out);
  CHECK(strstr(run.out, "-- title-updated") != NULL && strstr(want, "-- ") == NULL);
  CHECK(strncmp(want, "human: Héllo 🎉", strlen("human: Héllo 🎉")) == 0);

  tchats_ag(&r, e.db, "replay", id, NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.out, want);
  CHECK_STR(r.err, "");
  proc_result_free(&r);

  tchats_ag(&r, e.db, "replay", id, "--delay", "1", NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.out, want);
  proc_result_free(&r);

  /* Four messages, three pauses of 150 ms. */
  double t0 = now_s();
  tchats_ag(&r, e.db, "replay", id, "--json", "--delay", "150", NULL);
  double took = now_s() - t0;
  CHECK_INT(r.status, 0);
  CHECK_MESSAGES(r.out, quirky_msgs);
  proc_result_free(&r);
  if (took < 0.44) unit_fail_(__FILE__, __LINE__, "replay --delay 150 of 4 messages took %.3f s", took);

  TCHATS_REFUSED(e.db, "0zzzzzzzzzzzz", "replay", "0zzzzzzzzzzzz", NULL);
  TCHATS_REFUSED(e.db, "--delay", "replay", id, "--delay", "-5", NULL);
  free(want);
  proc_result_free(&run);
  tchats_env_close(&e);
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
  tchats_env e;
  tchats_env_open(&e);
  char id[64], good[4096], bad[4096];
  free(tchats_run_saved(e.db, unit_src_path("examples/relay.json"), id, sizeof id));
  snprintf(good, sizeof good, "%s/good.json", e.dir);
  proc_result r;
  tchats_ag(&r, e.db, "chats", "export", id, "-o", good, NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  char *good_text = unit_read_file(good);
  CHECK(good_text != NULL);
  if (!good_text) {
    tchats_env_close(&e);
    return;
  }
  char *big = malloc((1u << 20) + 2);
  memset(big, 'x', (1u << 20) + 1);
  big[(1u << 20) + 1] = '\0';
  char *before = tchats_list_raw(e.db);
  for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
    char *text = bad_cases[i].raw ? strdup(bad_cases[i].raw) : mutated(good_text, &bad_cases[i], big, i);
    snprintf(bad, sizeof bad, "%s/bad%zu.json", e.dir, i);
    if (unit_write_file(bad, text)) unit_fail_(__FILE__, __LINE__, "cannot write %s", bad);
    free(text);
    tchats_ag(&r, e.db, "chats", "import", bad, NULL);
    /* The file, then the field path and the reason. */
    const char *file_at = strstr(r.err, bad);
    if (r.status != 2 || !file_at || !strstr(file_at, bad_cases[i].want) || r.out[0])
      unit_fail_(__FILE__, __LINE__, "case %zu: status %d, stdout \"%s\", stderr \"%.300s\", want \"%s\"", i, r.status,
                 r.out, r.err, bad_cases[i].want);
    proc_result_free(&r);
    char *after = tchats_list_raw(e.db);
    if (strcmp(after, before)) unit_fail_(__FILE__, __LINE__, "case %zu: the database changed", i);
    free(after);
  }
  /* A missing file names itself. */
  TCHATS_REFUSED(e.db, "/nonexistent/snap.json", "chats", "import", "/nonexistent/snap.json", NULL);
  /* replay of a bad file is refused the same way. */
  snprintf(bad, sizeof bad, "%s/bad4.json", e.dir);
  TCHATS_REFUSED(NULL, "format: 99 is newer", "replay", bad, NULL);
  char *after = tchats_list_raw(e.db);
  CHECK_STR(after, before);
  free(after);
  /* The unchanged snapshot imports fine: the cases above fail for their one defect. */
  tchats_ag(&r, e.db, "chats", "import", good, NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  cJSON *list = tchats_list_chats(e.db, NULL);
  CHECK_INT(cJSON_GetArraySize(list), 2);
  cJSON_Delete(list);
  free(before);
  free(big);
  free(good_text);
  tchats_env_close(&e);
}

/* seq counts messages from 1 (docs/cli.md): a snapshot whose seqs skip numbers must not give a chat whose
 * message_count differs from the messages it holds. Either refused, or stored consistently. */
static void import_seq_gap(void) {
  tchats_env e;
  tchats_env_open(&e);
  char id[64], path[4096];
  free(tchats_run_saved(e.db, unit_src_path("examples/relay.json"), id, sizeof id));
  cJSON *snap = tchats_export_chat(e.db, id);
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
  tchats_env_file(&e, "gap.json", text, path);
  free(text);
  proc_result r;
  tchats_ag(&r, e.db, "chats", "import", path, NULL);
  if (r.status == 0) {
    char id2[64];
    tchats_out_trim(&r, id2, sizeof id2);
    cJSON *list = tchats_list_chats(e.db, NULL);
    const cJSON *c = tchats_find_chat(list, id2);
    CHECK(c != NULL);
    if (c && tjson_num(c, "message_count") != 4)
      unit_fail_(__FILE__, __LINE__, "imported chat with 4 messages (seqs 1,2,3,9) has message_count %g", tjson_num(c, "message_count"));
    cJSON_Delete(list);
    proc_result r2;
    tchats_ag(&r2, e.db, "replay", id2, "--json", NULL);
    CHECK(strstr(r2.out, "\"seq\":4,") != NULL && strstr(r2.out, "\"seq\":9,") == NULL);
    proc_result_free(&r2);
  } else {
    CHECK_INT(r.status, 2);
    CHECK(strstr(r.err, "messages[3].seq") != NULL);
  }
  proc_result_free(&r);
  tchats_env_close(&e);
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
  tchats_env e;
  tchats_env_open(&e);
  char world[4096], snapfile[4096], id[64];
  tchats_env_file(&e, "keyed.json",
           "{\"name\": \"Keyed\", \"main_agent\": \"a\", \"defaults\": {\"provider\": \"script\"},"
           " \"agents\": [{\"name\": \"a\", \"replies\": [\"one\", \"two\"]},"
           "  {\"name\": \"k\", \"provider\": \"openai\", \"model\": \"gpt-4o-mini\", \"api_key_env\": \"CANARY_KEY\","
           "   \"base_url\": \"http://127.0.0.1:9/v1\", \"max_retries\": 0, \"timeout_ms\": 2000}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"what do you say\"}, {\"from\": \"human\", \"text\": \"@a and now\"}]}",
           world);
  const char *env_vars[] = {"CANARY_KEY=" CANARY, NULL};
  proc_result r;
  tchats_ag_env(&r, env_vars, e.db, "run", world, "--json", NULL);
  CHECK_INT(r.status, 0); /* k is never addressed: no call is made */
  CHECK_MESSAGES(r.out, "human|human|what do you say\na|agent|one\nhuman|human|@a and now\na|agent|two\n");
  CHECK(strstr(r.out, "\"agent\":\"k\"") == NULL);
  CHECK(strstr(r.out, CANARY) == NULL && strstr(r.err, CANARY) == NULL);
  char *first = strstr(r.out, "\"chat\":\"");
  snprintf(id, sizeof id, "%.13s", first ? first + 8 : "");
  proc_result_free(&r);

  snprintf(snapfile, sizeof snapfile, "%s/export.json", e.dir);
  tchats_ag_env(&r, env_vars, e.db, "chats", "export", id, "-o", snapfile, NULL);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  tchats_ag_env(&r, env_vars, e.db, "chats", "export", id, NULL);
  CHECK_INT(r.status, 0);
  CHECK(strstr(r.out, CANARY) == NULL);
  cJSON *snapj = cJSON_Parse(r.out);
  const cJSON *k = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(snapj, "world"), "agents"), 1);
  CHECK_STR(tjson_str(k, "name"), "k");
  CHECK_STR(tjson_str(k, "api_key_env"), "CANARY_KEY"); /* the name is kept, the value is not */
  CHECK(cJSON_GetObjectItem(k, "api_key") == NULL);
  cJSON_Delete(snapj);
  proc_result_free(&r);
  tchats_ag_env(&r, env_vars, e.db, "chats", "show", id, "--json", NULL);
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
  tchats_env_close(&e);
}

SUITE_RUN((UNIT(export_import_replay), UNIT(replay_plain_and_delay), UNIT(bad_snapshots), UNIT(import_seq_gap),
  UNIT(canary_key_never_written)))
