/* Pending approvals (see approval.h): a short list of requests, each with one timer that carries
 * both its timeout and, once answered, the deferred delivery of the answer to its agent. */
#include "world/approval.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

typedef struct pending {
  struct pending *next;
  approval_desk *d;
  uint64_t id;
  agent *a;
  struct event *ev;
  int answered, allow;
  char *text; /* a question's answer, or why there is none (owned) */
} pending;

struct approval_desk {
  struct event_base *base;
  pending *list;
  size_t n;
  uint64_t last_id;
  world_approver ap;
  void *ud;
  long timeout_ms;
};

int approval_desk_new(struct event_base *base, approval_desk **out) {
  approval_desk *d = calloc(1, sizeof *d);
  if (!d) return AG_ERR_NOMEM;
  d->base = base;
  *out = d;
  return AG_OK;
}

static void pending_free(pending *p) {
  event_free(p->ev);
  free(p->text);
  free(p);
}

void approval_desk_free(approval_desk *d) {
  if (!d) return;
  while (d->list) {
    pending *p = d->list;
    d->list = p->next;
    pending_free(p);
  }
  free(d);
}

void approval_desk_set_approver(approval_desk *d, const world_approver *ap, void *ud) {
  d->ap = ap ? *ap : (world_approver){0};
  d->ud = ud;
}

void approval_desk_set_timeout(approval_desk *d, long ms) { d->timeout_ms = ms > 0 ? ms : 0; }
size_t approval_desk_pending(const approval_desk *d) { return d->n; }

/* Takes p out of the list (the caller frees it). */
static void unlink_pending(approval_desk *d, pending *p) {
  for (pending **pp = &d->list; *pp; pp = &(*pp)->next) {
    if (*pp == p) {
      *pp = p->next;
      d->n--;
      return;
    }
  }
}

/* The timer: the answer's delivery, or the timeout (denied). The request ends before its agent goes
 * on, so the agent may ask again at once. */
static void on_due(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  pending *p = arg;
  approval_desk *d = p->d;
  agent *a = p->a;
  int allow = p->answered && p->allow;
  char *text = p->text;
  p->text = NULL;
  unlink_pending(d, p);
  if (!p->answered && d->ap.withdrawn) d->ap.withdrawn(d->ud, p->id, 1);
  pending_free(p);
  agent_approval_answer(a, allow, text);
  free(text);
}

int approval_desk_ask(approval_desk *d, agent *a, const char *tool, const char *args_json, const char *question) {
  if (!d->ap.ask) return AG_ERR_NOT_FOUND;
  pending *p = calloc(1, sizeof *p);
  if (!p || !(p->ev = evtimer_new(d->base, on_due, p))) {
    free(p);
    return AG_ERR_NOMEM;
  }
  p->d = d;
  p->a = a;
  p->id = ++d->last_id;
  if (d->timeout_ms) {
    struct timeval tv = {d->timeout_ms / 1000, (d->timeout_ms % 1000) * 1000};
    evtimer_add(p->ev, &tv);
  }
  p->next = d->list;
  d->list = p;
  d->n++;
  world_approval req = {p->id, agent_id(a), tool, args_json && args_json[0] ? args_json : "{}", question};
  d->ap.ask(d->ud, &req);
  return AG_OK;
}

void approval_desk_cancel(approval_desk *d, agent *a) {
  pending *p = d->list;
  while (p && p->a != a) p = p->next;
  if (!p) return;
  unlink_pending(d, p);
  if (!p->answered && d->ap.withdrawn) d->ap.withdrawn(d->ud, p->id, 0);
  pending_free(p);
}

int approval_desk_answer(approval_desk *d, uint64_t id, int allow) { return approval_desk_reply(d, id, allow, NULL); }

int approval_desk_reply(approval_desk *d, uint64_t id, int allow, const char *text) {
  pending *p = d->list;
  while (p && p->id != id) p = p->next;
  if (!p) return AG_ERR_NOT_FOUND;
  if (p->answered) return AG_ERR_STATE;
  if (text && !(p->text = strdup(text))) return AG_ERR_NOMEM;
  p->answered = 1;
  p->allow = allow;
  struct timeval now = {0, 0};
  evtimer_add(p->ev, &now); /* replaces the timeout: the agent goes on from the loop */
  return AG_OK;
}
