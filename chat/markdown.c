/* Snapshots as Markdown (see markdown.h). Pure text building over the snapshot's JSON: message texts
 * are written as they are (agents write Markdown); names and settings are written as code where they
 * could hold Markdown syntax. */
#include "chat/markdown.h"

#include "common/buf.h"

#include <stdlib.h>
#include <string.h>

#define MD_CAP (256u << 20)

static const char *str(const cJSON *o, const char *key) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
  return s ? s : "";
}

/* Text as a block quote, every line prefixed. */
static void quote(ag_buf *b, const char *text) {
  ag_buf_appends(b, "> ");
  for (const char *p = text; *p; p++) {
    if (*p == '\n') ag_buf_appends(b, "\n> ");
    else ag_buf_append(b, p, 1);
  }
  ag_buf_appends(b, "\n\n");
}

static void world_settings(ag_buf *b, const cJSON *w) {
  const cJSON *main_agent = cJSON_GetObjectItemCaseSensitive(w, "main_agent");
  ag_buf_printf(b, "## World: %s\n\n", str(w, "name"));
  if (*str(w, "description")) ag_buf_printf(b, "%s\n\n", str(w, "description"));
  ag_buf_printf(b, "- turn limit: %d\n- memory window: %d\n- main agent: %s\n",
                (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(w, "turn_limit")),
                (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(w, "memory_window")),
                cJSON_IsString(main_agent) ? main_agent->valuestring : "none");
  const cJSON *clock = cJSON_GetObjectItemCaseSensitive(w, "clock");
  if (clock) {
    ag_buf_printf(b, "- clock: %s", str(clock, "mode"));
    if (*str(clock, "start")) ag_buf_printf(b, ", from %s", str(clock, "start"));
    if (*str(clock, "until")) ag_buf_printf(b, ", until %s", str(clock, "until"));
    ag_buf_appends(b, "\n");
  }
  const cJSON *v;
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(w, "variables"))
    ag_buf_printf(b, "- variable `%s`: %s\n", v->string, cJSON_GetStringValue(v));
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(w, "schedule")) {
    const char *when = cJSON_GetObjectItemCaseSensitive(v, "cron") ? "cron" : cJSON_GetObjectItemCaseSensitive(v, "every") ? "every" : "at";
    ag_buf_printf(b, "- schedule (%s `%s`, from %s): %s\n", when, str(v, when), str(v, "from"), str(v, "text"));
  }
  ag_buf_appends(b, "\n### Agents\n\n");
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(w, "agents")) {
    ag_buf_printf(b, "#### %s\n\n- provider: %s\n", str(v, "name"), str(v, "provider"));
    if (*str(v, "model")) ag_buf_printf(b, "- model: `%s`\n", str(v, "model"));
    ag_buf_appends(b, "\n");
    if (*str(v, "system_prompt")) quote(b, str(v, "system_prompt"));
  }
}

/* The built document with one newline at its end, not a blank line. */
static char *md_take(ag_buf *b) {
  char *doc = ag_buf_take(b);
  size_t n = doc ? strlen(doc) : 0;
  if (n > 1 && doc[n - 2] == '\n') doc[n - 1] = 0;
  return doc;
}

char *markdown_world(const cJSON *world) {
  ag_buf b;
  ag_buf_init(&b, MD_CAP);
  world_settings(&b, world);
  return md_take(&b);
}

/* A thread event: tool steps as <details>, anything else as a quiet line. */
static void event(ag_buf *b, const cJSON *e) {
  const char *type = str(e, "type");
  int call = !strcmp(type, "tool-call");
  if (call || !strcmp(type, "tool-result")) {
    const cJSON *body = cJSON_GetObjectItemCaseSensitive(e, call ? "args" : "result");
    char *json = body ? cJSON_Print(body) : NULL;
    ag_buf_printf(b, "<details><summary>%s %s: <code>%s</code>%s</summary>\n\n```json\n%s\n```\n\n</details>\n\n",
                  str(e, "agent"), call ? "calls" : "got the result of", str(e, "tool"),
                  cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "error")) ? " (error)" : "", json ? json : "null");
    free(json);
    return;
  }
  ag_buf_printf(b, "_%s", type);
  if (*str(e, "agent")) ag_buf_printf(b, " (%s)", str(e, "agent"));
  if (*str(e, "error")) ag_buf_printf(b, ": %s", str(e, "error"));
  ag_buf_appends(b, "_\n\n");
}

char *markdown_chat(const cJSON *snap) {
  ag_buf b;
  ag_buf_init(&b, MD_CAP);
  const cJSON *chat = cJSON_GetObjectItemCaseSensitive(snap, "chat");
  ag_buf_printf(&b, "# %s\n\n- chat: `%s`\n- messages: %d\n- created: %s\n- updated: %s\n\n", str(chat, "title"),
                str(chat, "id"), (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(chat, "message_count")),
                str(chat, "created_at"), str(chat, "updated_at"));
  world_settings(&b, cJSON_GetObjectItemCaseSensitive(snap, "world"));
  ag_buf_appends(&b, "## Transcript\n\n");
  const cJSON *ev = cJSON_GetObjectItemCaseSensitive(snap, "thread");
  ev = cJSON_IsArray(ev) ? ev->child : NULL;
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(snap, "messages")) {
    double seq = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "seq"));
    for (; ev && cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "after_seq")) < seq; ev = ev->next) event(&b, ev);
    ag_buf_printf(&b, "### %s\n\n<sub>#%.0f · %s · %s", str(m, "sender"), seq, str(m, "kind"), str(m, "ts"));
    if (*str(m, "sim_time")) ag_buf_printf(&b, " · simulated %s", str(m, "sim_time"));
    ag_buf_printf(&b, "</sub>\n\n%s\n\n", str(m, "text"));
  }
  for (; ev; ev = ev->next) event(&b, ev);
  return md_take(&b);
}
