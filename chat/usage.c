/* Token usage per agent (see usage.h). */
#include "chat/usage.h"

#include "chat/transcript.h"

#include <stdio.h>
#include <string.h>

typedef struct usage_ctx {
  chat_usage_row *rows;
  size_t n;
} usage_ctx;

static int usage_cb(const chat_entry *e, void *arg) {
  usage_ctx *u = arg;
  if (e->msg || e->kind != EV_LLM_DONE) return 0;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(e->fields, "agent");
  const char *agent = cJSON_IsString(a) ? a->valuestring : "?";
  size_t i = 0;
  while (i < u->n && strcmp(u->rows[i].agent, agent)) i++;
  if (i == u->n) {
    if (u->n == CHAT_USAGE_ROWS) i = u->n - 1;
    else snprintf(u->rows[u->n++].agent, sizeof u->rows[0].agent, "%s", agent);
  }
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(e->fields, "input_tokens");
  const cJSON *out = cJSON_GetObjectItemCaseSensitive(e->fields, "output_tokens");
  u->rows[i].input_tokens += cJSON_IsNumber(in) ? in->valuedouble : 0;
  u->rows[i].output_tokens += cJSON_IsNumber(out) ? out->valuedouble : 0;
  u->rows[i].calls++;
  return 0;
}

int chat_usage(store *st, const char *chat_id, chat_usage_row rows[CHAT_USAGE_ROWS], size_t *n, ag_errmsg *em) {
  usage_ctx u = {.rows = rows, .n = 0};
  memset(rows, 0, CHAT_USAGE_ROWS * sizeof *rows);
  int rc = chat_transcript_each(st, chat_id, usage_cb, &u, em);
  *n = u.n;
  return rc;
}
