/* Real-clock schedules while the world is busy (issue 13, docs/time.md), end to end: an agent answers
 * slowly (loopback LLM server with latency), and meanwhile a `when_busy: "skip"` item is dropped with a
 * schedule-skipped event, while a queued item (the default) is held — once, however many ticks it
 * missed — and delivered at the first quiet moment. */
#include "support/fixture.h"
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;
static llm_server *srv;

static void busy_world_skips_and_queues(void) {
  char json[2048], path[4096];
  snprintf(json, sizeof json,
           "{\"name\": \"busy\", \"agents\": [{\"name\": \"s\", \"provider\": \"script\", \"replies\": [\"ok\"]},"
           "  {\"name\": \"c\", \"provider\": \"openai\", \"base_url\": \"%s\", \"api_key_env\": \"BUSY_API_KEY\","
           "   \"stream\": false, \"system_prompt\": \"[[mock latency=2500 reply=\\\"c speaks\\\"]]\"}],"
           " \"schedule\": [{\"every\": \"1s\", \"from\": \"world\", \"text\": \"@s tick\", \"when_busy\": \"skip\"},"
           "              {\"every\": \"1s\", \"from\": \"world\", \"text\": \"@s tock\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@c go\"}, {\"wait\": \"1s\"}]}",
           llm_server_url(srv, "/v1"));
  snprintf(path, sizeof path, "%s/busy.json", tmp);
  const char *env[] = {"BUSY_API_KEY=k-busy", NULL};
  proc_result r;
  CHECK_INT(proc_run_world(path, json, env, &r), 0);
  CHECK_INT(r.status, 0);
  /* Walk the lines: skipped ticks while c thinks, then c's reply, then the held tock first. */
  int c_spoke = 0, skipped = 0, first_world = 0, tocks_before_reply = 0;
  for (const char *p = r.out; p && *p;) {
    const char *nl = strchr(p, '\n');
    cJSON *j = cJSON_ParseWithLength(p, nl ? (size_t)(nl - p) : strlen(p));
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(j, "type"));
    const char *ev = cJSON_GetStringValue(cJSON_GetObjectItem(j, "event"));
    const char *sender = cJSON_GetStringValue(cJSON_GetObjectItem(j, "sender"));
    const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(j, "text"));
    if (ev && !strcmp(ev, "schedule-skipped")) {
      CHECK_INT((long)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "item")), 0);
      CHECK(cJSON_GetStringValue(cJSON_GetObjectItem(j, "due")) != NULL);
      CHECK(!c_spoke);
      skipped++;
    }
    if (type && !strcmp(type, "message") && sender && !strcmp(sender, "c")) c_spoke = 1;
    if (type && !strcmp(type, "message") && sender && !strcmp(sender, "world")) {
      if (!c_spoke) tocks_before_reply++;
      if (!first_world++) CHECK_STR(text, "@s tock");
    }
    cJSON_Delete(j);
    p = nl ? nl + 1 : NULL;
  }
  CHECK(c_spoke);
  CHECK(skipped >= 1);
  CHECK_INT(tocks_before_reply, 0);
  CHECK(first_world >= 1);
  if (r.status) fprintf(stderr, "%s\n", r.err);
  proc_result_free(&r);
}

SUITE_RUN((UNIT(busy_world_skips_and_queues)), .tmp = &tmp, .srv = &srv)
