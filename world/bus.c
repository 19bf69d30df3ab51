/* Queued, phased publish/subscribe (see bus.h). A ring of pending items (common/ring.h) and one
 * deferred call that drains it; subscribers in an array that tolerates changes while a delivery runs. */
#include "world/bus.h"

#include "common/defer.h"
#include "common/ring.h"

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
  int draining; /* inside bus_drain: bus_flush leaves the ring to it */
  int dead_subs;
  ag_ring pending; /* of bus_item, each holding one reference to its payload */
  struct {
    bus_idle_fn fn;
    void *ud;
  } idle[BUS_IDLE_SLOTS]; /* by slot; fn NULL: empty */
  bus_transport tr; /* tr.send NULL: in-process */
};

typedef struct ev_copy {
  size_t need;
  char *at;
} ev_copy;

static void ev_measure(const char **f, void *arg) {
  if (*f) ((ev_copy *)arg)->need += strlen(*f) + 1;
}

static void ev_place(const char **f, void *arg) {
  ev_copy *c = arg;
  if (!*f) return;
  size_t n = strlen(*f) + 1;
  memcpy(c->at, *f, n);
  *f = c->at;
  c->at += n;
}

/* One block: the event, then the name pointers of unknown-mention and not-addressed, then every string. A streamed chunk is
 * thus one malloc and two copies, whatever its size. */
bus_event *bus_event_new(const world_event *ev) {
  world_event e = *ev;
  ev_copy c = {0, NULL};
  world_event_strings(&e, ev_measure, &c);
  size_t n_names;
  const char *const **src_names = world_event_names(&e, &n_names);
  for (size_t i = 0; i < n_names; i++) c.need += strlen((*src_names)[i]) + 1;
  size_t chunk = 0;
  if (e.kind == EV_LLM_CHUNK) c.need += (chunk = e.u.llm_chunk.text ? strnlen(e.u.llm_chunk.text, e.u.llm_chunk.len) : 0) + 1;
  bus_event *b = malloc(sizeof *b + n_names * sizeof(char *) + c.need);
  if (!b) return NULL;
  b->refs = 1;
  const char **names = (const char **)(b + 1);
  c.at = (char *)(names + n_names);
  world_event_strings(&e, ev_place, &c);
  for (size_t i = 0; i < n_names; i++) {
    names[i] = (*src_names)[i];
    ev_place(&names[i], &c);
  }
  if (n_names) *src_names = names;
  if (e.kind == EV_LLM_CHUNK) {
    if (chunk) memcpy(c.at, e.u.llm_chunk.text, chunk);
    c.at[chunk] = '\0';
    e.u.llm_chunk.text = c.at;
    e.u.llm_chunk.len = chunk;
  }
  b->ev = e;
  return b;
}

bus_event *bus_event_ref(bus_event *e) {
  e->refs++;
  return e;
}

void bus_event_unref(bus_event *e) {
  if (!e || --e->refs > 0) return;
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
  bus_item it;
  b->draining++;
  while (ag_ring_len(&b->pending) > 0) {
    while (ag_ring_pop(&b->pending, &it)) bus_deliver_one(b, it);
    for (size_t i = 0; i < BUS_IDLE_SLOTS; i++)
      if (b->idle[i].fn) b->idle[i].fn(b->idle[i].ud);
  }
  b->draining--;
}

void bus_flush(bus *b) {
  /* The scheduled drain then finds the ring empty and does nothing. */
  if (!b->draining && !b->delivering) bus_drain(b);
}

int bus_on_idle(bus *b, bus_idle_slot slot, bus_idle_fn fn, void *ud) {
  if ((unsigned)slot >= BUS_IDLE_SLOTS || b->idle[slot].fn) return AG_ERR_STATE;
  b->idle[slot].fn = fn;
  b->idle[slot].ud = ud;
  return AG_OK;
}

void bus_off_idle(bus *b, bus_idle_fn fn, void *ud) {
  for (size_t i = 0; i < BUS_IDLE_SLOTS; i++)
    if (b->idle[i].fn == fn && b->idle[i].ud == ud) b->idle[i].fn = NULL, b->idle[i].ud = NULL;
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
  ag_ring_init(&b->pending, sizeof(bus_item), 64);
  *out = b;
  return AG_OK;
}

void bus_free(bus *b) {
  if (!b) return;
  bus_item it;
  while (ag_ring_pop(&b->pending, &it)) item_release(it);
  ag_defer_free(b->defer);
  ag_ring_free(&b->pending);
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
  int rc = ag_ring_push(&b->pending, &it);
  if (rc) return rc;
  /* One drain scheduled at a time; it empties the ring. */
  if (ag_ring_len(&b->pending) == 1 && ag_defer_pending(b->defer) == 0) return ag_defer_push(b->defer, bus_drain, b, NULL);
  return AG_OK;
}

int bus_deliver(bus *b, ag_msg *m) {
  int rc = bus_enqueue(b, (bus_item){BUS_MESSAGE, ag_msg_ref(m)});
  if (rc) ag_msg_unref(m);
  return rc;
}

int bus_publish_event(bus *b, bus_event *e) {
  int rc = bus_enqueue(b, (bus_item){BUS_EVENT, bus_event_ref(e)});
  if (rc) bus_event_unref(e);
  return rc;
}

int bus_publish_keyed(bus *b, ag_msg *m, const char *key) {
  return b->tr.send ? b->tr.send(b->tr.ctx, m, key) : bus_deliver(b, m);
}

int bus_publish_message(bus *b, ag_msg *m) { return bus_publish_keyed(b, m, NULL); }

void bus_set_transport(bus *b, const bus_transport *t) {
  if (t) b->tr = *t;
  else memset(&b->tr, 0, sizeof b->tr);
}

int bus_has_transport(const bus *b) { return b->tr.send != NULL; }

size_t bus_pending(const bus *b) {
  return ag_ring_len(&b->pending) + (b->tr.in_flight ? b->tr.in_flight(b->tr.ctx) : 0);
}
