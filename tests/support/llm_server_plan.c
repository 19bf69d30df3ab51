/* The loopback LLM server's plans (see llm_server_int.h): the mock directives of a rule, a system
 * prompt or a user message ("[[mock reply=... chunk=4]]") parsed into what the reply does. */
#include "support/llm_server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lsrv_plan_init(plan *p) {
  memset(p, 0, sizeof *p);
  p->retry_after = p->retry_after_ms = -1;
  p->stall = p->reset = -1;
}

void lsrv_plan_free(plan *p) {
  free(p->reply);
  free(p->error_type);
  free(p->error_message);
  free(p->error_code);
  free(p->midstream_error);
  free(p->bad_body);
  for (int i = 0; i < SRV_MAX_CALLS; i++) {
    free(p->tool[i]);
    free(p->args[i]);
  }
  free(p->after_tool);
}

/* "tool", "tool2", ..., "tool8" (base "tool") → 0..7; -1 for any other key. */
static int call_slot(const char *k, const char *base) {
  size_t n = strlen(base);
  if (strncmp(k, base, n) != 0) return -1;
  if (!k[n]) return 0;
  return k[n] >= '2' && k[n] <= '0' + SRV_MAX_CALLS && !k[n + 1] ? k[n] - '1' : -1;
}

int lsrv_n_calls(const plan *p) {
  int n = 0;
  for (int i = 0; i < SRV_MAX_CALLS; i++) n += p->tool[i] != NULL;
  return n;
}

void lsrv_set_str(char **dst, const char *v) {
  free(*dst);
  *dst = strdup(v);
}

static int plan_set(plan *p, const char *k, const char *v) {
  long n = strtol(v, NULL, 10);
  if (!strcmp(k, "reply")) lsrv_set_str(&p->reply, v);
  else if (!strcmp(k, "echo")) p->echo = (int)n;
  else if (!strcmp(k, "latency")) p->latency = n;
  else if (!strcmp(k, "delay")) p->delay = n;
  else if (!strcmp(k, "chunk")) p->chunk = n;
  else if (!strcmp(k, "split")) p->split = n;
  else if (!strcmp(k, "merge")) p->merge = (int)n;
  else if (!strcmp(k, "no_usage")) p->no_usage = (int)n;
  else if (!strcmp(k, "status")) p->status = n;
  else if (!strcmp(k, "error_type")) lsrv_set_str(&p->error_type, v);
  else if (!strcmp(k, "error_message")) lsrv_set_str(&p->error_message, v);
  else if (!strcmp(k, "error_code")) lsrv_set_str(&p->error_code, v);
  else if (!strcmp(k, "retry_after")) p->retry_after = n;
  else if (!strcmp(k, "retry_after_ms")) p->retry_after_ms = n;
  else if (!strcmp(k, "times")) p->times = n;
  else if (!strcmp(k, "stall")) p->stall = n;
  else if (!strcmp(k, "reset")) p->reset = n;
  else if (!strcmp(k, "malformed")) p->malformed = (int)n;
  else if (!strcmp(k, "oversize")) p->oversize = n;
  else if (!strcmp(k, "midstream_error")) lsrv_set_str(&p->midstream_error, v);
  else if (!strcmp(k, "body")) lsrv_set_str(&p->bad_body, v);
  else if (call_slot(k, "tool") >= 0) lsrv_set_str(&p->tool[call_slot(k, "tool")], v);
  else if (call_slot(k, "args") >= 0) lsrv_set_str(&p->args[call_slot(k, "args")], v);
  else if (!strcmp(k, "args_chunk")) p->args_chunk = n;
  else if (!strcmp(k, "after_tool")) lsrv_set_str(&p->after_tool, v);
  else if (!strcmp(k, "after_tool_stall")) p->after_tool_stall = n;
  else if (!strcmp(k, "endless")) p->endless = (int)n;
  else if (!strcmp(k, "drip")) p->drip = n;
  else if (!strcmp(k, "redirect")) p->redirect = (int)n;
  else if (!strcmp(k, "headers")) p->pad_headers = n;
  else if (!strcmp(k, "gzip")) p->gzip = n;
  else if (!strcmp(k, "error_pct")) p->error_pct = n;
  else if (!strcmp(k, "stall_pct")) p->stall_pct = n;
  else return -1;
  return 0;
}

/* Parses "key=value ..." from s up to its end or "]]"; *end (may be NULL) gets where it stopped. */
int lsrv_plan_parse(plan *p, const char *s, const char **end) {
  int rc = 0;
  for (;;) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    if (!*s || (s[0] == ']' && s[1] == ']')) break;
    char key[64];
    size_t k = 0;
    while ((*s >= 'a' && *s <= 'z') || *s == '_' || (k && *s >= '0' && *s <= '9')) {
      if (k + 1 < sizeof key) key[k++] = *s;
      s++;
    }
    key[k] = '\0';
    if (!k) return -1;
    ag_buf v;
    ag_buf_init(&v, SRV_BIG);
    if (*s == '=') {
      s++;
      if (*s == '"') {
        s++;
        while (*s && *s != '"') {
          char c = *s++;
          if (c == '\\' && *s) {
            c = *s++;
            if (c == 'n') c = '\n';
          }
          ag_buf_append(&v, &c, 1);
        }
        if (*s == '"') s++;
      } else {
        const char *b = s;
        while (*s && *s != ' ' && *s != '\t' && *s != '\n' && !(s[0] == ']' && s[1] == ']')) s++;
        ag_buf_append(&v, b, (size_t)(s - b));
      }
    } else {
      ag_buf_appends(&v, "1");
    }
    if (plan_set(p, key, ag_buf_str(&v))) rc = -1;
    ag_buf_free(&v);
  }
  if (end) *end = s;
  return rc;
}

/* Applies the first directive in text; appends its raw text to key. */
void lsrv_plan_from_text(plan *p, const char *text, ag_buf *key) {
  const char *d = text ? strstr(text, "[[mock") : NULL;
  if (!d) return;
  const char *end = NULL;
  lsrv_plan_parse(p, d + 6, &end);
  ag_buf_append(key, d, (size_t)(end - d));
  ag_buf_appends(key, "|");
}
