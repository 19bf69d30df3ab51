/* The chat records' bucket (see chats.h): a connection of its own on libnats' threads, an ordered push
 * consumer of the bucket's stream whose deliveries reach the loop through a relay, and plain publishes
 * to the bucket's subjects for writes (JetStream stores them; the watch brings them back). */
#include "cluster/chats.h"

#include "cluster/relay.h"
#include "cluster/wire.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cluster_chats {
  natsConnection *nc;
  jsCtx *js;
  natsSubscription *sub;
  relay *r;
  cluster_chats_fn fn;
  void *ud;
  char prefix[WIRE_ID_MAX + 32]; /* "$KV.agora-<world>-chats." */
};

/* On the loop: one record. The key is the subject's last token; a delete marker has no payload and a
 * KV-Operation header. */
static void on_record(void *ud, relay_item *it) {
  cluster_chats *k = ud;
  natsMsg *m = it->ptr;
  const char *subject = natsMsg_GetSubject(m), *op = NULL;
  size_t plen = strlen(k->prefix);
  if (subject && !strncmp(subject, k->prefix, plen) && wire_id_ok(subject + plen)) {
    const char *chat = subject + plen;
    if (natsMsgHeader_Get(m, "KV-Operation", &op) == NATS_OK && op) {
      k->fn(k->ud, chat, NULL, 0);
    } else {
      cJSON *j = cJSON_ParseWithLength(natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m));
      const cJSON *title = cJSON_GetObjectItem(j, "title"), *created = cJSON_GetObjectItem(j, "created_ms");
      /* A record this version cannot read is skipped, never a crash. */
      if (cJSON_IsString(title) && title->valuestring[0] && cJSON_IsNumber(created))
        k->fn(k->ud, chat, title->valuestring, (int64_t)created->valuedouble);
      cJSON_Delete(j);
    }
  }
  natsMsg_Destroy(m);
  free(it->str);
}

static void on_drop(void *ud, relay_item *it) {
  (void)ud;
  natsMsg_Destroy(it->ptr);
  free(it->str);
}

/* libnats' thread: to the loop. The closure is the relay, not k: a subscription that does not drain
 * may still call back after k is freed, and its relay is then left to the process's exit. */
static void on_nats_msg(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *closure) {
  (void)nc, (void)sub;
  relay_post(closure, &(relay_item){RELAY_MSG, m, NULL, 0, 0});
}

static natsStatus make_bucket(cluster_chats *k, const char *bucket, int replicas) {
  kvConfig cfg;
  kvConfig_Init(&cfg);
  cfg.Bucket = bucket;
  cfg.History = 1;
  cfg.Replicas = replicas;
  kvStore *kv = NULL;
  natsStatus s = js_CreateKeyValue(&kv, k->js, &cfg);
  if (s != NATS_OK) s = js_KeyValue(&kv, k->js, bucket); /* made by another process meanwhile */
  kvStore_Destroy(kv);
  return s;
}

int cluster_chats_open(const cluster_opts *o, struct event_base *base, const char *world_id, cluster_chats_fn fn,
                       void *ud, cluster_chats **out, ag_errmsg *em) {
  if (!wire_id_ok(world_id)) return ag_fail(em, AG_ERR_INVALID, "world id '%s' cannot name a NATS bucket", world_id);
  cluster_chats *k = calloc(1, sizeof *k);
  if (!k) return AG_ERR_NOMEM;
  k->fn = fn, k->ud = ud;
  char bucket[WIRE_ID_MAX + 16], name[WIRE_ID_MAX + 16], filter[WIRE_ID_MAX + 40], why[256];
  snprintf(bucket, sizeof bucket, "agora-%s-chats", world_id);
  snprintf(name, sizeof name, "agora %s chats", world_id);
  snprintf(k->prefix, sizeof k->prefix, "$KV.%s.", bucket);
  snprintf(filter, sizeof filter, "$KV.%s.>", bucket);
  int rc = relay_new(base, on_record, on_drop, k, &k->r);
  if (!rc) rc = link_connect(o, name, &k->nc, em);
  if (!rc) {
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Ordered = true; /* in order, without gaps, re-made by libnats when needed */
    so.Config.DeliverPolicy = js_DeliverAll;
    jsErrCode jerr = 0;
    natsStatus s = natsConnection_JetStream(&k->js, k->nc, NULL);
    if (s == NATS_OK) s = make_bucket(k, bucket, o->replicas > 0 ? o->replicas : 1);
    if (s == NATS_OK) s = js_Subscribe(&k->sub, k->js, filter, on_nats_msg, k->r, NULL, &so, &jerr);
    if (s != NATS_OK) rc = ag_fail(em, AG_ERR_IO, "NATS: the chat records (%s): %s", bucket, link_error(s, why, sizeof why));
  }
  if (rc) {
    cluster_chats_free(k);
    return rc;
  }
  *out = k;
  return AG_OK;
}

static int publish(cluster_chats *k, const char *chat, const char *data, int deleted) {
  if (!wire_id_ok(chat)) return AG_ERR_INVALID;
  char subject[sizeof k->prefix + WIRE_ID_MAX];
  snprintf(subject, sizeof subject, "%s%s", k->prefix, chat);
  natsMsg *m = NULL;
  natsStatus s = natsMsg_Create(&m, subject, NULL, data, data ? (int)strlen(data) : 0);
  if (s == NATS_OK && deleted) s = natsMsgHeader_Set(m, "KV-Operation", "DEL");
  if (s == NATS_OK) s = natsConnection_PublishMsg(k->nc, m);
  natsMsg_Destroy(m);
  return s == NATS_OK ? AG_OK : AG_ERR_IO;
}

int cluster_chats_put(cluster_chats *k, const char *chat, const char *title, int64_t created_ms) {
  cJSON *j = cJSON_CreateObject();
  if (!j || !cJSON_AddStringToObject(j, "title", title) || !cJSON_AddNumberToObject(j, "created_ms", (double)created_ms)) {
    cJSON_Delete(j);
    return AG_ERR_NOMEM;
  }
  char *text = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  int rc = text ? publish(k, chat, text, 0) : AG_ERR_NOMEM;
  free(text);
  return rc;
}

int cluster_chats_delete(cluster_chats *k, const char *chat) { return publish(k, chat, NULL, 1); }

void cluster_chats_free(cluster_chats *k) {
  if (!k) return;
  relay_close(k->r); /* records still coming are dropped on libnats' thread, while libnats runs */
  /* A drained subscription calls back no more: then nothing posts to the relay. */
  int drained = !k->sub || (natsSubscription_Drain(k->sub) == NATS_OK &&
                            natsSubscription_WaitForDrainCompletion(k->sub, 5000) == NATS_OK);
  if (k->nc) natsConnection_Close(k->nc); /* before the subscription goes: see cluster_free */
  natsSubscription_Destroy(k->sub);
  jsCtx_Destroy(k->js);
  natsConnection_Destroy(k->nc);
  if (drained) relay_free(k->r);
  else fprintf(stderr, "agora: the chat records' subscription did not drain within 5 s\n");
  free(k);
}
