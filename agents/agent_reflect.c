/* Reflection (docs/memory.md): when the importance of the memories added since the last reflection passes
 * `reflect_at`, the turn's first call is preceded by one to the agent's own LLM asking for a few high-level
 * insights about those memories. Each insight becomes a note citing the memories it came from, and the
 * whole reflection a `reflection` event that the chat's thread stores, so that a restore adds the notes
 * again. The turn then goes on as it would have; a failed reflection is an llm-error and the turn goes on. */
#include "agents/agent_int.h"

#include "common/buf.h"
#include "common/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REFLECT_RECENT 100 /* memories shown to the reflection, newest */
#define REFLECT_INSIGHTS 5 /* insights kept of one reflection */
#define REFLECT_IMPORTANCE 8.0

static const char reflect_ask[] =
    "Above are your memories since you last reflected, numbered. What are at most three high-level insights "
    "you can infer from them? Answer one per line, each followed by the numbers of the memories it comes from "
    "in parentheses, like: The farmers depend on the bridge (1, 4)";

/* The first recent memory shown (the newest REFLECT_RECENT of those since the last reflection). */
static size_t recent_from(const agent *a) { return a->stream.n > REFLECT_RECENT ? a->stream.n - REFLECT_RECENT : 0; }

/* The memories as "[k] (time) sender: text" lines, then the question (caller frees). */
static char *reflect_prompt(const agent *a) {
  ag_buf b;
  ag_buf_init(&b, 1u << 20);
  for (size_t i = recent_from(a), k = 1; i < a->stream.n; i++, k++) {
    const mem_entry *e = &a->stream.e[i];
    char when[AG_TIME_LEN];
    ag_time_format(e->at_ms, when, sizeof when);
    if (ag_buf_printf(&b, "[%zu] (%s) %s: %s\n", k, when, e->msg->sender, e->msg->text)) break;
  }
  if (ag_buf_printf(&b, "\n%s", reflect_ask)) {
    ag_buf_free(&b);
    return NULL;
  }
  return ag_buf_take(&b);
}

/* One answer line into {"text", "sources": [seq...]} (NULL for a line with no insight). The numbers in the
 * last parentheses name recent memories; a note cites no seq (0 is left out). */
static cJSON *insight_of(const agent *a, const char *line, size_t len) {
  while (len && (line[len - 1] == ' ' || line[len - 1] == '\r')) len--;
  while (len && (*line == ' ' || *line == '-' || *line == '*')) line++, len--;
  const char *open = NULL;
  for (size_t i = 0; i < len; i++)
    if (line[i] == '(') open = line + i;
  size_t text_len = open && line[len - 1] == ')' ? (size_t)(open - line) : len;
  while (text_len && line[text_len - 1] == ' ') text_len--;
  if (!text_len) return NULL;
  cJSON *o = cJSON_CreateObject();
  char *text = strndup(line, text_len);
  cJSON_AddStringToObject(o, "text", text ? text : "");
  free(text);
  cJSON *src = cJSON_AddArrayToObject(o, "sources");
  size_t first = recent_from(a), shown = a->stream.n - first;
  for (const char *p = open && text_len < len ? open + 1 : line + len; p < line + len; p++) {
    if (*p < '0' || *p > '9') continue;
    unsigned long k = strtoul(p, (char **)&p, 10);
    p--;
    uint64_t seq = k >= 1 && k <= shown ? a->stream.e[first + k - 1].msg->seq : 0;
    if (seq) cJSON_AddItemToArray(src, cJSON_CreateNumber((double)seq));
  }
  cJSON_AddNumberToObject(o, "importance", REFLECT_IMPORTANCE);
  return o;
}

/* The insights of reply text as a JSON array (caller deletes), at most REFLECT_INSIGHTS. */
static cJSON *insights_of(const agent *a, const char *text) {
  cJSON *arr = cJSON_CreateArray();
  for (const char *p = text; arr && *p && cJSON_GetArraySize(arr) < REFLECT_INSIGHTS;) {
    size_t n = strcspn(p, "\n");
    cJSON *o = insight_of(a, p, n);
    if (o) cJSON_AddItemToArray(arr, o);
    p += n + (p[n] == '\n');
  }
  return arr;
}

int agent_memory_reflection(agent *a, const cJSON *insights, int64_t at_ms) {
  for (const cJSON *o = insights ? insights->child : NULL; o; o = o->next) {
    const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "text"));
    double imp = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "importance"));
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "sources");
    uint64_t seqs[REFLECT_RECENT];
    size_t n = 0;
    for (const cJSON *s = cJSON_IsArray(src) ? src->child : NULL; s && n < REFLECT_RECENT; s = s->next)
      if (cJSON_IsNumber(s) && s->valuedouble >= 1) seqs[n++] = (uint64_t)s->valuedouble;
    int rc = text ? agent__note_add(a, text, imp >= 1 && imp <= 10 ? imp : REFLECT_IMPORTANCE, at_ms, seqs, n) : AG_OK;
    if (rc) return rc;
  }
  a->stream.since_reflect = 0; /* the notes themselves do not count toward the next one */
  return AG_OK;
}

void agent_memory_recount(agent *a, size_t from) {
  double sum = 0;
  for (size_t i = from; i < a->stream.n; i++) sum += a->stream.e[i].importance;
  a->stream.since_reflect = sum;
}

static void reflect_done(void *ud, int err, const char *text, const llm_error_info *info) {
  agent *a = ud;
  agent__memory_call_done(a, err, text, info);
  cJSON *insights = err ? NULL : insights_of(a, text);
  int64_t at = a->answering->has_sim ? a->answering->sim_ms : a->answering->ts_ms;
  char *json = insights ? cJSON_PrintUnformatted(insights) : NULL;
  if (json && !agent_memory_reflection(a, insights, at) && a->host->report) {
    agent_report ev = {.kind = AGENT_REPORT_REFLECTION, .text = json, .len = strlen(json), .at_ms = at,
                       .seq = a->answering->seq};
    a->host->report(a->host->ctx, a, &ev);
  }
  free(json);
  cJSON_Delete(insights);
  agent__turn_go(a); /* the turn's own call, as if nothing had come before it */
}

int agent__reflect_begin(agent *a) {
  const mem_config *c = &a->s.memory;
  if (agent__embed_begin(a)) return 1; /* the vectors first: a hosted embedder's, this turn's question's */
  if (agent__rate_begin(a)) return 1; /* the ratings first: a reflection counts their importance */
  if (c->mode != MEM_MODE_STREAM || c->reflect_at <= 0 || a->stream.since_reflect < c->reflect_at || a->rounds ||
      a->tlog.n || !a->answering)
    return 0;
  a->stream.since_reflect = 0; /* asked once, whatever comes of it */
  char *ask = reflect_prompt(a);
  llm_message msgs[2] = {{.role = "system", .content = a->s.system_prompt ? a->s.system_prompt : "You reflect."},
                         {.role = "user", .content = ask}};
  llm_request req = {.messages = msgs, .n_messages = 2};
  llm_callbacks cb = {NULL, reflect_done};
  int rc = ask ? llm_call_start(a->llm, &req, &cb, a, &a->call) : AG_ERR_NOMEM;
  free(ask);
  if (rc) {
    a->call = NULL;
    return 0; /* no reflection this time; the turn goes on */
  }
  agent__set_phase(a, AGENT_REMEMBERING);
  return 1;
}
