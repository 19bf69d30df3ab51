/* Records in flight (see flight.h). */
#include "cluster/flight.h"

#include "common/clock.h"
#include "cluster/sign.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

static void flight_send(jsCtx *js, flight *x, int64_t now) {
  natsMsg *msg = NULL;
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MsgId = x->id;
  po.MaxWait = 5000;
  x->sent_ms = now;
  x->acked = 0;
  if (natsMsg_Create(&msg, x->subject, NULL, x->data, (int)x->len) != NATS_OK) return;
  if (x->sig && natsMsgHeader_Set(msg, SIGN_HEADER, x->sig) != NATS_OK) {
    natsMsg_Destroy(msg); /* flights_retry sends it again */
    return;
  }
  if (js_PublishMsgAsync(js, &msg, &po) != NATS_OK) natsMsg_Destroy(msg); /* flights_retry sends it again */
}

static void flight_free(flight *x) {
  free(x->id);
  free(x->subject);
  free(x->data);
  free(x->sig);
  free(x);
}

int flights_add(flights *f, jsCtx *js, const char *id, const char *subject, char *data, size_t len, const char *sig) {
  flight *x = calloc(1, sizeof *x);
  if (!x) {
    free(data);
    return AG_ERR_NOMEM;
  }
  x->data = data, x->len = len, x->id = strdup(id), x->subject = strdup(subject);
  if (sig && !(x->sig = strdup(sig))) {
    flight_free(x);
    return AG_ERR_NOMEM;
  }
  if (x->id && x->subject && f->n == f->cap) {
    size_t ncap = f->cap ? f->cap * 2 : 64;
    flight **v = realloc(f->v, ncap * sizeof *v);
    if (v) f->v = v, f->cap = ncap;
  }
  if (!x->id || !x->subject || f->n == f->cap) {
    flight_free(x);
    return AG_ERR_NOMEM;
  }
  f->v[f->n++] = x;
  flight_send(js, x, ag_now_ms());
  return AG_OK;
}

flight *flights_find(const flights *f, const char *id) {
  for (size_t i = 0; i < f->n; i++)
    if (!strcmp(f->v[i]->id, id)) return f->v[i];
  return NULL;
}

void flights_remove(flights *f, flight *x) {
  for (size_t i = 0; i < f->n; i++) {
    if (f->v[i] != x) continue;
    memmove(&f->v[i], &f->v[i + 1], (f->n - i - 1) * sizeof *f->v);
    f->n--;
    flight_free(x);
    return;
  }
}

void flights_ack(flights *f, const char *id, uint64_t seq, int flag) {
  flight *x = flights_find(f, id);
  if (!x) return;
  if (flag < 0) {
    x->sent_ms = 0; /* due again at the next retry */
    return;
  }
  x->acked = 1;
  x->ack_seq = seq;
}

void flights_settle(flights *f, uint64_t delivered) {
  size_t k = 0;
  for (size_t i = 0; i < f->n; i++) {
    flight *x = f->v[i];
    if (x->acked && x->ack_seq <= delivered) flight_free(x);
    else f->v[k++] = x;
  }
  f->n = k;
}

void flights_retry(flights *f, jsCtx *js, int64_t now, int64_t after_ms) {
  for (size_t i = 0; i < f->n; i++)
    if (!f->v[i]->acked && now - f->v[i]->sent_ms > after_ms) flight_send(js, f->v[i], now);
}

size_t flights_count(const flights *f) { return f->n; }

void flights_free(flights *f) {
  for (size_t i = 0; i < f->n; i++) flight_free(f->v[i]);
  free(f->v);
  memset(f, 0, sizeof *f);
}
