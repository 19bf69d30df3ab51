/* One agent's life per message (docs/behaviour.md §3–5): decide, remember, prompt, call the LLM, shape
 * and publish the reply. The world is reached only through agent_host. */
#include "agents/agent_int.h"
#include "common/clock.h"

#include "agents/shape.h"
#include "agents/tool_exec.h"
#include "agents/turn_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The script provider's answer when the world file gives the agent no replies (only then: with replies
 * it is never said). */
static int agent_script_fallback(agent *a) {
  size_t n = strlen(a->s.name) + 32;
  char *text = malloc(n);
  if (!text) return AG_ERR_NOMEM;
  snprintf(text, n, "(%s has nothing to say)", a->s.name);
  a->s.llm.script.fallback = text;
  return AG_OK;
}

int agent_new(const agent_settings *s, llm_client *llm, const agent_host *host, agent **out,
              ag_errmsg *em) {
  int rc = AG_OK;
  agent *a = calloc(1, sizeof *a);
  if (a) ag_ring_init(&a->inbox, sizeof(ag_msg *), 4);
  if (!a) return AG_ERR_NOMEM;
  a->host = host;
  a->client = llm; /* a hosted embedder's requests (agent_embed.c) */
  if (!s->name || mention_id_from_name(s->name, a->id, sizeof a->id) != AG_OK) {
    rc = ag_fail(em, AG_ERR_INVALID, "invalid agent name '%s': it must start with a letter or digit and "
                 "contain only letters, digits, '_', '-' and spaces", s->name ? s->name : "");
    goto fail;
  }
  if ((rc = agent_settings_copy(&a->s, s))) goto fail;
  /* Worded only where it can be said: a million scripted agents with replies held 112 bytes each of it
   * (the text and the endpoint's copy), 7% of an idle agent (issue 22). */
  if (a->s.llm.provider == LLM_SCRIPT && !a->s.llm.script.n_replies && !a->s.llm.script.fallback &&
      (rc = agent_script_fallback(a)))
    goto fail;
  if (a->s.monadic) a->s.tools |= TOOL_BIT(TOOL_LOAD_CONTEXT) | TOOL_BIT(TOOL_SAVE_CONTEXT);
  if (a->s.memory.mode == MEM_MODE_STREAM) a->s.tools |= TOOL_BIT(TOOL_REMEMBER);
  if ((rc = context_init(&a->ctx))) goto fail;
  if ((rc = llm_endpoint_new(llm, &a->s.llm, &a->llm, em)) || (rc = agent__summary_init(a, &a->s, llm, em))) goto fail;
  *out = a;
  return AG_OK;
fail:
  llm_endpoint_free(a->llm);
  context_free(&a->ctx);
  agent_settings_free(&a->s);
  free(a);
  return rc;
}

int agent_reconfigure(agent *a, const agent_settings *s, llm_client *llm, ag_errmsg *em) {
  if (agent_is_thinking(a)) return ag_fail(em, AG_ERR_STATE, "%s is answering; try again when it is done", a->id);
  if (!s->name || strcmp(s->name, a->s.name)) return ag_fail(em, AG_ERR_INVALID, "an agent's name cannot change");
  agent_settings ns;
  llm_endpoint *e = NULL;
  int rc = agent_settings_copy(&ns, s);
  if (rc) return rc;
  if (ns.monadic) ns.tools |= TOOL_BIT(TOOL_LOAD_CONTEXT) | TOOL_BIT(TOOL_SAVE_CONTEXT);
  if (ns.memory.mode == MEM_MODE_STREAM) ns.tools |= TOOL_BIT(TOOL_REMEMBER);
  if ((rc = llm_endpoint_new(llm, &ns.llm, &e, em)) || (rc = agent__summary_init(a, &ns, llm, em))) {
    llm_endpoint_free(e);
    agent_settings_free(&ns);
    return rc;
  }
  llm_endpoint_set_reply_counter(e, llm_endpoint_reply_counter(a->llm)); /* a script goes on */
  int switched = agent__embedder_differs(&a->s.memory, &ns.memory);
  llm_endpoint_free(a->llm);
  agent_settings_free(&a->s);
  a->s = ns;
  a->llm = e;
  return switched ? agent__embed_switch(a) : AG_OK;
}

/* Forgets the turn's tool rounds. */
static void tlog_clear(agent *a) {
  turn_log_clear(&a->tlog);
  a->rounds = 0;
  a->round_msg = a->round_next = 0;
  free(a->round_reply);
  a->round_reply = NULL;
}

/* Forgets the messages waiting for an answer (not the one being answered). */
static void agent_inbox_clear(agent *a) {
  ag_msg *m;
  while (ag_ring_pop(&a->inbox, &m)) ag_msg_unref(m);
}

/* Cancels whatever the turn waits for and forgets the inbox: the agent is idle (a pending approval
 * is withdrawn by the move). */
static void agent_drop_call(agent *a) {
  agent__mcp_drop(a);
  tlog_clear(a);
  if (a->call) llm_call_cancel(a->call);
  a->call = NULL;
  agent__embed_cancel(a);
  if (a->answering) ag_msg_unref(a->answering);
  a->answering = NULL;
  agent_inbox_clear(a);
  if (a->phase != AGENT_IDLE) agent__set_phase(a, AGENT_IDLE);
}

static void agent_clear_memory(agent *a) {
  for (size_t i = 0; i < a->n_mem; i++) ag_msg_unref(a->mem[i]);
  a->n_mem = 0;
  a->mem_dropped = 0;
  a->mem_bytes = 0;
  agent__summary_clear(a, 0);
  mem_stream_clear(&a->stream);
}

void agent_free(agent *a) {
  if (!a) return;
  agent_drop_call(a);
  agent_mcp_set_free(&a->mcp);
  agent_clear_memory(a);
  agent__summary_clear(a, 1);
  free(a->mem);
  mem_stream_free(&a->stream);
  free(a->query_vec);
  ag_ring_free(&a->inbox);
  turn_log_free(&a->tlog);
  context_free(&a->ctx);
  llm_endpoint_free(a->llm);
  agent_settings_free(&a->s);
  free(a);
}

const char *agent_id(const agent *a) { return a->id; }
const char *agent_name(const agent *a) { return a->s.name; }
const agent_settings *agent_settings_of(const agent *a) { return &a->s; }
llm_usage agent_usage(const agent *a) { return a->usage; }

int agent_is_thinking(const agent *a) { return a->phase != AGENT_IDLE; }
agent_phase agent_phase_of(const agent *a) { return a->phase; }
turn_state agent_turn_state(const agent *a) { return a->turn; }
void agent_set_turn_state(agent *a, turn_state st) { a->turn = st; }
size_t agent_reply_counter(const agent *a) { return llm_endpoint_reply_counter(a->llm); }
void agent_set_reply_counter(agent *a, size_t n) { llm_endpoint_set_reply_counter(a->llm, n); }

ag_msg *const *agent_memory(const agent *a, size_t *n) { return *n = a->n_mem, a->mem; }

/* Entries kept in RAM: the window plus slack, so that trimming is rare (amortised O(1)) and entries
 * not yet written to storage (a handful at most) are never the ones let go of. */
static size_t mem_window(const agent *a) { return a->memory_window > 0 ? (size_t)a->memory_window : 10; }
static size_t mem_keep(const agent *a) { return mem_window(a) + 256; }
/* The entries the window holds now (at most all of them). */
static size_t mem_window_now(const agent *a) { return a->n_mem < mem_window(a) ? a->n_mem : mem_window(a); }

/* Lets go of the oldest n entries. */
static void mem_drop(agent *a, size_t n) {
  agent__summary_fold_upto(a, a->mem_dropped + n); /* nothing leaves RAM unsummarised */
  for (size_t i = 0; i < n; i++) {
    a->mem_bytes -= strlen(a->mem[i]->text);
    ag_msg_unref(a->mem[i]);
  }
  memmove(a->mem, a->mem + n, (a->n_mem - n) * sizeof *a->mem);
  a->n_mem -= n;
  a->mem_dropped += n;
}

size_t agent_memory_total(const agent *a) { return a->mem_dropped + a->n_mem; }

void agent_set_memory_window(agent *a, int window) { a->memory_window = window; }

int agent_memory_push(agent *a, ag_msg *m) {
  if (a->n_mem >= 2 * mem_keep(a)) mem_drop(a, a->n_mem - mem_keep(a));
  /* The slack is bounded in bytes too: 256 messages of 1 MiB would hold a quarter of a gigabyte per
   * agent. Past AGENT_MEM_BYTES the oldest go (down to half of it, so that trimming stays rare), never
   * the window nor the last 16 (those not yet stored are among them). */
  if (a->mem_bytes > AGENT_MEM_BYTES) {
    size_t floor = mem_window(a) + 16, drop = 0, bytes = a->mem_bytes;
    while (a->n_mem - drop > floor && bytes > AGENT_MEM_BYTES / 2) bytes -= strlen(a->mem[drop++]->text);
    if (drop) mem_drop(a, drop);
  }
  if (a->n_mem == a->cap_mem) {
    size_t ncap = a->cap_mem ? a->cap_mem * 2 : 16;
    ag_msg **p = realloc(a->mem, ncap * sizeof *p);
    if (!p) return AG_ERR_NOMEM;
    a->mem = p;
    a->cap_mem = ncap;
  }
  int rc = agent__stream_add(a, m, agent_memory_total(a));
  if (rc) return rc;
  a->mem[a->n_mem++] = ag_msg_ref(m);
  a->mem_bytes += strlen(m->text);
  if (a->s.llm.provider == LLM_SCRIPT) agent__summary_fold_upto(a, agent_memory_total(a) - mem_window_now(a));
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

static void agent_notify(agent *a, agent_report_kind type, const char *text, size_t len,
                         const llm_error_info *info, int failed) {
  if (!a->host->report) return;
  agent_report ev = {.kind = type, .text = text, .len = len, .info = info, .failed = failed,
                     .seq = a->answering ? a->answering->seq : 0};
  a->host->report(a->host->ctx, a, &ev);
}

static void agent_notify_tool(agent *a, agent_report_kind type, const char *tool, const char *call_id,
                              const char *json, int failed, int64_t at_ms) {
  if (!a->host->report) return;
  agent_report ev = {.kind = type, .text = json, .len = strlen(json), .failed = failed, .tool = tool, .call_id = call_id,
                     .at_ms = at_ms};
  a->host->report(a->host->ctx, a, &ev);
}

static void agent_on_chunk(void *ud, const char *text, size_t len) {
  agent *a = ud;
  if (a->emit_chunks) agent_notify(a, AGENT_REPORT_LLM_CHUNK, text, len, NULL, 0);
}

static void agent_start_next(agent *a);

/* The world's agent ids as the host offers them: its index when it has one, else its list. */
static mention_known agent_known_ids(agent *a) {
  if (a->host->has_id) return (mention_known){.has = a->host->has_id, .ctx = a->host->ctx};
  mention_known k = {0};
  if (a->host->ids) k.ids = a->host->ids(a->host->ctx, &k.n);
  return k;
}

/* Publishes text as the answer to m (shaped, §5) and remembers it. */
static void agent_publish_reply(agent *a, const ag_msg *m, const char *text, int empty_is_error) {
  char *shaped = NULL;
  shape_outcome outcome = SHAPE_SILENT;
  mention_known known = agent_known_ids(a);
  int rc = shape_reply_known(text, a->id, m->sender, a->s.auto_reply, &known, &outcome, &shaped);
  if (rc) {
    agent_notify(a, AGENT_REPORT_LLM_ERROR, ag_strerror(rc), 0, NULL, 1);
  } else if (outcome == SHAPE_EMPTY) {
    if (empty_is_error) agent_notify(a, AGENT_REPORT_LLM_ERROR, "empty reply", 0, NULL, 0);
  } else if (outcome == SHAPE_PUBLISH) {
    ag_msg *reply = NULL;
    if (a->host->publish(a->host->ctx, a, shaped, AG_KIND_AGENT, &reply) == AG_OK && reply)
      agent_memory_push(a, reply);
  }
  free(shaped);
}

/* The body of tool call c with parsed args (id allowed, approval settled). */
static char *agent_tool_body(agent *a, tool_id id, const llm_tool_call *c, const cJSON *args, int64_t at) {
  if (id == TOOL_LOAD_CONTEXT) return tool_exec_load(&a->ctx);
  if (id == TOOL_SAVE_CONTEXT) return tool_exec_save(&a->ctx, args, at, &a->round_reply);
  if (id == TOOL_REMEMBER) return agent__remember(a, args);
  if (id != TOOL_SEND_MESSAGE) return tool_exec_error("unknown tool '%s'", c->name);
  /* Leading mentions address exactly the named agents (§3.6). */
  mention_known known = agent_known_ids(a);
  char *text = NULL;
  char *err = tool_exec_message_known(args, &known, &text);
  if (err || !text) return err;
  ag_msg *sent = NULL;
  int rc = a->host->publish(a->host->ctx, a, text, AG_KIND_AGENT, &sent);
  free(text);
  if (rc) return tool_exec_error("could not send: %s", ag_strerror(rc));
  if (sent) agent_memory_push(a, sent); /* none: spread over processes, it joins memory when back (seq 0) */
  return tool_exec_sent(sent ? sent->seq : 0);
}

/* ask_human: asks the host (NULL with *asked set), then gives its answer or why there is none. */
static char *agent_ask_human(agent *a, const llm_tool_call *c, const cJSON *args, int *asked) {
  if (a->approval == APPROVAL_ALLOWED) return tool_exec_answer(a->human_text ? a->human_text : "");
  const char *q = cJSON_GetObjectItemCaseSensitive(args, "question")->valuestring;
  if (a->approval == APPROVAL_NONE && a->host->approve &&
      a->host->approve(a->host->ctx, a, c->name, c->args_json, q) == AG_OK) {
    *asked = 1;
    return NULL;
  }
  return tool_exec_error("%s", a->human_text ? a->human_text : "no human to answer");
}

/* Runs tool call c and returns its result as JSON text (caller frees). An unknown tool, a tool the
 * agent was not given, invalid arguments or a denied approval give an error result, never a crash. A
 * call that needs approval and has no answer yet asks the host: NULL with *asked set. */
static char *agent_run_call(agent *a, const llm_tool_call *c, int *failed, int64_t *at_ms, int *asked) {
  tool_id id;
  cJSON *args = NULL;
  *failed = 1;
  *at_ms = ag_now_ms();
  char *out = NULL;
  if (agent__mcp_run(a, c, &out, failed, asked)) return out;
  out = tool_exec_check(a->s.tools, c, &id, &args);
  if (out) return out;
  if (id == TOOL_ASK_HUMAN) {
    out = agent_ask_human(a, c, args, asked);
    *failed = !out || tool_exec_failed(out);
  } else if ((a->s.approve & TOOL_BIT(id)) && a->approval != APPROVAL_ALLOWED) {
    if (a->approval == APPROVAL_NONE && a->host->approve &&
        a->host->approve(a->host->ctx, a, c->name, c->args_json, NULL) == AG_OK) {
      *asked = 1;
    } else {
      out = tool_exec_error("denied: %s needs the user's approval and did not get it", c->name);
    }
  } else {
    out = agent_tool_body(a, id, c, args, *at_ms);
    *failed = tool_exec_failed(out);
  }
  cJSON_Delete(args);
  return out;
}

/* Degraded mode: a model without tool calling updates its context with a fenced JSON block. Returns
 * the reply without the block (caller frees), or NULL when there is none. */
static char *agent_inline_context(agent *a, const char *text) {
  char *rest = NULL, *args_json = NULL, *res_json = NULL;
  int failed = 0;
  int64_t at = ag_now_ms();
  if (!(a->s.tools & TOOL_BIT(TOOL_SAVE_CONTEXT)) ||
      !tool_exec_inline(&a->ctx, text, at, &rest, &args_json, &res_json, &failed))
    return NULL;
  agent_notify_tool(a, AGENT_REPORT_TOOL_CALL, "save_context", "inline", args_json ? args_json : "{}", 0, 0);
  agent_notify_tool(a, AGENT_REPORT_TOOL_RESULT, "save_context", "inline", res_json ? res_json : "{}", failed, at);
  free(res_json);
  free(args_json);
  return rest;
}

/* The turn is over for good: the next one in the inbox starts. */
static void agent_finish_turn(agent *a) {
  ag_msg *m = a->answering;
  agent_notify(a, AGENT_REPORT_TURN_END, NULL, 0, NULL, 0);
  a->answering = NULL;
  tlog_clear(a);
  agent__set_phase(a, ag_ring_len(&a->inbox) ? AGENT_QUEUED : AGENT_IDLE);
  ag_msg_unref(m);
  agent_start_next(a);
}

/* The host may hold the end until the world's total order confirms it (agent_turn_done). */
static int agent_end_deferred(agent *a) {
  if (!a->host->turn_end || !a->host->turn_end(a->host->ctx, a, a->answering)) return 0;
  tlog_clear(a);
  agent__set_phase(a, AGENT_ENDING);
  return 1;
}
static void agent_end_turn(agent *a) { if (!agent_end_deferred(a)) agent_finish_turn(a); }
void agent__end_turn(agent *a) { agent_end_turn(a); }

void agent_turn_done(agent *a, uint64_t trigger_seq) {
  if (!a->answering || a->answering->seq != trigger_seq) return;
  /* Answered elsewhere first: this answer would be a duplicate. An MCP call out for the round is
   * withdrawn too, or its result would resume a round that is gone. */
  if (a->call) llm_call_cancel(a->call);
  a->call = NULL;
  agent__embed_cancel(a);
  agent__mcp_drop(a);
  agent_finish_turn(a); /* a pending approval is withdrawn by the move */
}

void agent_turn_resume(agent *a) {
  if (a->phase != AGENT_ELSEWHERE) return;
  tlog_clear(a);
  if (agent__call_llm(a) != AG_OK) agent_end_turn(a);
}

uint64_t agent_turn_trigger(const agent *a, int *round) {
  if (round) *round = a->rounds;
  return a->answering ? a->answering->seq : 0;
}

/* The round's calls are done (rc: or one failed): save_context's message completes the turn, else
 * the results go back to the model in the next round. */
static void agent_round_end(agent *a, int rc) {
  if (rc) {
    agent_notify(a, AGENT_REPORT_LLM_ERROR, ag_strerror(rc), 0, NULL, 1);
  } else if (a->round_reply) {
    agent_publish_reply(a, a->answering, a->round_reply, 0);
  } else {
    a->rounds++;
    if (agent__call_llm(a) == AG_OK) return; /* the next round; the turn goes on */
  }
  agent_end_turn(a);
}

/* Runs the round's tool calls from round_next on, in order. A call that waits for approval parks the
 * round (AGENT_AWAITING_APPROVAL); agent_approval_answer picks it up at the same call. */
static void agent_round_go(agent *a) {
  int rc = AG_OK;
  const llm_message *round = &a->tlog.msgs[a->round_msg];
  while (a->round_next < round->n_tool_calls) {
    const llm_tool_call *c = &round->tool_calls[a->round_next];
    char shown[300];
    if (a->approval == APPROVAL_NONE && !a->mcp_text)
      agent_notify_tool(a, AGENT_REPORT_TOOL_CALL, agent__tool_shown(a, c->name, shown, sizeof shown), c->id,
                        c->args_json, 0, 0);
    int failed = 0, asked = 0;
    int64_t at = 0;
    char *result = agent_run_call(a, c, &failed, &at, &asked);
    if (asked == 2) return; /* an MCP call in flight: its result resumes the round */
    if (asked) {
      agent__set_phase(a, AGENT_AWAITING_APPROVAL);
      return;
    }
    agent__set_phase(a, AGENT_TOOL_ROUND); /* the call is settled: its answer, if any, is spent */
    if (!result) {
      rc = AG_ERR_NOMEM;
      break;
    }
    agent_notify_tool(a, AGENT_REPORT_TOOL_RESULT, agent__tool_shown(a, c->name, shown, sizeof shown), c->id, result,
                      failed, at);
    rc = turn_log_add_result(&a->tlog, c, result); /* c lives in its own array: still valid */
    free(result);
    if (rc) break;
    round = &a->tlog.msgs[a->round_msg]; /* the log may have moved */
    a->round_next++;
  }
  agent_round_end(a, rc);
}

void agent__round_resume(agent *a) { agent_round_go(a); }
void agent__turn_go(agent *a) { if (agent__call_llm(a) != AG_OK) agent_end_turn(a); }

void agent_approval_answer(agent *a, int allow, const char *text) {
  if (a->phase != AGENT_AWAITING_APPROVAL) return;
  agent__phase_enter(a, AGENT_TOOL_ROUND, allow ? APPROVAL_ALLOWED : APPROVAL_DENIED, text);
  agent_round_go(a);
}

llm_usage agent__call_settle(agent *a) {
  llm_usage u = a->call ? llm_call_usage(a->call) : (llm_usage){0};
  a->call = NULL;
  a->usage.input_tokens += u.input_tokens;
  a->usage.output_tokens += u.output_tokens;
  return u;
}

static void agent_on_done(void *ud, int err, const char *text, const llm_error_info *info) {
  agent *a = ud;
  ag_msg *m = a->answering;
  size_t n_calls = 0;
  const llm_tool_call *calls = (!err && a->call) ? llm_call_tool_calls(a->call, &n_calls) : NULL;
  llm_usage done_usage = agent__call_settle(a);
  if (err && agent__shrink(a, info)) { /* the prompt was too long: once more, shorter */
    if (agent__call_llm(a) != AG_OK) agent_end_turn(a);
    return;
  }
  if (err) {
    agent_notify(a, AGENT_REPORT_LLM_ERROR, info && info->message[0] ? info->message : ag_strerror(err), 0, info, 1);
    agent_end_turn(a);
    return;
  }
  if (a->host->report) {
    agent_report ev = {.kind = AGENT_REPORT_LLM_DONE, .text = text, .len = strlen(text), .usage = done_usage, .seq = m->seq};
    a->host->report(a->host->ctx, a, &ev);
  }
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
    agent_notify(a, AGENT_REPORT_LLM_ERROR, detail, 0, NULL, 0);
    agent_publish_reply(a, m, text, 0);
    agent_end_turn(a);
    return;
  }
  int rc = turn_log_add_calls(&a->tlog, text, calls, n_calls);
  if (rc) {
    agent_round_end(a, rc);
    return;
  }
  a->round_msg = a->tlog.n - 1;
  a->round_next = 0;
  agent__set_phase(a, AGENT_TOOL_ROUND);
  agent_round_go(a);
}

/* Starts an LLM call for a->answering: the prompt from memory, then this turn's tool rounds. At a turn's
 * start in mode stream, a rating or reflection call may come first (its end calls here again). */
int agent__call_llm(agent *a) {
  if (agent__reflect_begin(a)) return AG_OK;
  agent__request r;
  int rc = agent__request_build(a, &r);
  if (!rc) {
    agent_notify(a, AGENT_REPORT_LLM_START, NULL, 0, NULL, 0);
    llm_request req = {.messages = r.msgs, .n_messages = r.n_msgs, .tools = r.n_tools ? r.tools : NULL,
                       .n_tools = r.n_tools};
    llm_callbacks cb = {agent_on_chunk, agent_on_done};
    rc = llm_call_start(a->llm, &req, &cb, a, &a->call);
  }
  agent__request_free(&r);
  if (rc) {
    a->call = NULL;
    llm_error_info info = {0};
    snprintf(info.message, sizeof info.message, "%s", ag_strerror(rc));
    agent_notify(a, AGENT_REPORT_LLM_ERROR, info.message, 0, &info, 1);
    return rc;
  }
  if (a->phase != AGENT_CALLING) agent__set_phase(a, AGENT_CALLING); /* a retry or after the summariser: already */
  return AG_OK;
}

/* Between turns (AGENT_QUEUED): starts the turn for the oldest message in the inbox; idle once none
 * is left. */
static void agent_start_next(agent *a) {
  ag_msg *m;
  while (a->phase == AGENT_QUEUED && ag_ring_pop(&a->inbox, &m)) {
    /* A re-run's message is already the newest memory entry (agent_answer). */
    if ((!a->n_mem || a->mem[a->n_mem - 1] != m) && agent_memory_push(a, m) != AG_OK) {
      agent_notify(a, AGENT_REPORT_LLM_ERROR, ag_strerror(AG_ERR_NOMEM), 0, NULL, 1);
      ag_msg_unref(m);
      continue;
    }
    a->answering = m; /* the inbox's reference moves here */
    tlog_clear(a);
    a->window_cap = a->shrunk = 0; /* a shrink lasts for its turn */
    agent__embed_reset(a);
    if (a->host->turn_begin && a->host->turn_begin(a->host->ctx, a)) {
      agent__set_phase(a, AGENT_ELSEWHERE); /* another process answers; agent_turn_done ends it */
      return;
    }
    if (agent__summary_then_call(a) == AG_OK || agent_end_deferred(a)) return;
    agent_notify(a, AGENT_REPORT_TURN_END, NULL, 0, NULL, 0);
    a->answering = NULL;
    ag_msg_unref(m);
  }
  if (a->phase == AGENT_QUEUED) agent__set_phase(a, AGENT_IDLE);
}

static int agent_inbox_push(agent *a, ag_msg *m) {
  ag_msg_ref(m);
  int rc = ag_ring_push(&a->inbox, &m);
  if (rc) ag_msg_unref(m);
  return rc;
}

turn_decision agent_on_message(agent *a, ag_msg *m, const agent_rules *rules) {
  turn_input in = {a->id, m->sender, m->kind, &m->leading, m->has_other_mentions, rules->main_agent,
                   rules->turn_limit};
  turn_decision d = turn_decide(&a->turn, &in);
  if (d == TURN_NOTICE) {
    char text[128];
    turn_notice_text(rules->turn_limit, text, sizeof text);
    agent_notify(a, AGENT_REPORT_TURN_LIMIT, text, strlen(text), NULL, 0);
    ag_msg *notice = NULL;
    /* Answers still queued were decided before the limit: an agent does not speak after its notice
     * (turn.h). The one in flight, if any, ends as it will (the phase stays: the inbox waits only
     * behind a turn). */
    agent_inbox_clear(a);
    a->host->publish(a->host->ctx, a, text, AG_KIND_TURN_LIMIT, &notice);
    return d;
  }
  if (d != TURN_ANSWER) return d;
  int rc = agent_answer(a, m, rules);
  if (rc) agent_notify(a, AGENT_REPORT_LLM_ERROR, ag_strerror(rc), 0, NULL, 1);
  return d;
}

int agent_answer(agent *a, ag_msg *m, const agent_rules *rules) {
  a->memory_window = rules->memory_window;
  a->emit_chunks = rules->emit_chunks;
  int rc = agent_inbox_push(a, m);
  if (rc) return rc;
  if (a->phase == AGENT_IDLE) agent__set_phase(a, AGENT_QUEUED); /* else it waits behind the turn */
  agent_start_next(a);
  return AG_OK;
}
