/* Truncating the current chat (issue 13 §3, console /edit and /retry): everything after message KEEP
 * goes — messages, memories, thread, turn counts, contexts — in one write transaction. The state at KEEP
 * is rebuilt as a branch rebuilds it (chat/branch.c): the chat is branched at KEEP into a scratch chat,
 * emptied, and the scratch chat's content moved back under its id; then the agents are restored. */
#include "chat/session_int.h"

#include "chat/branch.h"
#include "chat/title.h"
#include "common/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct trunc_ctx {
  chat_session *cs;
  uint64_t keep;
  char scratch[CHAT_ID_MAX];
  char *title;        /* the chat's title after the truncation (owned) */
  int retitled;       /* the title went back to "New Chat" */
  store_txn *t;
  char (*agents)[STORE_ID_MAX]; /* agents of the scratch chat (with a state), moved back */
  size_t n_agents, cap_agents;
  ag_errmsg *em;
} trunc_ctx;

/* An automatic title follows the first human message: when that message goes, so does the title
 * ("New Chat", so that the next human message names the chat again); a title set by hand stays. */
static int first_human_cb(const store_message *m, void *arg) {
  trunc_ctx *tc = arg;
  if (m->kind != AG_KIND_HUMAN) return 0;
  if (m->seq > tc->keep) {
    char *made = NULL;
    if (chat_title_make(m->text, &made)) return AG_ERR_NOMEM;
    if (made && !strcmp(made, tc->title)) {
      tc->retitled = 1;
      free(tc->title);
      if (!(tc->title = strdup(CHAT_TITLE_DEFAULT))) {
        free(made);
        return AG_ERR_NOMEM;
      }
    }
    free(made);
  }
  return STORE_STOP;
}

static int move_message(const store_message *m, void *arg) {
  trunc_ctx *tc = arg;
  return store_message_put(tc->t, tc->cs->current, m);
}

static int move_memory(uint64_t seq, void *arg) {
  trunc_ctx *tc = arg;
  return store_memory_append(tc->t, tc->cs->current, tc->agents[tc->n_agents], seq);
}

static int move_step(const char *json, size_t len, void *arg) {
  trunc_ctx *tc = arg;
  char *text = strndup(json, len);
  int rc = text ? store_thread_append(tc->t, tc->cs->current, text) : AG_ERR_NOMEM;
  free(text);
  return rc;
}

static int agent_row(const char *agent_id, const store_agent_state *st, void *arg) {
  (void)st;
  trunc_ctx *tc = arg;
  if (tc->n_agents == tc->cap_agents) {
    size_t ncap = tc->cap_agents ? tc->cap_agents * 2 : 16;
    char(*p)[STORE_ID_MAX] = realloc(tc->agents, ncap * sizeof *p);
    if (!p) return AG_ERR_NOMEM;
    tc->agents = p;
    tc->cap_agents = ncap;
  }
  snprintf(tc->agents[tc->n_agents++], STORE_ID_MAX, "%s", agent_id);
  return 0;
}

/* The scratch chat's memories, states and contexts, agent by agent, under the chat's id. */
static int move_agents(trunc_ctx *tc) {
  const char *from = tc->scratch, *to = tc->cs->current;
  int rc = store_agent_state_scan(tc->t, from, agent_row, tc);
  size_t n = tc->n_agents;
  for (size_t i = 0; !rc && i < n; i++) {
    store_agent_state st;
    store_context cx;
    tc->n_agents = i; /* move_memory reads the agent at n_agents */
    if ((rc = store_memory_scan(tc->t, from, tc->agents[i], move_memory, tc))) break;
    if ((rc = store_agent_state_get(tc->t, from, tc->agents[i], &st)) ||
        (rc = store_agent_state_put(tc->t, to, tc->agents[i], &st)))
      break;
    rc = store_context_get(tc->t, from, tc->agents[i], &cx);
    if (rc == AG_ERR_NOT_FOUND) {
      rc = AG_OK;
      continue;
    }
    if (!rc) rc = store_context_put(tc->t, to, tc->agents[i], &cx);
    store_context_free(&cx);
  }
  tc->n_agents = n;
  return rc;
}

static int trunc_txn(store_txn *t, void *arg) {
  trunc_ctx *tc = arg;
  chat_session *cs = tc->cs;
  tc->t = t;
  tc->n_agents = 0;
  tc->retitled = 0;
  free(tc->title);
  store_chat c;
  int rc = store_chat_get(t, cs->current, &c);
  if (rc) return rc;
  tc->title = strdup(c.title);
  int64_t created = c.created_at_ms;
  store_chat_free(&c);
  if (!tc->title) return AG_ERR_NOMEM;
  if ((rc = store_message_scan(t, cs->current, 1, first_human_cb, tc)) && rc != STORE_STOP) return rc;
  if (tc->keep && (rc = chat_branch__in(t, cs->current, tc->keep, tc->scratch, tc->em))) return rc;
  if ((rc = store_chat_clear(t, cs->current))) return rc;
  if (tc->keep) {
    rc = store_message_scan(t, tc->scratch, 1, move_message, tc);
    if (!rc) rc = store_thread_scan(t, tc->scratch, move_step, tc);
    if (!rc) rc = move_agents(tc);
    if (!rc) rc = store_chat_delete(t, tc->scratch);
    if (rc) return rc;
  }
  store_chat put = {.id = cs->current, .world_id = world_id(cs->w), .title = tc->title, .message_count = tc->keep,
                    .created_at_ms = created, .updated_at_ms = chat_session__now(cs)};
  return store_chat_put(t, &put);
}

int chat_session_truncate(chat_session *cs, uint64_t keep, ag_errmsg *em) {
  if (!cs->has_current) return ag_fail(em, AG_ERR_STATE, "no current chat");
  if (keep > cs->count) return ag_fail(em, AG_ERR_INVALID, "the chat has %llu messages", (unsigned long long)cs->count);
  int rc = chat_session__save(cs, em); /* what is pending belongs to the chat before it is cut */
  if (rc) return rc;
  trunc_ctx *tc = calloc(1, sizeof *tc);
  if (!tc) return AG_ERR_NOMEM;
  tc->cs = cs;
  tc->keep = keep;
  tc->em = em;
  char id[STORE_ID_MAX];
  snprintf(id, sizeof id, "%s", cs->current);
  if (!(rc = store_write(cs->st, trunc_txn, tc, em))) rc = chat_session__restore(cs, id, em);
  if (!rc && tc->retitled) world_emit(cs->w, &(world_event){EV_TITLE_UPDATED, .u.title = {CHAT_TITLE_DEFAULT}});
  free(tc->title);
  free(tc->agents);
  free(tc);
  return rc;
}
