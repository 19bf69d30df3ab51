/* libagora's public API (include/agora.h) as a program sees it: linked against libagora.so, nothing
 * internal included. Scripted worlds (no network) for the API's behaviour, the loopback LLM server
 * for a world driven from a foreign poll() loop. */
#include "agora.h"
#include "support/llm_server.h"
#include "support/unit.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char relay[] =
  "{\"name\": \"Lib\", \"defaults\": {\"provider\": \"script\"}, \"agents\": ["
  " {\"name\": \"ann\", \"replies\": [\"@bob hello from ann\"]},"
  " {\"name\": \"bob\", \"replies\": [\"@human bob here\"]}]}";

/* What a subscriber saw: the messages' "sender: text" lines and the kinds, in order. */
typedef struct seen {
  char log[8192];
  int messages, events, requests;
  uint64_t request;
  agora_world *w;
  int interrupt_on; /* agora_interrupt from the callback at this message */
  int unsub;        /* unsubscribe itself at the first event */
} seen;

static void on_event(const agora_event *ev, void *ctx) {
  seen *s = ctx;
  const char *json = agora_event_json(ev);
  CHECK(json && json[0] == '{');
  size_t n = strlen(s->log);
  if (agora_event_type(ev) == AGORA_EVENT_MESSAGE) {
    s->messages++;
    snprintf(s->log + n, sizeof s->log - n, "%s: %s\n", agora_event_sender(ev), agora_event_text(ev));
    CHECK(strstr(json, "\"type\":\"message\"") != NULL);
    if (s->interrupt_on && s->messages == s->interrupt_on) agora_interrupt(s->w);
  } else if (agora_event_type(ev) == AGORA_EVENT_REQUEST) {
    s->requests++;
    s->request = agora_event_request(ev);
    snprintf(s->log + n, sizeof s->log - n, "[%s %s]\n", agora_event_kind(ev), agora_event_agent(ev));
  } else {
    s->events++;
  }
  if (s->unsub) {
    CHECK_INT(agora_unsubscribe(s->w, s->unsub), AGORA_OK);
    s->unsub = 0;
  }
}

static agora_world *open_nosave(const char *json) {
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(json, NULL, &(agora_options){.flags = AGORA_NO_SAVE}, &w), AGORA_OK);
  return w;
}

/* Publish, run until quiet: the replies reach the subscriber in order, as messages and JSON. */
static void publish_and_replies(void) {
  agora_world *w = open_nosave(relay);
  if (!w) return;
  seen s = {.w = w};
  CHECK(agora_subscribe(w, on_event, &s) > 0);
  CHECK_STR(agora_world_name(w), "Lib");
  CHECK_INT(agora_publish(w, "human", "@ann start"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_STR(s.log, "human: @ann start\nann: @bob hello from ann\nbob: @human bob here\n");
  CHECK(agora_is_quiet(w));
  agora_world_close(w);
}

/* Bad input: a clear error naming the field, nothing open; the codes have names. */
static void bad_input(void) {
  agora_world *w = (agora_world *)1;
  int rc = agora_world_open("{\"name\": \"x\", \"agents\": [{\"name\": \"a\", \"provider\": \"nope\"}]}", NULL,
                            &(agora_options){.flags = AGORA_NO_SAVE}, &w);
  CHECK_INT(rc, AGORA_ERR_INVALID);
  CHECK(w == NULL);
  CHECK(strstr(agora_errmsg(), "agents[0].provider") != NULL);
  CHECK_INT(agora_world_open("/nonexistent/town.json", NULL, &(agora_options){.flags = AGORA_NO_SAVE}, &w),
            AGORA_ERR_INVALID);
  CHECK(strstr(agora_errmsg(), "/nonexistent/town.json") != NULL);
  CHECK_INT(agora_world_open("", NULL, NULL, &w), AGORA_ERR_INVALID);
  CHECK_INT(agora_world_open(relay, NULL, &(agora_options){.flags = AGORA_NO_SAVE, .chat = "abc"}, &w), AGORA_ERR_INVALID);
  CHECK(strstr(agora_errmsg(), "AGORA_NO_SAVE") != NULL);
  CHECK_STR(agora_strerror(AGORA_ERR_NOT_FOUND), "not found");
  CHECK(strcmp(agora_strerror(12345), "") != 0);
  CHECK_STR(agora_version(), "0.1.0");
  CHECK_INT(agora_api_version(), AGORA_API_VERSION);
  w = open_nosave(relay);
  CHECK_INT(agora_publish(w, "human", "  "), AGORA_ERR_INVALID);
  char *json = NULL;
  CHECK_INT(agora_chats(w, &json), AGORA_ERR_STATE); /* no database */
  CHECK(strstr(agora_errmsg(), "AGORA_NO_SAVE") != NULL);
  agora_world_close(w);
}

/* A callback that interrupts: the run returns CANCELLED, the world stays usable; unsubscribing from
 * inside a callback stops the deliveries. */
static void interrupt_and_unsubscribe(void) {
  agora_world *w = open_nosave(relay);
  if (!w) return;
  seen s = {.w = w, .interrupt_on = 2};
  CHECK(agora_subscribe(w, on_event, &s) > 0);
  agora_publish(w, "human", "@ann start");
  CHECK_INT(agora_run_until_quiet(w), AGORA_ERR_CANCELLED);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK); /* the rest of the conversation */
  CHECK_INT(s.messages, 3);
  seen t = {.w = w};
  t.unsub = agora_subscribe(w, on_event, &t);
  agora_publish(w, "human", "@bob again");
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(t.messages, 1); /* the first only */
  CHECK_INT(agora_unsubscribe(w, t.unsub ? t.unsub : 999), AGORA_ERR_NOT_FOUND);
  agora_world_close(w);
}

/* ask_human: a request event; the turn waits (the run says AGORA_WAITING) until agora_reply. */
static void ask_human_request(void) {
  agora_world *w = open_nosave(
    "{\"name\": \"Ask\", \"agents\": [{\"name\": \"asker\", \"provider\": \"script\", \"tools\": [\"ask_human\"],"
    " \"replies\": [{\"tool\": \"ask_human\", \"args\": {\"question\": \"Which city?\"}}, \"Thanks, noted.\"]}]}");
  if (!w) return;
  seen s = {.w = w};
  agora_subscribe(w, on_event, &s);
  agora_publish(w, "human", "@asker plan a trip");
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK_INT(agora_run_for(w, 10000), AGORA_WAITING); /* at once, not at the deadline */
  clock_gettime(CLOCK_MONOTONIC, &t1);
  CHECK(t1.tv_sec - t0.tv_sec < 2);
  CHECK_INT(agora_run_until_quiet(w), AGORA_WAITING);
  CHECK_INT(s.requests, 1);
  CHECK(strstr(s.log, "[ask-human asker]") != NULL);
  CHECK_INT(agora_reply(w, s.request, 1, "Porto"), AGORA_OK);
  CHECK_INT(agora_reply(w, s.request, 1, "Porto"), AGORA_ERR_STATE); /* answered already */
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK(strstr(s.log, "asker: Thanks, noted.") != NULL);
  agora_world_close(w);
}

/* A tool call declared "approve": true: a request event, allowed by agora_answer; denied at once when
 * nobody subscribes; approved without asking with AGORA_AUTO_APPROVE. */
static const char approving[] =
  "{\"name\": \"Ap\", \"agents\": [{\"name\": \"keeper\", \"provider\": \"script\","
  " \"tools\": [{\"name\": \"save_context\", \"approve\": true}],"
  " \"replies\": [{\"tool\": \"save_context\", \"args\": {\"k\": 1}}, \"@human saved\"]}]}";

static int tool_result_ok(const char *log) { return strstr(log, "\"ok\":true") != NULL; }

typedef struct results {
  char log[4096];
} results;

static void log_results(const agora_event *ev, void *ctx) {
  results *r = ctx;
  const char *kind = agora_event_kind(ev);
  if (!strcmp(kind, "tool-result") || !strcmp(kind, "approval-request")) {
    size_t n = strlen(r->log);
    snprintf(r->log + n, sizeof r->log - n, "%s\n", agora_event_json(ev));
  }
}

static void approvals(void) {
  agora_world *w = open_nosave(approving);
  seen s = {.w = w};
  results r = {.log = ""};
  agora_subscribe(w, on_event, &s);
  agora_subscribe(w, log_results, &r);
  agora_publish(w, "human", "@keeper save it");
  CHECK_INT(agora_run_until_quiet(w), AGORA_WAITING);
  CHECK(strstr(s.log, "[approval-request keeper]") && strstr(r.log, "\"tool\":\"save_context\",\"args\":{\"k\":1}"));
  CHECK_INT(agora_answer(w, s.request, 1), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK(tool_result_ok(r.log));
  agora_world_close(w);

  w = open_nosave(approving); /* nobody subscribed: denied at once, the run never waits */
  agora_publish(w, "human", "@keeper save it");
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  agora_world_close(w);

  agora_world *a = NULL;
  CHECK_INT(agora_world_open(approving, NULL, &(agora_options){.flags = AGORA_NO_SAVE | AGORA_AUTO_APPROVE}, &a), AGORA_OK);
  results q = {.log = ""};
  agora_subscribe(a, log_results, &q);
  agora_publish(a, "human", "@keeper save it");
  CHECK_INT(agora_run_until_quiet(a), AGORA_OK);
  CHECK(tool_result_ok(q.log) && !strstr(q.log, "approval-request"));
  agora_world_close(a);
}

/* The pull buffer a binding reads: whole JSON lines, then empty. */
static void events_buffer(void) {
  agora_world *w = open_nosave(relay);
  if (!w) return;
  CHECK_INT(agora_events_buffer(w, 1 << 20), AGORA_OK);
  agora_publish(w, "human", "@ann start");
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  char *lines = NULL;
  size_t len = 0;
  CHECK_INT(agora_events_take(w, &lines, &len), AGORA_OK);
  CHECK(lines && len == strlen(lines) && strstr(lines, "\"text\":\"@human bob here\"") && lines[len - 1] == '\n');
  agora_free(lines);
  CHECK_INT(agora_events_take(w, &lines, &len), AGORA_OK);
  CHECK_INT(len, 0);
  agora_free(lines);
  CHECK_INT(agora_events_buffer(w, 64), AGORA_OK); /* too small for any line: dropped, and said */
  agora_publish(w, "human", "@bob hi");
  agora_run_until_quiet(w);
  CHECK_INT(agora_events_take(w, &lines, &len), AGORA_ERR_TOO_BIG);
  agora_free(lines);
  agora_world_close(w);
}

/* Chats on a database: list, transcript, usage, export → import, branch, delete, new, reopen by id. */
static void chats_on_a_database(void) {
  char *db = unit_tmpdir();
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(relay, db, NULL, &w), AGORA_OK);
  if (!w) return;
  agora_publish(w, "human", "@ann start");
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  char cur[AGORA_ID_MAX], imported[AGORA_ID_MAX], branched[AGORA_ID_MAX];
  snprintf(cur, sizeof cur, "%s", agora_chat_current(w));
  char *json = NULL;
  CHECK_INT(agora_chats(w, &json), AGORA_OK);
  CHECK(json && json[0] == '[' && strstr(json, cur));
  CHECK(json && strstr(json, "\"message_count\":3"));
  agora_free(json);
  CHECK_INT(agora_transcript(w, NULL, &json), AGORA_OK);
  CHECK(json && strstr(json, "\"text\":\"@bob hello from ann\""));
  agora_free(json);
  CHECK_INT(agora_usage(w, cur, &json), AGORA_OK);
  CHECK_STR(json, "[]"); /* the script provider reports no tokens (usage_from_the_server: one that does) */
  agora_free(json);
  CHECK_INT(agora_chat_export(w, NULL, &json), AGORA_OK);
  CHECK_INT(agora_chat_import(w, json, imported), AGORA_OK);
  agora_free(json);
  CHECK(strcmp(imported, cur) != 0);
  int rc = agora_chat_import(w, "{\"format\": 99}", branched);
  CHECK(rc == AGORA_ERR_VERSION || rc == AGORA_ERR_INVALID);
  CHECK_INT(agora_chat_import(w, "not json", branched), AGORA_ERR_INVALID);
  CHECK_INT(agora_chat_branch(w, cur, 2, branched), AGORA_OK);
  CHECK_INT(agora_transcript(w, branched, &json), AGORA_OK);
  CHECK(json && strstr(json, "hello from ann") && !strstr(json, "bob here"));
  agora_free(json);
  CHECK_INT(agora_chat_branch(w, cur, 99, branched), AGORA_ERR_INVALID);
  CHECK_INT(agora_chat_delete(w, branched), AGORA_OK);
  CHECK_INT(agora_transcript(w, branched, &json), AGORA_ERR_NOT_FOUND);
  CHECK_INT(agora_chat_new(w), AGORA_OK);
  CHECK(strcmp(agora_chat_current(w), cur) != 0);
  CHECK_INT(agora_chat_load(w, cur), AGORA_OK);
  CHECK_STR(agora_chat_current(w), cur);
  agora_world_close(w);
  /* The stored world by its name, the chat continued */
  CHECK_INT(agora_world_open("Lib", db, &(agora_options){.chat = cur}, &w), AGORA_OK);
  if (w) CHECK_STR(agora_chat_current(w), cur);
  agora_world_close(w);
  unit_rmrf(db);
  free(db);
}

/* A snapshot's text with \u0000 put into its first message's text (cJSON would cut the string there). */
static char *with_nul(const char *snap) {
  const char *at = strstr(snap, "@ann start");
  char *out = at ? malloc(strlen(snap) + 7) : NULL;
  if (!out) return NULL;
  snprintf(out, strlen(snap) + 7, "%.*s\\u0000%s", (int)(at - snap), snap, at);
  return out;
}

/* agora_db_*: the chats of a database with no world open (what `agora chats` uses). */
static void a_database_without_a_world(void) {
  char *db = unit_tmpdir(), missing[600];
  snprintf(missing, sizeof missing, "%s/none", db);
  agora_db *d = NULL;
  CHECK_INT(agora_db_open(missing, AGORA_DB_READ, &d), AGORA_ERR_NOT_FOUND);
  CHECK(d == NULL);
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(relay, db, NULL, &w), AGORA_OK);
  if (!w) return;
  agora_publish(w, "human", "@ann start");
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  char cur[AGORA_ID_MAX], id[AGORA_ID_MAX], now[AGORA_ID_MAX], *json = NULL;
  snprintf(cur, sizeof cur, "%s", agora_chat_current(w));
  agora_world_close(w);
  CHECK_INT(agora_db_open(db, 0, &d), AGORA_OK);
  if (!d) return;
  CHECK_INT(agora_db_chats(d, NULL, &json), AGORA_OK);
  CHECK(json && strstr(json, cur) && strstr(json, "\"current\":true"));
  agora_free(json);
  CHECK_INT(agora_db_chats(d, "Nope", &json), AGORA_ERR_INVALID);
  CHECK(strstr(agora_errmsg(), "Nope") != NULL);
  CHECK_INT(agora_db_chat_export(d, cur, &json), AGORA_OK);
  char *nul = json ? with_nul(json) : NULL;
  CHECK_INT(agora_db_chat_import(d, nul, "town.json", id), AGORA_ERR_INVALID); /* not a shortened message */
  CHECK(strstr(agora_errmsg(), "town.json") != NULL);
  free(nul);
  CHECK_INT(agora_db_chat_import(d, "[", "town.json", id), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "town.json: malformed JSON");
  CHECK_INT(agora_db_chat_import(d, json, NULL, id), AGORA_OK);
  agora_free(json);
  CHECK_INT(agora_db_chat_branch(d, cur, 2, id), AGORA_OK);
  CHECK_INT(agora_db_chat_delete(d, id, now), AGORA_OK);
  CHECK_STR(now, cur); /* deleting another chat leaves the current one */
  CHECK_INT(agora_db_chat_delete(d, id, now), AGORA_ERR_NOT_FOUND);
  CHECK_INT(agora_db_chat_new(d, "Lib", id), AGORA_OK);
  CHECK(strcmp(id, cur) != 0);
  CHECK_INT(agora_db_chat_delete(d, id, now), AGORA_OK);
  CHECK(now[0] != '\0' && strcmp(now, id) != 0); /* the most recently updated remaining chat */
  agora_db_close(d);
  unit_rmrf(db);
  free(db);
}

/* A loopback server answering by rule, and in json a world of one agent, ann, answering from it (OpenAI
 * wire format); NULL (the case failed) when the server does not start. The caller stops the server. */
static llm_server *server_world(const char *rule, char *json, size_t cap) {
  llm_server *srv = NULL;
  CHECK_INT(llm_server_start(&srv), 0);
  if (!srv) return NULL;
  llm_server_rule(srv, NULL, rule);
  setenv("AGORA_TEST_KEY", "k", 1);
  snprintf(json, cap, "{\"name\": \"Loop\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\","
           " \"model\": \"m\", \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\"}]}", llm_server_url(srv, "/v1"));
  return srv;
}

/* A foreign loop: poll() on agora_fd with agora_next_timeout, agora_step on either, until the world is
 * quiet; the replies come from a real socket (the loopback LLM server with 30 ms latency). */
static void foreign_loop(void) {
  char json[1024];
  llm_server *srv = server_world("reply=\"from the server\" latency=30", json, sizeof json);
  if (!srv) return;
  agora_world *w = open_nosave(json);
  if (w) {
    seen s = {.w = w};
    agora_subscribe(w, on_event, &s);
    int fd = agora_fd(w);
    CHECK(fd >= 0);
    agora_publish(w, "human", "@ann hi");
    int quiet = 0, polls = 0;
    for (int i = 0; i < 10000 && !quiet; i++) {
      long t = agora_next_timeout(w);
      struct pollfd p = {.fd = fd, .events = POLLIN};
      polls += poll(&p, 1, t < 0 || t > 1000 ? 1000 : (int)t) > 0;
      quiet = agora_step(w);
      CHECK(quiet >= 0);
    }
    CHECK(quiet == 1);
    CHECK_INT(agora_fd(w), fd); /* the same descriptor all along */
    CHECK(polls > 0); /* woken by the descriptor, not only by timeouts */
    CHECK(strstr(s.log, "ann: from the server") != NULL);
    agora_world_close(w);
  }
  llm_server_stop(srv);
}

/* agora_thinking / agora_agent_thinking: what a progress display shows, while a reply is in flight
 * (the loopback server answers after 300 ms) and after. */
static void thinking_counts(void) {
  char json[1024];
  llm_server *srv = server_world("reply=\"later\" latency=300", json, sizeof json);
  if (!srv) return;
  agora_world *w = open_nosave(json);
  if (w) {
    agora_publish(w, "human", "@ann hi");
    for (int i = 0; i < 500 && !agora_thinking(w) && !agora_is_quiet(w); i++) agora_run_for(w, 10);
    CHECK_INT(agora_thinking(w), 1);
    CHECK_INT(agora_agent_thinking(w, "ann"), 1);
    CHECK_INT(agora_agent_thinking(w, "nobody"), 0);
    CHECK_INT(agora_agent_thinking(w, NULL), 0);
    CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
    CHECK_INT(agora_thinking(w), 0);
    CHECK_INT(agora_agent_thinking(w, "ann"), 0);
    agora_world_close(w);
  }
  llm_server_stop(srv);
}

/* Usage: the tokens the server reported, per agent, summed from the stored thread. */
static void usage_from_the_server(void) {
  char json[1024], *usage = NULL;
  llm_server *srv = server_world("reply=\"@human ok\"", json, sizeof json);
  if (!srv) return;
  char *db = unit_tmpdir();
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(json, db, NULL, &w), AGORA_OK);
  for (int i = 0; w && i < 2; i++) {
    agora_publish(w, "human", "@ann hello there");
    CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  }
  if (w) CHECK_INT(agora_usage(w, NULL, &usage), AGORA_OK);
  CHECK(usage && strstr(usage, "[{\"agent\":\"ann\",\"calls\":2,\"input_tokens\":") && !strstr(usage, "\"input_tokens\":0"));
  agora_free(usage);
  agora_world_close(w);
  llm_server_stop(srv);
  unit_rmrf(db);
  free(db);
}

/* Different worlds on different threads at once (agora.h's thread rule): each its own loop, both on
 * the same loopback server. */
typedef struct thread_run {
  const char *json;
  int replies;
  int rc;
} thread_run;

static void count_reply(const agora_event *ev, void *ctx) {
  const char *s = agora_event_sender(ev);
  if (s && !strcmp(s, "ann")) ((thread_run *)ctx)->replies++;
}

static void *run_world(void *arg) {
  thread_run *t = arg;
  agora_world *w = NULL;
  if ((t->rc = agora_world_open(t->json, NULL, &(agora_options){.flags = AGORA_NO_SAVE}, &w))) return NULL;
  agora_subscribe(w, count_reply, t);
  for (int i = 0; i < 20 && !t->rc; i++)
    if (!(t->rc = agora_publish(w, "human", "@ann hi"))) t->rc = agora_run_until_quiet(w);
  agora_world_close(w);
  return NULL;
}

static void two_threads(void) {
  char json[1024];
  llm_server *srv = server_world("reply=\"@human ok\" latency=2", json, sizeof json);
  if (!srv) return;
  thread_run t[2] = {{.json = json}, {.json = json}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, run_world, &t[i]);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 2; i++) {
    CHECK_INT(t[i].rc, AGORA_OK);
    CHECK_INT(t[i].replies, 20);
  }
  llm_server_stop(srv);
}

/* API 3's options are read only with AGORA_OPTIONS_3, and checked then, naming the field. */
static void options_3_checked(void) {
  agora_world *w = NULL;
  const char *bad_url[] = {"ftp://x"};
  agora_options o = {.flags = AGORA_NO_SAVE | AGORA_OPTIONS_3, .llm_cache = "sometimes"};
  CHECK_INT(agora_world_open(relay, NULL, &o, &w), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_options.llm_cache: unknown mode 'sometimes'");
  o = (agora_options){.flags = AGORA_NO_SAVE | AGORA_OPTIONS_3, .allow_key_to = bad_url, .n_allow_key_to = 1};
  CHECK_INT(agora_world_open(relay, NULL, &o, &w), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_options.allow_key_to[0]: 'ftp://x'");
  o.flags = AGORA_NO_SAVE; /* a program built before API 3: the fields past allow_env are not read */
  o.llm_cache = "sometimes";
  CHECK_INT(agora_world_open(relay, NULL, &o, &w), AGORA_OK);
  CHECK(agora_clock_note(w) == NULL); /* a real clock */
  agora_world_close(w);
}

/* agora_options.on_event is subscribed before the world starts: it sees what opening produces (an MCP
 * server that does not start: its mcp-error, delivered before agora_world_open returns), which a
 * subscription made afterwards misses; agora_event_world names the world being opened. */
typedef struct open_seen {
  int mcp_errors;
  agora_world *w;
} open_seen;

static void on_open_event(const agora_event *ev, void *ctx) {
  open_seen *s = ctx;
  if (!strcmp(agora_event_kind(ev), "mcp-error")) s->mcp_errors++;
  s->w = agora_event_world(ev);
}

static void on_event_sees_the_open(void) {
  static const char mcp[] = "{\"name\": \"Mcp\", \"mcp_servers\": {\"fs\": {\"command\": \"/nonexistent/mcp\"}},"
                            " \"agents\": [{\"name\": \"a\", \"provider\": \"script\"}]}";
  open_seen s = {0}, late = {0};
  agora_world *w = NULL;
  agora_options o = {.flags = AGORA_NO_SAVE | AGORA_OPTIONS_3, .on_event = on_open_event, .on_event_ctx = &s};
  CHECK_INT(agora_world_open(mcp, NULL, &o, &w), AGORA_OK);
  CHECK_INT(s.mcp_errors, 1);
  CHECK(w && s.w == w);
  agora_world_close(w);
  w = open_nosave(mcp);
  if (w) agora_subscribe(w, on_open_event, &late);
  if (w) CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(late.mcp_errors, 0);
  agora_world_close(w);
}

/* The counters an exit status is made of: a failed call, a spent budget, nothing unsaved. */
static void run_counters(void) {
  char json[1024], budget[1200];
  llm_server *srv = server_world("status=400", json, sizeof json);
  if (!srv) return;
  agora_world *w = open_nosave(json);
  agora_publish(w, "human", "@ann hello");
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(agora_failed_calls(w), 1);
  CHECK_INT(agora_budget_spent(w, NULL, NULL), 0);
  agora_world_close(w);
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "reply=\"@human ok\"");
  snprintf(budget, sizeof budget, "{\"budget\": {\"tokens\": 1}, %s", json + 1);
  char *db = unit_tmpdir();
  CHECK_INT(agora_world_open(budget, db, NULL, &w), AGORA_OK);
  int64_t tokens = 0;
  for (int i = 0; w && i < 2; i++) {
    agora_publish(w, "human", "@ann hello");
    CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  }
  CHECK_INT(agora_budget_spent(w, &tokens, NULL), 1);
  CHECK(tokens > 1);
  CHECK_INT(agora_unsaved(w), 0);
  agora_world_close(w);
  llm_server_stop(srv);
  unit_rmrf(db);
  free(db);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    UNIT(publish_and_replies), UNIT(bad_input), UNIT(interrupt_and_unsubscribe), UNIT(ask_human_request), UNIT(approvals),
    UNIT(events_buffer), UNIT(chats_on_a_database), UNIT(a_database_without_a_world), UNIT(foreign_loop), UNIT(two_threads), UNIT(usage_from_the_server),
    UNIT(options_3_checked), UNIT(on_event_sees_the_open), UNIT(run_counters), UNIT(thinking_counts),
  };
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
