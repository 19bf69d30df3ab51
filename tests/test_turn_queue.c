/* Issue 15 item 7, end to end in the vectors' style (a world, the transcript it must give): an agent
 * that reaches its turn limit while answers are queued for it publishes its notice and declines them —
 * it does not speak after its own notice until the next human message. */
#include "support/fixture.h"
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;
static llm_server *srv;

/* c answers slowly (a loopback server with latency), so a's and b's replies to it queue up behind its
 * first call; b's is over c's limit of 2. */
static void queued_answers_declined_after_notice(void) {
  char json[2048], path[4096];
  snprintf(json, sizeof json,
           "{\"name\": \"queue\", \"turn_limit\": 2, \"defaults\": {\"provider\": \"script\"},"
           " \"agents\": [{\"name\": \"a\", \"replies\": [\"@c from a\"]}, {\"name\": \"b\", \"replies\": [\"@c from b\"]},"
           "  {\"name\": \"c\", \"provider\": \"openai\", \"base_url\": \"%s\", \"api_key_env\": \"QUEUE_API_KEY\","
           "   \"stream\": false, \"system_prompt\": \"[[mock latency=1000 reply=\\\"c speaks\\\"]]\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@a @b @c go\"}, {\"from\": \"human\", \"text\": \"@c again\"}]}",
           llm_server_url(srv, "/v1"));
  snprintf(path, sizeof path, "%s/queue.json", tmp);
  const char *env[] = {"QUEUE_API_KEY=k-queue", NULL};
  proc_result r;
  CHECK_INT(proc_run_world(path, json, env, &r), 0);
  CHECK_INT(r.status, 0);
  char *got = proc_messages(r.out);
  const char *want = "human|human|@a @b @c go\n"
                     "a|agent|@c from a\n"
                     "b|agent|@c from b\n"
                     "c|turn-limit|@human Turn limit reached (2 LLM calls). Please take control of the conversation.\n"
                     "c|agent|c speaks\n"
                     /* a human message resets the count: c answers again */
                     "human|human|@c again\n"
                     "c|agent|c speaks";
  if (!got || strncmp(got, want, strlen(want)) || strlen(got) > strlen(want) + 1)
    unit_fail_(__FILE__, __LINE__, "transcript:\n%s\nexpected:\n%s", got ? got : "(none)", want);
  /* c made exactly two calls: the queued answer to a was never started. */
  CHECK_INT(llm_server_request_count(srv), 2);
  free(got);
  proc_result_free(&r);
}

SUITE_RUN((UNIT(queued_answers_declined_after_notice)), .tmp = &tmp, .srv = &srv)
