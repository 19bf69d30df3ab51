/* End to end through the built binary on real LMDB: `agora chats branch CHAT_ID --at SEQ` (messages,
 * memories, turn counts, reply positions and contexts as right after SEQ; the source untouched; bad
 * --at refused) and `agora chats export --format md` against a golden file (tests/data/md_chat.md). */
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;
static char db[4096];

/* Runs agora with args then --db db; stdout into *out (caller frees) when out is not NULL. */
static int agora(const char *const *args, char **out) {
  const char *all[16];
  size_t n = 0;
  for (; args[n]; n++) all[n] = args[n];
  all[n++] = "--db";
  all[n++] = db;
  all[n] = NULL;
  proc_result r;
  if (proc_agora(all, NULL, NULL, &r)) return -1;
  if (r.status && r.status != 2) fprintf(stderr, "  stderr: %s\n", r.err);
  int st = r.status;
  if (out) *out = r.out, r.out = NULL;
  proc_result_free(&r);
  return st;
}

static cJSON *export_chat(const char *id) {
  char *out = NULL;
  const char *args[] = {"chats", "export", id, NULL};
  CHECK_INT(agora(args, &out), 0);
  cJSON *j = out ? cJSON_Parse(out) : NULL;
  free(out);
  return j;
}

static const char world[] =
  "{\"name\": \"Lib\", \"agents\": [{\"name\": \"Ann\", \"provider\": \"script\", \"tools\": [\"save_context\"],"
  " \"replies\": [{\"tool\": \"save_context\", \"args\": {\"notes\": [\"n1\"]}}, \"first\","
  " {\"tool\": \"save_context\", \"args\": {\"notes\": [\"n2\"]}}, \"second\"]},"
  " {\"name\": \"Ben\", \"provider\": \"script\", \"replies\": [\"ok\"]}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@ann one\"}, {\"from\": \"human\", \"text\": \"@ann two\"}]}";

static const cJSON *agent_of(const cJSON *snap, const char *id) {
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItem(snap, "agents"))
    if (!strcmp(cJSON_GetObjectItem(a, "id")->valuestring, id)) return a;
  return NULL;
}

static void branch_end_to_end(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/lib.json", tmp);
  CHECK_INT(unit_write_file(path, world), 0);
  const char *run[] = {"run", path, NULL};
  CHECK_INT(agora(run, NULL), 0);
  char *list = NULL;
  const char *ls[] = {"chats", "list", "--json", NULL};
  CHECK_INT(agora(ls, &list), 0);
  cJSON *first = list ? cJSON_Parse(list) : NULL;
  char src[64];
  snprintf(src, sizeof src, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(first, "id")));
  cJSON_Delete(first);
  free(list);
  cJSON *before = export_chat(src);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(before, "messages")), 4);

  /* At 2: Ann answered once (after one save_context): memory [1, 2], one turn, reply position 2,
   * context version 1 with n1 only; the thread holds that turn's two tool events. */
  char *id = NULL;
  const char *br[] = {"chats", "branch", src, "--at", "2", NULL};
  CHECK_INT(agora(br, &id), 0);
  if (id) id[strcspn(id, "\n")] = 0;
  cJSON *b = export_chat(id);
  CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "chat"), "title")->valuestring, "One (branch)");
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(b, "messages")), 2);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(b, "thread")), 2);
  const cJSON *ann = agent_of(b, "ann");
  char *mem = cJSON_PrintUnformatted(cJSON_GetObjectItem(ann, "memory"));
  CHECK_STR(mem, "[1,2]");
  free(mem);
  CHECK_INT((long)cJSON_GetObjectItem(ann, "turn_count")->valuedouble, 1);
  CHECK_INT((long)cJSON_GetObjectItem(ann, "reply_counter")->valuedouble, 2);
  const cJSON *cx = cJSON_GetObjectItem(ann, "context");
  CHECK_INT((long)cJSON_GetObjectItem(cx, "version")->valuedouble, 1);
  char *data = cJSON_PrintUnformatted(cJSON_GetObjectItem(cx, "data"));
  CHECK_STR(data, "{\"notes\":[\"n1\"]}");
  free(data);
  cJSON_Delete(b);
  free(id);

  /* At 3 (the second human message): turn counts reset, the second save_context not yet made. */
  const char *br3[] = {"chats", "branch", src, "--at", "3", NULL};
  id = NULL;
  CHECK_INT(agora(br3, &id), 0);
  if (id) id[strcspn(id, "\n")] = 0;
  b = export_chat(id);
  ann = agent_of(b, "ann");
  CHECK_INT((long)cJSON_GetObjectItem(ann, "turn_count")->valuedouble, 0);
  CHECK_INT((long)cJSON_GetObjectItem(cJSON_GetObjectItem(ann, "context"), "version")->valuedouble, 1);
  cJSON_Delete(b);
  free(id);

  /* The source is untouched. */
  cJSON *after = export_chat(src);
  char *x = cJSON_PrintUnformatted(before), *y = cJSON_PrintUnformatted(after);
  CHECK_STR(y, x);
  free(x);
  free(y);
  cJSON_Delete(before);
  cJSON_Delete(after);

  const char *bad1[] = {"chats", "branch", src, "--at", "5", NULL};
  const char *bad2[] = {"chats", "branch", src, "--at", "0", NULL};
  const char *bad3[] = {"chats", "branch", src, NULL};
  const char *bad4[] = {"chats", "branch", "nochat", "--at", "1", NULL};
  CHECK_INT(agora(bad1, NULL), 2);
  CHECK_INT(agora(bad2, NULL), 2);
  CHECK_INT(agora(bad3, NULL), 2);
  CHECK_INT(agora(bad4, NULL), 2); /* no such chat: bad input, as chats show */
}

/* Replaces every occurrence of id in s by CHAT_ID (s is large enough: CHAT_ID is shorter). */
static void mask_id(char *s, const char *id) {
  size_t n = strlen(id);
  for (char *p = strstr(s, id); p; p = strstr(p, id)) {
    memcpy(p, "CHAT_ID", 7);
    memmove(p + 7, p + n, strlen(p + n) + 1);
  }
}

static void markdown_golden(void) {
  char *id = NULL;
  const char *imp[] = {"chats", "import", unit_src_path("tests/data/md_chat.snapshot.json"), NULL};
  CHECK_INT(agora(imp, &id), 0);
  if (!id) return;
  id[strcspn(id, "\n")] = 0;
  char file[4200];
  snprintf(file, sizeof file, "%s/chat.md", tmp);
  const char *to_file[] = {"chats", "export", id, "--format", "md", file, NULL};
  CHECK_INT(agora(to_file, NULL), 0);
  char *got = unit_read_file(file), *want = unit_read_file(unit_src_path("tests/data/md_chat.md"));
  if (got) mask_id(got, id);
  CHECK_STR(got, want);
  char *out = NULL;
  const char *to_stdout[] = {"chats", "export", id, "--format", "md", NULL};
  CHECK_INT(agora(to_stdout, &out), 0);
  if (out) mask_id(out, id);
  CHECK_STR(out, want);
  const char *bad[] = {"chats", "export", id, "--format", "html", NULL};
  CHECK_INT(agora(bad, NULL), 2);
  free(out);
  free(got);
  free(want);
  free(id);
}

/* worlds export --format md: the imported snapshot's world (settings, clock, variables, schedule,
 * agents with prompts) against tests/data/md_world.md, to a file and to stdout. */
static void world_markdown_golden(void) {
  const char *imp[] = {"chats", "import", unit_src_path("tests/data/md_chat.snapshot.json"), NULL};
  CHECK_INT(agora(imp, NULL), 0);
  char file[4200];
  snprintf(file, sizeof file, "%s/world.md", tmp);
  const char *to_file[] = {"worlds", "export", "Library", "--format", "md", file, NULL};
  CHECK_INT(agora(to_file, NULL), 0);
  char *got = unit_read_file(file), *want = unit_read_file(unit_src_path("tests/data/md_world.md"));
  CHECK_STR(got, want);
  char *out = NULL;
  const char *to_stdout[] = {"worlds", "export", "library", "--format", "md", NULL};
  CHECK_INT(agora(to_stdout, &out), 0);
  CHECK_STR(out, want);
  free(out);
  out = NULL;
  const char *json[] = {"worlds", "export", "library", "--format", "json", NULL};
  CHECK_INT(agora(json, &out), 0);
  CHECK(out && out[0] == '{' && strstr(out, "\"schedule\""));
  const char *bad[] = {"worlds", "export", "library", "--format", "html", NULL};
  const char *bad2[] = {"worlds", "show", "library", "--format", "md", NULL};
  const char *bad3[] = {"worlds", "export", "nosuch", "--format", "md", NULL};
  CHECK_INT(agora(bad, NULL), 2);
  CHECK_INT(agora(bad2, NULL), 2);
  CHECK_INT(agora(bad3, NULL), 2);
  free(out);
  free(got);
  free(want);
}

static int db_path(void) {
  snprintf(db, sizeof db, "%s/db", tmp);
  return 0;
}

SUITE_RUN((UNIT(branch_end_to_end), UNIT(markdown_golden), UNIT(world_markdown_golden)), .tmp = &tmp, .before = db_path)
