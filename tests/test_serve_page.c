/* agora serve's page in a real browser: headless Debian chromium driven by puppeteer-core (installed
 * into $AGORA_PEERS by the peers fixture) runs tests/serve_page.js against a real server and the
 * loopback LLM server — transcript, @ completion, a streamed reply, a tool approved, chats switched and
 * deleted; then behind a token, asked for once. The screenshots are left in the build directory
 * (serve_page.png, serve_page_token.png) as the test's artifacts. */
#include "support/llm_server.h"
#include "support/serve_client.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void page_in_chromium(void) {
  const char *peers = getenv("AGORA_PEERS");
  CHECK(peers != NULL);
  if (!peers) return;
  char *tmp = unit_tmpdir();
  llm_server *srv;
  if (!tmp || llm_server_start(&srv)) {
    CHECK(!"cannot start the loopback LLM server");
    free(tmp);
    return;
  }
  llm_server_rule(srv, "hi there", "reply=\"first answer\"");
  llm_server_rule(srv, "tell me more", "reply=\"slow words of a streamed answer\" delay=150");
  char world[2048], wpath[1024], db[1024];
  snprintf(world, sizeof world,
           "{\"name\": \"Browser\", \"agents\": ["
           "{\"name\": \"ann\", \"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\","
           " \"api_key_env\": \"AGORA_TEST_KEY\"},"
           "{\"name\": \"careful\", \"provider\": \"script\", \"tools\": [{\"name\": \"save_context\", \"approve\": true}],"
           " \"replies\": [{\"tool\": \"save_context\", \"args\": {\"message\": \"noted\"}}, \"saved\"]}]}",
           llm_server_url(srv, "/v1"));
  snprintf(wpath, sizeof wpath, "%s/browser.json", tmp);
  snprintf(db, sizeof db, "%s/db", tmp);
  unit_write_file(wpath, world);
  const char *args[] = {wpath, "--db", db, NULL};
  const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
  serve_proc sp;
  if (serve_proc_start(tmp, args, env, &sp)) {
    CHECK(!"agora serve did not start");
  } else {
    /* a transcript to see when the page opens */
    http_reply r;
    const char *hi = "{\"text\": \"@ann hi there\"}";
    http_call(sp.base, "POST", "/api/worlds/browser/messages", hi, strlen(hi), NULL, &r);
    CHECK_INT(r.status, 202);
    http_reply_free(&r);
    for (int i = 0; i < 200; i++) {
      http_call(sp.base, "GET", "/api/worlds/browser", NULL, 0, NULL, &r);
      int done = strstr(r.body, "\"last_seq\":2") != NULL;
      http_reply_free(&r);
      if (done) break;
      usleep(50000);
    }
    unlink("serve_page.png");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "node '%s' '%s' serve_page.png", unit_src_path("tests/serve_page.js"), sp.base);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(access("serve_page.png", R_OK) == 0);
    CHECK_INT(serve_proc_stop(&sp), 0);
  }
  /* the same world behind a token: the page asks for it once */
  const char *tok_env[] = {"AGORA_TEST_KEY=sk-test-0123456789", "AGORA_TOKEN=page-token-123", NULL};
  if (serve_proc_start(tmp, args, tok_env, &sp)) {
    CHECK(!"agora serve did not start");
  } else {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "node '%s' '%s' serve_page_token.png page-token-123", unit_src_path("tests/serve_page.js"),
             sp.base);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_INT(serve_proc_stop(&sp), 0);
  }
  llm_server_stop(srv);
  unit_rmrf(tmp);
  free(tmp);
}

static const unit_test tests[] = {UNIT(page_in_chromium)};

int main(int argc, char **argv) { return unit_main(argc, argv, tests, sizeof tests / sizeof *tests); }
