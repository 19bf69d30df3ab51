/* Long-term memory across hosts (docs/distributed.md "Memory across hosts"): an agent in memory mode
 * stream, its memories rated by its model, notes something with its remember tool and reflects, one in
 * mode summary has its summariser model summarise, all on a host that is then SIGKILLed; the other host
 * takes both agents over and answers the next message with what they noted, reflected and summarised:
 * the prompts the loopback LLM server records carry the note, the insight and the model's summary, and
 * the agent that reflected does not reflect again (its count toward the next reflection went with it).
 * Every copy of the chat (the surviving host's database, `run --nats`'s) then lists the same memories in
 * `agora memory --json`, with the ratings made on the dead host, and holds the same summaries and
 * reflections. Before, those stayed with the host that made them. */
#include "support/nats_proc.h"
#include "support/nats_ring.h"
#include "support/parity.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wait.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOTE "NOTE bridge shut till spring"
#define INSIGHT "INSIGHT the town is cut off"
#define SUMMARY "SUMMARY the bridge is shut"
#define SUMMARY2 "SUMMARY kept and the ferry runs"

static llm_server *g_srv;

/* The world "keep" with script (a JSON array of steps): m0 (memory stream, its memories rated by its
 * model, reflects past 15) passes
 * what it is told on to m1 (memory summary, its summariser on the same server), who writes it down. */
static const char *keep_world(const char *name, const char *script) {
  char text[4096];
  const char *url = llm_server_url(g_srv, "/v1");
  snprintf(text, sizeof text,
    "{\"name\": \"keep\", \"memory_window\": 2,\n"
    " \"agents\": [{\"name\": \"m0\", \"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\",\n"
    "   \"api_key_env\": \"\", \"system_prompt\": \"You keep the records.\",\n"
    "   \"memory\": {\"mode\": \"stream\", \"embedder\": {\"provider\": \"hash\"}, \"reflect_at\": 15,\n"
    "              \"importance\": \"llm\"}},\n"
    "  {\"name\": \"m1\", \"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\", \"api_key_env\": \"\",\n"
    "   \"system_prompt\": \"You write things down. [[mock reply=\\\"@human Written.\\\"]]\",\n"
    "   \"memory\": {\"mode\": \"summary\", \"summary_tokens\": 64}}],\n"
    " \"script\": %s}\n",
    url, url, script);
  const char *path = nats_ring_path(name);
  return unit_write_file(path, text) ? NULL : path;
}

/* The server's answers, the first rule whose words stand in the system prompt or the message answered
 * winning: the rating call's (the first memory asked about is a 7), the summariser's (a summary that
 * carries the one before, when it has one), the reflection's, then m0's turns, latest first (a later
 * prompt carries the earlier words as memories). */
static void rules(void) {
  static const char *const r[][2] = {
    {"likely poignancy", "reply=7"},
    {SUMMARY, "reply=\"" SUMMARY2 "\""},
    {"running summary of a conversation", "reply=\"" SUMMARY "\""},
    {"high-level insights", "reply=\"" INSIGHT " (1, 2)\""},
    {"cross the river", "reply=\"@m1 take the ferry.\""},
    {"the mill burned", "reply=\"@m1 write: fire at the mill.\""},
    {"the bridge is closed until spring",
     "tool=remember args=\"{\\\"text\\\": \\\"" NOTE "\\\", \\\"importance\\\": 9}\" "
     "after_tool=\"@m1 write: bridge closed.\""},
  };
  llm_server_reset(g_srv);
  for (size_t i = 0; i < sizeof r / sizeof *r; i++) CHECK_INT(llm_server_rule(g_srv, r[i][0], r[i][1]), 0);
}

/* How many recorded requests contain all of want. */
static size_t requests_with(const char *const *want) {
  size_t n = 0;
  for (size_t i = 0; i < llm_server_request_count(g_srv); i++) {
    llm_server_request q;
    if (llm_server_request_get(g_srv, i, &q)) continue;
    int all = 1;
    for (const char *const *w = want; *w && all; w++) all = q.body && strstr(q.body, *w) != NULL;
    n += all;
    llm_server_request_free(&q);
  }
  return n;
}

/* Whether a recorded request contains all of want. */
static int request_with(const char *const *want) { return requests_with(want) > 0; }

/* `agora memory` of both agents and the chat's summaries and reflections in db, as parity lines. */
static int copy_lines(const char *db, parity_chat *c) {
  int rc = parity_chat_load(db, c);
  if (!rc) rc = parity_memory_add(db, "m0", c);
  return rc;
}

static void takeover_remembers(void) {
  nats_ring_one one;
  if (nats_ring_one_node("mem", &one)) return;
  rules();
  const char *first = keep_world("keep1.json",
                                 "[{\"from\": \"human\", \"text\": \"@m0 the bridge is closed until spring\"},"
                                 " {\"from\": \"human\", \"text\": \"@m0 the mill burned down\"}]");
  char first_path[4096];
  snprintf(first_path, sizeof first_path, "%s", first ? first : "");
  pid_t h1 = nats_ring_start_host(first_path, one.url, "h1", "m0,m1");
  CHECK(nats_ring_await_leases(one.url, "keep", "m", 2, 1));
  pid_t h2 = nats_ring_start_host(first_path, one.url, "h2", NULL);
  CHECK(file_wait_for(nats_ring_path("h2.err"), "agora: hosting world", 30000));
  char db[4096], chat[64] = "";
  snprintf(db, sizeof db, "%s", nats_ring_path("run.db"));
  const char *run1[] = {"run", first_path, "--nats", one.url, "--db", db, NULL};
  proc_result r;
  PROC_OK(run1, NULL, NULL, &r);
  proc_result_free(&r);
  /* h1 made the note, the reflection and the summary; it dies, and h2 takes its agents over */
  CHECK(request_with((const char *[]){"high-level insights", NULL}) && request_with((const char *[]){SUMMARY, NULL}));
  CHECK_INT(agora_stop(h1, SIGKILL), 128 + SIGKILL);
  CHECK(file_wait_for(nats_ring_path("h2.err"), "holding m0, m1", 30000));
  rules();
  CHECK_INT(proc_first_chat(db, chat, sizeof chat), 0);
  const char *second = keep_world("keep2.json", "[{\"from\": \"human\", \"text\": \"@m0 how do we cross the "
                                                "river?\"}]");
  const char *run2[] = {"run", second, "--nats", one.url, "--db", db, "--chat", chat, NULL};
  PROC_OK(run2, NULL, NULL, &r);
  proc_result_free(&r);
  /* m0's prompt remembers the note and the insight; m1's carries the summary h1's model wrote */
  CHECK(request_with((const char *[]){"cross the river", "What you remember", NOTE, INSIGHT, NULL}));
  CHECK(request_with((const char *[]){"You write things down", SUMMARY2, NULL}));
  CHECK(!request_with((const char *[]){"high-level insights", NULL})); /* the count went on from the reflection */
  CHECK(!request_with((const char *[]){"likely poignancy", "the bridge is closed until spring", NULL})); /* rated */
  CHECK_INT(agora_stop(h2, SIGTERM), 0);
  parity_chat a = {0}, b = {0};
  if (!copy_lines(nats_ring_path("h2.db"), &a) && !copy_lines(db, &b)) {
    unsigned want = 1u << PF_STREAM | 1u << PF_SUMMARY | 1u << PF_REFLECT;
    CHECK(parity_same_lines(&a, &b, want, 0));
    CHECK(!parity_same_lines(&a, &(parity_chat){0}, 1u << PF_REMEMBER, 0));
    int rated = 0; /* the first message's rating, made on h1, is also run --nats's copy's (which rates nothing) */
    for (size_t i = 0; i < b.n; i++)
      rated |= !strncmp(b.lines[i].text, "memory m0 #1 ", 13) && strstr(b.lines[i].text, " importance 7 ");
    CHECK(rated);
  }
  parity_chat_free(&a);
  parity_chat_free(&b);
  nats_node_stop(&one.node, SIGTERM);
}

static int stalled(void *arg) { return llm_server_stalls(arg) >= 1; }

/* How many of agent m0's memories in db's chat are NOTE, by `agora memory --json`. */
static size_t notes_in(const char *db) {
  parity_chat c = {0};
  size_t n = 0;
  if (!parity_memory_add(db, "m0", &c))
    for (size_t i = 0; i < c.n; i++) n += strstr(c.lines[i].text, NOTE) != NULL;
  parity_chat_free(&c);
  return n;
}

/* A turn run twice (docs/distributed.md "Memory across hosts"): h1 asks m0's model to rate the message
 * (it answers with no number: the fixed importance stays), runs remember, and is SIGKILLed while it waits
 * for the model's answer after the tool. h2 takes m0 over and runs the turn again: it does not ask about
 * the message again (h1's rating, the fixed importance, came with the stream), and its remember of the
 * same note leaves one note on every copy. Before, h2 asked a second time, and both copies held the note
 * twice. */
static void rerun_keeps_one_note(void) {
  nats_ring_one one;
  if (nats_ring_one_node("rerun", &one)) return;
  llm_server_reset(g_srv);
  CHECK_INT(llm_server_rule(g_srv, "likely poignancy", "reply=\"no idea\""), 0);
  CHECK_INT(llm_server_rule(g_srv, "the bridge is closed until spring",
                            "tool=remember args=\"{\\\"text\\\": \\\"" NOTE "\\\", \\\"importance\\\": 9}\" "
                            "after_tool=\"@m1 write: bridge closed.\" after_tool_stall=1"), 0);
  const char *world = keep_world("keep3.json", "[{\"from\": \"human\", \"text\": \"@m0 the bridge is closed until spring\"}]");
  char path[4096], db[4096];
  snprintf(path, sizeof path, "%s", world ? world : "");
  snprintf(db, sizeof db, "%s", nats_ring_path("rerun.db"));
  pid_t h1 = nats_ring_start_host(path, one.url, "r1", "m0,m1");
  CHECK(nats_ring_await_leases(one.url, "keep", "m", 2, 1));
  pid_t h2 = nats_ring_start_host(path, one.url, "r2", NULL);
  CHECK(file_wait_for(nats_ring_path("r2.err"), "agora: hosting world", 30000));
  const char *run[] = {"run", path, "--nats", one.url, "--db", db, NULL};
  pid_t pub = proc_spawn(run, -1, nats_ring_path("rerun.out"), nats_ring_path("rerun.err"), NULL);
  /* h1 rated, remembered and waits for the model's answer after the tool: it dies there */
  CHECK(wait_until(stalled, g_srv, 30000));
  CHECK_INT(agora_stop(h1, SIGKILL), 128 + SIGKILL);
  CHECK(file_wait_for(nats_ring_path("r2.err"), "holding m0, m1", 30000));
  CHECK_INT(agora_wait(pub, 60000), 0);
  CHECK_INT(requests_with((const char *[]){"likely poignancy", NULL}), 1);
  CHECK_INT(requests_with((const char *[]){"the bridge is closed until spring", "\"tools\"", NULL}) >= 2, 1);
  CHECK_INT(agora_stop(h2, SIGTERM), 0);
  CHECK_INT(notes_in(db), 1);
  CHECK_INT(notes_in(nats_ring_path("r2.db")), 1);
  nats_node_stop(&one.node, SIGTERM);
}

SUITE_RUN((UNIT(takeover_remembers), UNIT(rerun_keeps_one_note)), .tmp = &nats_ring_tmp, .srv = &g_srv, .no_sigpipe = 1)
