/* The LLM response cache against a server that is not ours (issue 25 §3 tests): openai-mock-api, a
 * third-party OpenAI-compatible mock from npm (the peers fixture installs it into AGORA_PEERS), answers a
 * world through `agora run --llm-cache use`; the same world replayed with the mock stopped gives the same
 * transcript from the cache, streamed and not; a request the cache never saw is a cache_miss (exit 1). */
#include "support/npm_peer.h"
#include "support/ports.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;
static const char *const env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};

/* Any system prompt and user message (an agent's first call) gets one fixed answer; the key is checked. */
static const char *const mock_config = "apiKey: 'sk-test-0123456789'\n"
                                       "responses:\n"
                                       "  - id: 'any'\n"
                                       "    messages:\n"
                                       "      - role: 'system'\n"
                                       "        matcher: 'any'\n"
                                       "      - role: 'user'\n"
                                       "        matcher: 'any'\n"
                                       "      - role: 'assistant'\n"
                                       "        content: 'Noted by the mock.'\n";

/* Three agents at the mock answering one world message (text), streamed or not. */
static const char *world(int port, int stream, const char *text) {
  char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"mocked\", \"defaults\": {\"provider\": \"openai\", \"base_url\": \"http://127.0.0.1:%d/v1\","
           " \"api_key_env\": \"AGORA_TEST_KEY\", \"model\": \"gpt-4o-mini\", \"stream\": %s},"
           " \"agents\": [{\"name\": \"ann\", \"system_prompt\": \"You are Ann.\"}, {\"name\": \"bob\","
           " \"system_prompt\": \"You are Bob.\"}, {\"name\": \"cy\", \"system_prompt\": \"You are Cy.\"}],"
           " \"script\": [{\"from\": \"world\", \"text\": \"%s\"}]}",
           port, stream ? "true" : "false", text);
  return suite_file(tmp, "w.json", json);
}

static int run(proc_result *r, const char *w, const char *mode, const char *cache) {
  const char *args[] = {"run", w, "--json", "--no-save", "--llm-cache", mode, "--cache-db", cache, NULL};
  if (proc_agora(args, NULL, env, r)) return -1;
  return r->status;
}

static void use_then_replay_without_the_mock(void) {
  const char *want = "world|world|Say something.\nann|agent|Noted by the mock.\n"
                     "bob|agent|Noted by the mock.\ncy|agent|Noted by the mock.\n";
  for (int stream = 0; stream < 2; stream++) {
    npm_peer mock;
    int port = ports_free();
    char port_s[16], cfg[4096], cache[4096], log[4096];
    snprintf(port_s, sizeof port_s, "%d", port);
    snprintf(cfg, sizeof cfg, "%s", suite_file(tmp, "mock.yaml", NULL));
    snprintf(cache, sizeof cache, "%s/cache-%d", tmp, stream);
    snprintf(log, sizeof log, "%s/mock-%d.log", tmp, stream);
    unit_write_file(cfg, mock_config);
    const char *margs[] = {"--config", cfg, "--port", port_s, NULL};
    if (npm_peer_start(&mock, "openai-mock-api", margs, NULL, port, log)) {
      unit_fail_(__FILE__, __LINE__, "openai-mock-api did not start (AGORA_PEERS=%s)", getenv("AGORA_PEERS"));
      return;
    }
    const char *w = world(port, stream, "Say something.");
    proc_result a, b, c;
    CHECK_INT(run(&a, w, "use", cache), 0);
    CHECK_MESSAGES(a.out, want);
    CHECK_INT((long)unit_count(a.out, "\"cached\":true"), 0);
    npm_peer_stop(&mock); /* nothing listens at its port any more */
    CHECK_INT(run(&b, w, "replay", cache), 0);
    CHECK_MESSAGES(b.out, want);
    CHECK_INT((long)unit_count(b.out, "\"cached\":true"), 3);
    /* A message the cache never saw: a miss naming each agent, exit 1, and still no network. */
    CHECK_INT(run(&c, world(port, stream, "Something else."), "replay", cache), 1);
    CHECK_INT((long)unit_count(c.out, "\"error_type\":\"cache_miss\""), 3);
    CHECK(strstr(c.out, "Noted by the mock.") == NULL);
    if (a.status || b.status) fprintf(stderr, "  stream=%d\n  use: %s\n  replay: %s\n", stream, a.err, b.err);
    proc_result_free(&a);
    proc_result_free(&b);
    proc_result_free(&c);
  }
}

SUITE_RUN((UNIT(use_then_replay_without_the_mock)), .tmp = &tmp)
