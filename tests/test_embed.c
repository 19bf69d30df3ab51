/* Hosted embedders (llm/embed.h, issue 26) against the loopback server: each provider's wire format
 * (OpenAI /embeddings, Ollama /api/embed, Gemini batchEmbedContents), batched in order, with the chat
 * calls' key rules; a failing embedder ends the request with the provider's words and no vectors. */
#include "llm/embed.h"
#include "llm/embed_cache.h"
#include "support/proc.h"
#include "support/llm_drive.h"
#include "support/llm_server.h"
#include "support/llm_server_embed.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static llm_server *srv;
static char *tmp;
static cache_db *keep; /* the vectors kept by embed()'s clients (llm_client_set_embed_cache); NULL: none */

/* What a request ended with. */
typedef struct embedded {
  int done, err, dim;
  size_t n;
  float *vecs;
  char why[600];
  int pending;
} embedded;

static void on_embedded(void *ud, int err, const float *vecs, size_t n, int dim, const char *why) {
  embedded *r = ud;
  r->done++;
  r->err = err;
  r->n = n;
  r->dim = dim;
  if (vecs && (r->vecs = malloc(n * (size_t)dim * sizeof *vecs))) memcpy(r->vecs, vecs, n * (size_t)dim * sizeof *vecs);
  snprintf(r->why, sizeof r->why, "%s", why ? why : "");
  r->pending = 0;
}

/* Embeds texts with provider kind on the loopback server, batch texts a request, into *r. */
static int embed(llm_provider_kind kind, const char *const *texts, size_t n, size_t batch, embedded *r,
                 const char *key_env) {
  struct event_base *base = event_base_new();
  llm_client *c = NULL;
  CHECK_INT(llm_client_new(base, &c), AG_OK);
  llm_client_set_embed_cache(c, keep);
  llm_config cfg;
  llm_drive_config(&cfg, srv, kind, 0, 5000);
  cfg.api_key_env = (char *)key_env;
  *r = (embedded){.pending = 1};
  ag_errmsg em = {""};
  int rc = llm_embed_start(c, &cfg, texts, n, batch, on_embedded, r, NULL, &em);
  if (rc) snprintf(r->why, sizeof r->why, "%s", em.text);
  if (!rc) CHECK_INT(llm_drive_run(base, &r->pending, 5000), 0);
  llm_client_free(c);
  event_base_free(base);
  return rc;
}

static void check_vectors(const embedded *r, const char *const *texts, size_t n) {
  CHECK_INT(r->done, 1);
  CHECK_INT(r->err, AG_OK);
  CHECK_INT(r->n, n);
  CHECK_INT(r->dim, LLM_SERVER_EMBED_DIM);
  for (size_t i = 0; r->vecs && i < n; i++) {
    float want[LLM_SERVER_EMBED_DIM];
    llm_server_embed_vector(texts[i], want);
    for (int j = 0; j < LLM_SERVER_EMBED_DIM; j++) CHECK(r->vecs[i * LLM_SERVER_EMBED_DIM + j] == want[j]);
  }
}

/* Recorded request i's path, key header and body. */
static void request(size_t i, char *path, size_t cap, char **key, cJSON **body) {
  llm_server_request q;
  CHECK_INT(llm_server_request_get(srv, i, &q), 0);
  snprintf(path, cap, "%s", q.path ? q.path : "");
  *key = llm_server_request_header(&q, "authorization");
  if (!*key) *key = llm_server_request_header(&q, "x-goog-api-key");
  *body = cJSON_Parse(q.body);
  llm_server_request_free(&q);
}

static const char *const TEXTS[] = {"the bridge is closed", "the ferry is slow", "fish for dinner",
                                    "the well is dry", "elections next week"};

static void each_wire_format_batched(void) {
  static const struct { llm_provider_kind kind; const char *path, *key, *list; } wires[] = {
      {LLM_OPENAI, "/v1/embeddings", "Bearer sk-test-embed", "input"},
      {LLM_OLLAMA, "/api/embed", "Bearer sk-test-embed", "input"},
      {LLM_GEMINI, "/v1beta/models/test-model:batchEmbedContents", "sk-test-embed", "requests"}};
  for (size_t w = 0; w < 3; w++) {
    llm_server_reset(srv);
    embedded r;
    CHECK_INT(embed(wires[w].kind, TEXTS, 5, 2, &r, "AGORA_TEST_KEY"), AG_OK);
    check_vectors(&r, TEXTS, 5);
    free(r.vecs);
    CHECK_INT(llm_server_request_count(srv), 3); /* 2 + 2 + 1 */
    for (size_t i = 0; i < 3; i++) {
      char path[512], *key;
      cJSON *body;
      request(i, path, sizeof path, &key, &body);
      CHECK_STR(path, wires[w].path);
      CHECK_STR(key ? key : "", wires[w].key);
      CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(body, wires[w].list)), i < 2 ? 2 : 1);
      if (wires[w].kind == LLM_GEMINI)
        CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(body, "requests"), 0),
                                                           "model")) ?: "", "models/test-model");
      else CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(body, "model")) ?: "", "test-model");
      free(key);
      cJSON_Delete(body);
    }
  }
  /* One request when the batch holds them all (the default batch). */
  llm_server_reset(srv);
  embedded r;
  CHECK_INT(embed(LLM_OPENAI, TEXTS, 5, 0, &r, "AGORA_TEST_KEY"), AG_OK);
  check_vectors(&r, TEXTS, 5);
  free(r.vecs);
  CHECK_INT(llm_server_request_count(srv), 1);
}

static void failing_embedder_and_keys(void) {
  const char *const texts[] = {"fine", "this one will fail-embed", "never asked"};
  static const llm_provider_kind kinds[] = {LLM_OPENAI, LLM_OLLAMA, LLM_GEMINI};
  for (size_t k = 0; k < 3; k++) {
    llm_server_reset(srv);
    embedded r;
    CHECK_INT(embed(kinds[k], texts, 3, 1, &r, "AGORA_TEST_KEY"), AG_OK);
    CHECK_INT(r.done, 1);
    CHECK_INT(r.err, AG_ERR_LLM);
    CHECK(r.vecs == NULL && r.n == 0);
    CHECK(strstr(r.why, "HTTP 500: embedding failed") != NULL);
    CHECK(strstr(r.why, "sk-test-embed") == NULL);
    CHECK_INT(llm_server_request_count(srv), 2); /* stopped at the failing batch */
  }
  /* A named key variable that is not set: refused before any request, naming the variable. */
  llm_server_reset(srv);
  embedded r;
  CHECK_INT(embed(LLM_OPENAI, texts, 1, 0, &r, "AGORA_TEST_NO_SUCH_KEY"), AG_ERR_INVALID);
  CHECK(strstr(r.why, "AGORA_TEST_NO_SUCH_KEY is not set") != NULL);
  CHECK_INT(llm_server_request_count(srv), 0);
  /* "" sends no key at all (as chat calls, and as a withheld key). */
  CHECK_INT(embed(LLM_OLLAMA, texts, 1, 0, &r, ""), AG_OK);
  free(r.vecs);
  char path[512], *key;
  cJSON *body;
  request(0, path, sizeof path, &key, &body);
  CHECK(key == NULL);
  cJSON_Delete(body);
  /* The script provider has no embeddings. */
  CHECK_INT(embed(LLM_ANTHROPIC, texts, 1, 0, &r, "AGORA_TEST_KEY"), AG_ERR_INVALID);
  CHECK(strstr(r.why, "no embeddings API") != NULL);
}

/* The Authorization header of the last embeddings request (caller frees), or NULL. */
static char *last_embed_key(void) {
  char *key = NULL;
  for (size_t i = llm_server_request_count(srv); i-- > 0 && !key;) {
    llm_server_request q;
    if (llm_server_request_get(srv, i, &q)) continue;
    int embed = strstr(q.path, "/embeddings") != NULL;
    key = embed ? llm_server_request_header(&q, "authorization") : NULL;
    llm_server_request_free(&q);
    if (embed) return key;
  }
  return key;
}

/* A world from the database keeps its embedder's key from a base_url other than the provider's default, as it
 * does its chat calls' (runtime/key_env.c); from a file the key goes. */
static void embedder_key_withheld_like_chat_calls(void) {
  char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"town\", \"agents\": [{\"name\": \"mayor\", \"provider\": \"openai\", \"model\": \"m\","
           " \"base_url\": \"%s\", \"memory\": {\"mode\": \"stream\", \"embedder\": {\"provider\": \"openai\","
           " \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\"}}}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@mayor the bridge is closed\"}]}",
           llm_server_url(srv, "/v1"), llm_server_url(srv, "/v1"));
  char *db = suite_fresh(tmp, "db");
  llm_server_reset(srv);
  const char *run[] = {"run", suite_file(tmp, "town.json", json), "--db", db, NULL};
  proc_result r;
  CHECK_INT(proc_agora(run, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  char *key = last_embed_key();
  CHECK_STR(key ? key : "(none)", "Bearer sk-test-embed");
  free(key);
  llm_server_reset(srv);
  const char *say[] = {"say", "town", "@mayor and the ferry?", "--db", db, NULL};
  CHECK_INT(proc_agora(say, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  CHECK_INT(llm_server_request_count(srv), 2); /* the embeddings, the answer */
  key = last_embed_key();
  CHECK(key == NULL);
  free(key);
  free(db);
}

/* The texts of the only request since the last reset, one per line, into out. */
static void sent_texts(char *out, size_t cap) {
  CHECK_INT(llm_server_request_count(srv), 1);
  char path[512], *key = NULL;
  cJSON *body = NULL, *t;
  size_t n = 0;
  out[0] = '\0';
  request(0, path, sizeof path, &key, &body);
  cJSON_ArrayForEach(t, cJSON_GetObjectItem(body, "input")) n += (size_t)snprintf(
      out + n, n < cap ? cap - n : 0, "%s\n", cJSON_GetStringValue(t) ? cJSON_GetStringValue(t) : "?");
  free(key);
  cJSON_Delete(body);
}

/* With a cache on the client, a text embedded once is answered from it: only the others are sent (a text
 * twice in one request once), every vector comes back in order, and with nothing to send nothing is
 * requested yet done runs, from the loop. A value of another shape under a text's key is not used. */
static void kept_vectors_are_not_sent_again(void) {
  char *dir = suite_fresh(tmp, "keep"), texts[1024];
  ag_errmsg em = {""};
  CHECK_INT(cache_db_open(dir, &keep, &em), AG_OK);
  embedded r;
  llm_server_reset(srv);
  CHECK_INT(embed(LLM_OPENAI, TEXTS, 3, 0, &r, "AGORA_TEST_KEY"), AG_OK);
  check_vectors(&r, TEXTS, 3);
  free(r.vecs);
  sent_texts(texts, sizeof texts);
  CHECK_STR(texts, "the bridge is closed\nthe ferry is slow\nfish for dinner\n");
  const char *const mixed[] = {"the ferry is slow", "the well is dry", "the well is dry", "the bridge is closed"};
  llm_server_reset(srv);
  CHECK_INT(embed(LLM_OPENAI, mixed, 4, 0, &r, "AGORA_TEST_KEY"), AG_OK);
  check_vectors(&r, mixed, 4);
  free(r.vecs);
  sent_texts(texts, sizeof texts);
  CHECK_STR(texts, "the well is dry\n");
  llm_server_reset(srv);
  CHECK_INT(embed(LLM_OPENAI, mixed, 4, 0, &r, "AGORA_TEST_KEY"), AG_OK);
  check_vectors(&r, mixed, 4);
  free(r.vecs);
  CHECK_INT(llm_server_request_count(srv), 0);
  llm_config cfg;
  llm_drive_config(&cfg, srv, LLM_OPENAI, 0, 5000);
  uint8_t key[CACHE_DB_KEY_LEN];
  CHECK_INT(llm_embed_cache_key(&cfg, "the well is dry", key), AG_OK);
  const char *foreign = "{\"not\":\"a vector\"}";
  CHECK_INT(cache_db_put(keep, key, foreign, strlen(foreign), 1), AG_OK);
  llm_server_reset(srv);
  CHECK_INT(embed(LLM_OPENAI, mixed + 1, 1, 0, &r, "AGORA_TEST_KEY"), AG_OK);
  check_vectors(&r, mixed + 1, 1);
  free(r.vecs);
  sent_texts(texts, sizeof texts);
  CHECK_STR(texts, "the well is dry\n");
  cache_db_close(keep);
  keep = NULL;
  free(dir);
}

static const char *const env[] = {"AGORA_TEST_KEY=sk-test-embed", NULL};
SUITE_RUN((UNIT(each_wire_format_batched), UNIT(failing_embedder_and_keys), UNIT(embedder_key_withheld_like_chat_calls),
  UNIT(kept_vectors_are_not_sent_again)), .env = env, .tmp = &tmp, .srv = &srv)
