/* agora serve's page in a real browser: headless Debian chromium driven by puppeteer-core (installed
 * into $AGORA_PEERS by the peers fixture) runs tests/serve_page.js against a real server and the
 * loopback LLM server — the world named first opened (not the alphabetically first), the address naming
 * world and chat, transcript, bookkeeping behind a toggle, @ completion, a streamed reply, a reply in
 * Markdown with hostile HTML rendered inert, the agents panel, the pictures following the answers, a tool approved and its steps kept across
 * a reload, an ask_human answer half typed kept (text, focus, caret) across a re-read of the chat, a
 * switch of chats while a reply comes asked first, chats switched and deleted; then behind a token,
 * asked for once; then an empty database (what to do, no page error); then a world of 1,000
 * agents with a chat of 100,000 messages (the last page shown, older pages on scroll with the DOM
 * bounded, @ completion, a streamed reply, the pictures drawn from the whole chat and following the
 * reply, the MCP servers' "not started" reason); then a week run on a virtual clock (the timeline of
 * simulated time with the schedule's six deliveries). The screenshots are left in the build directory
 * (serve_page*.png, one per view) as the test's artifacts. */
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/serve_client.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* node serve_page.js BASE SHOT [third] against the running server: it must pass and leave SHOT. */
static void run_page_script(const serve_proc *sp, const char *shot, const char *third) {
  char cmd[4096];
  unlink(shot);
  snprintf(cmd, sizeof cmd, "node '%s' '%s' %s %s", unit_src_path("tests/serve_page.js"), sp->base, shot, third ? third : "");
  int st = system(cmd);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CHECK(access(shot, R_OK) == 0);
}

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
  llm_server_rule(srv, "take your time", "reply=\"one two three four five six seven eight slow words\" delay=400");
  char world[4096], wpath[1024], other[1024], db[1024];
  snprintf(world, sizeof world,
           "{\"name\": \"Browser\", \"agents\": ["
           "{\"name\": \"ann\", \"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\","
           " \"api_key_env\": \"AGORA_TEST_KEY\"},"
           "{\"name\": \"careful\", \"provider\": \"script\", \"tools\": [{\"name\": \"save_context\", \"approve\": true}],"
           " \"replies\": [{\"tool\": \"save_context\", \"args\": {\"message\": \"noted\"}}, \"saved\"]},"
           /* a question to the person: the page's answer box must outlive a re-read of the chat */
           "{\"name\": \"asker\", \"provider\": \"script\", \"tools\": [\"ask_human\"],"
           " \"replies\": [{\"tool\": \"ask_human\", \"args\": {\"question\": \"Which shelf?\"}}, \"filed\"]},"
           /* a reply in Markdown holding what must never run in the page */
           "{\"name\": \"md\", \"provider\": \"script\", \"memory\": {\"mode\": \"stream\"}, \"replies\": [\"**bold** and `code` and [x](javascript:window.__pwned=3)\\n\\n- item\\n\\n"
           "<script>window.__pwned=1</script><img src=x onerror=\\\"window.__pwned=2\\\"> "
           "<svg onload=\\\"window.__pwned=4\\\"><circle r=\\\"5\\\"/></svg> <a href=\\\"javascript:window.__pwned=5\\\">y</a> "
           "<iframe src=\\\"javascript:parent.__pwned=6\\\"></iframe>\"]}]}",
           llm_server_url(srv, "/v1"));
  snprintf(wpath, sizeof wpath, "%s/browser.json", tmp);
  snprintf(other, sizeof other, "%s/aardvark.json", tmp);
  snprintf(db, sizeof db, "%s/db", tmp);
  unit_write_file(wpath, world);
  /* listed first (by id), named second: the page must open browser */
  unit_write_file(other, "{\"name\": \"Aardvark\", \"agents\": [{\"name\": \"x\", \"provider\": \"script\", \"replies\": [\"x\"]}]}");
  const char *args[] = {wpath, other, "--db", db, NULL};
  const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
  serve_proc sp;
  if (!SERVE_START(tmp, args, env, &sp)) {
    /* a transcript to see when the page opens */
    http_reply r;
    const char *hi = "{\"text\": \"@ann hi there\"}";
    http_call(sp.base, "POST", "/api/worlds/browser/messages", hi, strlen(hi), NULL, &r);
    CHECK_INT(r.status, 202);
    http_reply_free(&r);
    CHECK(serve_wait_body(&sp, "/api/worlds/browser", "\"last_seq\":2", 10000));
    run_page_script(&sp, "serve_page.png", NULL);
    CHECK_INT(serve_proc_stop(&sp), 0);
  }
  /* the same world behind a token: the page asks for it once */
  const char *tok_env[] = {"AGORA_TEST_KEY=sk-test-0123456789", "AGORA_TOKEN=page-token-123", NULL};
  if (!SERVE_START(tmp, args, tok_env, &sp)) {
    run_page_script(&sp, "serve_page_token.png", "page-token-123");
    CHECK_INT(serve_proc_stop(&sp), 0);
  }
  /* an empty database: the page says what to do */
  char empty_db[1024];
  snprintf(empty_db, sizeof empty_db, "%s/empty-db", tmp);
  const char *empty_args[] = {"--db", empty_db, NULL};
  if (!SERVE_START(tmp, empty_args, NULL, &sp)) {
    run_page_script(&sp, "serve_page_empty.png", "--empty");
    CHECK_INT(serve_proc_stop(&sp), 0);
  }
  llm_server_stop(srv);
  unit_rmrf(tmp);
  free(tmp);
}

/* ---- a world of 1,000 agents and a chat of 100,000 stored messages ---- */

#define BIG_AGENTS 1000
#define BIG_MESSAGES 100000

/* A snapshot of that chat (agent a0999 answers from the loopback LLM server, the others are scripted),
 * imported through the real `agora chats import`: no LLM call makes the history. For the pictures every
 * message names one of 13 agents (a0002, a0012, ... a0122), one in ten has an LLM call's tokens (the
 * fewer the higher the agent's number, so the 13 are among the busiest drawn), every message has a simulated
 * time a minute after the one before and one in a thousand comes from the schedule ("world"); the world
 * has an MCP server, which an imported world never starts (the page says why). */
static int write_big_snapshot(const char *path, const char *llm_url) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "{\"format\": 1, \"world\": {\"name\": \"Big\", \"turn_limit\": 1000000, "
             "\"clock\": {\"mode\": \"virtual\", \"start\": \"2026-11-23T10:00:00Z\"}, "
             "\"mcp_servers\": {\"fs\": {\"command\": \"mcp-server-filesystem\", \"args\": [\".\"]}}, \"agents\": [");
  for (int i = 0; i < BIG_AGENTS - 1; i++)
    fprintf(f, "{\"name\": \"a%04d\", \"provider\": \"script\", \"replies\": [\"scripted words of a%04d\"]}, ", i, i);
  fprintf(f, "{\"name\": \"a%04d\", \"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\", "
             "\"api_key_env\": \"AGORA_TEST_KEY\"}]},\n", BIG_AGENTS - 1, llm_url);
  fprintf(f, "\"chat\": {\"id\": \"big\", \"world\": \"big\", \"title\": \"A long chat\", \"message_count\": %d, "
             "\"created_at\": \"2026-11-23T10:00:00.000Z\", \"updated_at\": \"2026-11-23T10:00:00.000Z\"},\n\"messages\": [",
          BIG_MESSAGES);
  const time_t start = 1795428000; /* 2026-11-23T10:00:00Z */
  for (int seq = 1; seq <= BIG_MESSAGES; seq++) {
    char who[16], sim[32];
    const char *kind = seq % 10 == 1 ? "human" : seq % 1000 == 500 ? "world" : "agent";
    if (strcmp(kind, "agent")) snprintf(who, sizeof who, "%s", kind);
    else snprintf(who, sizeof who, "a%04d", seq % BIG_AGENTS);
    time_t t = start + (time_t)seq * 60;
    struct tm tm;
    strftime(sim, sizeof sim, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    fprintf(f, "%s{\"seq\": %d, \"sender\": \"%s\", \"kind\": \"%s\", \"text\": \"message %d from %s to @a%04d, a few more words\", "
               "\"ts\": \"2026-11-23T10:00:00.000Z\", \"sim_time\": \"%s\"}\n", seq > 1 ? "," : "", seq, who, kind, seq, who, 2 + 10 * (seq % 13), sim);
  }
  fprintf(f, "], \"agents\": [], \"thread\": [");
  for (int seq = 2; seq <= BIG_MESSAGES; seq += 10)
    fprintf(f, "%s{\"type\": \"llm-done\", \"agent\": \"a%04d\", \"after_seq\": %d, \"input_tokens\": %d, \"output_tokens\": %d}\n",
            seq > 2 ? "," : "", seq % BIG_AGENTS, seq, 2000 - seq % BIG_AGENTS, 20 + seq % 7);
  fprintf(f, "]}\n");
  return fclose(f) ? -1 : 0;
}

static void page_big_world(void) {
  const char *peers = getenv("AGORA_PEERS");
  CHECK(peers != NULL);
  char *tmp = unit_tmpdir();
  llm_server *srv;
  if (!peers || !tmp || llm_server_start(&srv)) {
    CHECK(!"no peers, temp dir or loopback LLM server");
    free(tmp);
    return;
  }
  llm_server_rule(srv, "hello big world", "reply=\"streamed reply to the big world\" delay=150");
  char snap[1024], db[1024], id[64] = "", path[256], body[512], url[512];
  snprintf(snap, sizeof snap, "%s/big.json", tmp);
  snprintf(db, sizeof db, "%s/db", tmp);
  snprintf(url, sizeof url, "%s", llm_server_url(srv, "/v1"));
  CHECK_INT(write_big_snapshot(snap, url), 0);
  CHECK_INT(proc_import_snapshot(snap, db, id, sizeof id), 0);
  const char *args[] = {"--db", db, NULL};
  const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
  serve_proc sp;
  if (!id[0] || serve_proc_start(tmp, args, env, &sp)) {
    CHECK(!"agora serve did not start");
  } else {
    /* the world is loaded from the database on first use; the imported chat is made current */
    http_reply r;
    snprintf(path, sizeof path, "/api/worlds/big/chats/%s/select", id);
    http_call(sp.base, "POST", path, "", 0, NULL, &r);
    CHECK_INT(r.status, 200);
    http_reply_free(&r);
    http_call(sp.base, "GET", "/api/worlds/big", NULL, 0, NULL, &r);
    snprintf(body, sizeof body, "\"last_seq\":%d", BIG_MESSAGES);
    CHECK(r.body && strstr(r.body, body) != NULL);
    http_reply_free(&r);
    run_page_script(&sp, "serve_page_big.png", "--big");
    CHECK_INT(serve_proc_stop(&sp), 0);
  }
  llm_server_stop(srv);
  unit_rmrf(tmp);
  free(tmp);
}

/* ---- a week on a virtual clock: the timeline of simulated time with the schedule's deliveries ---- */

static void page_week(void) {
  const char *peers = getenv("AGORA_PEERS");
  CHECK(peers != NULL);
  char *tmp = unit_tmpdir();
  if (!peers || !tmp) {
    free(tmp);
    return;
  }
  char db[1024];
  snprintf(db, sizeof db, "%s/db", tmp);
  /* the example runs the week (five weekday mornings and the fair: six deliveries) into the database */
  const char *run[] = {"run", unit_src_path("examples/week.json"), "--db", db, NULL};
  proc_result r;
  PROC_OK(run, NULL, NULL, &r);
  proc_result_free(&r);
  const char *args[] = {"--db", db, NULL};
  serve_proc sp;
  if (serve_proc_start(tmp, args, NULL, &sp)) {
    CHECK(!"agora serve did not start");
  } else {
    run_page_script(&sp, "serve_page_week.png", "--week");
    CHECK_INT(serve_proc_stop(&sp), 0);
  }
  unit_rmrf(tmp);
  free(tmp);
}

SUITE_RUN((UNIT(page_in_chromium), UNIT(page_big_world), UNIT(page_week)))
