/* Long-term memory (issue 26, docs/memory.md): the hash embedder and the exact top-k retrieval, the world
 * file's `memory` object, and end to end through the agora binary against the loopback LLM server — a
 * virtual-clock week whose day-1 news reaches the day-5 prompt in mode stream and not in mode window, and
 * keeps reaching it after a restart, a branch and a snapshot export/import. */
#include "agents/memory_stream.h"
#include "world/world_file.h"

#include "support/llm_server.h"
#include "support/proc.h"
#include "support/serve_client.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wait.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

static char *tmp;
static llm_server *srv;

static void hash_embedder_is_deterministic_and_normalised(void) {
  float a[MEM_HASH_DIM], b[MEM_HASH_DIM], c[MEM_HASH_DIM];
  mem_embed_hash("The bridge is closed", a, MEM_HASH_DIM);
  mem_embed_hash("the BRIDGE, is closed!", b, MEM_HASH_DIM);
  mem_embed_hash("apples at the market", c, MEM_HASH_DIM);
  CHECK(memcmp(a, b, sizeof a) == 0); /* case and punctuation do not matter */
  CHECK(fabsf(mem_dot(a, a, MEM_HASH_DIM) - 1.0f) < 1e-5f);
  CHECK(mem_dot(a, c, MEM_HASH_DIM) < 0.5f);
  mem_embed_hash("a b to", a, MEM_HASH_DIM); /* no word of three letters: all zero */
  CHECK(mem_dot(a, a, MEM_HASH_DIM) == 0.0f);
}

/* A stream of texts, one hour apart from t0, importance imp[i] (NULL: all 3). */
static void stream_of(mem_stream *s, const char *const *texts, size_t n, const float *imp) {
  mem_stream_init(s, MEM_HASH_DIM);
  for (size_t i = 0; i < n; i++) {
    ag_msg *m = ag_msg_new("human", texts[i], AG_KIND_HUMAN);
    m->seq = i + 1; /* a message (seq 0 would be a note, never left out) */
    float v[MEM_HASH_DIM];
    mem_embed_hash(texts[i], v, MEM_HASH_DIM);
    mem_entry e = {.msg = m, .at_ms = (int64_t)i * 3600000, .importance = imp ? imp[i] : 3, .index = i};
    CHECK_INT(mem_stream_add(s, &e, v), 0);
    ag_msg_unref(m);
  }
}

static void retrieval_scores_recency_importance_relevance(void) {
  static const char *const texts[] = {"the bridge is closed", "apples are cheap", "rain comes tomorrow",
                                      "the mill needs grain", "fish from the river"};
  mem_stream s;
  stream_of(&s, texts, 5, NULL);
  float q[MEM_HASH_DIM];
  mem_embed_hash("is the bridge open", q, MEM_HASH_DIM);
  mem_hit hits[3];
  mem_query mq = {.q = q, .now_ms = 5 * 3600000, .below = UINT64_MAX, .w_relevance = 1};
  CHECK_INT(mem_stream_top(&s, &mq, 3, hits, NULL), 3);
  CHECK_INT(hits[0].i, 0); /* relevance alone: the bridge */
  CHECK(hits[0].relevance == 1.0f && hits[0].score >= hits[1].score && hits[1].score >= hits[2].score);
  mq = (mem_query){.q = q, .now_ms = 5 * 3600000, .below = UINT64_MAX, .w_recency = 1};
  CHECK_INT(mem_stream_top(&s, &mq, 3, hits, NULL), 3);
  CHECK_INT(hits[0].i, 4); /* recency alone: the newest, normalised to 1, the oldest to 0 */
  CHECK(hits[0].recency == 1.0f);
  mq.below = 3; /* the newest two are in the verbatim window */
  CHECK_INT(mem_stream_top(&s, &mq, 8, hits, NULL), 3);
  CHECK_INT(hits[0].i, 2);
  mem_stream_free(&s);
  static const float imp[] = {1, 9, 1, 1, 1};
  stream_of(&s, texts, 5, imp);
  mq = (mem_query){.q = q, .now_ms = 5 * 3600000, .below = UINT64_MAX, .w_importance = 1};
  CHECK_INT(mem_stream_top(&s, &mq, 1, hits, NULL), 1);
  CHECK_INT(hits[0].i, 1);
  mem_stream_free(&s);
}

/* world_spec_parse of json must fail with want in the message. */
static void refused(const char *json, const char *want) {
  world_spec spec;
  ag_errmsg em = {0};
  int rc = world_spec_parse(json, strlen(json), "w.json", &spec, &em);
  CHECK_INT(rc, AG_ERR_INVALID);
  if (rc == AG_OK) world_spec_free(&spec);
  else if (!strstr(em.text, want)) fprintf(stderr, "  got: %s\n  want: %s\n", em.text, want);
  CHECK(rc != AG_OK && strstr(em.text, want));
}

static void world_file_memory_is_strict(void) {
  refused("{\"name\":\"w\",\"agents\":[{\"name\":\"a\",\"memory\":{\"mode\":\"goldfish\"}}]}",
          "w.json: agents[0].memory.mode: must be one of 'window', 'summary', 'stream'");
  refused("{\"name\":\"w\",\"agents\":[{\"name\":\"a\",\"memory\":{\"retreive\":3}}]}",
          "w.json: agents[0].memory.retreive: unknown field (did you mean 'retrieve'?)");
  refused("{\"name\":\"w\",\"defaults\":{\"memory\":{\"retrieve\":-1}}}", "w.json: defaults.memory.retrieve:");
  refused("{\"name\":\"w\",\"agents\":[{\"name\":\"a\",\"memory\":{\"weights\":{\"recency\":\"high\"}}}]}",
          "agents[0].memory.weights.recency: must be a number from 0 to 100");
  refused("{\"name\":\"w\",\"agents\":[{\"name\":\"a\",\"memory\":{\"importance\":11}}]}",
          "agents[0].memory.importance: must be a number from 1 to 10");
  refused("{\"name\":\"w\",\"agents\":[{\"name\":\"a\",\"memory\":{\"embedder\":{\"provider\":\"nope\"}}}]}",
          "agents[0].memory.embedder.provider: must be one of 'hash', 'openai', 'ollama', 'gemini'");
  refused("{\"name\":\"w\",\"agents\":[{\"name\":\"a\",\"memory\":[]}]}", "agents[0].memory: must be an object");
}

static void world_file_memory_merges_and_round_trips(void) {
  const char *json = "{\"name\":\"w\",\"defaults\":{\"memory\":{\"mode\":\"stream\",\"retrieve\":5,"
                     "\"embedder\":{\"provider\":\"hash\"},\"weights\":{\"relevance\":2}}},"
                     "\"agents\":[{\"name\":\"a\",\"memory\":{\"retrieve\":3,\"importance\":7}},{\"name\":\"b\"},"
                     "{\"name\":\"c\",\"memory\":{\"mode\":\"summary\",\"summary_tokens\":300,\"summary_model\":\"m\"}}]}";
  world_spec spec, back;
  ag_errmsg em = {0};
  CHECK_INT(world_spec_parse(json, strlen(json), "w.json", &spec, &em), 0);
  const mem_config *a = &spec.agents[0].memory, *b = &spec.agents[1].memory, *c = &spec.agents[2].memory;
  CHECK_INT(a->mode, MEM_MODE_STREAM);
  CHECK_INT(a->retrieve, 3);
  CHECK(a->fixed_importance == 7 && a->w_relevance == 2 && a->w_recency == 1);
  CHECK(b->mode == MEM_MODE_STREAM && b->retrieve == 5 && b->fixed_importance == 3);
  CHECK(c->mode == MEM_MODE_SUMMARY && c->summary_tokens == 300 && c->summary_model && !strcmp(c->summary_model, "m"));
  /* What is stored of a world reads back the same. */
  cJSON *j = world_spec_to_json(&spec);
  char *text = cJSON_PrintUnformatted(j);
  CHECK_INT(world_spec_parse(text, strlen(text), "stored", &back, &em), 0);
  CHECK(back.agents[0].memory.retrieve == 3 && back.agents[0].memory.fixed_importance == 7);
  CHECK(back.agents[2].memory.mode == MEM_MODE_SUMMARY && back.agents[1].memory.w_relevance == 2);
  world_spec_free(&back);
  free(text);
  cJSON_Delete(j);
  world_spec_free(&spec);
  /* No memory object: today's behaviour, and nothing written back. */
  const char *plain = "{\"name\":\"w\",\"agents\":[{\"name\":\"a\"}]}";
  CHECK_INT(world_spec_parse(plain, strlen(plain), "w.json", &spec, &em), 0);
  CHECK_INT(spec.agents[0].memory.mode, MEM_MODE_WINDOW);
  j = world_spec_to_json(&spec);
  CHECK(!cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "agents"), 0), "memory"));
  cJSON_Delete(j);
  world_spec_free(&spec);
}

/* ---- end to end: a virtual-clock week ---- */

#define BRIDGE "the bridge is closed"

/* The mayor's world: mode is "window" or "stream"; script is the script's steps (JSON, without []). */
static const char *mayor_world(const char *name, const char *mode, const char *script) {
  static char json[8192];
  snprintf(json, sizeof json,
           "{\"name\": \"town\", \"memory_window\": 4, \"clock\": {\"mode\": \"virtual\", \"start\": "
           "\"2026-01-05T09:00:00Z\"}, \"agents\": [{\"name\": \"mayor\", \"provider\": \"openai\", \"model\": \"m\","
           " \"base_url\": \"%s\", \"system_prompt\": \"You are the mayor.\", \"memory\": {\"mode\": \"%s\"}}],"
           " \"script\": [%s]}",
           llm_server_url(srv, "/v1"), mode, script);
  return suite_file(tmp, name, json);
}

/* Day 1: good morning, then the news; days 2 to 4: three unrelated messages a day (the news is far outside
 * the window of 4 by day 5); day 5: the question. */
static const char *week_script(int with_question) {
  static char s[4096];
  static const char *const chatter[] = {"apples are cheap at the market", "the mill needs more grain",
                                        "fish from the river for dinner"};
  int n = snprintf(s, sizeof s, "{\"from\": \"human\", \"text\": \"@mayor good morning\"},"
                                "{\"from\": \"human\", \"text\": \"@mayor " BRIDGE " until spring\"}");
  for (int d = 2; d <= 4; d++) {
    n += snprintf(s + n, sizeof s - (size_t)n, ",{\"wait\": \"1d\"}");
    for (int i = 0; i < 3; i++)
      n += snprintf(s + n, sizeof s - (size_t)n, ",{\"from\": \"human\", \"text\": \"@mayor %s\"}", chatter[i]);
  }
  if (with_question)
    snprintf(s + n, sizeof s - (size_t)n, ",{\"wait\": \"1d\"},{\"from\": \"human\", \"text\": \"@mayor can I cross "
                                          "the bridge to the farm?\"}");
  return s;
}

/* The body of the last request the server got (caller frees), or NULL. */
static char *last_body(void) {
  size_t n = llm_server_request_count(srv);
  llm_server_request r;
  if (!n || llm_server_request_get(srv, n - 1, &r)) return NULL;
  char *body = strdup(r.body);
  llm_server_request_free(&r);
  return body;
}

/* Runs agora with args; it must exit 0. Returns stdout (caller frees). */
static char *agora_ok(const char *const *args) {
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, NULL, &r), 0);
  if (r.status) fprintf(stderr, "  agora %s: %s\n", args[0], r.err);
  CHECK_INT(r.status, 0);
  char *out = r.out;
  r.out = NULL;
  proc_result_free(&r);
  return out;
}

/* The day-5 question's prompt holds the day-1 news with its date (in the system prompt, not the window). */
static void check_remembers(int want) {
  char *body = last_body();
  cJSON *j = body ? cJSON_Parse(body) : NULL;
  const cJSON *sys = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "messages"), 0);
  const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(sys, "content"));
  CHECK(text && strstr(text, "You are the mayor."));
  CHECK(body && strstr(body, "can I cross the bridge"));
  CHECK_INT(body && strstr(body, BRIDGE) != NULL, want);
  if (body && want != (strstr(body, BRIDGE) != NULL)) fprintf(stderr, "  prompt: %s\n", body);
  if (want) CHECK(text && strstr(text, "[2026-01-05T09:00:00.000Z] human: @mayor " BRIDGE " until spring"));
  cJSON_Delete(j);
  free(body);
}

static void week_stream_remembers_window_forgets(void) {
  const char *modes[] = {"window", "stream"};
  for (int i = 0; i < 2; i++) {
    llm_server_reset(srv);
    llm_server_rule(srv, NULL, "reply=noted");
    const char *args[] = {"run", mayor_world("week.json", modes[i], week_script(1)), "--json", "--no-save", NULL};
    char *out = agora_ok(args);
    CHECK_INT(llm_server_request_count(srv), 12);
    CHECK_INT(out && strstr(out, "\"event\":\"memory-retrieved\"") != NULL, i);
    free(out);
    check_remembers(i);
  }
}


/* A hosted embedder in each wire format: every turn starts with one embeddings request (the memories not
 * embedded yet and the question), the turn's prompt gets the memories retrieved with those vectors; a
 * failing embedder is an llm-error and the turn is answered without retrieval. */
static void hosted_embedder_in_turns(void) {
  static const struct { const char *provider, *suffix, *path; } wires[] = {
      {"openai", "/v1", "/embeddings"}, {"ollama", "", "/api/embed"}, {"gemini", "", ":batchEmbedContents"}};
  for (int w = 0; w < 3; w++) {
    for (int fail = 0; fail < 2; fail++) {
      llm_server_reset(srv);
      llm_server_rule(srv, NULL, "reply=noted");
      char url[256], json[4096];
      snprintf(url, sizeof url, "%s", llm_server_url(srv, wires[w].suffix));
      snprintf(json, sizeof json,
               "{\"name\": \"town\", \"memory_window\": 2, \"agents\": [{\"name\": \"mayor\", \"provider\": \"openai\","
               " \"model\": \"m\", \"base_url\": \"%s\", \"memory\": {\"mode\": \"stream\","
               " \"embedder\": {\"provider\":"
               " \"%s\", \"base_url\": \"%s\", \"api_key_env\": \"\"}}}], \"script\": ["
               "{\"from\": \"human\", \"text\": \"@mayor " BRIDGE " until spring\"},"
               "{\"from\": \"human\", \"text\": \"@mayor apples are cheap\"},"
               "{\"from\": \"human\", \"text\": \"@mayor can I cross the bridge%s?\"}]}",
               llm_server_url(srv, "/v1"), wires[w].provider, url, fail ? " (fail-embed)" : "");
      char *cache = suite_fresh(tmp, "embed-cache"); /* each run embeds from nothing */
      const char *args[] = {"run", suite_file(tmp, "embed.json", json), "--json", "--no-save", "--cache-db", cache, NULL};
      proc_result r;
      CHECK_INT(proc_agora(args, NULL, NULL, &r), 0);
      CHECK_INT(r.status, fail); /* a failed embedding is a failed call, as a failed chat call is */
      char *out = r.out;
      r.out = NULL;
      proc_result_free(&r);
      CHECK_INT(llm_server_requests_with(srv, "/chat/completions", NULL), 3);
      CHECK_INT(llm_server_requests_with(srv, wires[w].path, NULL), 3); /* one a turn, batched */
      CHECK_INT(out && strstr(out, "\"event\":\"llm-error\"") != NULL, fail);
      CHECK_INT(out ? (int)(strstr(out, "\"text\":\"noted\"") != NULL) : 0, 1);
      char *body = last_body();
      CHECK_INT(body && strstr(body, "What you remember from earlier") != NULL, !fail);
      CHECK_INT(body && strstr(body, "human: @mayor " BRIDGE " until spring") != NULL, !fail);
      if (!body || (strstr(body, "What you remember") != NULL) == fail)
        fprintf(stderr, "  %s fail=%d:\n%s\n%s\n", wires[w].provider, fail, body ? body : "", out ? out : "");
      free(body);
      free(out);
      free(cache);
    }
  }
}

/* The id of the chat in run --json output's first message into id. */
static void chat_of(const char *out, char *id, size_t cap) {
  const char *p = out ? strstr(out, "\"chat\":\"") : NULL;
  CHECK(p != NULL);
  if (p) snprintf(id, cap, "%.*s", (int)strcspn(p + 8, "\""), p + 8);
}

/* Asks the question in chat (a stored one) with run --chat, and checks the prompt. */
static void ask_in(const char *db, const char *chat, int want) {
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "reply=noted");
  const char *q = mayor_world("q.json", "stream",
                              "{\"wait\": \"1d\"},{\"from\": \"human\", \"text\": \"@mayor can I cross the bridge to the farm?\"}");
  const char *args[] = {"run", q, "--json", "--db", db, "--chat", chat, NULL};
  free(agora_ok(args));
  check_remembers(want);
}

/* agora memory CHAT mayor (in db) prints every line of want. */
static void memory_has(const char *db, const char *chat, const char *want) {
  const char *list[] = {"memory", chat, "mayor", "--db", db, NULL};
  char *out = agora_ok(list);
  CHECK_HAS(out, want);
  free(out);
}

/* agora memory lists the stream and scores it for a query; a wrong agent or mode is refused. */
static void shows_memory(const char *db, const char *chat) {
  memory_has(db, chat, "2026-01-05T09:00:00.000Z  importance 3  human: @mayor " BRIDGE " until spring\n");
  memory_has(db, chat, "2026-01-08T09:00:00.000Z  importance 3  human: @mayor fish from the river for dinner\n");
  const char *query[] = {"memory", chat, "mayor", "--query", "bridge", "--json", "--db", db, NULL};
  char *out = agora_ok(query);
  cJSON *first = cJSON_Parse(out ? out : "");
  const cJSON *scores = cJSON_GetObjectItem(first, "scores");
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(scores, "relevance")) == 1.0);
  CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(first, "text")) ?: "", "bridge") != NULL);
  cJSON_Delete(first);
  free(out);
  const char *nobody[] = {"memory", chat, "nobody", "--db", db, NULL};
  PROC_REFUSED(nobody, NULL, "agora: memory: no agent 'nobody' in world 'town'", NULL);
}

static void memories_survive_restart_branch_and_snapshot(void) {
  char *db = suite_fresh(tmp, "db");
  llm_server_rule(srv, NULL, "reply=noted");
  const char *args[] = {"run", mayor_world("week.json", "stream", week_script(0)), "--json", "--db", db, NULL};
  char *out = agora_ok(args);
  char chat[128] = "", branch[128] = "", early[128] = "", imported[128] = "";
  chat_of(out, chat, sizeof chat);
  free(out);
  ask_in(db, chat, 1); /* a new process: the memories come back from storage */
  shows_memory(db, chat);
  const char *b1[] = {"chats", "branch", chat, "--at", "22", "--db", db, NULL};
  const char *b2[] = {"chats", "branch", chat, "--at", "2", "--db", db, NULL};
  out = agora_ok(b1);
  snprintf(branch, sizeof branch, "%.*s", (int)strcspn(out ? out : "", "\n"), out ? out : "");
  free(out);
  out = agora_ok(b2);
  snprintf(early, sizeof early, "%.*s", (int)strcspn(out ? out : "", "\n"), out ? out : "");
  free(out);
  ask_in(db, branch, 1);
  ask_in(db, early, 0); /* branched before the news: never told */
  const char *snap = suite_file(tmp, "snap.json", NULL);
  const char *ex[] = {"chats", "export", chat, "-o", snap, "--db", db, NULL};
  free(agora_ok(ex));
  char *db2 = suite_fresh(tmp, "db2");
  const char *im[] = {"chats", "import", snap, "--db", db2, NULL};
  out = agora_ok(im);
  snprintf(imported, sizeof imported, "%.*s", (int)strcspn(out ? out : "", "\n"), out ? out : "");
  free(out);
  ask_in(db2, imported, 1);
  free(db2);
  free(db);
}

/* GET .../chats/{c}/agents/{name}/memory from agora serve: the stream, scored with ?query=, and why not. */
static void serve_shows_memory(void) {
  char *db = suite_fresh(tmp, "db3");
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "reply=noted");
  const char *world = mayor_world("week.json", "stream", week_script(0));
  const char *args[] = {"run", world, "--json", "--db", db, NULL};
  char *out = agora_ok(args);
  char chat[128] = "", path[512];
  chat_of(out, chat, sizeof chat);
  free(out);
  serve_proc sp;
  const char *sargs[] = {world, "--db", db, NULL};
  CHECK_INT(serve_proc_start(tmp, sargs, NULL, &sp), 0);
  long status = 0;
  snprintf(path, sizeof path, "/api/worlds/town/chats/%s/agents/mayor/memory", chat);
  cJSON *j = serve_call_json(&sp, "GET", path, NULL, &status);
  CHECK_INT(status, 200);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "memories")), 22);
  cJSON_Delete(j);
  snprintf(path, sizeof path, "/api/worlds/town/chats/%s/agents/mayor/memory?query=bridge%%20closed", chat);
  j = serve_call_json(&sp, "GET", path, NULL, &status);
  CHECK_INT(status, 200);
  const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "memories"), 0);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(first, "text")) ?: "", "@mayor " BRIDGE " until spring");
  CHECK(cJSON_GetObjectItem(first, "scores") != NULL);
  cJSON_Delete(j);
  snprintf(path, sizeof path, "/api/worlds/town/chats/%s/agents/nobody/memory", chat);
  cJSON_Delete(serve_call_json(&sp, "GET", path, NULL, &status));
  CHECK_INT(status, 404);
  cJSON_Delete(serve_call_json(&sp, "GET", "/api/worlds/elsewhere/chats/x/agents/mayor/memory", NULL, &status));
  CHECK_INT(status, 409);
  CHECK_INT(serve_proc_stop(&sp), 0);
  free(db);
}

/* The remember tool: a note with its importance joins the stream, is recalled in a later prompt, and comes
 * back from the stored thread in a new process. */
static void remember_tool_notes_come_back(void) {
  char *db = suite_fresh(tmp, "db4");
  llm_server_reset(srv);
  llm_server_rule(srv, "well", "tool=remember args=\"{\\\"text\\\": \\\"the village well is dry\\\", "
                               "\\\"importance\\\": 9}\" after_tool=noted");
  llm_server_rule(srv, NULL, "reply=noted");
  char script[4200];
  snprintf(script, sizeof script, "{\"from\": \"human\", \"text\": \"@mayor about the well\"},%s", week_script(0));
  const char *args[] = {"run", mayor_world("note.json", "stream", script), "--json", "--db", db, NULL};
  char *out = agora_ok(args);
  char chat[128] = "";
  chat_of(out, chat, sizeof chat);
  CHECK(out && strstr(out, "\"tool\":\"remember\""));
  free(out);
  memory_has(db, chat, "2026-01-05T09:00:00.000Z  importance 9  mayor: the village well is dry\n");
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "reply=noted");
  const char *q = mayor_world("q.json", "stream", "{\"from\": \"human\", \"text\": \"@mayor is there water in the village?\"}");
  const char *ask[] = {"run", q, "--json", "--db", db, "--chat", chat, NULL};
  free(agora_ok(ask));
  char *body = last_body();
  CHECK(body && strstr(body, "] mayor: the village well is dry"));
  free(body);
  free(db);
}

/* Reflection: past reflect_at the turn starts with a call asking for insights; they are stored as notes
 * citing the messages they came from, shown by agora memory, and come back after a restart, where the count
 * toward the next one goes on from the last (no second reflection right away). */
static void reflection_fires_at_threshold_and_cites_sources(void) {
  char *db = suite_fresh(tmp, "db5");
  llm_server_reset(srv);
  llm_server_rule(srv, "high-level insights", "reply=\"The bridge is on everyone's mind (1, 3)\"");
  llm_server_rule(srv, NULL, "reply=noted");
  static char json[4096];
  snprintf(json, sizeof json,
           "{\"name\": \"town\", \"clock\": {\"mode\": \"virtual\", \"start\": \"2026-01-05T09:00:00Z\"},"
           " \"agents\": [{\"name\": \"mayor\", \"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\","
           " \"memory\": {\"mode\": \"stream\", \"reflect_at\": 12}}], \"script\": ["
           "{\"from\": \"human\", \"text\": \"@mayor the bridge is closed\"},"
           "{\"from\": \"human\", \"text\": \"@mayor the bridge ferry is slow\"},"
           "{\"from\": \"human\", \"text\": \"@mayor what now?\"}]}",
           llm_server_url(srv, "/v1"));
  const char *args[] = {"run", suite_file(tmp, "reflect.json", json), "--json", "--db", db, NULL};
  char *out = agora_ok(args);
  char chat[128] = "";
  chat_of(out, chat, sizeof chat);
  CHECK_INT(llm_server_request_count(srv), 4); /* three turns and one reflection, before the third */
  CHECK_HAS(out, "\"event\":\"reflection\"", "\"insights\":[{\"text\":\"The bridge is on everyone's mind\","
                 "\"sources\":[1,3],\"importance\":8}]");
  free(out);
  char *third = last_body();
  CHECK(third && strstr(third, "] mayor: The bridge is on everyone's mind")); /* recalled at once */
  free(third);
  memory_has(db, chat, "importance 8  mayor: The bridge is on everyone's mind  (from messages 1, 3)\n");
  llm_server_reset(srv);
  llm_server_rule(srv, "high-level insights", "reply=\"Too soon (1)\"");
  llm_server_rule(srv, NULL, "reply=noted");
  const char *say[] = {"say", "town", "@mayor and tomorrow?", "--json", "--db", db, NULL};
  out = agora_ok(say);
  CHECK_INT(llm_server_request_count(srv), 1); /* 6 since the last reflection: none due */
  CHECK(out && !strstr(out, "Too soon"));
  free(out);
  memory_has(db, chat, "importance 8  mayor: The bridge is on everyone's mind  (from messages 1, 3)\n");
  /* A snapshot carries the reflection step: the imported chat remembers the insight and its sources. */
  const char *snap = suite_file(tmp, "reflect-snap.json", NULL);
  const char *ex[] = {"chats", "export", chat, "-o", snap, "--db", db, NULL};
  free(agora_ok(ex));
  char *db2 = suite_fresh(tmp, "db5b");
  const char *im[] = {"chats", "import", snap, "--db", db2, NULL};
  out = agora_ok(im);
  char imported[128];
  snprintf(imported, sizeof imported, "%.*s", (int)strcspn(out ? out : "", "\n"), out ? out : "");
  free(out);
  memory_has(db2, imported, "importance 8  mayor: The bridge is on everyone's mind  (from messages 1, 3)\n");
  free(db2);
  free(db);
}

/* Importance "llm": each turn first rates the memories not rated yet in one call; the ratings are stored
 * and come back in a new process, where only what was never rated is asked about. */
static void importance_llm_rates_in_batches(void) {
  char *db = suite_fresh(tmp, "db7");
  llm_server_reset(srv);
  llm_server_rule(srv, "poignancy", "reply=\"9\n2\n9\"");
  llm_server_rule(srv, NULL, "reply=noted");
  static char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"town\", \"agents\": [{\"name\": \"mayor\", \"provider\": \"openai\", \"model\": \"m\","
           " \"base_url\": \"%s\", \"memory\": {\"mode\": \"stream\", \"importance\": \"llm\", \"reflect_at\": 0}}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@mayor the dam broke\"},"
           "{\"from\": \"human\", \"text\": \"@mayor nice weather\"}]}",
           llm_server_url(srv, "/v1"));
  const char *args[] = {"run", suite_file(tmp, "rate.json", json), "--json", "--db", db, NULL};
  char *out = agora_ok(args);
  char chat[128] = "";
  chat_of(out, chat, sizeof chat);
  CHECK_INT(llm_server_request_count(srv), 4); /* a rating call before each of the two turns */
  CHECK_HAS(out, "\"event\":\"memory-rated\"", "\"ratings\":[[1,9]]", "\"ratings\":[[2,9],[3,2]]");
  free(out);
  memory_has(db, chat, "importance 9  human: @mayor the dam broke\n");
  memory_has(db, chat, "importance 2  human: @mayor nice weather\n");
  /* Retrieval ranks by the ratings too (it reads its own copy of each importance): 9 is the highest. */
  const char *query[] = {"memory", chat, "mayor", "--query", "dam", "--json", "--db", db, NULL};
  char *ranked = agora_ok(query);
  cJSON *first = cJSON_Parse(ranked ? ranked : "");
  CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(first, "text")) ?: "", "dam broke") != NULL);
  CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(first, "scores"), "importance")) == 1.0);
  cJSON_Delete(first);
  free(ranked);
  llm_server_reset(srv);
  llm_server_rule(srv, "poignancy", "reply=5");
  llm_server_rule(srv, NULL, "reply=noted");
  const char *say[] = {"say", "town", "@mayor and now?", "--json", "--db", db, NULL};
  free(agora_ok(say));
  CHECK_INT(llm_server_request_count(srv), 2);
  char *rating = NULL;
  llm_server_request r;
  if (!llm_server_request_get(srv, 0, &r)) rating = strdup(r.body), llm_server_request_free(&r);
  /* Only the reply never rated and the new question are asked about. */
  CHECK(rating && strstr(rating, "[1] mayor: noted") && strstr(rating, "[2] human: @mayor and now?") &&
        !strstr(rating, "[3]"));
  free(rating);
  memory_has(db, chat, "importance 9  human: @mayor the dam broke\n");
  memory_has(db, chat, "importance 5  mayor: noted\n");
  memory_has(db, chat, "importance 3  human: @mayor and now?\n"); /* no usable rating: the fixed one */
  free(db);
}

/* The messages printed so far in out_path reach 9 (with a state-saved: something is stored). */
static int printed_enough(void *arg) {
  char *text = unit_read_file((const char *)arg);
  size_t n = 0;
  for (const char *p = text; p && (p = strstr(p, "\"type\":\"message\"")); p++) n++;
  int saved = text && strstr(text, "\"event\":\"state-saved\"") != NULL;
  free(text);
  return n >= 9 && saved;
}

/* kill -9 mid-run: the memory stream a new process rebuilds is exactly the stored memory entries (the seqs
 * of the snapshot's agents[0].memory), in order. */
static void killed_run_memories_are_the_stored_ones(void) {
  char *db = suite_fresh(tmp, "db6");
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "reply=noted latency=30");
  const char *args[] = {"run", mayor_world("week.json", "stream", week_script(1)), "--json", "--db", db, NULL};
  const char *out_path = suite_file(tmp, "killed.out", NULL);
  pid_t pid = proc_spawn(args, -1, out_path, NULL, NULL);
  CHECK(pid > 0);
  CHECK(wait_until(printed_enough, (void *)out_path, 20000));
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(WIFSIGNALED(st)); /* killed mid-run, not finished (12 calls of 30 ms, 9 of 24 messages printed) */
  char chat[128] = "";
  CHECK_INT(proc_first_chat(db, chat, sizeof chat), 0);
  const char *snap = suite_file(tmp, "killed.json", NULL);
  const char *ex[] = {"chats", "export", chat, "-o", snap, "--db", db, NULL};
  free(agora_ok(ex));
  char *text = unit_read_file(snap);
  cJSON *j = cJSON_Parse(text ? text : "");
  const cJSON *stored = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "agents"), 0), "memory");
  const char *mem[] = {"memory", chat, "mayor", "--json", "--db", db, NULL};
  char *out = agora_ok(mem);
  size_t n = 0;
  const cJSON *want = stored ? stored->child : NULL;
  for (char *line = out; line && *line; n++) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    cJSON *m = cJSON_Parse(line);
    CHECK(want && cJSON_GetNumberValue(cJSON_GetObjectItem(m, "seq")) == cJSON_GetNumberValue(want));
    want = want ? want->next : NULL;
    cJSON_Delete(m);
    line = nl ? nl + 1 : NULL;
  }
  CHECK(n >= 8 && !want); /* as many, and the kill left some stored */
  free(out);
  cJSON_Delete(j);
  free(text);
  free(db);
}

static const unit_test tests[] = {
    UNIT(hash_embedder_is_deterministic_and_normalised),
    UNIT(retrieval_scores_recency_importance_relevance),
    UNIT(world_file_memory_is_strict),
    UNIT(world_file_memory_merges_and_round_trips),
    UNIT(week_stream_remembers_window_forgets),
    UNIT(memories_survive_restart_branch_and_snapshot),
    UNIT(serve_shows_memory),
    UNIT(remember_tool_notes_come_back),
    UNIT(reflection_fires_at_threshold_and_cites_sources),
    UNIT(hosted_embedder_in_turns),
    UNIT(killed_run_memories_are_the_stored_ones),
    UNIT(importance_llm_rates_in_batches),
};

int main(int argc, char **argv) { return suite_main(argc, argv, &(suite){SUITE_TESTS(tests), .tmp = &tmp, .srv = &srv}); }
