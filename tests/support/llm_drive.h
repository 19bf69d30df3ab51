/* Helpers for tests that drive the llm_* API on a real event loop: a call's outcome collected into
 * a struct, and running the loop until a number of calls have finished (with a watchdog so a hung
 * call fails the test instead of hanging it). */
#ifndef AG_TEST_LLM_DRIVE_H
#define AG_TEST_LLM_DRIVE_H

#include "common/buf.h"
#include "llm/llm.h"
#include "support/llm_server.h"

struct event_base;

enum { LLM_DRIVE_MAX_CALLS = 16 };

/* What one call did; fill with llm_drive_result_init, release with llm_drive_result_free. */
typedef struct llm_drive_result {
  int done;          /* on_done ran (count; must end as 1) */
  int err;           /* its err */
  char *text;        /* its text (copied) */
  llm_error_info info;
  llm_usage usage;
  ag_buf chunks;     /* every chunk, concatenated */
  int n_chunks;
  llm_tool_call calls[LLM_DRIVE_MAX_CALLS]; /* the tool calls of its reply (copies: id, name, args_json) */
  size_t n_calls;
  llm_call *call;    /* set by llm_drive_start */
  int *pending;      /* decremented by on_done; the loop stops at 0 */
  struct event_base *base;
} llm_drive_result;

void llm_drive_result_init(llm_drive_result *r);
void llm_drive_result_free(llm_drive_result *r);

/* Callbacks that record into a llm_drive_result (the ud). */
extern const llm_callbacks llm_drive_callbacks;

/* Starts a call recording into r, counting it in *pending. Returns llm_call_start's result. */
int llm_drive_start(llm_endpoint *e, const llm_request *req, llm_drive_result *r, struct event_base *base,
                    int *pending);

/* Runs the loop until *pending is 0 or timeout_ms passes; returns 0, or -1 on timeout. */
int llm_drive_run(struct event_base *base, int *pending, long timeout_ms);

/* A config for the loopback server srv speaking kind's protocol: model "test-model", the key from
 * $AGORA_TEST_KEY, stream or not, timeout_ms, two retries. Strings borrowed (srv's URL buffer). */
void llm_drive_config(llm_config *cfg, llm_server *srv, llm_provider_kind kind, int stream, long timeout_ms);

/* Runs the loop for ms milliseconds (to let things happen that should not). */
void llm_drive_run_for(struct event_base *base, long ms);

#endif
