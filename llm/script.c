/* The built-in offline provider: the n-th call answers with replies[n] from its options (the world file),
 * cycling, from a later loop iteration. With streaming on, the reply arrives word by word, one chunk
 * per loop round, exactly like a real streaming provider would deliver it. */
#include "llm/provider.h"

#include "common/defer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct script_call {
  char *text;
  size_t len, pos;
  ag_defer_ticket step; /* the queued step, cancelled with the call */
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
      if (ag_defer_push(call->client->defer, script_step, call, &sc->step) == AG_OK) return;
    }
  }
  llm_call_finish(call, AG_OK, sc->text, NULL);
}

static char *dup_opt(const char *s, int *failed) {
  char *d = s ? strdup(s) : NULL;
  if (s && !d) *failed = 1;
  return d;
}

int llm_script_options_copy(llm_script_options *dst, const llm_script_options *src) {
  int failed = 0;
  *dst = (llm_script_options){0};
  dst->fallback = dup_opt(src->fallback, &failed);
  if (src->n_replies) {
    dst->replies = calloc(src->n_replies, sizeof *dst->replies);
    if (!dst->replies) failed = 1;
    for (size_t i = 0; dst->replies && i < src->n_replies; i++) {
      const llm_script_reply *r = &src->replies[i];
      dst->replies[i] = (llm_script_reply){dup_opt(r->text, &failed), dup_opt(r->tool, &failed),
                                           dup_opt(r->args_json, &failed)};
      dst->n_replies = i + 1;
    }
  }
  if (!failed) return AG_OK;
  llm_script_options_free(dst);
  return AG_ERR_NOMEM;
}

void llm_script_options_free(llm_script_options *o) {
  for (size_t i = 0; i < o->n_replies; i++) {
    free(o->replies[i].text);
    free(o->replies[i].tool);
    free(o->replies[i].args_json);
  }
  free(o->replies);
  free(o->fallback);
  *o = (llm_script_options){0};
}

static int script_start(llm_call *call, const llm_request *req) {
  (void)req;
  llm_endpoint *e = call->ep;
  const llm_script_options *o = &e->cfg.script;
  script_call *sc = calloc(1, sizeof *sc);
  if (!sc) return AG_ERR_NOMEM;
  const char *text = o->fallback ? o->fallback : "(nothing to say)";
  if (o->n_replies) {
    const llm_script_reply *r = &o->replies[e->script_next % o->n_replies];
    e->script_next++;
    text = r->text ? r->text : "";
    /* A scripted tool call: the reply carries the call (and any text), as a model's would. */
    int rc = r->tool ? llm_call_add_tool_call(call, NULL, r->tool, r->args_json ? r->args_json : "{}", NULL) : AG_OK;
    if (rc) {
      free(sc);
      return rc;
    }
  }
  sc->text = strdup(text);
  if (!sc->text) {
    free(sc);
    return AG_ERR_NOMEM;
  }
  sc->len = strlen(sc->text);
  call->impl = sc;
  return ag_defer_push(call->client->defer, script_step, call, &sc->step);
}

static void script_cancel(llm_call *call) {
  script_call *sc = call->impl;
  call->impl = NULL;
  if (sc) ag_defer_cancel(call->client->defer, sc->step); /* stale once the step ran: a no-op */
  if (sc) free(sc->text);
  free(sc);
}

const llm_provider_ops llm_script_ops = {script_start, script_cancel};
