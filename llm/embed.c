/* Hosted embedders (see embed.h): one request per batch of texts, each started from the previous one's
 * end, its body read into a capped buffer and parsed by the provider's wire shape. */
#include "llm/embed.h"

#include "common/buf.h"
#include "common/defer.h"
#include "llm/embed_cache.h"
#include "llm/provider.h"
#include "llm/wire.h"
#include "net/net_fetch.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct llm_embed {
  llm_client *client;
  llm_config cfg;          /* a copy: the endpoint may go while a request is out */
  const llm_wire *wire;
  char **texts;
  size_t n, next, batch;   /* next: the first of send[] in the request out */
  size_t *send, n_send;    /* the texts the cache did not have, in order: only these are sent */
  size_t *same;            /* n: an earlier text of send[] equal to text i, not sent twice; SIZE_MAX: none */
  float *vecs;             /* n * dim: the cached ones at the start, the others batch by batch */
  ag_defer_ticket ticket;  /* every text was cached: the answer waits for the loop */
  int dim;
  char key_line[600];      /* "<key_header><key>", or "": none; wiped at the end */
  char url[1200];
  long status;
  ag_buf body;
  net_fetch *fetch;
  llm_embed_done done;
  void *ud;
};

static void embed_free(llm_embed *e) {
  for (size_t i = 0; i < e->n; i++) free(e->texts[i]);
  free(e->texts);
  free(e->send);
  free(e->same);
  free(e->vecs);
  ag_buf_free(&e->body);
  memset(e->key_line, 0, sizeof e->key_line);
  llm_config_free(&e->cfg);
  free(e);
}

/* The request body of the texts send[from, from + k) in the provider's shape (caller frees). */
static char *request_body(const llm_embed *e, size_t from, size_t k) {
  cJSON *root = cJSON_CreateObject();
  if (e->wire->kind == LLM_GEMINI) {
    char model[300];
    snprintf(model, sizeof model, "models/%s", e->cfg.model);
    cJSON *reqs = cJSON_AddArrayToObject(root, "requests");
    for (size_t i = from; reqs && i < from + k; i++) {
      cJSON *r = cJSON_CreateObject(), *part = cJSON_CreateObject(), *parts = cJSON_CreateArray();
      cJSON_AddStringToObject(r, "model", model);
      cJSON_AddStringToObject(part, "text", e->texts[e->send[i]]);
      cJSON_AddItemToArray(parts, part);
      cJSON_AddItemToObject(cJSON_AddObjectToObject(r, "content"), "parts", parts);
      cJSON_AddItemToArray(reqs, r);
    }
  } else { /* OpenAI and Ollama: {"model", "input": [texts]} */
    cJSON_AddStringToObject(root, "model", e->cfg.model);
    cJSON *in = cJSON_AddArrayToObject(root, "input");
    for (size_t i = from; in && i < from + k; i++) cJSON_AddItemToArray(in, cJSON_CreateString(e->texts[e->send[i]]));
  }
  char *s = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return s;
}

/* The i-th vector of a reply, whatever the provider: OpenAI data[i].embedding (placed by its index),
 * Ollama embeddings[i], Gemini embeddings[i].values. */
static const cJSON *reply_vector(const llm_embed *e, const cJSON *root, size_t i) {
  if (e->wire->kind == LLM_OPENAI) {
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(root, "data")) {
      const cJSON *ix = cJSON_GetObjectItemCaseSensitive(d, "index");
      if ((size_t)llm_wire_index(ix, -1) == i) return cJSON_GetObjectItemCaseSensitive(d, "embedding");
    }
    return NULL;
  }
  const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "embeddings"), (int)i);
  return e->wire->kind == LLM_GEMINI ? cJSON_GetObjectItemCaseSensitive(v, "values") : v;
}

/* Reads the k vectors of the batch at e->next into e->vecs; why (200 bytes) says what was wrong. */
static int take_vectors(llm_embed *e, size_t k, char *why) {
  cJSON *root = cJSON_ParseWithLength(ag_buf_str(&e->body), e->body.len);
  int rc = root ? AG_OK : AG_ERR_INVALID;
  if (rc) snprintf(why, 200, "the reply is not JSON");
  for (size_t i = 0; !rc && i < k; i++) {
    const cJSON *v = reply_vector(e, root, i);
    int dim = cJSON_GetArraySize(v);
    if (!cJSON_IsArray(v) || dim < 1 || dim > LLM_EMBED_DIM_MAX || (e->dim && dim != e->dim)) {
      snprintf(why, 200, "the reply has no usable vector for text %zu", e->send[e->next + i] + 1);
      rc = AG_ERR_INVALID;
      break;
    }
    if (!e->dim) {
      e->dim = dim;
      if (!(e->vecs = calloc(e->n * (size_t)dim, sizeof *e->vecs))) rc = AG_ERR_NOMEM;
    }
    float *out = e->vecs ? e->vecs + e->send[e->next + i] * (size_t)dim : NULL;
    const cJSON *x;
    int j = 0;
    cJSON_ArrayForEach(x, v) if (out) out[j++] = (float)cJSON_GetNumberValue(x);
  }
  cJSON_Delete(root);
  return rc;
}

/* Keeps the vectors just fetched (a failure to is only a later re-embedding). */
static void cache_store(llm_embed *e) {
  cache_db *db = e->client->embed_cache;
  const char **texts = db ? malloc(e->n_send * sizeof *texts) : NULL;
  const float **vecs = texts ? malloc(e->n_send * sizeof *vecs) : NULL;
  for (size_t i = 0; vecs && i < e->n_send; i++) {
    texts[i] = e->texts[e->send[i]];
    vecs[i] = e->vecs + e->send[i] * (size_t)e->dim;
  }
  if (vecs) llm_embed_cache_put(db, &e->cfg, texts, vecs, e->n_send, e->dim);
  free(vecs);
  free(texts);
}

#define SAME_WINDOW 256 /* texts to send compared with each new one: a bound on the search, not on the answer */

/* Text i is to be sent, unless one of the last texts to send is the same (the message answered is
 * usually the newest memory too, and a reply like "noted" comes back often). */
static void send_text(llm_embed *e, size_t i) {
  for (size_t j = e->n_send; j-- > 0 && e->n_send - j <= SAME_WINDOW;)
    if (!strcmp(e->texts[e->send[j]], e->texts[i])) {
      e->same[i] = e->send[j];
      return;
    }
  e->send[e->n_send++] = i;
}

/* The vectors of the texts not sent because an equal one was. */
static void copy_same(llm_embed *e) {
  for (size_t i = 0; i < e->n; i++)
    if (e->same[i] != SIZE_MAX)
      memcpy(e->vecs + i * (size_t)e->dim, e->vecs + e->same[i] * (size_t)e->dim, (size_t)e->dim * sizeof *e->vecs);
}

/* Fills e->vecs with the cached vectors and lists the others in e->send. A cached vector whose dimension
 * is not the first one's is sent again. */
static int cache_lookup(llm_embed *e) {
  e->send = malloc(e->n * sizeof *e->send);
  e->same = malloc(e->n * sizeof *e->same);
  if (!e->send || !e->same) return AG_ERR_NOMEM;
  for (size_t i = 0; i < e->n; i++) e->same[i] = SIZE_MAX;
  uint8_t key[CACHE_DB_KEY_LEN];
  cache_db *db = e->client->embed_cache;
  for (size_t i = 0; i < e->n; i++) {
    float *v = NULL;
    int dim = 0;
    if (db && !llm_embed_cache_key(&e->cfg, e->texts[i], key) && !llm_embed_cache_get(db, key, &v, &dim) &&
        (!e->dim || dim == e->dim)) {
      if (!e->dim && (e->vecs = calloc(e->n * (size_t)dim, sizeof *e->vecs))) e->dim = dim;
      if (e->vecs) memcpy(e->vecs + i * (size_t)dim, v, (size_t)dim * sizeof *v);
      else send_text(e, i);
    } else {
      send_text(e, i);
    }
    free(v);
  }
  return AG_OK;
}

static void finish(llm_embed *e, int err, const char *why) {
  e->fetch = NULL;
  e->done(e->ud, err, err ? NULL : e->vecs, err ? 0 : e->n, err ? 0 : e->dim, err ? why : NULL);
  embed_free(e);
}

static int request_next(llm_embed *e);

static void on_response(void *ud, long status, const char *headers) {
  (void)headers;
  ((llm_embed *)ud)->status = status;
}

static void on_body(void *ud, const char *data, size_t len) {
  llm_embed *e = ud;
  ag_buf_append(&e->body, data, len); /* past the cap the fetch fails with AG_ERR_TOO_BIG first */
}

static void on_done(void *ud, int err, long status, int timed_out, const char *errmsg) {
  llm_embed *e = ud;
  (void)timed_out;
  char why[300] = "";
  const char *name = llm_provider_name(e->cfg.provider);
  size_t k = e->n_send - e->next < e->batch ? e->n_send - e->next : e->batch;
  if (err) {
    snprintf(why, sizeof why, "%s embeddings: %s", name, errmsg && errmsg[0] ? errmsg : ag_strerror(err));
    err = AG_ERR_IO;
  } else if (status < 200 || status > 299) {
    llm_error_info info = {0};
    llm_wire_error_body(ag_buf_str(&e->body), e->body.len, &info);
    snprintf(why, sizeof why, "%s embeddings: HTTP %ld%s%s", name, status, info.message[0] ? ": " : "", info.message);
    err = AG_ERR_LLM;
  } else {
    char detail[200] = "";
    if ((err = take_vectors(e, k, detail))) snprintf(why, sizeof why, "%s embeddings: %s", name, detail);
  }
  if (!err) {
    e->next += k;
    if (e->next == e->n_send) {
      cache_store(e);
      copy_same(e);
      return finish(e, AG_OK, NULL);
    }
    if (!(err = request_next(e))) return;
    snprintf(why, sizeof why, "%s embeddings: %s", name, ag_strerror(err));
  }
  finish(e, err, why);
}

static const net_fetch_sink embed_sink = {on_response, on_body, on_done};

static void all_cached(void *ud) {
  llm_embed *e = ud;
  e->ticket = 0;
  finish(e, AG_OK, NULL);
}

/* Starts the request for the batch at e->next, or, with nothing to send, the answer from the loop. */
static int request_next(llm_embed *e) {
  if (!e->n_send) return ag_defer_push(e->client->defer, all_cached, e, &e->ticket);
  size_t k = e->n_send - e->next < e->batch ? e->n_send - e->next : e->batch;
  char *body = request_body(e, e->next, k);
  if (!body) return AG_ERR_NOMEM;
  const char *headers[2] = {"Content-Type: application/json", e->key_line};
  net_opts net = llm_config_net(&e->cfg);
  net_fetch_request req = {.method = "POST", .url = e->url, .headers = headers, .n_headers = e->key_line[0] ? 2 : 1,
                           .body = body, .body_len = strlen(body),
                           .timeout_ms = e->cfg.timeout_ms > 0 ? e->cfg.timeout_ms : 120000,
                           .max_body = LLM_EMBED_BODY_MAX, .net = &net};
  ag_buf_reset(&e->body);
  e->status = 0;
  int rc = net_fetch_start(e->client->net, &req, &embed_sink, e, &e->fetch);
  free(body);
  return rc;
}

/* The URL and the key's header line of cfg; em says what is missing. */
static int embed_target(llm_embed *e, ag_errmsg *em) {
  const char *name = llm_provider_name(e->cfg.provider);
  if (!e->cfg.model || !e->cfg.model[0]) return ag_fail(em, AG_ERR_INVALID, "%s embeddings: no model", name);
  ag_buf url;
  ag_buf_init(&url, sizeof e->url - 1);
  int rc = e->wire->kind == LLM_OPENAI ? llm_wire_url(&url, &e->cfg, e->wire->default_base_url, "/embeddings")
           : e->wire->kind == LLM_OLLAMA
               ? llm_wire_url(&url, &e->cfg, e->wire->default_base_url, "/api/embed")
               : llm_wire_url(&url, &e->cfg, e->wire->default_base_url, "/v1beta/models/%s:batchEmbedContents",
                              e->cfg.model);
  if (!rc) snprintf(e->url, sizeof e->url, "%s", ag_buf_str(&url));
  ag_buf_free(&url);
  if (rc) return ag_fail(em, AG_ERR_INVALID, "%s embeddings: the URL is too long", name);
  int required = 0;
  const char *env = llm_wire_key_env(&e->cfg, e->wire, &required);
  const char *key = env ? getenv(env) : NULL;
  if (required && (!key || !key[0]))
    return ag_fail(em, AG_ERR_INVALID, "environment variable %s is not set (%s embeddings need an API key)",
                   env ? env : "?", name);
  if (key && key[0] && (strpbrk(key, "\r\n") || strlen(key) + strlen(e->wire->key_header) >= sizeof e->key_line))
    return ag_fail(em, AG_ERR_INVALID, "environment variable %s does not hold a usable key", env);
  if (key && key[0]) { /* both lengths checked above */
    size_t h = strlen(e->wire->key_header);
    memcpy(e->key_line, e->wire->key_header, h);
    memcpy(e->key_line + h, key, strlen(key) + 1);
  }
  return AG_OK;
}

int llm_embed_start(llm_client *c, const llm_config *cfg, const char *const *texts, size_t n, size_t batch,
                    llm_embed_done done, void *ud, llm_embed **out, ag_errmsg *em) {
  if (out) *out = NULL;
  if (cfg->provider != LLM_OPENAI && cfg->provider != LLM_OLLAMA && cfg->provider != LLM_GEMINI)
    return ag_fail(em, AG_ERR_INVALID, "%s has no embeddings API here (openai, ollama or gemini)",
                   llm_provider_name(cfg->provider));
  if (!n) return ag_fail(em, AG_ERR_INVALID, "embeddings: no text");
  llm_embed *e = calloc(1, sizeof *e);
  if (!e) return AG_ERR_NOMEM;
  e->client = c;
  e->wire = llm_wire_for(cfg->provider);
  e->batch = batch ? batch : LLM_EMBED_BATCH;
  e->done = done;
  e->ud = ud;
  ag_buf_init(&e->body, LLM_EMBED_BODY_MAX);
  int rc = llm_config_copy(&e->cfg, cfg);
  if (!rc && !(e->texts = calloc(n, sizeof *e->texts))) rc = AG_ERR_NOMEM;
  for (size_t i = 0; !rc && i < n; i++, e->n++)
    if (!(e->texts[i] = strdup(texts[i]))) rc = AG_ERR_NOMEM;
  if (!rc) rc = embed_target(e, em);
  if (!rc) rc = cache_lookup(e);
  if (!rc) rc = request_next(e);
  if (rc) {
    embed_free(e);
    return rc;
  }
  if (out) *out = e;
  return AG_OK;
}

void llm_embed_cancel(llm_embed *e) {
  if (!e) return;
  net_fetch_cancel(e->fetch);
  ag_defer_cancel(e->client->defer, e->ticket);
  embed_free(e);
}

void llm_client_set_embed_cache(llm_client *c, cache_db *db) {
  c->embed_cache = db;
}
