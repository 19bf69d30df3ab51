/* Prompt building (see prompt.h): the memory window as chat messages, and the system prompt with the
 * instructions an agent's tools need. */
#include "agents/prompt.h"

#include "agents/tools.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int prompt_build(const char *system_prompt, const char *self_id, ag_msg *const *memory, size_t n, int window,
                 llm_message **out, size_t *n_out, char **arena) {
  size_t first = (window > 0 && n > (size_t)window) ? n - (size_t)window : 0;
  size_t count = (system_prompt ? 1 : 0) + (n - first);
  size_t bytes = 1;
  for (size_t i = first; i < n; i++) bytes += strlen(memory[i]->sender) + strlen(memory[i]->text) + 3;
  llm_message *msgs = calloc(count ? count : 1, sizeof *msgs);
  char *buf = malloc(bytes);
  if (!msgs || !buf) {
    free(msgs);
    free(buf);
    return AG_ERR_NOMEM;
  }
  size_t k = 0, pos = 0;
  if (system_prompt) msgs[k++] = (llm_message){.role = "system", .content = system_prompt};
  int user_seen = 0;
  for (size_t i = first; i < n; i++) {
    const ag_msg *m = memory[i];
    /* The agent's own replies go back as the assistant's words; everyone else is named so the
     * model always knows who said what. A window that slid onto the agent's own reply would open on
     * an assistant turn, which Anthropic and Gemini reject: such leading replies are folded into user
     * turns, named like everyone else's, so nothing in the window is lost. */
    if (strcasecmp(m->sender, self_id) == 0 && m->kind != AG_KIND_HUMAN && user_seen) {
      msgs[k++] = (llm_message){.role = "assistant", .content = m->text};
    } else {
      char *p = buf + pos;
      size_t sl = strlen(m->sender), tl = strlen(m->text);
      memcpy(p, m->sender, sl);
      memcpy(p + sl, ": ", 2);
      memcpy(p + sl + 2, m->text, tl + 1);
      pos += sl + tl + 3;
      msgs[k++] = (llm_message){.role = "user", .content = p};
      user_seen = 1;
    }
  }
  *out = msgs;
  *n_out = k;
  *arena = buf;
  return AG_OK;
}

/* The inline-context instruction with the context itself (caller frees). */
static char *inline_instruction(const context_state *ctx) {
  cJSON *j = context_to_json(ctx);
  char *cj = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  size_t n = strlen(TOOL_INLINE_INSTRUCTION) + (cj ? strlen(cj) : 0) + 32;
  char *out = malloc(n);
  if (out) snprintf(out, n, "%s\nContext: %s", TOOL_INLINE_INSTRUCTION, cj ? cj : "{}");
  free(cj);
  return out;
}

char *prompt_system(const char *system_prompt, const prompt_tools *t) {
  const char *base = system_prompt ? system_prompt : "";
  char *ctx = NULL;
  const char *extra = NULL;
  if (t->monadic && t->tool_support) {
    extra = TOOL_MONADIC_INSTRUCTION;
  } else if (t->inline_context) {
    extra = ctx = inline_instruction(t->ctx);
  }
  if (!extra) {
    free(ctx);
    return system_prompt ? strdup(base) : NULL;
  }
  size_t n = strlen(base) + strlen(extra) + 3;
  char *out = malloc(n);
  if (out) snprintf(out, n, "%s%s%s", base, base[0] ? "\n\n" : "", extra);
  free(ctx);
  return out;
}
