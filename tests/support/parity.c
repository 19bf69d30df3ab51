/* Parity of the doors: stored chats reduced to comparable lines, the table of docs/architecture.md read
 * back, and the check of one door's column (parity.h). */
#include "support/parity.h"

#include "support/proc.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The row names of the table, in parity_feature order: a row's first cell starts with one of them. */
static const char *const feature_names[PF_COUNT] = {
  "MCP tool", "`approve: true` tool", "`ask_human`", "virtual clock", "schedule", "`{{variables}}`",
  "memory stream", "memory summary", "`remember` tool", "reflection", "`context_tokens`"};

/* The parity world's tools (tests/test_parity.c), by the feature each shows. */
static unsigned tool_tag(const char *tool) {
  if (!strcmp(tool, "echo")) return 1u << PF_MCP;
  if (!strcmp(tool, "add")) return 1u << PF_APPROVE;
  if (!strcmp(tool, "ask_human")) return 1u << PF_ASK;
  if (!strcmp(tool, "remember")) return 1u << PF_REMEMBER;
  return 0;
}

static void add_line(parity_chat *c, unsigned tags, char *text) {
  if (!text) return;
  if (c->n == PARITY_MAX_LINES) {
    unit_fail_(__FILE__, __LINE__, "more than %d lines in a parity chat", PARITY_MAX_LINES);
    free(text);
    return;
  }
  c->lines[c->n++] = (parity_line){.text = text, .tags = tags};
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(NULL, 0, f, ap);
  va_end(ap);
  char *s = n < 0 ? NULL : malloc((size_t)n + 1);
  va_start(ap, f);
  if (s) vsnprintf(s, (size_t)n + 1, f, ap);
  va_end(ap);
  return s;
}

static const char *str_of(const cJSON *j, const char *key) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(j, key));
  return s ? s : "";
}

/* Each line of ndjson (cut into lines in place) that parses as a JSON object with a "type", given to fn. */
static void each_json_line(char *ndjson, void (*fn)(const cJSON *j, void *arg), void *arg) {
  for (char *line = ndjson, *nl; *line; line = nl + 1) {
    nl = strchr(line, '\n');
    if (!nl) nl = line + strlen(line) - 1;
    else *nl = '\0';
    cJSON *j = cJSON_Parse(line);
    if (j && cJSON_GetObjectItem(j, "type")) fn(j, arg);
    cJSON_Delete(j);
  }
}

/* Where a chat's reading is: in the schedule from the first world message on; the last message's seq. */
typedef struct record_at {
  parity_chat *c;
  int in_schedule;
  double seq;
} record_at;

/* A stored reflection or summary: what it says and after which message it came (so a door that
 * reflects at another point differs). */
static void add_memory_step(parity_chat *c, const cJSON *j, const char *ev, const record_at *at) {
  int refl = !strcmp(ev, "reflection");
  char *v = refl ? cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "insights")) : NULL;
  if (refl)
    add_line(c, 1u << PF_REFLECT, fmt("reflection %s after #%.0f at %.0f: %s", str_of(j, "agent"), at->seq,
                                      cJSON_GetNumberValue(cJSON_GetObjectItem(j, "at_ms")), v ? v : "null"));
  else
    add_line(c, 1u << PF_SUMMARY, fmt("summary %s after #%.0f upto %.0f: %s", str_of(j, "agent"), at->seq,
                                      cJSON_GetNumberValue(cJSON_GetObjectItem(j, "upto")), str_of(j, "summary")));
  free(v);
}

/* One NDJSON line of `chats show --json`. */
static void add_record(const cJSON *j, void *arg) {
  record_at *at = arg;
  parity_chat *c = at->c;
  const char *type = str_of(j, "type");
  if (!strcmp(type, "message")) {
    const char *kind = str_of(j, "kind"), *sender = str_of(j, "sender");
    if (!strcmp(kind, "world")) at->in_schedule = 1;
    at->seq = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "seq"));
    unsigned sched = at->in_schedule ? 1u << PF_SCHEDULE : 0;
    unsigned vars = !strcmp(kind, "world") ? 1u << PF_VARIABLES : 0;
    add_line(c, sched | vars, fmt("msg %s (%s): %s", sender, kind, str_of(j, "text")));
    const char *sim = cJSON_GetObjectItem(j, "sim_time") ? str_of(j, "sim_time") : "(none)";
    add_line(c, sched | 1u << PF_SIM, fmt("sim %s: %s", sender, sim));
    return;
  }
  const char *ev = str_of(j, "event");
  if (!strcmp(ev, "reflection") || !strcmp(ev, "summary")) {
    add_memory_step(c, j, ev, at);
    return;
  }
  int call = !strcmp(ev, "tool-call"), result = !strcmp(ev, "tool-result");
  if (!call && !result) return;
  const char *tool = str_of(j, "tool");
  char *v = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, call ? "args" : "result"));
  const char *err = cJSON_IsTrue(cJSON_GetObjectItem(j, "error")) ? "true" : "false";
  unsigned tags = tool_tag(tool) | (at->in_schedule ? 1u << PF_SCHEDULE : 0);
  if (call) add_line(c, tags, fmt("call %s %s %s", str_of(j, "agent"), tool, v ? v : "null"));
  else add_line(c, tags, fmt("result %s %s error=%s %s", str_of(j, "agent"), tool, err, v ? v : "null"));
  free(v);
}

/* The id of the one chat in db into id; 0 or -1. */
static int only_chat(const char *db, char id[64]) {
  const char *list[] = {"chats", "list", "--db", db, "--json", NULL};
  proc_result r;
  if (proc_agora(list, NULL, NULL, &r)) return -1;
  cJSON *j = cJSON_Parse(r.out);
  const char *got = cJSON_GetStringValue(cJSON_GetObjectItem(j, "id"));
  const char *nl = strchr(r.out, '\n');
  int rc = r.status == 0 && got && nl && !nl[1] ? 0 : -1;
  if (rc) unit_fail_(__FILE__, __LINE__, "%s: not one chat:\n%s%s", db, r.out, r.err);
  else snprintf(id, 64, "%s", got);
  cJSON_Delete(j);
  proc_result_free(&r);
  return rc;
}

int parity_chat_load(const char *db, parity_chat *c) {
  memset(c, 0, sizeof *c);
  return parity_chat_add(db, c);
}

int parity_chat_add(const char *db, parity_chat *c) {
  char id[64];
  if (only_chat(db, id)) return -1;
  const char *show[] = {"chats", "show", id, "--db", db, "--json", NULL};
  proc_result r;
  if (proc_agora(show, NULL, NULL, &r) || r.status) {
    unit_fail_(__FILE__, __LINE__, "chats show %s --db %s failed", id, db);
    return -1;
  }
  record_at at = {.c = c};
  each_json_line(r.out, add_record, &at);
  proc_result_free(&r);
  return 0;
}

/* Which agent's memories a listing is. */
typedef struct memory_of {
  parity_chat *c;
  const char *agent;
} memory_of;

/* One line of `agora memory --json`, tagged by what made it: a message, a note of the remember tool, or
 * an insight of a reflection (a note citing its sources). */
static void add_memory(const cJSON *j, void *arg) {
  const memory_of *m = arg;
  const cJSON *src = cJSON_GetObjectItem(j, "sources");
  int note = cJSON_IsTrue(cJSON_GetObjectItem(j, "note"));
  char *from = src ? cJSON_PrintUnformatted(src) : NULL;
  unsigned tags = 1u << PF_STREAM | (note ? 1u << (src ? PF_REFLECT : PF_REMEMBER) : 0);
  add_line(m->c, tags, fmt("memory %s #%.0f %s importance %g%s%s%s %s: %s", m->agent,
                           cJSON_GetNumberValue(cJSON_GetObjectItem(j, "seq")), str_of(j, "time"),
                           cJSON_GetNumberValue(cJSON_GetObjectItem(j, "importance")), note ? " note" : "",
                           from ? " from " : "", from ? from : "", str_of(j, "sender"), str_of(j, "text")));
  free(from);
}

int parity_memory_add(const char *db, const char *agent, parity_chat *c) {
  char id[64];
  if (only_chat(db, id)) return -1;
  const char *args[] = {"memory", id, agent, "--db", db, "--json", NULL};
  proc_result r = {0};
  int rc = proc_agora(args, NULL, NULL, &r) || r.status ? -1 : 0;
  if (rc) unit_fail_(__FILE__, __LINE__, "memory %s %s --db %s: %s", id, agent, db, r.err ? r.err : "did not run");
  else each_json_line(r.out, add_memory, &(memory_of){.c = c, .agent = agent});
  proc_result_free(&r);
  return rc;
}

void parity_memories_add(const char *agent, const cJSON *list, parity_chat *c) {
  const cJSON *m;
  cJSON_ArrayForEach(m, list) add_memory(m, &(memory_of){.c = c, .agent = agent});
}

/* The names of a request's tools, ","-separated (caller frees). */
static char *tool_names(const cJSON *tools) {
  char *s = fmt("%s", ""), *next;
  const cJSON *t;
  cJSON_ArrayForEach(t, tools) {
    next = s ? fmt("%s%s%s", s, *s ? "," : "", str_of(cJSON_GetObjectItem(t, "function"), "name")) : NULL;
    free(s);
    s = next;
  }
  return s;
}

void parity_prompts_add(llm_server *srv, parity_chat *c) {
  llm_server_request r;
  for (size_t i = 0; !llm_server_request_get(srv, i, &r); i++) {
    cJSON *j = cJSON_Parse(r.body);
    char *msgs = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "messages"));
    char *tools = tool_names(cJSON_GetObjectItem(j, "tools"));
    unsigned tags = 1u << PF_CONTEXT;
    if (msgs && strstr(msgs, "What you remember from earlier")) tags |= 1u << PF_STREAM;
    if (msgs && (strstr(msgs, "Summary of the conversation") || strstr(msgs, "running summary")))
      tags |= 1u << PF_SUMMARY;
    add_line(c, tags, fmt("prompt: %s tools=%s", msgs ? msgs : r.body, tools ? tools : ""));
    free(msgs), free(tools);
    cJSON_Delete(j);
    llm_server_request_free(&r);
  }
}

char *parity_chat_text(const parity_chat *c) {
  size_t cap = 64;
  for (size_t i = 0; i < c->n; i++) cap += strlen(c->lines[i].text) + 16;
  char *s = malloc(cap);
  size_t n = 0;
  if (s) s[0] = '\0';
  for (size_t i = 0; s && i < c->n; i++)
    n += (size_t)snprintf(s + n, cap - n, "  [%02x] %s\n", c->lines[i].tags, c->lines[i].text);
  return s;
}

void parity_chat_free(parity_chat *c) {
  for (size_t i = 0; i < c->n; i++) free(c->lines[i].text);
  c->n = 0;
}

/* ---- the table ---- */

static char *trimmed(const char *s, size_t n) {
  while (n && (*s == ' ')) s++, n--;
  while (n && (s[n - 1] == ' ')) n--;
  char *out = malloc(n + 1);
  if (out) memcpy(out, s, n), out[n] = '\0';
  return out;
}

/* The cells of one "| a | b |" line into cells (at most cap); the count. */
static size_t split_row(const char *line, char **cells, size_t cap) {
  size_t n = 0;
  const char *p = strchr(line, '|');
  while (p && n < cap) {
    const char *q = strchr(p + 1, '|');
    if (!q) break;
    cells[n++] = trimmed(p + 1, (size_t)(q - p - 1));
    p = q;
  }
  return n;
}

static int feature_of(const char *cell) {
  for (int f = 0; f < PF_COUNT; f++)
    if (!strncmp(cell, feature_names[f], strlen(feature_names[f]))) return f;
  return -1;
}

/* The rows after the header and its separator line; 0 or -1 (the test failed). */
static int read_rows(char *p, parity_table *t, const char *path) {
  int seen[PF_COUNT] = {0};
  for (char *nl; *p == '|'; p = nl + 1) {
    nl = strchr(p, '\n');
    if (nl) *nl = '\0';
    char *cells[PARITY_MAX_DOORS + 1] = {0};
    size_t n = split_row(p, cells, PARITY_MAX_DOORS + 1);
    int f = n ? feature_of(cells[0]) : -1;
    if (f < 0 || n != t->n_doors + 1 || seen[f]++) {
      unit_fail_(__FILE__, __LINE__, "%s: parity row '%s': unknown, repeated or not %zu cells", path, p,
                 t->n_doors + 1);
      for (size_t i = 0; i < n; i++) free(cells[i]);
      return -1;
    }
    free(cells[0]);
    for (size_t d = 0; d < t->n_doors; d++) t->cells[f][d] = cells[d + 1];
    if (!nl) break;
  }
  for (int f = 0; f < PF_COUNT; f++)
    if (!seen[f]) return unit_fail_(__FILE__, __LINE__, "%s: no parity row for %s", path, feature_names[f]), -1;
  return 0;
}

int parity_table_load(const char *path, parity_table *t) {
  memset(t, 0, sizeof *t);
  char *md = unit_read_file(path);
  char *sec = md ? strstr(md, "\n## Parity: features × doors\n") : NULL;
  char *head = sec ? strstr(sec, "\n|") : NULL;
  char *sep = head ? strchr(head + 1, '\n') : NULL;
  char *rows = sep ? strchr(sep + 1, '\n') : NULL;
  int rc = -1;
  if (!rows) {
    unit_fail_(__FILE__, __LINE__, "%s: no table under \"## Parity: features × doors\"", path);
  } else {
    *sep = '\0';
    char *cells[PARITY_MAX_DOORS + 1] = {0};
    size_t n = split_row(head + 1, cells, PARITY_MAX_DOORS + 1);
    free(n ? cells[0] : NULL);
    for (size_t i = 1; i < n; i++) t->doors[t->n_doors++] = cells[i];
    rc = read_rows(rows + 1, t, path);
  }
  free(md);
  return rc;
}

void parity_table_free(parity_table *t) {
  for (size_t d = 0; d < t->n_doors; d++) {
    free(t->doors[d]);
    for (int f = 0; f < PF_COUNT; f++) free(t->cells[f][d]);
  }
  memset(t, 0, sizeof *t);
}

/* ---- the check ---- */

int parity_same_lines(const parity_chat *a, const parity_chat *b, unsigned want, unsigned skip) {
  size_t i = 0, j = 0;
  for (;;) {
    while (i < a->n && (!(a->lines[i].tags & want) || (a->lines[i].tags & skip))) i++;
    while (j < b->n && (!(b->lines[j].tags & want) || (b->lines[j].tags & skip))) j++;
    if (i == a->n || j == b->n) return i == a->n && j == b->n;
    if (strcmp(a->lines[i++].text, b->lines[j++].text)) return 0;
  }
}

/* The reason a refused cell quotes, into out (cap bytes); 0, or -1 when it quotes none. */
static int quoted(const char *cell, char *out, size_t cap) {
  const char *q = strchr(cell, '"'), *e = q ? strchr(q + 1, '"') : NULL;
  if (!e || e == q + 1) return -1;
  snprintf(out, cap, "%.*s", (int)(e - q - 1), q + 1);
  return 0;
}

/* One cell of door's column against what the door did (refused: the features the door refuses); the
 * failures. */
static int check_cell(const char *door, int f, const char *cell, unsigned refused, const parity_chat *ref,
                      const parity_chat *got, const char *said) {
  const char *name = feature_names[f];
  unsigned bit = 1u << f;
  char reason[256];
  if (!strcmp(cell, "same")) {
    if (parity_same_lines(ref, got, bit, refused)) return 0;
    unit_fail_(__FILE__, __LINE__, "%s: %s: the table says same, the stored chat differs", door, name);
    return 1;
  }
  if (!(refused & bit)) {
    unit_fail_(__FILE__, __LINE__, "%s: %s: a cell is 'same' or 'refused: \"reason\"', not '%s'", door, name, cell);
    return 1;
  }
  int failures = 0;
  if (parity_same_lines(ref, got, bit, 0))
    failures++, unit_fail_(__FILE__, __LINE__, "%s: %s: the table says refused, the door did it", door, name);
  if (quoted(cell, reason, sizeof reason))
    failures++, unit_fail_(__FILE__, __LINE__, "%s: %s: a refusal quotes no reason: %s", door, name, cell);
  else if (!said || !strstr(said, reason))
    failures++, unit_fail_(__FILE__, __LINE__, "%s: %s: the door never said \"%s\"", door, name, reason);
  return failures;
}

int parity_check(const parity_table *t, const char *door, const parity_chat *ref, const parity_chat *got,
                 const char *said) {
  size_t d = 0;
  while (d < t->n_doors && strcmp(t->doors[d], door)) d++;
  if (d == t->n_doors) return unit_fail_(__FILE__, __LINE__, "the parity table has no column '%s'", door), 1;
  unsigned refused = 0;
  for (int f = 0; f < PF_COUNT; f++)
    if (!strncmp(t->cells[f][d], "refused:", 8)) refused |= 1u << f;
  int failures = 0;
  for (int f = 0; f < PF_COUNT; f++) failures += check_cell(door, f, t->cells[f][d], refused, ref, got, said);
  if (!parity_same_lines(ref, got, ~0u, refused))
    failures++, unit_fail_(__FILE__, __LINE__, "%s: lines of no refused feature differ", door);
  if (failures) {
    char *a = parity_chat_text(ref), *b = parity_chat_text(got);
    fprintf(stderr, "  reference (run):\n%s  %s:\n%s", a ? a : "", door, b ? b : "");
    free(a), free(b);
  }
  return failures;
}
