/* GET /api/worlds/{id}/chats/{chat}/graph, what the page's pictures draw (issue 24), against a real
 * server on loopback: a week run on a virtual clock (who names whom, the simulated time of each message,
 * the schedule's six deliveries), bad input named, and a chat of 100,000 messages among 1,000 senders cut
 * to what a page can draw, with the time it takes printed. */
#include "support/proc.h"
#include "support/serve_client.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;

/* The array key of j, or NULL. */
static const cJSON *arr(const cJSON *j, const char *key) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, key);
  return cJSON_IsArray(a) ? a : NULL;
}
static double num(const cJSON *j, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}
/* The edge from -> to of a graph reply, its messages; 0 when there is none. */
static double edge(const cJSON *g, const char *from, const char *to) {
  const cJSON *e;
  cJSON_ArrayForEach(e, arr(g, "edges")) {
    if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "from")), from) &&
        !strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "to")), to))
      return num(e, "messages");
  }
  return 0;
}

static void expect_status(const serve_proc *sp, const char *method, const char *path, long status, const char *want) {
  http_reply r;
  http_call(sp->base, method, path, NULL, 0, NULL, &r);
  if (r.status != status || !r.body || !strstr(r.body, want))
    unit_fail_(__FILE__, __LINE__, "%s %s: %ld, expected %ld with '%s': %.300s", method, path, r.status, status, want,
               r.body ? r.body : "");
  http_reply_free(&r);
}

/* examples/week.json run into a database, then served: world names the baker five times and the mayor
 * once; 13 messages carry simulated time, six of them the schedule's; the script provider reports no
 * tokens, so there is no line of tokens over time. */
static void graph_of_a_week(void) {
  char db[1024], id[64] = "", path[256];
  snprintf(db, sizeof db, "%s/db-week", tmp);
  const char *run[] = {"run", unit_src_path("examples/week.json"), "--db", db, NULL};
  proc_result r;
  PROC_OK(run, NULL, NULL, &r);
  proc_result_free(&r);
  CHECK_INT(proc_first_chat(db, id, sizeof id), 0);
  const char *args[] = {"--db", db, NULL};
  serve_proc sp;
  if (!id[0] || serve_proc_start(tmp, args, NULL, &sp)) {
    CHECK(!"no chat, or agora serve did not start");
    return;
  }
  long st;
  snprintf(path, sizeof path, "/api/worlds/bakery-week/chats/%s/graph", id);
  cJSON *g = serve_call_json(&sp, "GET", path, NULL, &st);
  CHECK_INT(st, 200);
  CHECK(num(g, "last_seq") == 13 && num(g, "more_nodes") == 0);
  CHECK(edge(g, "world", "baker") == 5 && edge(g, "world", "mayor") == 1);
  CHECK_INT(cJSON_GetArraySize(arr(cJSON_GetObjectItemCaseSensitive(g, "tokens"), "agents")), 0);
  const cJSON *tl = cJSON_GetObjectItemCaseSensitive(g, "timeline"), *t;
  CHECK(num(tl, "count") == 13);
  int fires = 0;
  double last = 0;
  cJSON_ArrayForEach(t, arr(tl, "ticks")) {
    fires += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "fire"));
    CHECK(num(t, "sim_ms") >= last); /* in order */
    last = num(t, "sim_ms");
  }
  CHECK_INT(fires, 6);
  CHECK(last == 1772877600000.0); /* the fair: 2026-03-07T10:00:00Z */
  cJSON_Delete(g);
  /* bad input, named */
  static const char *const bad[][2] = {{"?points=0", "points: 1 to 1000"}, {"?points=1001", "points: 1 to 1000"},
                                       {"?nodes=0", "nodes: 1 to 500"}, {"?nodes=x", "nodes"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(path, sizeof path, "/api/worlds/bakery-week/chats/%s/graph%s", id, bad[i][0]);
    expect_status(&sp, "GET", path, 400, bad[i][1]);
  }
  expect_status(&sp, "GET", "/api/worlds/bakery-week/chats/nochat/graph", 404, "no chat 'nochat'");
  snprintf(path, sizeof path, "/api/worlds/other/chats/%s/graph", id);
  expect_status(&sp, "GET", path, 404, "in world 'other'");
  snprintf(path, sizeof path, "/api/worlds/bakery-week/chats/%s/graph", id);
  expect_status(&sp, "POST", path, 405, "method");
  CHECK_INT(serve_proc_stop(&sp), 0);
}

#define BIG 100000
#define SENDERS 1000

/* A chat of BIG messages from SENDERS agents (s0000 ...), each naming @s0000 and the next sender, every
 * tenth followed by an LLM call of its sender's (10 tokens in, 1 out): the snapshot's messages and thread
 * (serve_proc_start_big imports it). */
static void big_chat(FILE *f) {
  for (int seq = 1; seq <= BIG; seq++)
    fprintf(f, "%s{\"seq\": %d, \"sender\": \"s%04d\", \"kind\": \"agent\", \"text\": \"@s0000 and @s%04d, @s0000 again\","
               " \"ts\": \"2026-11-23T10:00:00.000Z\"}\n", seq > 1 ? "," : "", seq, seq % SENDERS, (seq + 1) % SENDERS);
  fprintf(f, "], \"agents\": [], \"thread\": [");
  for (int seq = 10; seq <= BIG; seq += 10)
    fprintf(f, "%s{\"type\": \"llm-done\", \"agent\": \"s%04d\", \"after_seq\": %d, \"input_tokens\": 10, \"output_tokens\": 1}\n",
            seq > 10 ? "," : "", seq % SENDERS, seq);
  fprintf(f, "]}\n");
}

/* 100,000 messages, 1,000 senders: 50 nodes drawn (the busiest), the edges among them, 100 points of
 * tokens over time ending at each agent's total; the time of one read is printed (best of 3) and held
 * under a bound loose enough for a loaded machine. */
static void graph_of_100000_messages(void) {
  char id[64], path[256];
  serve_proc sp;
  if (serve_proc_start_big(tmp, "s0000", BIG, big_chat, id, &sp)) return;
  snprintf(path, sizeof path, "/api/worlds/big/chats/%s/graph", id);
  long st, best;
  cJSON *g = serve_get_best_of(&sp, path, 3, &st, &best);
  CHECK_INT(st, 200);
  CHECK_INT(cJSON_GetArraySize(arr(g, "nodes")), 50);
  CHECK(num(g, "more_nodes") == SENDERS - 50);
  /* each sender sends 100 messages, so ties go by tokens (the 100 senders s0000, s0010, ... have calls),
   * then by name: s0000, s0010 ... s0490 are drawn */
  CHECK(edge(g, "s0010", "s0000") == 100); /* "@s0000" twice in a message counts once */
  CHECK(edge(g, "s0010", "s0011") == 0);   /* s0011 is not drawn */
  CHECK(edge(g, "s0000", "s0001") == 0);
  const cJSON *last = cJSON_GetArrayItem(arr(g, "nodes"), 49);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(last, "id")), "s0490");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(g, "tokens");
  CHECK_INT(cJSON_GetArraySize(arr(t, "seqs")), 100);
  const cJSON *a0 = cJSON_GetArrayItem(arr(t, "agents"), 0), *v = arr(a0, "tokens");
  CHECK(cJSON_GetArraySize(arr(t, "agents")) == 8 && cJSON_GetArraySize(v) == 100);
  CHECK(cJSON_GetArrayItem(v, 99)->valuedouble == 1100); /* 100 calls of 11 tokens */
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(g, "timeline")));
  cJSON_Delete(g);
  printf("graph of %d messages among %d senders: %ld ms (best of 3)\n", BIG, SENDERS, best);
  CHECK(best < 2000);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

SUITE_RUN((UNIT(graph_of_a_week), UNIT(graph_of_100000_messages)), .tmp = &tmp)
