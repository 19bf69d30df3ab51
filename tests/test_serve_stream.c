/* agora serve's event streams end to end, a real server process on a free loopback port: the same objects
 * as run --json, resume with Last-Event-ID from the ring and from storage, two clients seeing the same
 * sequence, a client that reads nothing dropped, a human message while agents stream from the loopback
 * LLM server, a tool approved over HTTP, a graceful stop, kill -9, and 100 streams on a world of 200
 * agents. Routes, errors and the token are in test_serve. */
#include "serve/serve_sse.h"
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/serve_client.h"
#include "support/suite.h"
#include "support/tjson.h"
#include "support/tserve.h"
#include "support/unit.h"
#include "support/wait.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static llm_server *srv;

/* 1 when j's string field key is there and equals want (a missing field is no match, never a crash). */
static int jis(const cJSON *j, const char *key, const char *want) {
  const char *v = tjson_str(j, key);
  return v && want && !strcmp(v, want);
}

/* ---- streams ---- */

static void events_url(const serve_proc *sp, const char *world, char *out, size_t cap) {
  snprintf(out, cap, "%s/api/worlds/%s/events", sp->base, world);
}

/* Serves world (its id is name) and follows its events with one stream, connected (pumped 200 ms).
 * The stream, or NULL when the server did not start. */
static sse_conn *serve_and_follow(const char *name, const char *world, const char *const *env, serve_proc *sp,
                                  sse_set **set) {
  char url[256];
  if (tserve_start(name, world, sp, env)) return NULL;
  events_url(sp, name, url, sizeof url);
  *set = sse_set_new();
  sse_conn *c = sse_open(*set, url, NULL, NULL);
  sse_pump(*set, 200);
  return c;
}

static void post(const serve_proc *sp, const char *world, const char *text) {
  char path[256], body[1024];
  snprintf(path, sizeof path, "/api/worlds/%s/messages", world);
  snprintf(body, sizeof body, "{\"text\": \"%s\"}", text);
  tserve_expect(sp, "POST", path, body, 202, NULL);
}

/* Two streams on world's events (url gets their address), then the first exchange: a human message
 * text and the agent's answer, seen by both. */
static void two_streams_first_exchange(const serve_proc *sp, const char *world, const char *text, char *url, sse_set **set,
                                       sse_conn **c1, sse_conn **c2) {
  events_url(sp, world, url, 256);
  *set = sse_set_new();
  *c1 = sse_open(*set, url, NULL, NULL), *c2 = sse_open(*set, url, NULL, NULL);
  sse_pump(*set, 200);
  post(sp, world, text);
  CHECK_INT(sse_wait(*set, 2, "\"type\":\"message\"", 10000), 0);
}

/* Two clients see the same frames; one that leaves and comes back with Last-Event-ID gets exactly
 * what it missed, from the ring; after a restart (another run's ids) the stored messages after its
 * position come instead. */
static void sse_same_sequence_and_resume(void) {
  serve_proc sp;
  if (tserve_start("sse", tserve_counter_world, &sp, NULL)) return;
  char url[256];
  sse_set *set;
  sse_conn *c1, *c2;
  two_streams_first_exchange(&sp, "counter", "@a one", url, &set, &c1, &c2);
  /* Saved is said once the storage thread has synced the commit (docs/decisions.md "Background sync"). */
  CHECK_INT(sse_wait(set, 1, "\"event\":\"state-saved\"", 5000), 0);
  size_t n1, n2;
  const sse_frame_rec *f1 = sse_frames(c1, &n1), *f2 = sse_frames(c2, &n2);
  CHECK(n1 > 0);
  CHECK_INT(n1, n2);
  for (size_t i = 0; i < n1 && i < n2; i++) {
    CHECK_STR(f1[i].id, f2[i].id);
    CHECK_STR(f1[i].data, f2[i].data);
  }
  CHECK(sse_count(c1, "\"event\":\"llm-chunk\"") >= 1); /* streamed chunks, as run --json --stream */
  CHECK(sse_count(c1, "{\"type\":\"message\",\"world\":\"counter\",\"chat\":\"") == 2);
  /* c2 leaves; two more exchanges; it resumes from its last id */
  char last[128];
  snprintf(last, sizeof last, "%s", f2[n2 - 1].id);
  sse_close(set, c2);
  post(&sp, "counter", "@a two");
  CHECK_INT(sse_wait(set, 4, "\"type\":\"message\"", 5000), 0);
  post(&sp, "counter", "@a three");
  CHECK_INT(sse_wait(set, 6, "\"type\":\"message\"", 5000), 0);
  sse_conn *c3 = sse_open(set, url, last, NULL);
  sse_pump(set, 300);
  f1 = sse_frames(c1, &n1);
  size_t n3;
  const sse_frame_rec *f3 = sse_frames(c3, &n3);
  CHECK_INT(n3, n1 - n2);
  for (size_t i = 0; i < n3 && n2 + i < n1; i++) CHECK_STR(f3[i].id, f1[n2 + i].id);
  CHECK_INT(sse_count(c3, "\"type\":\"message\""), 4);
  /* ids grow strictly */
  for (size_t i = 1; i < n1; i++) {
    unsigned long long a = 0, b = 0;
    sscanf(strchr(f1[i - 1].id, '.') + 1, "%llu", &a);
    sscanf(strchr(f1[i].id, '.') + 1, "%llu", &b);
    CHECK(b == a + 1);
  }
  sse_set_free(set);
  CHECK_INT(serve_proc_stop(&sp), 0);

  /* a new run: the position is another run's, so the stored messages after it come (seq 3..6) */
  if (tserve_start("sse", tserve_counter_world, &sp, NULL)) return;
  set = sse_set_new();
  events_url(&sp, "counter", url, sizeof url);
  c3 = sse_open(set, url, last, NULL);
  CHECK_INT(sse_wait(set, 4, "\"type\":\"message\"", 5000), 0);
  f3 = sse_frames(c3, &n3);
  CHECK(n3 >= 4);
  if (n3 >= 4) {
    CHECK(strstr(f3[0].data, "\"seq\":3,") != NULL);
    CHECK(strstr(f3[3].data, "\"seq\":6,") != NULL);
    CHECK(strstr(f3[3].data, "\"text\":\"three\"") != NULL);
  }
  sse_set_free(set);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* A resume from a position that has left the 8,192-frame ring (same run): every message of the gap comes
 * from storage, in order and as the live stream showed it, then the live stream; a reply in flight at the
 * resume comes whole as its message when it ends (its earlier chunks are not replayed). */
static void sse_resume_past_ring(void) {
  char *world = malloc(64 * 1024), words[512] = "", url[256];
  for (int i = 0; i < 100; i++) strcat(words, i ? " w" : "w");
  size_t len = (size_t)snprintf(world, 64 * 1024,
                                "{\"name\": \"Resume\", \"turn_limit\": 1000, \"agents\": [{\"name\": \"slow\", "
                                "\"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\", \"api_key_env\": "
                                "\"AGORA_TEST_KEY\", \"system_prompt\": \"[[mock reply=\\\"v1 v2 v3 v4 v5 v6\\\" delay=150]]\"}",
                                llm_server_url(srv, "/v1"));
  for (int i = 0; i < 100; i++)
    len += (size_t)snprintf(world + len, 64 * 1024 - len, ", {\"name\": \"s%02d\", \"provider\": \"script\", \"replies\": [\"%s\"]}", i, words);
  snprintf(world + len, 64 * 1024 - len, "]}");
  const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
  serve_proc sp;
  int rc = tserve_start("resume", world, &sp, env);
  free(world);
  if (rc) return;
  sse_set *set;
  sse_conn *c1, *c2;
  two_streams_first_exchange(&sp, "resume", "@s00 first", url, &set, &c1, &c2);
  size_t n;
  const sse_frame_rec *f = sse_frames(c2, &n);
  char last[128];
  snprintf(last, sizeof last, "%s", n ? f[n - 1].id : "");
  sse_close(set, c2);
  /* 100 replies of 100 streamed words: over 10,000 frames, more than the ring holds */
  char *all = malloc(100 * 5 + 32);
  all[0] = '\0';
  for (int i = 0; i < 100; i++) sprintf(all + strlen(all), "@s%02d ", i);
  strcat(all, "answer");
  post(&sp, "resume", all);
  free(all);
  CHECK_INT(sse_wait(set, 103, "\"type\":\"message\"", 60000), 0);
  f = sse_frames(c1, &n);
  CHECK(n > SSE_RING + 100);
  /* a reply in flight: the resume comes after its first chunk */
  size_t chunks = sse_count(c1, "\"event\":\"llm-chunk\"");
  post(&sp, "resume", "@slow talk slowly");
  CHECK_INT(sse_wait(set, chunks + 1, "\"event\":\"llm-chunk\"", 10000), 0);
  sse_conn *c3 = sse_open(set, url, last, NULL);
  CHECK_INT(sse_wait(set, 1, "\"text\":\"v1 v2 v3 v4 v5 v6\"", 10000), 0);
  CHECK_INT(sse_count(c3, "\"type\":\"resync\""), 0);
  /* c3's messages: seq 3..105 in order, each as c1 saw it live; the replayed ones carry frame number 0 */
  size_t n1, n3;
  const sse_frame_rec *f1 = sse_frames(c1, &n1), *f3 = sse_frames(c3, &n3);
  size_t k1 = 0, seen = 0;
  int same = 1, replayed = 0;
  for (size_t i = 0; i < n3; i++) {
    if (!strstr(f3[i].data, "\"type\":\"message\"")) continue;
    while (k1 < n1 && !(strstr(f1[k1].data, "\"type\":\"message\"") && strstr(f1[k1].data, "\"seq\":1,") == NULL &&
                        strstr(f1[k1].data, "\"seq\":2,") == NULL))
      k1++;
    same &= k1 < n1 && !strcmp(f1[k1].data, f3[i].data);
    char want[32];
    snprintf(want, sizeof want, "\"seq\":%zu,", seen + 3);
    same &= strstr(f3[i].data, want) != NULL;
    replayed += strstr(f3[i].id, ".0.") != NULL;
    k1++, seen++;
  }
  CHECK(same);
  CHECK_INT(seen, 103);
  CHECK(replayed >= 102); /* the messages up to the human's last one came from storage */
  CHECK_INT(sse_count(c3, "\"text\":\"v1 v2 v3 v4 v5 v6\""), 1); /* the reply in flight, whole */
  sse_set_free(set);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* The loopback LLM server streams slowly; a human message posted meanwhile is published at once and
 * the reply still arrives whole. */
/* Serves world name (id = name) with one agent on the loopback LLM server that streams reply one word
 * each delay_ms, and follows its stream with one client (*set, *c). 0, or -1 when it did not start. */
static int slow_world(const char *name, const char *agent, const char *reply, int delay_ms, serve_proc *sp,
                      sse_set **set, sse_conn **c) {
  char world[1024];
  snprintf(world, sizeof world,
           "{\"name\": \"%s\", \"agents\": [{\"name\": \"%s\", \"provider\": \"openai\", \"model\": \"m\","
           " \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\","
           " \"system_prompt\": \"[[mock reply=\\\"%s\\\" delay=%d]]\"}]}",
           name, agent, llm_server_url(srv, "/v1"), reply, delay_ms);
  const char *env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};
  *c = serve_and_follow(name, world, env, sp, set);
  return *c ? 0 : -1;
}

/* slow_world, with say posted to it and the reply streaming: chunks llm-chunk frames seen. */
static int slow_world_talking(const char *name, const char *agent, const char *reply, int delay_ms, const char *say,
                              int chunks, serve_proc *sp, sse_set **set, sse_conn **c) {
  if (slow_world(name, agent, reply, delay_ms, sp, set, c)) return -1;
  post(sp, name, say);
  CHECK_INT(sse_wait(*set, chunks, "\"event\":\"llm-chunk\"", 10000), 0);
  return 0;
}

static void human_message_while_streaming(void) {
  serve_proc sp;
  sse_set *set;
  sse_conn *c;
  if (slow_world_talking("slow", "ann", "w1 w2 w3 w4 w5 w6 w7 w8", 60, "@ann talk", 2, &sp, &set, &c)) return;
  post(&sp, "slow", "hello while you talk");
  CHECK_INT(sse_wait(set, 3, "\"type\":\"message\"", 10000), 0);
  size_t n;
  const sse_frame_rec *f = sse_frames(c, &n);
  int human = -1, reply = -1, last_chunk = -1;
  for (size_t i = 0; i < n; i++) {
    if (strstr(f[i].data, "\"text\":\"hello while you talk\"")) human = (int)i;
    if (strstr(f[i].data, "\"sender\":\"ann\"") && strstr(f[i].data, "w1 w2 w3 w4 w5 w6 w7 w8") && reply < 0) reply = (int)i;
    if (strstr(f[i].data, "\"event\":\"llm-chunk\"") && reply < 0) last_chunk = (int)i;
  }
  CHECK(human >= 0 && reply >= 0);
  CHECK(human < last_chunk); /* the human's message came while ann was still streaming */
  CHECK(human < reply);
  sse_set_free(set);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* A tool declared "approve": true waits for POST /api/approvals/{id}. */
static void approve_over_http(void) {
  static const char world[] =
    "{\"name\": \"Careful\", \"agents\": [{\"name\": \"careful\", \"provider\": \"script\", \"tools\": ["
    "{\"name\": \"save_context\", \"approve\": true}], \"replies\": ["
    "{\"tool\": \"save_context\", \"args\": {\"message\": \"saved it\"}}, \"not saved\"]}]}";
  serve_proc sp;
  sse_set *set;
  sse_conn *c = serve_and_follow("careful", world, NULL, &sp, &set);
  if (!c) return;
  post(&sp, "careful", "@careful remember");
  CHECK_INT(sse_wait(set, 1, "\"type\":\"approval-request\"", 5000), 0);
  size_t n;
  const sse_frame_rec *f = sse_frames(c, &n);
  cJSON *req = NULL;
  for (size_t i = 0; i < n && !req; i++)
    if (strstr(f[i].data, "approval-request")) req = cJSON_Parse(f[i].data);
  CHECK_STR(tjson_str(req, "tool"), "save_context");
  CHECK_STR(tjson_str(req, "agent"), "careful");
  long id = (long)tjson_num(req, "id");
  cJSON_Delete(req);
  long st;
  cJSON *w = serve_call_json(&sp, "GET", "/api/worlds/careful", NULL, &st);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(w, "approvals")), 1);
  CHECK_STR(tjson_str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(w, "agents"), 0), "phase"), "awaiting-approval");
  cJSON_Delete(w);
  char path[64];
  snprintf(path, sizeof path, "/api/approvals/%ld", id);
  tserve_expect(&sp, "POST", path, "{\"allow\": true}", 200, NULL);
  CHECK_INT(sse_wait(set, 1, "\"event\":\"approval\"", 5000), 0);
  CHECK_INT(sse_count(c, "\"event\":\"approval\",\"world\":\"careful\""), 1);
  CHECK_INT(sse_count(c, "\"approved\":true"), 1);
  CHECK_INT(sse_wait(set, 1, "\"event\":\"tool-result\"", 5000), 0);
  tserve_expect(&sp, "POST", path, "{\"allow\": true}", 409, "conflict"); /* answered already */
  sse_set_free(set);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* SIGTERM while a reply streams: exit 0, the stream ends, the human's message is saved. */
static void graceful_stop(void) {
  serve_proc sp;
  sse_set *set;
  sse_conn *c;
  if (slow_world_talking("stop", "bob", "a b c d e f g h i j k l", 200, "@bob go on", 1, &sp, &set, &c)) return;
  CHECK_INT(serve_proc_stop(&sp), 0);
  sse_pump(set, 300);
  CHECK(!sse_is_open(c));
  CHECK(sse_count(c, "\"event\":\"cancelled\"") + sse_count(c, "\"event\":\"llm-error\"") >= 1);
  sse_set_free(set);
  const char *args[] = {"chats", "list", "--db", tserve_scratch("db-stop", NULL), "--json", NULL};
  proc_result pr;
  proc_agora(args, NULL, NULL, &pr);
  CHECK_INT(pr.status, 0);
  CHECK(strstr(pr.out, "\"message_count\":1") != NULL);
  proc_result_free(&pr);
}

/* kill -9 while agents answer (commits written, their syncs on the storage thread): the database opens,
 * and every message a state-saved frame covered is stored as the stream showed it. */
static void kill9_keeps_what_was_saved(void) {
  char world[8192];
  size_t len = (size_t)snprintf(world, sizeof world, "{\"name\": \"Killed\", \"turn_limit\": 1000, \"defaults\": {\"provider\": \"script\"}, \"agents\": [");
  for (int i = 0; i < 50; i++)
    len += (size_t)snprintf(world + len, sizeof world - len, "%s{\"name\": \"k%02d\", \"replies\": [\"first of %d\", \"second of %d\"]}",
                            i ? ", " : "", i, i, i);
  snprintf(world + len, sizeof world - len, "]}");
  static const char *const rounds[] = {"everyone, once", "everyone, twice"};
  serve_proc sp;
  sse_set *set;
  sse_conn *c = serve_and_follow("killed", world, NULL, &sp, &set);
  if (!c) return;
  for (int r = 0; r < 2; r++) { /* the second round is in flight when the kill comes */
    post(&sp, "killed", rounds[r]);
    if (!r) CHECK_INT(sse_wait(set, 1, "\"event\":\"state-saved\"", 10000), 0);
  }
  kill(sp.pid, SIGKILL);
  waitpid(sp.pid, NULL, 0);
  sp.pid = 0;
  sse_pump(set, 100);
  /* what the stream said: the messages, and how far state-saved went */
  size_t n;
  const sse_frame_rec *f = sse_frames(c, &n);
  double saved = 0;
  char chat[64] = "";
  for (size_t i = 0; i < n; i++) {
    cJSON *j = cJSON_Parse(f[i].data);
    if (jis(j, "type", "event") && jis(j, "event", "state-saved") && tjson_num(j, "seq") > saved)
      saved = tjson_num(j, "seq");
    if (jis(j, "type", "message") && tjson_str(j, "chat")) snprintf(chat, sizeof chat, "%s", tjson_str(j, "chat"));
    cJSON_Delete(j);
  }
  CHECK(saved >= 1 && chat[0]);
  const char *args[] = {"chats", "export", chat, "--db", tserve_scratch("db-killed", NULL), NULL};
  proc_result pr;
  proc_agora(args, NULL, NULL, &pr);
  CHECK_INT(pr.status, 0);
  cJSON *snap = cJSON_Parse(pr.out);
  const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(snap, "messages");
  CHECK(cJSON_GetArraySize(msgs) >= (int)saved);
  int k = 0, stored_as_shown = 1;
  for (const cJSON *m = msgs ? msgs->child : NULL; m; m = m->next) stored_as_shown &= tjson_num(m, "seq") == ++k;
  for (size_t i = 0; i < n; i++) {
    cJSON *j = cJSON_Parse(f[i].data);
    if (jis(j, "type", "message") && tjson_num(j, "seq") <= saved) {
      const cJSON *m = cJSON_GetArrayItem(msgs, (int)tjson_num(j, "seq") - 1);
      stored_as_shown &= jis(m, "text", tjson_str(j, "text")) && jis(m, "sender", tjson_str(j, "sender"));
    }
    cJSON_Delete(j);
  }
  CHECK(stored_as_shown); /* seqs 1..count, and each message saved as the stream showed it */
  cJSON_Delete(snap);
  proc_result_free(&pr);
  sse_set_free(set);
}

/* 100 streams on a world of 200 agents that all answer: every stream gets the same frames in order. */
static void load_100_clients_200_agents(void) {
  size_t cap = 200 * 96 + 256;
  char *world = malloc(cap);
  size_t len = (size_t)snprintf(world, cap, "{\"name\": \"Crowd\", \"defaults\": {\"provider\": \"script\"}, \"agents\": [");
  for (int i = 0; i < 200; i++)
    len += (size_t)snprintf(world + len, cap - len, "%s{\"name\": \"agent%03d\", \"replies\": [\"reply of %d\"]}",
                            i ? ", " : "", i, i);
  snprintf(world + len, cap - len, "]}");
  serve_proc sp;
  int rc = tserve_start("crowd", world, &sp, NULL);
  free(world);
  if (rc) return;
  char url[256];
  events_url(&sp, "crowd", url, sizeof url);
  sse_set *set = sse_set_new();
  sse_conn *c[100];
  for (int i = 0; i < 100; i++) c[i] = sse_open(set, url, NULL, NULL);
  sse_pump(set, 500);
  post(&sp, "crowd", "everyone, say something");
  CHECK_INT(sse_wait(set, 201, "\"type\":\"message\"", 60000), 0);
  sse_pump(set, 300);
  size_t n0;
  const sse_frame_rec *f0 = sse_frames(c[0], &n0);
  CHECK(n0 >= 201 * 2);
  int same = 1;
  for (int i = 1; i < 100; i++) {
    size_t n;
    const sse_frame_rec *f = sse_frames(c[i], &n);
    same &= n == n0 && sse_is_open(c[i]);
    for (size_t k = 0; same && k < n; k++) same &= !strcmp(f[k].id, f0[k].id) && !strcmp(f[k].data, f0[k].data);
  }
  CHECK(same);
  for (size_t k = 1; k < n0; k++) {
    unsigned long long a = 0, b = 0;
    sscanf(strchr(f0[k - 1].id, '.') + 1, "%llu", &a);
    sscanf(strchr(f0[k].id, '.') + 1, "%llu", &b);
    if (b != a + 1) {
      unit_fail_(__FILE__, __LINE__, "frame %zu: id %llu after %llu", k, b, a);
      break;
    }
  }
  sse_set_free(set);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

/* A client that reads nothing is dropped once its unsent output stays over the cap; the others get
 * every frame; a heartbeat comment comes while the world is idle. */
static void slow_client_dropped(void) {
  const char *env[] = {"AGORA_SERVE_HEARTBEAT_MS=200", NULL};
  serve_proc sp;
  if (tserve_start("big", tserve_counter_world, &sp, env)) return;
  /* the slow one: a small receive buffer, a request, then nothing read */
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)sp.port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK_INT(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  const char *get = "GET /api/worlds/counter/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  CHECK(write(fd, get, strlen(get)) == (ssize_t)strlen(get));
  char url[256];
  events_url(&sp, "counter", url, sizeof url);
  sse_set *set = sse_set_new();
  sse_conn *c = sse_open(set, url, NULL, NULL);
  sse_pump(set, 300);
  size_t idle = sse_bytes(c);
  sse_pump(set, 600);
  CHECK(sse_bytes(c) > idle); /* heartbeats */
  CHECK_INT(sse_count(c, "\"type\""), 0);
  /* 20 human messages of 600 KB: far more than the socket buffers and the 1 MiB cap hold */
  size_t text = 600000;
  char *body = malloc(text + 32);
  int len = snprintf(body, text + 32, "{\"text\": \"");
  memset(body + len, 'y', text);
  strcpy(body + len + text, "\"}");
  for (int i = 0; i < 20; i++) { /* the reading client keeps up between posts (this process is its reader) */
    tserve_expect(&sp, "POST", "/api/worlds/counter/messages", body, 202, NULL);
    CHECK_INT(sse_wait(set, (size_t)i + 1, "\"sender\":\"human\"", 20000), 0);
  }
  free(body);
  /* the silent one stays over the cap: dropped within SSE_BEHIND_MS (2 s) at a later write (heartbeat) */
  int dropped = 0;
  http_reply r = {0};
  for (long long end = now_ms() + wait_budget_ms(10000); !dropped && now_ms() < end;) {
    sse_pump(set, 100);
    http_reply_free(&r);
    http_call(sp.base, "GET", "/metrics", NULL, 0, NULL, &r);
    dropped = strstr(r.body, "\nagora_sse_clients_dropped_total 1\n") != NULL;
  }
  CHECK(dropped);
  CHECK(strstr(r.body, "\nagora_sse_clients 1\n") != NULL);
  http_reply_free(&r);
  CHECK(sse_is_open(c));
  close(fd);
  sse_set_free(set);
  CHECK_INT(serve_proc_stop(&sp), 0);
}

SUITE_RUN((UNIT(sse_same_sequence_and_resume), UNIT(sse_resume_past_ring), UNIT(human_message_while_streaming),
  UNIT(approve_over_http), UNIT(graceful_stop), UNIT(kill9_keeps_what_was_saved), UNIT(load_100_clients_200_agents),
  UNIT(slow_client_dropped)), .tmp = &tserve_tmp, .srv = &srv, .many_fds = 1)
