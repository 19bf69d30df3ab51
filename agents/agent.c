/* One agent's life per message (behaviour.md §3–5): decide, remember, prompt, call the LLM, shape
 * and publish the reply. The world is reached only through agent_host. */
#include "agents/agent.h"

#include "agents/shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct agent {
  agent_settings s;
  char id[MENTION_ID_MAX];
  const agent_host *host;
  llm_endpoint *llm;
  llm_call *call;       /* in flight, or NULL */
  ag_msg *answering;    /* the message being answered (a reference), while call is set */
  /* Messages the agent decided to answer while it was busy, answered one at a time in order so that
   * no reply is lost and memory reads question, answer, question, answer. References. */
  ag_msg **inbox;
  size_t inbox_head, inbox_len, inbox_cap;
  int memory_window;
  int emit_chunks;
  turn_state turn;
  ag_msg **mem;
  size_t n_mem, cap_mem;
  size_t mem_dropped;   /* oldest entries let go of (still in storage) */
  /* Shaping needs the world's ids when the reply arrives; they are copied at answer time because the
   * rules passed to agent_on_message are only borrowed for that call. */
  char *ids_blob;
  const char **ids;
  size_t n_ids;
};

void agent_settings_init(agent_settings *s) {
  memset(s, 0, sizeof *s);
  s->auto_reply = 1;
  llm_config_init(&s->llm);
}

int agent_settings_copy(agent_settings *dst, const agent_settings *src) {
  agent_settings_init(dst);
  dst->auto_reply = src->auto_reply;
  int rc = llm_config_copy(&dst->llm, &src->llm);
  if (rc) return rc;
  dst->name = src->name ? strdup(src->name) : NULL;
  dst->system_prompt = src->system_prompt ? strdup(src->system_prompt) : NULL;
  if ((src->name && !dst->name) || (src->system_prompt && !dst->system_prompt)) {
    agent_settings_free(dst);
    return AG_ERR_NOMEM;
  }
  return AG_OK;
}

void agent_settings_free(agent_settings *s) {
  free(s->name);
  free(s->system_prompt);
  llm_config_free(&s->llm);
  s->name = s->system_prompt = NULL;
}

int agent_new(const agent_settings *s, llm_client *llm, const agent_host *host, agent **out,
              ag_errmsg *em) {
  int rc = AG_OK;
  agent *a = calloc(1, sizeof *a);
  if (!a) return AG_ERR_NOMEM;
  a->host = host;
  if (!s->name || mention_id_from_name(s->name, a->id, sizeof a->id) != AG_OK) {
    rc = ag_fail(em, AG_ERR_INVALID, "invalid agent name '%s': it must start with a letter or digit and "
                 "contain only letters, digits, '_', '-' and spaces", s->name ? s->name : "");
    goto fail;
  }
  if ((rc = agent_settings_copy(&a->s, s))) goto fail;
  free(a->s.llm.agent_name);
  a->s.llm.agent_name = strdup(a->s.name);
  if (!a->s.llm.agent_name) {
    rc = AG_ERR_NOMEM;
    goto fail;
  }
  if ((rc = llm_endpoint_new(llm, &a->s.llm, &a->llm, em))) goto fail;
  *out = a;
  return AG_OK;
fail:
  agent_settings_free(&a->s);
  free(a);
  return rc;
}

static void agent_drop_call(agent *a) {
  int was_thinking = agent_is_thinking(a);
  if (a->call) llm_call_cancel(a->call);
  a->call = NULL;
  if (a->answering) ag_msg_unref(a->answering);
  a->answering = NULL;
  for (size_t i = 0; i < a->inbox_len; i++) ag_msg_unref(a->inbox[(a->inbox_head + i) % a->inbox_cap]);
  a->inbox_head = a->inbox_len = 0;
  if (was_thinking && a->host->thinking) a->host->thinking(a->host->ctx, a, 0);
}

static void agent_clear_memory(agent *a) {
  for (size_t i = 0; i < a->n_mem; i++) ag_msg_unref(a->mem[i]);
  a->n_mem = 0;
  a->mem_dropped = 0;
}

void agent_free(agent *a) {
  if (!a) return;
  agent_drop_call(a);
  agent_clear_memory(a);
  free(a->mem);
  free(a->inbox);
  free(a->ids);
  free(a->ids_blob);
  llm_endpoint_free(a->llm);
  agent_settings_free(&a->s);
  free(a);
}

const char *agent_id(const agent *a) { return a->id; }
const char *agent_name(const agent *a) { return a->s.name; }
const agent_settings *agent_settings_of(const agent *a) { return &a->s; }
int agent_is_thinking(const agent *a) { return a->answering != NULL || a->inbox_len > 0; }
turn_state agent_turn_state(const agent *a) { return a->turn; }
void agent_set_turn_state(agent *a, turn_state st) { a->turn = st; }
size_t agent_reply_counter(const agent *a) { return llm_endpoint_reply_counter(a->llm); }
void agent_set_reply_counter(agent *a, size_t n) { llm_endpoint_set_reply_counter(a->llm, n); }

ag_msg *const *agent_memory(const agent *a, size_t *n) {
  *n = a->n_mem;
  return a->mem;
}

/* Entries kept in RAM: the window plus slack, so that trimming is rare (amortised O(1)) and entries
 * not yet written to storage (a handful at most) are never the ones let go of. */
static size_t mem_keep(const agent *a) {
  size_t w = a->memory_window > 0 ? (size_t)a->memory_window : 10;
  return w + 256;
}

size_t agent_memory_total(const agent *a) { return a->mem_dropped + a->n_mem; }

void agent_set_memory_window(agent *a, int window) { a->memory_window = window; }

int agent_memory_push(agent *a, ag_msg *m) {
  if (a->n_mem >= 2 * mem_keep(a)) {
    size_t drop = a->n_mem - mem_keep(a);
    for (size_t i = 0; i < drop; i++) ag_msg_unref(a->mem[i]);
    memmove(a->mem, a->mem + drop, (a->n_mem - drop) * sizeof *a->mem);
    a->n_mem -= drop;
    a->mem_dropped += drop;
  }
  if (a->n_mem == a->cap_mem) {
    size_t ncap = a->cap_mem ? a->cap_mem * 2 : 16;
    ag_msg **p = realloc(a->mem, ncap * sizeof *p);
    if (!p) return AG_ERR_NOMEM;
    a->mem = p;
    a->cap_mem = ncap;
  }
  a->mem[a->n_mem++] = ag_msg_ref(m);
  return AG_OK;
}

void agent_reset(agent *a) {
  agent_drop_call(a);
  agent_clear_memory(a);
  a->turn = (turn_state){0, 0};
}

void agent_cancel(agent *a) { agent_drop_call(a); }

int agent_prompt_build(const char *system_prompt, const char *self_id, ag_msg *const *memory,
                       size_t n, int window, llm_message **out, size_t *n_out, char **arena) {
  size_t first = (window > 0 && n > (size_t)window) ? n - (size_t)window : 0;
  size_t count = (system_prompt ? 1 : 0) + (n - first);
  size_t bytes = 1;
  for (size_t i = first; i < n; i++) bytes += strlen(memory[i]->sender) + strlen(memory[i]->text) + 3;
  llm_message *msgs = calloc(count ? count : 1, sizeof *msgs);
  char *buf = malloc(bytes);
  if (!msgs || !buf) {
    free(msgs);
    free(buf);
    return AG_ERR_NOMEM;
  }
  size_t k = 0, pos = 0;
  if (system_prompt) msgs[k++] = (llm_message){.role = "system", .content = system_prompt};
  for (size_t i = first; i < n; i++) {
    const ag_msg *m = memory[i];
    /* The agent's own replies go back as the assistant's words; everyone else is named so the
     * model always knows who said what. */
    if (strcasecmp(m->sender, self_id) == 0 && m->kind != AG_KIND_HUMAN) {
      msgs[k++] = (llm_message){.role = "assistant", .content = m->text};
    } else {
      char *p = buf + pos;
      size_t sl = strlen(m->sender), tl = strlen(m->text);
      memcpy(p, m->sender, sl);
      memcpy(p + sl, ": ", 2);
      memcpy(p + sl + 2, m->text, tl + 1);
      pos += sl + tl + 3;
      msgs[k++] = (llm_message){.role = "user", .content = p};
    }
  }
  *out = msgs;
  *n_out = k;
  *arena = buf;
  return AG_OK;
}

static void agent_report(agent *a, agent_event_type type, const char *text, size_t len,
                         const llm_error_info *info, int failed) {
  if (!a->host->event) return;
  agent_event ev = {type, text, len, info, failed};
  a->host->event(a->host->ctx, a, &ev);
}

static void agent_on_chunk(void *ud, const char *text, size_t len) {
  agent *a = ud;
  if (a->emit_chunks) agent_report(a, AGENT_EV_LLM_CHUNK, text, len, NULL, 0);
}

static void agent_start_next(agent *a);

static void agent_on_done(void *ud, int err, const char *text, const llm_error_info *info) {
  agent *a = ud;
  ag_msg *m = a->answering;
  a->call = NULL;
  a->answering = NULL;
  char *shaped = NULL;
  shape_outcome outcome = SHAPE_SILENT;
  if (err) {
    agent_report(a, AGENT_EV_LLM_ERROR, info && info->message[0] ? info->message : ag_strerror(err),
                 0, info, 1);
    goto done;
  }
  agent_report(a, AGENT_EV_LLM_DONE, text, strlen(text), NULL, 0);
  int rc = shape_reply(text, a->id, m->sender, a->s.auto_reply, a->ids, a->n_ids, &outcome, &shaped);
  if (rc) {
    agent_report(a, AGENT_EV_LLM_ERROR, ag_strerror(rc), 0, NULL, 1);
    goto done;
  }
  if (outcome == SHAPE_EMPTY) {
    agent_report(a, AGENT_EV_LLM_ERROR, "empty reply", 0, NULL, 0);
  } else if (outcome == SHAPE_PUBLISH) {
    ag_msg *reply = NULL;
    if (a->host->publish(a->host->ctx, a, shaped, AG_KIND_AGENT, &reply) == AG_OK && reply)
      agent_memory_push(a, reply);
  }
done:
  free(shaped);
  ag_msg_unref(m);
  agent_start_next(a);
}

/* Keeps a private copy of the world's ids: the reply is shaped after agent_on_message returned. */
static int agent_keep_ids(agent *a, const agent_rules *r) {
  size_t bytes = 0;
  for (size_t i = 0; i < r->n_ids; i++) bytes += strlen(r->ids[i]) + 1;
  char *blob = malloc(bytes ? bytes : 1);
  const char **ids = malloc((r->n_ids ? r->n_ids : 1) * sizeof *ids);
  if (!blob || !ids) {
    free(blob);
    free(ids);
    return AG_ERR_NOMEM;
  }
  size_t pos = 0;
  for (size_t i = 0; i < r->n_ids; i++) {
    size_t l = strlen(r->ids[i]) + 1;
    memcpy(blob + pos, r->ids[i], l);
    ids[i] = blob + pos;
    pos += l;
  }
  free(a->ids_blob);
  free(a->ids);
  a->ids_blob = blob;
  a->ids = ids;
  a->n_ids = r->n_ids;
  return AG_OK;
}

/* Starts the LLM call for the oldest message in the inbox, if any and if idle. */
static void agent_start_next(agent *a) {
  while (!a->answering && a->inbox_len > 0) {
    ag_msg *m = a->inbox[a->inbox_head];
    a->inbox_head = (a->inbox_head + 1) % a->inbox_cap;
    a->inbox_len--;
    llm_message *msgs = NULL;
    char *arena = NULL;
    size_t n_msgs = 0;
    int rc = agent_memory_push(a, m);
    if (!rc)
      rc = agent_prompt_build(a->s.system_prompt, a->id, a->mem, a->n_mem, a->memory_window, &msgs,
                              &n_msgs, &arena);
    if (!rc) {
      a->answering = m; /* the inbox's reference moves here */
      agent_report(a, AGENT_EV_LLM_START, NULL, 0, NULL, 0);
      llm_request req = {.messages = msgs, .n_messages = n_msgs};
      llm_callbacks cb = {agent_on_chunk, agent_on_done};
      rc = llm_call_start(a->llm, &req, &cb, a, &a->call);
      if (rc) a->answering = NULL;
    }
    free(msgs);
    free(arena);
    if (rc) {
      llm_error_info info = {0};
      snprintf(info.message, sizeof info.message, "%s", ag_strerror(rc));
      agent_report(a, AGENT_EV_LLM_ERROR, info.message, 0, &info, 1);
      a->call = NULL;
      ag_msg_unref(m);
    }
  }
  if (!agent_is_thinking(a) && a->host->thinking) a->host->thinking(a->host->ctx, a, 0);
}

static int agent_inbox_push(agent *a, ag_msg *m) {
  if (a->inbox_len == a->inbox_cap) {
    size_t ncap = a->inbox_cap ? a->inbox_cap * 2 : 4;
    ag_msg **q = malloc(ncap * sizeof *q);
    if (!q) return AG_ERR_NOMEM;
    for (size_t i = 0; i < a->inbox_len; i++) q[i] = a->inbox[(a->inbox_head + i) % a->inbox_cap];
    free(a->inbox);
    a->inbox = q;
    a->inbox_cap = ncap;
    a->inbox_head = 0;
  }
  a->inbox[(a->inbox_head + a->inbox_len) % a->inbox_cap] = ag_msg_ref(m);
  a->inbox_len++;
  return AG_OK;
}

turn_decision agent_on_message(agent *a, ag_msg *m, const agent_rules *rules) {
  turn_input in = {a->id, m->sender, m->kind, &m->leading, m->has_other_mentions, rules->main_agent,
                   rules->turn_limit};
  turn_decision d = turn_decide(&a->turn, &in);
  if (d == TURN_NOTICE) {
    char text[128];
    turn_notice_text(rules->turn_limit, text, sizeof text);
    agent_report(a, AGENT_EV_TURN_LIMIT, text, strlen(text), NULL, 0);
    ag_msg *notice = NULL;
    a->host->publish(a->host->ctx, a, text, AG_KIND_TURN_LIMIT, &notice);
    return d;
  }
  if (d != TURN_ANSWER) return d;
  a->memory_window = rules->memory_window;
  a->emit_chunks = rules->emit_chunks;
  int was_thinking = agent_is_thinking(a);
  int rc = agent_keep_ids(a, rules);
  if (!rc) rc = agent_inbox_push(a, m);
  if (rc) {
    agent_report(a, AGENT_EV_LLM_ERROR, ag_strerror(rc), 0, NULL, 1);
    return d;
  }
  if (!was_thinking && a->host->thinking) a->host->thinking(a->host->ctx, a, 1);
  agent_start_next(a);
  return d;
}
