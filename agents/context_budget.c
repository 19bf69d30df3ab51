/* The prompt's size by estimate (see context_budget.h). */
#include "agents/context_budget.h"

#include <string.h>

size_t context_budget_tokens(size_t bytes) { return (bytes + 3) / 4; }

static size_t str_len(const char *s) { return s ? strlen(s) : 0; }

size_t context_budget_request(const llm_message *msgs, size_t n, const llm_tool *tools, size_t n_tools) {
  size_t tokens = 0;
  for (size_t i = 0; i < n; i++) {
    const llm_message *m = &msgs[i];
    size_t bytes = str_len(m->content) + str_len(m->tool_name);
    for (size_t c = 0; c < m->n_tool_calls; c++)
      bytes += str_len(m->tool_calls[c].name) + str_len(m->tool_calls[c].args_json);
    tokens += context_budget_tokens(bytes) + CONTEXT_BUDGET_PER_MESSAGE;
  }
  for (size_t i = 0; i < n_tools; i++)
    tokens += context_budget_tokens(str_len(tools[i].name) + str_len(tools[i].description) +
                                    str_len(tools[i].parameters_json));
  return tokens;
}

size_t context_budget_entry(const ag_msg *m) {
  return context_budget_tokens(strlen(m->sender) + 2 + strlen(m->text)) + CONTEXT_BUDGET_PER_MESSAGE;
}

int context_budget_window(size_t budget, size_t fixed, ag_msg *const *memory, size_t n, int window) {
  size_t want = (window > 0 && (size_t)window < n) ? (size_t)window : n;
  size_t used = fixed, w = 0;
  while (w < want) {
    size_t cost = context_budget_entry(memory[n - 1 - w]);
    if (w > 0 && used + cost > budget) break; /* the newest goes whatever it costs */
    used += cost;
    w++;
  }
  return (int)w;
}
