/* run and say both run on libagora (include/agora.h) and print from its events (cli/event_print.c):
 * through the built binary, each shows what the other shows. A plain transcript leaves out the memory
 * events as run always did (say printed "-- memory-retrieved" lines), and the LLM layer's warning for
 * "insecure": true is printed once by either (the library's copy of the core had no one to print it,
 * so say never warned). */
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;

/* A remembering agent: each reply is preceded by a memory-retrieved event. */
static const char memory_world[] =
  "{\"name\": \"mem\", \"memory_window\": 1, \"agents\": [{\"name\": \"mayor\", \"provider\": \"script\","
  " \"replies\": [\"ok\"], \"memory\": {\"mode\": \"stream\"}}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@mayor the bridge is closed\"},"
  " {\"from\": \"human\", \"text\": \"@mayor can I cross the bridge?\"}]}";

static void plain_leaves_memory_events_out(void) {
  const char *world = suite_file(tmp, "mem.json", memory_world);
  const char *const plain[2][6] = {{"run", world, "--no-save", NULL},
                                   {"say", world, "@mayor the bridge?", "--no-save", NULL}};
  for (int i = 0; i < 2; i++) {
    proc_result r;
    if (!PROC_OK(plain[i], NULL, NULL, &r)) continue;
    CHECK(strstr(r.out, "mayor: ok") != NULL);
    if (strstr(r.out, "memory-retrieved")) unit_fail_(__FILE__, __LINE__, "agora %s printed: %s", plain[i][0], r.out);
    proc_result_free(&r);
  }
  const char *json[] = {"say", world, "@mayor the bridge?", "--no-save", "--json", NULL};
  proc_result r;
  if (PROC_OK(json, NULL, NULL, &r)) CHECK(strstr(r.out, "\"event\":\"memory-retrieved\"") != NULL);
  proc_result_free(&r);
}

/* No server answers at port 9: the call fails (exit 1), and the warning has come before it, once for
 * two agents. */
static void insecure_warns_once(void) {
  const char *world = suite_file(tmp, "insecure.json",
    "{\"name\": \"insec\", \"defaults\": {\"provider\": \"openai\", \"model\": \"m\", \"base_url\":"
    " \"https://127.0.0.1:9/v1\", \"api_key_env\": \"AGORA_TEST_KEY\", \"insecure\": true, \"max_retries\": 0,"
    " \"timeout_ms\": 2000}, \"agents\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
    " \"script\": [{\"from\": \"human\", \"text\": \"@a hi\"}]}");
  static const char *const env[] = {"AGORA_TEST_KEY=k", NULL};
  const char *const cmds[2][6] = {{"run", world, "--no-save", NULL}, {"say", world, "@a hi", "--no-save", NULL}};
  for (int i = 0; i < 2; i++) {
    proc_result r;
    CHECK_INT(proc_agora(cmds[i], NULL, env, &r), 0);
    CHECK_INT(r.status, 1);
    const char *w = r.err ? strstr(r.err, "agora: warning: insecure: true") : NULL;
    if (!w) unit_fail_(__FILE__, __LINE__, "agora %s did not warn: %s", cmds[i][0], r.err ? r.err : "");
    CHECK(!w || !strstr(w + strlen("agora: warning: "), "warning: "));
    proc_result_free(&r);
  }
}

SUITE_RUN((UNIT(plain_leaves_memory_events_out), UNIT(insecure_warns_once)), .tmp = &tmp)
