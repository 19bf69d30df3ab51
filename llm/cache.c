/* The response cache of the LLM layer (see cache.h): the key of a call, the gate that answers it from the
 * cache or lets it go to its provider, the replay of a stored reply from the loop, and the storing of a
 * new one. An entry is JSON: {"text", "calls": [{"id", "name", "args", "sig"?}], "input_tokens",
 * "output_tokens", "estimated"?}. */
#include "llm/cache.h"
#include "llm/provider.h"
#include "llm/wire.h"

#include "common/clock.h"
#include "common/defer.h"
#include "storage/cache_db.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = {"off", "use", "replay"};

int llm_cache_mode_parse(const char *name, llm_cache_mode *out) {
  for (int i = 0; i < 3; i++)
    if (!strcmp(name, mode_names[i])) {
      *out = (llm_cache_mode)i;
      return AG_OK;
    }
  return AG_ERR_INVALID;
}

const char *llm_cache_mode_name(llm_cache_mode mode) { return (unsigned)mode < 3 ? mode_names[mode] : "off"; }

void llm_client_set_cache(llm_client *c, llm_cache_mode mode, struct cache_db *db) {
  c->cache_mode = db ? mode : LLM_CACHE_OFF;
  c->cache = c->cache_mode ? db : NULL;
}

llm_cache_counts llm_client_cache_counts(const llm_client *c) { return c->cache_counts; }

void llm_client_cache_free(llm_client *c) {
  EVP_MD_CTX_free(c->cache_md);
  c->cache_md = NULL;
}

/* The canonical request, hashed as it is walked (no JSON built: half the cost of a cached reply was the
 * provider's body built only to be hashed). Each field is its length and its bytes, so no two requests
 * read the same; a field that is absent differs from an empty one. The bytes are gathered in a buffer
 * and hashed in large pieces: two EVP_DigestUpdate calls per field cost a sixth more than the hashing. */
typedef struct key_md {
  EVP_MD_CTX *md;
  size_t n;
  unsigned char buf[2048];
} key_md;

static void add(key_md *k, const void *data, size_t len) {
  if (k->n + len > sizeof k->buf) {
    EVP_DigestUpdate(k->md, k->buf, k->n);
    k->n = 0;
  }
  if (len > sizeof k->buf) {
    EVP_DigestUpdate(k->md, data, len);
    return;
  }
  memcpy(k->buf + k->n, data, len);
  k->n += len;
}

static void put(key_md *k, const char *s) {
  uint64_t n = s ? (uint64_t)strlen(s) : UINT64_MAX; /* its 8 bytes, in this machine's order: a local cache */
  add(k, &n, sizeof n);
  if (s) add(k, s, (size_t)n);
}

/* A number as "%.17g" writes it. Nearly every one is a small whole number (a count, max_tokens, a seed,
 * a flag), written here by hand: snprintf's floating-point path cost ~150 ns each, a tenth of a cached
 * reply. Below 10^17 "%.17g" writes a whole number as its plain digits, so the bytes (the key) are the same. */
static void put_num(key_md *k, int has, double v) {
  char num[40];
  if (has && v >= 0 && v < 1e17 && v == (double)(uint64_t)v && !(v == 0 && signbit(v))) {
    char *p = num + sizeof num;
    uint64_t n = (uint64_t)v;
    *--p = '\0';
    do *--p = (char)('0' + n % 10); while ((n /= 10));
    put(k, p);
    return;
  }
  if (has) snprintf(num, sizeof num, "%.17g", v);
  put(k, has ? num : NULL);
}

static int cache_key(llm_client *c, const llm_config *cfg, const llm_request *req, unsigned char key[CACHE_DB_KEY_LEN]) {
  const llm_wire *wire = llm_wire_for(cfg->provider);
  if (!wire) return AG_ERR_INVALID;
  EVP_MD_CTX *md = c->cache_md;
  if (!md) { /* made once per client: a new context and OpenSSL's fetch of SHA-256 cost ~250 ns a call */
    if (!(md = c->cache_md = EVP_MD_CTX_new()) || !EVP_DigestInit_ex(md, EVP_sha256(), NULL)) return AG_ERR_NOMEM;
  } else if (!EVP_DigestInit_ex2(md, NULL, NULL)) { /* NULL: the digest it was made with */
    return AG_ERR_NOMEM;
  }
  key_md h = {.md = md, .n = 0};
  put(&h, "agora-llm-cache-1");
  put(&h, llm_provider_name(cfg->provider));
  put(&h, cfg->base_url && cfg->base_url[0] ? cfg->base_url : wire->default_base_url);
  put(&h, cfg->model ? cfg->model : wire->default_model);
  put_num(&h, cfg->has_temperature, cfg->temperature);
  put_num(&h, cfg->max_tokens > 0, cfg->max_tokens);
  put_num(&h, cfg->has_seed, (double)cfg->seed);
  put_num(&h, 1, cfg->stream);
  put_num(&h, 1, (double)req->n_messages);
  for (size_t i = 0; i < req->n_messages; i++) {
    const llm_message *m = &req->messages[i];
    put(&h, m->role);
    put(&h, m->content);
    put(&h, m->tool_call_id);
    put(&h, m->tool_name);
    put_num(&h, 1, (double)m->n_tool_calls);
    for (size_t k = 0; k < m->n_tool_calls; k++) {
      put(&h, m->tool_calls[k].id);
      put(&h, m->tool_calls[k].name);
      put(&h, m->tool_calls[k].args_json);
      put(&h, m->tool_calls[k].signature);
    }
  }
  put_num(&h, 1, (double)req->n_tools);
  for (size_t i = 0; i < req->n_tools; i++) {
    put(&h, req->tools[i].name);
    put(&h, req->tools[i].description);
    put(&h, req->tools[i].parameters_json);
  }
  unsigned n = 0;
  int ok = EVP_DigestUpdate(md, h.buf, h.n) && EVP_DigestFinal_ex(md, key, &n) && n == CACHE_DB_KEY_LEN;
  return ok ? AG_OK : AG_ERR_NOMEM;
}

/* ---- a reply from the cache, delivered from the loop ---- */

typedef struct cached_call {
  char *text;
  int chunked; /* the text went out as a chunk (streaming) */
  ag_defer_ticket step;
} cached_call;

static void cached_step(void *arg) {
  llm_call *call = arg;
  cached_call *cc = call->impl;
  if (call->ep && call->ep->cfg.stream && !cc->chunked && cc->text[0]) {
    /* The text as one chunk, then the end in the next round: a chunk's callback may cancel the call. */
    cc->chunked = 1;
    if (ag_defer_push(call->client->defer, cached_step, call, &cc->step) == AG_OK) {
      llm_call_chunk(call, cc->text, strlen(cc->text));
      return;
    }
  }
  llm_call_finish(call, AG_OK, cc->text, NULL);
}

static void cached_cancel(llm_call *call) {
  cached_call *cc = call->impl;
  call->impl = NULL;
  if (!cc) return;
  ag_defer_cancel(call->client->defer, cc->step);
  free(cc->text);
  free(cc);
}

static long json_long(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15 ? (long)v->valuedouble : 0;
}

/* Fills the call (tool calls, usage) and its impl from the entry (call->impl holds the entry's text). */
static int cached_start(llm_call *call, const llm_request *req) {
  (void)req;
  char *entry = call->impl;
  call->impl = NULL;
  cJSON *j = cJSON_Parse(entry);
  free(entry);
  const cJSON *text = cJSON_GetObjectItemCaseSensitive(j, "text");
  cached_call *cc = calloc(1, sizeof *cc);
  int rc = cc && cJSON_IsString(text) ? AG_OK : AG_ERR_NOMEM;
  if (!rc) { /* the parsed string is taken, not copied: cJSON_Delete skips a NULL valuestring */
    cc->text = text->valuestring;
    ((cJSON *)text)->valuestring = NULL;
  }
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(j, "calls")) {
    if (rc) break;
    rc = llm_call_add_tool_call(call, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "id")),
                                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "name")),
                                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "args")),
                                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "sig")));
  }
  call->usage = (llm_usage){.input_tokens = json_long(j, "input_tokens"), .output_tokens = json_long(j, "output_tokens"),
                            .estimated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "estimated")), .cached = 1};
  cJSON_Delete(j);
  if (!rc) {
    call->impl = cc;
    rc = ag_defer_push(call->client->defer, cached_step, call, &cc->step);
    if (!rc) return AG_OK;
    call->impl = NULL;
  }
  if (cc) free(cc->text);
  free(cc);
  return rc;
}

static const llm_provider_ops cached_ops = {cached_start, cached_cancel};

/* ---- a replay miss: fails from the loop ---- */

static void miss_step(void *arg) {
  llm_call *call = arg;
  llm_error_info info = {.attempts = 0};
  snprintf(info.type, sizeof info.type, "cache_miss");
  snprintf(info.message, sizeof info.message,
           "no cached reply for this request (--llm-cache replay never calls the model: run once with --llm-cache use)");
  free(call->impl);
  call->impl = NULL;
  llm_call_finish(call, AG_ERR_LLM, NULL, &info);
}

static int miss_start(llm_call *call, const llm_request *req) {
  (void)req;
  ag_defer_ticket *t = malloc(sizeof *t);
  if (!t) return AG_ERR_NOMEM;
  call->impl = t;
  return ag_defer_push(call->client->defer, miss_step, call, t);
}

static void miss_cancel(llm_call *call) {
  ag_defer_ticket *t = call->impl;
  call->impl = NULL;
  if (t) ag_defer_cancel(call->client->defer, *t);
  free(t);
}

static const llm_provider_ops miss_ops = {miss_start, miss_cancel};

/* ---- the gate and the store ---- */

const llm_provider_ops *llm_cache_gate(llm_call *call, const llm_request *req, const llm_provider_ops *ops) {
  llm_client *c = call->client;
  const llm_config *cfg = &call->ep->cfg;
  if (!c->cache_mode || cfg->provider == LLM_SCRIPT || cache_key(c, cfg, req, call->cache_key)) return ops;
  char *entry = NULL;
  size_t len = 0;
  if (cache_db_get(c->cache, call->cache_key, &entry, &len) == AG_OK) {
    c->cache_counts.hits++;
    call->impl = entry; /* cached_start takes it */
    return &cached_ops;
  }
  c->cache_counts.misses++;
  if (c->cache_mode == LLM_CACHE_REPLAY) return &miss_ops;
  call->cache_store = 1;
  return ops;
}

void llm_cache_store(llm_call *call, const char *text) {
  llm_client *c = call->client;
  if (!call->cache_store || !c->cache) return;
  cJSON *j = cJSON_CreateObject();
  cJSON *calls = j ? cJSON_AddArrayToObject(j, "calls") : NULL;
  int ok = calls && cJSON_AddStringToObject(j, "text", text ? text : "");
  for (size_t i = 0; ok && i < call->n_tool_calls; i++) {
    const llm_tool_call *t = &call->tool_calls[i];
    cJSON *o = cJSON_CreateObject();
    ok = o && cJSON_AddItemToArray(calls, o) && cJSON_AddStringToObject(o, "id", t->id) &&
         cJSON_AddStringToObject(o, "name", t->name) && cJSON_AddStringToObject(o, "args", t->args_json) &&
         (!t->signature || cJSON_AddStringToObject(o, "sig", t->signature));
  }
  ok = ok && cJSON_AddNumberToObject(j, "input_tokens", (double)call->usage.input_tokens) &&
       cJSON_AddNumberToObject(j, "output_tokens", (double)call->usage.output_tokens);
  if (ok && call->usage.estimated) ok = cJSON_AddTrueToObject(j, "estimated") != NULL;
  char *s = ok ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  if (s && cache_db_put(c->cache, call->cache_key, s, strlen(s), ag_now_ms()) == AG_OK) c->cache_counts.stored++;
  else c->cache_counts.store_failures++;
  free(s);
}
