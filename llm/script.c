/* The built-in offline provider: the agent's n-th call answers with replies[n] from the world file,
 * cycling, from a later loop iteration. With streaming on, the reply arrives word by word, one chunk
 * per loop round, exactly like a real streaming provider would deliver it. */
#include "llm/provider.h"

#include "common/defer.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct script_call {
  char *text;
  size_t len, pos;
} script_call;

static void script_step(void *arg) {
  llm_call *call = arg;
  script_call *sc = call->impl;
  if (call->ep && call->ep->cfg.stream && sc->pos < sc->len) {
    /* One word and the white space after it per round. */
    size_t end = sc->pos;
    while (end < sc->len && sc->text[end] != ' ' && sc->text[end] != '\n') end++;
    while (end < sc->len && (sc->text[end] == ' ' || sc->text[end] == '\n')) end++;
    llm_call_chunk(call, sc->text + sc->pos, end - sc->pos);
    sc->pos = end;
    if (sc->pos < sc->len) {
      if (ag_defer_push(call->client->defer, script_step, call) == AG_OK) return;
    }
  }
  llm_call_finish(call, AG_OK, sc->text, NULL);
}

static int script_start(llm_call *call, const llm_request *req) {
  (void)req;
  llm_endpoint *e = call->ep;
  script_call *sc = calloc(1, sizeof *sc);
  if (!sc) return AG_ERR_NOMEM;
  if (e->cfg.n_replies) {
    const char *entry = e->cfg.replies[e->script_next % e->cfg.n_replies];
    e->script_next++;
    if (entry[0] == LLM_SCRIPT_TOOL_MARK) {
      /* A scripted tool call: the reply carries the call (and any text), as a model's would. */
      cJSON *j = cJSON_Parse(entry + 1);
      const cJSON *args = cJSON_GetObjectItemCaseSensitive(j, "args");
      const cJSON *text = cJSON_GetObjectItemCaseSensitive(j, "text");
      char *args_json = args ? cJSON_PrintUnformatted(args) : NULL;
      int rc = llm_call_add_tool_call(call, NULL, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "tool")),
                                      args_json ? args_json : "{}", NULL);
      sc->text = strdup(cJSON_IsString(text) ? text->valuestring : "");
      free(args_json);
      cJSON_Delete(j);
      if (rc) {
        free(sc->text);
        free(sc);
        return rc;
      }
    } else {
      sc->text = strdup(entry);
    }
  } else {
    const char *name = e->cfg.agent_name ? e->cfg.agent_name : "agent";
    size_t n = strlen(name) + 32;
    sc->text = malloc(n);
    if (sc->text) snprintf(sc->text, n, "(%s has nothing to say)", name);
  }
  if (!sc->text) {
    free(sc);
    return AG_ERR_NOMEM;
  }
  sc->len = strlen(sc->text);
  call->impl = sc;
  return ag_defer_push(call->client->defer, script_step, call);
}

static void script_cancel(llm_call *call) {
  script_call *sc = call->impl;
  call->impl = NULL;
  if (sc) free(sc->text);
  free(sc);
}

const llm_provider_ops llm_script_ops = {script_start, script_cancel};
