/* Queued, phased publish/subscribe (see bus.h). A ring of pending items and one libevent event that
 * drains it; subscribers in an array that tolerates changes while a delivery is running. */
#include "world/bus.h"

#include "common/defer.h"

#include <stdlib.h>
#include <string.h>

typedef struct bus_sub {
  unsigned id;
  int topics;
  bus_phase phase;
  bus_handler fn; /* NULL once unsubscribed */
  void *ud;
} bus_sub;

typedef struct bus_item {
  bus_topic topic;
  void *payload;
} bus_item;

struct bus {
  ag_defer *defer;
  bus_sub *subs;
  size_t n_subs, cap_subs;
  unsigned next_id;
  int delivering;
  int dead_subs;
  bus_item *ring;
  size_t ring_cap, head, len;
  struct {
    bus_idle_fn fn;
    void *ud;
  } idle[4];
  size_t n_idle;
};

bus_event *bus_event_new(const char *type, cJSON *fields) {
  bus_event *e = calloc(1, sizeof *e);
  if (!e) goto fail;
  e->refs = 1;
  e->type = strdup(type);
  e->fields = fields ? fields : cJSON_CreateObject();
  if (!e->type || !e->fields) goto fail;
  return e;
fail:
  if (e) {
    free(e->type);
    if (e->fields) cJSON_Delete(e->fields);
    free(e);
  } else if (fields) {
    cJSON_Delete(fields);
  }
  return NULL;
}

bus_event *bus_event_ref(bus_event *e) {
  e->refs++;
  return e;
}

void bus_event_unref(bus_event *e) {
  if (!e || --e->refs > 0) return;
  free(e->type);
  cJSON_Delete(e->fields);
  free(e);
}

static void item_release(bus_item it) {
  if (it.topic == BUS_MESSAGE) ag_msg_unref(it.payload);
  else bus_event_unref(it.payload);
}

static void bus_compact(bus *b) {
  size_t k = 0;
  for (size_t i = 0; i < b->n_subs; i++)
    if (b->subs[i].fn) b->subs[k++] = b->subs[i];
  b->n_subs = k;
  b->dead_subs = 0;
}

static void bus_deliver_one(bus *b, bus_item it) {
  b->delivering++;
  for (int phase = 0; phase < BUS_PHASES; phase++) {
    /* n_subs is read each time round, so a subscriber added during a delivery may also get the item
     * being delivered; that is harmless and keeps the loop simple. */
    for (size_t i = 0; i < b->n_subs; i++) {
      bus_sub s = b->subs[i];
      if (s.fn && s.phase == (bus_phase)phase && (s.topics & (int)it.topic)) s.fn(s.ud, it.topic, it.payload);
    }
  }
  b->delivering--;
  if (!b->delivering && b->dead_subs) bus_compact(b);
  item_release(it);
}

static void bus_drain(void *arg) {
  bus *b = arg;
  /* Items published while draining are delivered in this same drain, after the ones before them:
   * publish order is kept and nothing is delivered re-entrantly. Idle hooks may publish too (events),
   * which are then delivered before the drain ends. */
  while (b->len > 0) {
    while (b->len > 0) {
      bus_item it = b->ring[b->head];
      b->head = (b->head + 1) % b->ring_cap;
      b->len--;
      bus_deliver_one(b, it);
    }
    for (size_t i = 0; i < b->n_idle; i++) b->idle[i].fn(b->idle[i].ud);
  }
}

int bus_on_idle(bus *b, bus_idle_fn fn, void *ud) {
  if (b->n_idle == sizeof b->idle / sizeof *b->idle) return AG_ERR_STATE;
  b->idle[b->n_idle].fn = fn;
  b->idle[b->n_idle].ud = ud;
  b->n_idle++;
  return AG_OK;
}

void bus_off_idle(bus *b, bus_idle_fn fn, void *ud) {
  for (size_t i = 0; i < b->n_idle; i++) {
    if (b->idle[i].fn == fn && b->idle[i].ud == ud) {
      memmove(&b->idle[i], &b->idle[i + 1], (b->n_idle - i - 1) * sizeof b->idle[0]);
      b->n_idle--;
      return;
    }
  }
}

int bus_new(struct event_base *base, bus **out) {
  bus *b = calloc(1, sizeof *b);
  if (!b) return AG_ERR_NOMEM;
  int rc = ag_defer_new(base, &b->defer);
  if (rc) {
    free(b);
    return rc;
  }
  b->next_id = 1;
  *out = b;
  return AG_OK;
}

void bus_free(bus *b) {
  if (!b) return;
  while (b->len > 0) {
    item_release(b->ring[b->head]);
    b->head = (b->head + 1) % b->ring_cap;
    b->len--;
  }
  ag_defer_free(b->defer);
  free(b->ring);
  free(b->subs);
  free(b);
}

int bus_subscribe(bus *b, int topics, bus_phase phase, bus_handler fn, void *ud, unsigned *id) {
  if (b->n_subs == b->cap_subs) {
    size_t ncap = b->cap_subs ? b->cap_subs * 2 : 16;
    bus_sub *p = realloc(b->subs, ncap * sizeof *p);
    if (!p) return AG_ERR_NOMEM;
    b->subs = p;
    b->cap_subs = ncap;
  }
  unsigned sid = b->next_id++;
  b->subs[b->n_subs++] = (bus_sub){sid, topics, phase, fn, ud};
  if (id) *id = sid;
  return AG_OK;
}

void bus_unsubscribe(bus *b, unsigned id) {
  for (size_t i = 0; i < b->n_subs; i++) {
    if (b->subs[i].id == id) {
      b->subs[i].fn = NULL;
      b->dead_subs = 1;
    }
  }
  if (!b->delivering && b->dead_subs) bus_compact(b);
}

static int bus_enqueue(bus *b, bus_item it) {
  if (b->len == b->ring_cap) {
    size_t ncap = b->ring_cap ? b->ring_cap * 2 : 64;
    bus_item *r = malloc(ncap * sizeof *r);
    if (!r) return AG_ERR_NOMEM;
    for (size_t i = 0; i < b->len; i++) r[i] = b->ring[(b->head + i) % b->ring_cap];
    free(b->ring);
    b->ring = r;
    b->ring_cap = ncap;
    b->head = 0;
  }
  b->ring[(b->head + b->len) % b->ring_cap] = it;
  b->len++;
  /* One drain scheduled at a time; it empties the ring. */
  if (b->len == 1 && ag_defer_pending(b->defer) == 0) return ag_defer_push(b->defer, bus_drain, b);
  return AG_OK;
}

int bus_publish_message(bus *b, ag_msg *m) {
  int rc = bus_enqueue(b, (bus_item){BUS_MESSAGE, ag_msg_ref(m)});
  if (rc) ag_msg_unref(m);
  return rc;
}

int bus_publish_event(bus *b, bus_event *e) {
  int rc = bus_enqueue(b, (bus_item){BUS_EVENT, bus_event_ref(e)});
  if (rc) bus_event_unref(e);
  return rc;
}

size_t bus_pending(const bus *b) { return b->len; }
