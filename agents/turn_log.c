/* The turn log (see turn_log.h): an array of prompt messages that owns its strings. */
#include "agents/turn_log.h"

#include <stdlib.h>
#include <string.h>

void turn_log_clear(turn_log *l) {
  for (size_t i = 0; i < l->n; i++) {
    llm_message *m = &l->msgs[i];
    free((char *)m->content);
    free((char *)m->tool_call_id);
    free((char *)m->tool_name);
    for (size_t k = 0; k < m->n_tool_calls; k++) {
      free(m->tool_calls[k].id);
      free(m->tool_calls[k].name);
      free(m->tool_calls[k].args_json);
      free(m->tool_calls[k].signature);
    }
    free((llm_tool_call *)m->tool_calls);
  }
  l->n = 0;
}

void turn_log_free(turn_log *l) {
  turn_log_clear(l);
  free(l->msgs);
  *l = (turn_log){0};
}

static llm_message *log_add(turn_log *l) {
  if (l->n == l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 8;
    llm_message *p = realloc(l->msgs, ncap * sizeof *p);
    if (!p) return NULL;
    l->msgs = p;
    l->cap = ncap;
  }
  llm_message *m = &l->msgs[l->n++];
  memset(m, 0, sizeof *m);
  return m;
}

static char *dup0(const char *s) { return s ? strdup(s) : NULL; }

int turn_log_add_calls(turn_log *l, const char *text, const llm_tool_call *calls, size_t n) {
  llm_message *m = log_add(l);
  if (!m) return AG_ERR_NOMEM;
  m->role = "assistant";
  m->content = text && text[0] ? strdup(text) : NULL;
  llm_tool_call *c = calloc(n, sizeof *c);
  if (!c) return AG_ERR_NOMEM;
  for (size_t i = 0; i < n; i++) {
    c[i].id = dup0(calls[i].id);
    c[i].name = dup0(calls[i].name);
    c[i].args_json = dup0(calls[i].args_json);
    c[i].signature = dup0(calls[i].signature);
  }
  m->tool_calls = c;
  m->n_tool_calls = n;
  return AG_OK;
}

int turn_log_add_result(turn_log *l, const llm_tool_call *call, const char *result) {
  llm_message *m = log_add(l);
  if (!m) return AG_ERR_NOMEM;
  m->role = "tool";
  m->content = strdup(result);
  m->tool_call_id = dup0(call->id);
  m->tool_name = dup0(call->name);
  return m->content ? AG_OK : AG_ERR_NOMEM;
}
