/* Test helpers for driving LLM calls on an event loop (see llm_drive.h). */
#include "support/llm_drive.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

void llm_drive_result_init(llm_drive_result *r) {
  memset(r, 0, sizeof *r);
  ag_buf_init(&r->chunks, (size_t)64 << 20);
}

void llm_drive_result_free(llm_drive_result *r) {
  free(r->text);
  ag_buf_free(&r->chunks);
  r->text = NULL;
  for (size_t i = 0; i < r->n_calls; i++) {
    free(r->calls[i].id);
    free(r->calls[i].name);
    free(r->calls[i].args_json);
  }
  r->n_calls = 0;
}

/* The tool calls of the call's reply, copied out: the call is gone once on_done returns. */
static void drive_copy_calls(llm_drive_result *r) {
  size_t n = 0;
  const llm_tool_call *tc = llm_call_tool_calls(r->call, &n);
  for (size_t i = 0; i < n && i < LLM_DRIVE_MAX_CALLS; i++)
    r->calls[i] = (llm_tool_call){.id = strdup(tc[i].id), .name = strdup(tc[i].name),
                                  .args_json = strdup(tc[i].args_json)};
  r->n_calls = n < LLM_DRIVE_MAX_CALLS ? n : LLM_DRIVE_MAX_CALLS;
}

static void drive_chunk(void *ud, const char *text, size_t len) {
  llm_drive_result *r = ud;
  ag_buf_append(&r->chunks, text, len);
  r->n_chunks++;
}

static void drive_done(void *ud, int err, const char *text, const llm_error_info *info) {
  llm_drive_result *r = ud;
  r->done++;
  r->err = err;
  free(r->text);
  r->text = strdup(text ? text : "");
  if (info) r->info = *info;
  if (r->call) r->usage = llm_call_usage(r->call);
  if (r->call) drive_copy_calls(r);
  r->call = NULL;
  if (r->pending && --*r->pending == 0 && r->base) event_base_loopbreak(r->base);
}

const llm_callbacks llm_drive_callbacks = {drive_chunk, drive_done};

int llm_drive_start(llm_endpoint *e, const llm_request *req, llm_drive_result *r, struct event_base *base,
                    int *pending) {
  r->pending = pending;
  r->base = base;
  (*pending)++;
  int rc = llm_call_start(e, req, &llm_drive_callbacks, r, &r->call);
  if (rc) (*pending)--;
  return rc;
}

static void on_watchdog(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  *(int *)arg = 1;
}

int llm_drive_run(struct event_base *base, int *pending, long timeout_ms) {
  int fired = 0;
  struct event *wd = evtimer_new(base, on_watchdog, &fired);
  struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  evtimer_add(wd, &tv);
  while (*pending > 0 && !fired) event_base_loop(base, EVLOOP_ONCE);
  event_free(wd);
  return *pending > 0 ? -1 : 0;
}

void llm_drive_run_for(struct event_base *base, long ms) {
  int fired = 0;
  struct event *wd = evtimer_new(base, on_watchdog, &fired);
  struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
  evtimer_add(wd, &tv);
  while (!fired) event_base_loop(base, EVLOOP_ONCE);
  event_free(wd);
}

void llm_drive_config(llm_config *cfg, llm_server *srv, llm_provider_kind kind, int stream, long timeout_ms) {
  llm_config_init(cfg);
  cfg->provider = kind;
  cfg->model = "test-model";
  cfg->base_url = (char *)llm_server_url(srv, kind == LLM_OPENAI ? "/v1" : "");
  cfg->api_key_env = "AGORA_TEST_KEY";
  cfg->stream = stream;
  cfg->timeout_ms = timeout_ms;
  cfg->max_retries = 2;
}
