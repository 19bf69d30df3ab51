/* One agent's life per message (behaviour.md §3–5): decide, remember, prompt, call the LLM, shape
 * and publish the reply. The world is reached only through agent_host. */
#include "agents/agent.h"
#include "common/clock.h"

#include "agents/shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

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
  /* The turn in progress: tool rounds so far and what they added to the prompt (assistant tool calls
   * and tool results), sent back with each further round and forgotten when the turn ends. */
  int rounds;
  llm_message *tlog;
  size_t n_tlog, cap_tlog;
  context_state ctx;
  turn_state turn;
  ag_msg **mem;
  size_t n_mem, cap_mem;
  size_t mem_dropped;   /* oldest entries let go of (still in storage) */
};

void agent_settings_init(agent_settings *s) {
  memset(s, 0, sizeof *s);
  s->auto_reply = 1;
  s->tool_support = 1;
  llm_config_init(&s->llm);
}

int agent_settings_copy(agent_settings *dst, const agent_settings *src) {
  agent_settings_init(dst);
  dst->auto_reply = src->auto_reply;
  dst->tools = src->tools;
  dst->approve = src->approve;
  dst->monadic = src->monadic;
  dst->tool_support = src->tool_support;
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
  if (a->s.monadic) a->s.tools |= TOOL_BIT(TOOL_LOAD_CONTEXT) | TOOL_BIT(TOOL_SAVE_CONTEXT);
  if ((rc = context_init(&a->ctx))) goto fail;
  if ((rc = llm_endpoint_new(llm, &a->s.llm, &a->llm, em))) goto fail;
  *out = a;
  return AG_OK;
fail:
  context_free(&a->ctx);
  agent_settings_free(&a->s);
  free(a);
  return rc;
}

static void tlog_clear(agent *a);

/* Forgets the messages waiting for an answer (not the one being answered). */
static void agent_inbox_clear(agent *a) {
  for (size_t i = 0; i < a->inbox_len; i++) ag_msg_unref(a->inbox[(a->inbox_head + i) % a->inbox_cap]);
  a->inbox_head = a->inbox_len = 0;
}

static void agent_drop_call(agent *a) {
  int was_thinking = agent_is_thinking(a);
  tlog_clear(a);
  if (a->call) llm_call_cancel(a->call);
  a->call = NULL;
  if (a->answering) ag_msg_unref(a->answering);
  a->answering = NULL;
  agent_inbox_clear(a);
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
  free(a->tlog);
  context_free(&a->ctx);
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
  context_free(&a->ctx);
  context_init(&a->ctx);
}

const context_state *agent_context(const agent *a) { return &a->ctx; }

int agent_set_context(agent *a, const context_state *st) {
  context_state copy;
  int rc = context_copy(&copy, st);
  if (rc) return rc;
  context_free(&a->ctx);
  a->ctx = copy;
  return AG_OK;
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
  agent_event ev = {type, text, len, info, failed, NULL, NULL, 0};
  a->host->event(a->host->ctx, a, &ev);
}

static void agent_report_tool(agent *a, agent_event_type type, const char *tool, const char *call_id,
                              const char *json, int failed, int64_t at_ms) {
  if (!a->host->event) return;
  agent_event ev = {type, json, strlen(json), NULL, failed, tool, call_id, at_ms};
  a->host->event(a->host->ctx, a, &ev);
}


/* ---- the turn log: what tool rounds add to the prompt ---- */

static void tlog_clear(agent *a) {
  for (size_t i = 0; i < a->n_tlog; i++) {
    llm_message *m = &a->tlog[i];
    free((char *)m->content);
    free((char *)m->tool_call_id);
    free((char *)m->tool_name);
    for (size_t k = 0; k < m->n_tool_calls; k++) {
      free(m->tool_calls[k].id);
      free(m->tool_calls[k].name);
      free(m->tool_calls[k].args_json);
      free(m->tool_calls[k].signature);
    }
    free((llm_tool_call *)m->tool_calls);
  }
  a->n_tlog = 0;
  a->rounds = 0;
}

static llm_message *tlog_add(agent *a) {
  if (a->n_tlog == a->cap_tlog) {
    size_t ncap = a->cap_tlog ? a->cap_tlog * 2 : 8;
    llm_message *p = realloc(a->tlog, ncap * sizeof *p);
    if (!p) return NULL;
    a->tlog = p;
    a->cap_tlog = ncap;
  }
  llm_message *m = &a->tlog[a->n_tlog++];
  memset(m, 0, sizeof *m);
  return m;
}

static char *dup0(const char *s) { return s ? strdup(s) : NULL; }

/* The assistant's tool-calling message, copied into the log. */
static int tlog_add_calls(agent *a, const char *text, const llm_tool_call *calls, size_t n) {
  llm_message *m = tlog_add(a);
  if (!m) return AG_ERR_NOMEM;
  m->role = "assistant";
  m->content = text && text[0] ? strdup(text) : NULL;
  llm_tool_call *c = calloc(n, sizeof *c);
  if (!c) return AG_ERR_NOMEM;
  for (size_t i = 0; i < n; i++) {
    c[i].id = dup0(calls[i].id);
    c[i].name = dup0(calls[i].name);
    c[i].args_json = dup0(calls[i].args_json);
    c[i].signature = dup0(calls[i].signature);
  }
  m->tool_calls = c;
  m->n_tool_calls = n;
  return AG_OK;
}

static int tlog_add_result(agent *a, const llm_tool_call *call, const char *result) {
  llm_message *m = tlog_add(a);
  if (!m) return AG_ERR_NOMEM;
  m->role = "tool";
  m->content = strdup(result);
  m->tool_call_id = dup0(call->id);
  m->tool_name = dup0(call->name);
  return m->content ? AG_OK : AG_ERR_NOMEM;
}

static void agent_on_chunk(void *ud, const char *text, size_t len) {
  agent *a = ud;
  if (a->emit_chunks) agent_report(a, AGENT_EV_LLM_CHUNK, text, len, NULL, 0);
}

static void agent_start_next(agent *a);
static int agent_call_llm(agent *a);

/* Publishes text as the answer to m (shaped, §5) and remembers it. */
static void agent_publish_reply(agent *a, const ag_msg *m, const char *text, int empty_is_error) {
  char *shaped = NULL;
  shape_outcome outcome = SHAPE_SILENT;
  size_t n_ids = 0;
  const char *const *ids = a->host->ids ? a->host->ids(a->host->ctx, &n_ids) : NULL;
  int rc = shape_reply(text, a->id, m->sender, a->s.auto_reply, ids, n_ids, &outcome, &shaped);
  if (rc) {
    agent_report(a, AGENT_EV_LLM_ERROR, ag_strerror(rc), 0, NULL, 1);
  } else if (outcome == SHAPE_EMPTY) {
    if (empty_is_error) agent_report(a, AGENT_EV_LLM_ERROR, "empty reply", 0, NULL, 0);
  } else if (outcome == SHAPE_PUBLISH) {
    ag_msg *reply = NULL;
    if (a->host->publish(a->host->ctx, a, shaped, AG_KIND_AGENT, &reply) == AG_OK && reply)
      agent_memory_push(a, reply);
  }
  free(shaped);
}

static char *json_error(const char *fmt, const char *detail) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, detail);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "error", msg);
  char *s = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return s;
}

static char *json_print_take(cJSON *j) {
  char *s = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return s;
}

/* Runs one tool call and returns its result as JSON text (caller frees). An unknown tool, a tool the
 * agent was not given, invalid arguments or a denied approval give an error result, never a crash.
 * save_context's message goes to *reply. */
static char *agent_exec_tool(agent *a, const llm_tool_call *c, char **reply, int *failed, int64_t *at_ms) {
  tool_id id;
  char err[256];
  cJSON *args = NULL;
  *failed = 1;
  *at_ms = ag_now_ms();
  if (tool_parse(c->name, &id) || !(a->s.tools & TOOL_BIT(id))) return json_error("unknown tool '%s'", c->name);
  if (tool_args_parse(id, c->args_json, &args, err, sizeof err)) return json_error("invalid arguments: %s", err);
  if (a->s.approve & TOOL_BIT(id)) {
    int ok = a->host->approve && a->host->approve(a->host->ctx, a, c->name, c->args_json);
    if (!ok) {
      cJSON_Delete(args);
      return json_error("denied: %s needs the user's approval and did not get it", c->name);
    }
  }
  char *out = NULL;
  cJSON *res = NULL;
  switch (id) {
  case TOOL_LOAD_CONTEXT:
    out = json_print_take(context_to_json(&a->ctx));
    break;
  case TOOL_SAVE_CONTEXT: {
    if (context_apply(&a->ctx, args, *at_ms)) {
      out = json_error("invalid arguments: %s", "must be an object");
      break;
    }
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(args, "message");
    if (cJSON_IsString(msg) && msg->valuestring[0] && !*reply) *reply = strdup(msg->valuestring);
    res = cJSON_CreateObject();
    cJSON_AddBoolToObject(res, "ok", 1);
    cJSON_AddNumberToObject(res, "version", (double)a->ctx.version);
    out = json_print_take(res);
    break;
  }
  case TOOL_SEND_MESSAGE: {
    /* Leading mentions address exactly the named agents (§3.6). */
    size_t cap = 64;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(args, "to")) cap += strlen(t->valuestring) + 2;
    const char *text = cJSON_GetObjectItemCaseSensitive(args, "text")->valuestring;
    cap += strlen(text);
    char *msg = malloc(cap);
    size_t pos = 0;
    size_t n_ids = 0;
    const char *const *ids = a->host->ids ? a->host->ids(a->host->ctx, &n_ids) : NULL;
    const char *unknown = NULL;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(args, "to")) {
      char id_buf[MENTION_ID_MAX] = "";
      int known = mention_id_from_name(t->valuestring[0] == '@' ? t->valuestring + 1 : t->valuestring, id_buf,
                                       sizeof id_buf) == AG_OK;
      int found = 0;
      for (size_t k = 0; known && k < n_ids && !found; k++) found = strcmp(ids[k], id_buf) == 0;
      if (!found && !unknown) unknown = t->valuestring;
      pos += (size_t)snprintf(msg + pos, cap - pos, "@%s ", id_buf);
    }
    if (unknown) {
      free(msg);
      out = json_error("no agent '%s' in this world", unknown);
      break;
    }
    snprintf(msg + pos, cap - pos, "%s", text);
    ag_msg *sent = NULL;
    int rc = a->host->publish(a->host->ctx, a, msg, AG_KIND_AGENT, &sent);
    free(msg);
    if (rc || !sent) {
      out = json_error("could not send: %s", ag_strerror(rc));
      break;
    }
    agent_memory_push(a, sent);
    res = cJSON_CreateObject();
    cJSON_AddBoolToObject(res, "ok", 1);
    cJSON_AddNumberToObject(res, "seq", (double)sent->seq);
    out = json_print_take(res);
    break;
  }
  default:
    out = json_error("unknown tool '%s'", c->name);
  }
  cJSON_Delete(args);
  if (out && !strstr(out, "\"error\"")) *failed = 0;
  return out;
}

/* Degraded mode: a model without tool calling updates its context with a fenced JSON block. */
static char *agent_inline_context(agent *a, const char *text) {
  cJSON *args = NULL;
  char *rest = NULL;
  if (!(a->s.tools & TOOL_BIT(TOOL_SAVE_CONTEXT)) || tool_inline_extract(text, &args, &rest)) return NULL;
  char *args_json = cJSON_PrintUnformatted(args);
  int64_t at = ag_now_ms();
  agent_report_tool(a, AGENT_EV_TOOL_CALL, "save_context", "inline", args_json ? args_json : "{}", 0, 0);
  int failed = context_apply(&a->ctx, args, at) != AG_OK;
  cJSON *res = cJSON_CreateObject();
  cJSON_AddBoolToObject(res, "ok", !failed);
  cJSON_AddNumberToObject(res, "version", (double)a->ctx.version);
  char *res_json = json_print_take(res);
  agent_report_tool(a, AGENT_EV_TOOL_RESULT, "save_context", "inline", res_json ? res_json : "{}", failed, at);
  free(res_json);
  free(args_json);
  cJSON_Delete(args);
  return rest;
}

static void agent_end_turn(agent *a) {
  ag_msg *m = a->answering;
  a->answering = NULL;
  tlog_clear(a);
  ag_msg_unref(m);
  agent_start_next(a);
}

static void agent_on_done(void *ud, int err, const char *text, const llm_error_info *info) {
  agent *a = ud;
  ag_msg *m = a->answering;
  size_t n_calls = 0;
  const llm_tool_call *calls = (!err && a->call) ? llm_call_tool_calls(a->call, &n_calls) : NULL;
  a->call = NULL;
  if (err) {
    agent_report(a, AGENT_EV_LLM_ERROR, info && info->message[0] ? info->message : ag_strerror(err), 0, info, 1);
    agent_end_turn(a);
    return;
  }
  agent_report(a, AGENT_EV_LLM_DONE, text, strlen(text), NULL, 0);
  if (n_calls == 0) {
    char *rest = a->s.tool_support ? NULL : agent_inline_context(a, text);
    agent_publish_reply(a, m, rest ? rest : text, 1);
    free(rest);
    agent_end_turn(a);
    return;
  }
  if (a->rounds >= TOOL_MAX_ROUNDS) {
    char detail[96];
    snprintf(detail, sizeof detail, "tool round limit reached (%d rounds in one turn)", TOOL_MAX_ROUNDS);
    agent_report(a, AGENT_EV_LLM_ERROR, detail, 0, NULL, 0);
    agent_publish_reply(a, m, text, 0);
    agent_end_turn(a);
    return;
  }
  char *reply = NULL;
  int rc = tlog_add_calls(a, text, calls, n_calls);
  for (size_t i = 0; !rc && i < n_calls; i++) {
    agent_report_tool(a, AGENT_EV_TOOL_CALL, calls[i].name, calls[i].id, calls[i].args_json, 0, 0);
    int failed = 0;
    int64_t at = 0;
    char *result = agent_exec_tool(a, &calls[i], &reply, &failed, &at);
    if (!result) {
      rc = AG_ERR_NOMEM;
      break;
    }
    agent_report_tool(a, AGENT_EV_TOOL_RESULT, calls[i].name, calls[i].id, result, failed, at);
    rc = tlog_add_result(a, &calls[i], result);
    free(result);
  }
  if (rc) {
    agent_report(a, AGENT_EV_LLM_ERROR, ag_strerror(rc), 0, NULL, 1);
  } else if (reply) {
    /* save_context's message is the reply: the turn is complete. */
    agent_publish_reply(a, m, reply, 0);
  } else {
    a->rounds++;
    if (agent_call_llm(a) == AG_OK) return; /* the next round; the turn goes on */
  }
  free(reply);
  agent_end_turn(a);
}

/* The system prompt as sent: the agent's own, plus what its tools need it to know. Caller frees. */
static char *agent_system_prompt(const agent *a) {
  const char *base = a->s.system_prompt ? a->s.system_prompt : "";
  char *ctx = NULL;
  const char *extra = NULL;
  if (a->s.monadic && a->s.tool_support) {
    extra = TOOL_MONADIC_INSTRUCTION;
  } else if (!a->s.tool_support && (a->s.tools & TOOL_BIT(TOOL_SAVE_CONTEXT))) {
    char *cj = json_print_take(context_to_json(&a->ctx));
    size_t n = strlen(TOOL_INLINE_INSTRUCTION) + (cj ? strlen(cj) : 0) + 32;
    ctx = malloc(n);
    if (ctx) snprintf(ctx, n, "%s\nContext: %s", TOOL_INLINE_INSTRUCTION, cj ? cj : "{}");
    free(cj);
    extra = ctx;
  }
  if (!extra) {
    free(ctx);
    return a->s.system_prompt ? strdup(base) : NULL;
  }
  size_t n = strlen(base) + strlen(extra) + 3;
  char *out = malloc(n);
  if (out) snprintf(out, n, "%s%s%s", base, base[0] ? "\n\n" : "", extra);
  free(ctx);
  return out;
}

/* Starts an LLM call for a->answering: the prompt from memory, then this turn's tool rounds. */
static int agent_call_llm(agent *a) {
  llm_message *msgs = NULL, *all = NULL;
  char *arena = NULL;
  size_t n_msgs = 0;
  char *sys = agent_system_prompt(a);
  int rc = agent_prompt_build(sys, a->id, a->mem, a->n_mem, a->memory_window, &msgs, &n_msgs, &arena);
  if (!rc && a->n_tlog) {
    all = malloc((n_msgs + a->n_tlog) * sizeof *all);
    if (!all) {
      rc = AG_ERR_NOMEM;
    } else {
      memcpy(all, msgs, n_msgs * sizeof *all);
      memcpy(all + n_msgs, a->tlog, a->n_tlog * sizeof *all);
    }
  }
  if (!rc) {
    llm_tool tools[TOOL_COUNT];
    size_t n_tools = 0;
    if (a->s.tool_support)
      for (int t = 0; t < TOOL_COUNT; t++)
        if (a->s.tools & TOOL_BIT(t)) tools[n_tools++] = *tool_definition((tool_id)t);
    agent_report(a, AGENT_EV_LLM_START, NULL, 0, NULL, 0);
    llm_request req = {.messages = all ? all : msgs, .n_messages = n_msgs + (all ? a->n_tlog : 0),
                       .tools = n_tools ? tools : NULL, .n_tools = n_tools};
    llm_callbacks cb = {agent_on_chunk, agent_on_done};
    rc = llm_call_start(a->llm, &req, &cb, a, &a->call);
  }
  free(all);
  free(msgs);
  free(arena);
  free(sys);
  if (rc) {
    a->call = NULL;
    llm_error_info info = {0};
    snprintf(info.message, sizeof info.message, "%s", ag_strerror(rc));
    agent_report(a, AGENT_EV_LLM_ERROR, info.message, 0, &info, 1);
  }
  return rc;
}

/* Starts the LLM call for the oldest message in the inbox, if any and if idle. */
static void agent_start_next(agent *a) {
  while (!a->answering && a->inbox_len > 0) {
    ag_msg *m = a->inbox[a->inbox_head];
    a->inbox_head = (a->inbox_head + 1) % a->inbox_cap;
    a->inbox_len--;
    if (agent_memory_push(a, m) != AG_OK) {
      agent_report(a, AGENT_EV_LLM_ERROR, ag_strerror(AG_ERR_NOMEM), 0, NULL, 1);
      ag_msg_unref(m);
      continue;
    }
    a->answering = m; /* the inbox's reference moves here */
    tlog_clear(a);
    if (agent_call_llm(a) != AG_OK) {
      a->answering = NULL;
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
    /* Answers still queued were decided before the limit: an agent does not speak after its notice
     * (turn.h). The one in flight, if any, ends as it will. */
    int was_thinking = agent_is_thinking(a);
    agent_inbox_clear(a);
    if (was_thinking && !agent_is_thinking(a) && a->host->thinking) a->host->thinking(a->host->ctx, a, 0);
    a->host->publish(a->host->ctx, a, text, AG_KIND_TURN_LIMIT, &notice);
    return d;
  }
  if (d != TURN_ANSWER) return d;
  a->memory_window = rules->memory_window;
  a->emit_chunks = rules->emit_chunks;
  int was_thinking = agent_is_thinking(a);
  int rc = agent_inbox_push(a, m);
  if (rc) {
    agent_report(a, AGENT_EV_LLM_ERROR, ag_strerror(rc), 0, NULL, 1);
    return d;
  }
  if (!was_thinking && a->host->thinking) a->host->thinking(a->host->ctx, a, 1);
  agent_start_next(a);
  return d;
}
