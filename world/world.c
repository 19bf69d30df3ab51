/* The World (see world.h): agents wired to the bus through one host each, messages stamped and
 * parsed once at publish, agents' reports turned into events, and the loop run until quiet. */
#include "world/world.h"
#include "world/world_int.h"
#include "common/buf.h"
#include "common/clock.h"
#include "world/mcp_spec.h"
#include "world/world_budget.h"
#include "llm/limiter.h"
#include "world/world_mcp.h"
#include "world/world_time.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>



static size_t id_hash(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

world_slot *world__find_slot(const world *w, const char *id) {
  if (!w->index_cap) return NULL;
  for (size_t i = id_hash(id) & (w->index_cap - 1);; i = (i + 1) & (w->index_cap - 1)) {
    world_slot *s = w->index[i];
    if (!s) return NULL;
    if (strcmp(agent_id(s->a), id) == 0) return s;
  }
}

/* For mention parsing at publish: the world's index. */
static int world_has_id(void *ctx, const char *id) { return world__find_slot(ctx, id) != NULL; }

/* Brings the id list and the id index up to date after agents were added or removed. Adding one
 * agent (once per agent of a world file, which may hold many thousands) inserts it while the index
 * is at most half full; anything else rebuilds, so loading n agents costs O(n), not O(n²). */
static int world_refresh_ids(world *w, int added_one) {
  const char **ids = w->ids;
  if (w->cap_ids < w->cap_slots) { /* grown with the slots, so adding n agents copies O(n) */
    if (!(ids = realloc(w->ids, w->cap_slots * sizeof *ids))) return AG_ERR_NOMEM;
    w->ids = ids;
    w->cap_ids = w->cap_slots;
  }
  if (added_one && w->n_slots * 2 <= w->index_cap) {
    world_slot *s = w->slots[w->n_slots - 1];
    ids[w->n_slots - 1] = agent_id(s->a);
    size_t k = id_hash(ids[w->n_slots - 1]) & (w->index_cap - 1);
    while (w->index[k]) k = (k + 1) & (w->index_cap - 1);
    w->index[k] = s;
    return AG_OK;
  }
  size_t cap = 16;
  while (cap < w->n_slots * 2) cap *= 2;
  world_slot **index = calloc(cap, sizeof *index);
  if (!index) return AG_ERR_NOMEM;
  for (size_t i = 0; i < w->n_slots; i++) {
    ids[i] = agent_id(w->slots[i]->a);
    size_t k = id_hash(ids[i]) & (cap - 1);
    while (index[k]) k = (k + 1) & (cap - 1);
    index[k] = w->slots[i];
  }
  free(w->index);
  w->index = index;
  w->index_cap = cap;
  return AG_OK;
}

int world_emit(world *w, const world_event *ev) {
  if (w->cluster.report) w->cluster.report(w->cluster.ctx, ev);
  bus_event *e = bus_event_new(ev);
  if (!e) return AG_ERR_NOMEM;
  int rc = bus_publish_event(w->bus, e);
  bus_event_unref(e);
  return rc;
}

int world_receive_event(world *w, const world_event *ev) {
  if (ev->kind == EV_LLM_ERROR) w->failed_calls++;
  bus_event *e = bus_event_new(ev);
  if (!e) return AG_ERR_NOMEM;
  int rc = bus_publish_event(w->bus, e);
  bus_event_unref(e);
  return rc;
}

/* A typo in a mention must not pass in silence (§7 unknown-mention). */
static int world_check_mentions(world *w, const ag_msg *m) {
  const char **names = NULL;
  size_t n = 0;
  for (size_t i = 0; i < m->leading.n; i++) {
    if (world__find_slot(w, m->leading.ids[i])) continue; /* the id index: linear in the mentions */
    if (!names && !(names = malloc(m->leading.n * sizeof *names))) return AG_OK; /* a hint: not worth failing for */
    names[n++] = m->leading.ids[i];
  }
  if (n) world_emit(w, &(world_event){EV_UNKNOWN_MENTION, .u.unknown = {m->sender, names, n, m->seq}});
  free(names);
  return AG_OK;
}

/* A human or world message that mentions known agents only mid-line addressed nobody (§3.5): say so,
 * since to its author it looks like a question to them (issue 15). others: its other mentions. */
static void hint_not_addressed(world *w, const ag_msg *m, const mention_list *others) {
  char text[512] = "";
  size_t len = 0, n = 0;
  const char **names = NULL;
  for (size_t i = 0; i < others->n; i++) {
    if (!world__find_slot(w, others->ids[i])) continue;
    int seen = 0;
    for (size_t j = 0; j < n && !seen; j++) seen = !strcmp(names[j], others->ids[i]);
    if (seen) continue;
    if (!names && !(names = malloc(others->n * sizeof *names))) return; /* a hint: not worth failing for */
    names[n++] = others->ids[i];
    if (len < sizeof text)
      len += (size_t)snprintf(text + len, sizeof text - len, "%s@%s", n > 1 ? ", " : "", others->ids[i]);
  }
  if (!n) return;
  if (len < sizeof text)
    snprintf(text + len, sizeof text - len, " %s mentioned but not at the start of a line; nobody was addressed",
             n > 1 ? "are" : "is");
  world_emit(w, &(world_event){EV_NOT_ADDRESSED, .u.not_addressed = {{m->sender, names, n, m->seq}, text}});
  free(names);
}

/* Leading mentions, and the others into *any when there is no leading one (§3.5: only then do they
 * matter). */
int world__parse(world *w, ag_msg *m, mention_list *any) {
  /* Display names are looked up in the id index: a scan or a set of every id per message would make a
   * message's cost grow with the world. */
  mention_known known = {.has = world_has_id, .ctx = w};
  int rc = mention_leading_known(m->text, &known, &m->leading);
  if (!rc && m->leading.n == 0) {
    rc = mention_anywhere(m->text, any);
    m->has_other_mentions = any->n > 0;
  }
  return rc;
}

/* The de-duplication id of a message an agent publishes in a world spread over processes: the same
 * in every process that could publish it (the turn's trigger, tool round and place in the turn). */
static const char *world_key(world *w, const char *sender, ag_kind kind, char *key, size_t cap) {
  world_slot *s = w->cluster.is_local && (kind == AG_KIND_AGENT || kind == AG_KIND_TURN_LIMIT)
                      ? world__find_slot(w, sender) : NULL;
  if (!s) return NULL;
  int round = 0;
  uint64_t trigger = agent_turn_trigger(s->a, &round);
  if (kind == AG_KIND_TURN_LIMIT) snprintf(key, cap, "%s.%llu.n", sender, (unsigned long long)w->delivering);
  else snprintf(key, cap, "%s.%llu.%d.%u", sender, (unsigned long long)trigger, round, s->sent++);
  return key;
}

static int world_publish_kind(world *w, const char *sender, const char *text, ag_kind kind, ag_msg **out) {
  ag_msg *m = ag_msg_new(sender, text, kind);
  if (!m) return AG_ERR_NOMEM;
  /* Spread over processes, the seq is the message's place in the total order, known when it is back. */
  m->seq = w->cluster.is_local ? 0 : ++w->last_seq;
  m->ts_ms = ag_now_ms();
  m->has_sim = w->sim_on;
  m->sim_ms = w->sim_now;
  mention_list any = {0};
  char key[MENTION_ID_MAX + 64];
  int rc = world__parse(w, m, &any);
  if (!rc) rc = bus_publish_keyed(w->bus, m, world_key(w, sender, kind, key, sizeof key));
  if (!rc && (kind == AG_KIND_HUMAN || kind == AG_KIND_WORLD)) {
    rc = world_check_mentions(w, m);
    if (m->leading.n == 0) hint_not_addressed(w, m, &any);
  }
  mention_list_free(&any);
  /* Spread over processes, the message exists once it is back in the total order (world_receive). */
  if (!rc && out) *out = w->cluster.is_local ? NULL : m;
  ag_msg_unref(m); /* the bus holds its own reference */
  return rc;
}

int world_publish(world *w, const char *sender, const char *text, ag_msg **out) {
  return world_publish_kind(w, sender, text, ag_sender_kind(sender), out);
}

/* ---- the host each agent talks to ---- */

static int host_publish(void *ctx, agent *a, const char *text, ag_kind kind, ag_msg **out) {
  world_slot *s = ctx;
  return world_publish_kind(s->w, agent_id(a), text, kind, out);
}

/* An agent thinks in every phase but idle; the world is quiet when none does. */
static void host_phase(void *ctx, agent *a, agent_phase from, agent_phase to) {
  (void)a;
  (void)from;
  world_slot *s = ctx;
  int on = to != AGENT_IDLE;
  if (s->thinking == on) return;
  s->thinking = on;
  if (on) s->w->thinking++;
  else s->w->thinking--;
}

static void host_report(void *ctx, agent *a, const agent_report *ev) {
  world_slot *s = ctx;
  world *w = s->w;
  const char *id = agent_id(a);
  world_event e = {EV_LLM_ERROR, .u.llm_error = {id, ev->text ? ev->text : "error", 0, 0, 0, ""}};
  switch (ev->kind) {
  case AGENT_REPORT_LLM_START:
    e = (world_event){EV_LLM_START, .u.llm_start = {id, llm_provider_name(agent_settings_of(a)->llm.provider), ev->seq, s->rerun}};
    s->started_seq = ev->seq;
    break;
  case AGENT_REPORT_TURN_END:
    e = (world_event){EV_TURN_END, .u.turn_end = {id, ev->seq, 0, 0}};
    s->rerun = 0;
    break;
  case AGENT_REPORT_LLM_CHUNK: e = (world_event){EV_LLM_CHUNK, .u.llm_chunk = {id, ev->text, ev->len}}; break;
  case AGENT_REPORT_LLM_DONE:
    e = (world_event){EV_LLM_DONE, .u.llm_done = {.agent = id, .chars = ev->len, .input_tokens = ev->usage.input_tokens,
                                                  .output_tokens = ev->usage.output_tokens,
                                                  .estimated = ev->usage.estimated, .cached = ev->usage.cached,
                                                  .usd = ev->usage.usd}};
    break;
  case AGENT_REPORT_LLM_ERROR:
    if (ev->info) {
      e.u.llm_error.has_info = 1;
      e.u.llm_error.http_status = ev->info->http_status;
      e.u.llm_error.attempts = ev->info->attempts;
      e.u.llm_error.error_type = ev->info->type;
    }
    if (ev->failed) w->failed_calls++;
    break;
  case AGENT_REPORT_CONTEXT_SHRUNK:
    e = (world_event){EV_CONTEXT_SHRUNK, .u.shrunk = {.agent = id, .error = ev->text ? ev->text : "", .window = ev->window}};
    break;
  case AGENT_REPORT_SUMMARY:
    e = (world_event){EV_SUMMARY, .u.summary = {.agent = id, .summary = ev->text, .upto = ev->upto}};
    break;
  case AGENT_REPORT_MEMORY_RETRIEVED: e = (world_event){EV_MEMORY_RETRIEVED, .u.retrieved = {id, ev->len}}; break;
  case AGENT_REPORT_REFLECTION: e = (world_event){EV_REFLECTION, .u.reflection = {.agent = id, .insights = ev->text, .at_ms = ev->at_ms}}; break;
  case AGENT_REPORT_RATED: e = (world_event){EV_MEMORY_RATED, .u.rated = {.agent = id, .ratings = ev->text}}; break;
  case AGENT_REPORT_TURN_LIMIT: e = (world_event){EV_TURN_LIMIT, .u.turn_limit = {id, w->spec.turn_limit}}; break;
  case AGENT_REPORT_TOOL_CALL:
  case AGENT_REPORT_TOOL_RESULT:
    e = (world_event){ev->kind == AGENT_REPORT_TOOL_CALL ? EV_TOOL_CALL : EV_TOOL_RESULT,
                      .u.tool = {.agent = id, .tool = ev->tool ? ev->tool : "", .call_id = ev->call_id ? ev->call_id : "",
                                 .json = ev->text ? ev->text : NULL, .error = ev->failed, .at_ms = ev->at_ms}};
    break;
  }
  world_emit(w, &e);
  if (ev->kind == AGENT_REPORT_LLM_DONE) world_budget_check(w);
}

static char *host_render_prompt(void *ctx, agent *a, const char *prompt) {
  world_slot *s = ctx;
  char *out = NULL;
  return world_render(s->w, prompt, agent_name(a), &out, NULL) ? NULL : out;
}

static const char *const *host_ids(void *ctx, size_t *n) {
  world_slot *s = ctx;
  *n = s->w->n_slots;
  return (const char *const *)s->w->ids;
}

static int host_has_id(void *ctx, const char *id) { return world__find_slot(((world_slot *)ctx)->w, id) != NULL; }


static int host_approve(void *ctx, agent *a, const char *tool, const char *args_json, const char *question) {
  world_slot *s = ctx;
  return approval_desk_ask(s->w->approvals, a, tool, args_json, question);
}

static void host_approve_cancel(void *ctx, agent *a) {
  world_slot *s = ctx;
  approval_desk_cancel(s->w->approvals, a);
}

void world_set_approver(world *w, const world_approver *ap, void *ud) { approval_desk_set_approver(w->approvals, ap, ud); }
void world_set_approval_timeout(world *w, long ms) { approval_desk_set_timeout(w->approvals, ms); }
int world_approval_answer(world *w, uint64_t id, int allow) { return approval_desk_answer(w->approvals, id, allow); }
int world_approval_reply(world *w, uint64_t id, int allow, const char *text) {
  return approval_desk_reply(w->approvals, id, allow, text);
}
size_t world_approvals_pending(const world *w) { return approval_desk_pending(w->approvals); }

/* One agent decides about m. What it will answer stays in the thread until answered (docs/time.md
 * "Resume after a crash"): a call that started says so itself (llm-start); an answer waiting in its
 * inbox says so here, and so does the notice that empties the inbox. */
static void deliver_to(world *w, world_slot *s, ag_msg *m, const agent_rules *rules) {
  turn_decision d = agent_on_message(s->a, m, rules);
  if (d == TURN_ANSWER && s->started_seq != m->seq)
    world_emit(w, &(world_event){EV_TURN_QUEUED, .u.turn_queued = {agent_id(s->a), m->seq, 0}});
  else if (d == TURN_NOTICE)
    world_emit(w, &(world_event){EV_TURN_END, .u.turn_end = {agent_id(s->a), 0, 0, 1}});
}

/* Hands a message to the agents that could act on it. A human or world message goes to every agent
 * (each resets its turn count, §3.1); a message from an agent can only address the agents it
 * mentions at the start of a line (§3.6), so only they are asked; nobody answers system messages or
 * notices (§3.3–4). Skipping the others changes nothing: for them the rules decide "no" without
 * touching any state. This keeps a reply's cost independent of the number of agents. */
static void world_deliver(void *ud, bus_topic topic, void *payload) {
  (void)topic;
  world *w = ud;
  ag_msg *m = payload;
  w->delivering = m->seq;
  agent_rules rules = {w->spec.turn_limit, w->spec.memory_window, w->spec.main_agent, w->emit_chunks};
  if (m->kind == AG_KIND_HUMAN || m->kind == AG_KIND_WORLD) {
    /* Agents may be removed by a handler while we go: index by position, re-checking the count. */
    for (size_t i = 0; i < w->n_slots; i++) deliver_to(w, w->slots[i], m, &rules);
    return;
  }
  if (m->kind != AG_KIND_AGENT) return;
  for (size_t i = 0; i < m->leading.n; i++) {
    world_slot *s = world__find_slot(w, m->leading.ids[i]);
    if (s) deliver_to(w, s, m, &rules);
  }
}

static int host_turn_begin(void *ctx, agent *a) {
  world_slot *s = ctx;
  s->sent = 0;
  return s->w->cluster.is_local && !s->w->cluster.is_local(s->w->cluster.ctx, agent_id(a));
}

static int host_turn_end(void *ctx, agent *a, const ag_msg *m) {
  world_slot *s = ctx;
  world_cluster *c = &s->w->cluster;
  return c->turn_end && c->turn_end(c->ctx, agent_id(a), m->seq, agent_reply_counter(a)) == AG_OK;
}

static void slot_free(world_slot *s) {
  if (!s) return;
  /* The agent reports "not thinking" through its host as it drops its call, keeping the count right. */
  agent_free(s->a);
  if (s->thinking) s->w->thinking--;
  free(s);
}

static int world_add(world *w, const agent_settings *st, ag_errmsg *em) {
  int rc = AG_OK;
  world_slot *s = calloc(1, sizeof *s);
  if (!s) return AG_ERR_NOMEM;
  s->w = w;
  s->host = (agent_host){.ctx = s, .publish = host_publish, .report = host_report, .phase = host_phase,
                         .approve = host_approve, .approve_cancel = host_approve_cancel, .ids = host_ids,
                         .render_prompt = host_render_prompt, .turn_begin = host_turn_begin,
                         .turn_end = host_turn_end, .has_id = host_has_id};
  if ((rc = agent_new(st, w->llm, &s->host, &s->a, em))) goto fail;
  agent_set_memory_window(s->a, w->spec.memory_window);
  if (world__find_slot(w, agent_id(s->a))) {
    rc = ag_fail(em, AG_ERR_EXISTS, "an agent with id '%s' already exists", agent_id(s->a));
    goto fail;
  }
  if (w->n_slots == w->cap_slots) {
    size_t ncap = w->cap_slots ? w->cap_slots * 2 : 8;
    world_slot **p = realloc(w->slots, ncap * sizeof *p);
    if (!p) {
      rc = AG_ERR_NOMEM;
      goto fail;
    }
    w->slots = p;
    w->cap_slots = ncap;
  }
  w->slots[w->n_slots++] = s;
  if ((rc = world_refresh_ids(w, 1))) {
    w->n_slots--;
    goto fail;
  }
  return AG_OK;
fail:
  agent_free(s->a);
  free(s);
  return rc;
}

int world_new(struct event_base *base, const world_spec *spec, world **out, ag_errmsg *em) {
  int rc = AG_OK;
  world *w = calloc(1, sizeof *w);
  if (!w) return AG_ERR_NOMEM;
  w->base = base;
  if ((rc = bus_new(base, &w->bus)) || (rc = llm_client_new(base, &w->llm)) ||
      (rc = approval_desk_new(base, &w->approvals)))
    goto fail;
  if ((rc = bus_subscribe(w->bus, BUS_MESSAGE, BUS_PHASE_AGENTS, world_deliver, w, &w->sub))) goto fail;
  w->spec.turn_limit = spec->turn_limit;
  w->spec.memory_window = spec->memory_window;
  memcpy(w->spec.id, spec->id, sizeof w->spec.id);
  w->spec.name = strdup(spec->name);
  w->spec.description = spec->description ? strdup(spec->description) : NULL;
  w->spec.main_agent = spec->main_agent ? strdup(spec->main_agent) : NULL;
  if (!w->spec.name || (spec->description && !w->spec.description) || (spec->main_agent && !w->spec.main_agent)) {
    rc = AG_ERR_NOMEM;
    goto fail;
  }
  if ((rc = world_llm_setup(w, spec))) goto fail;
  if ((rc = world_time_copy(&w->spec, spec)) || (rc = world_mcp_spec_copy(&w->spec, spec)) || (rc = world_time_vars(spec, NULL, NULL, &w->vars))) goto fail;
  w->sim_on = spec->clock.is_virtual;
  w->sim_now = w->sim_start = spec->clock.has_start ? spec->clock.start_ms : ag_now_ms();
  for (size_t i = 0; i < spec->n_agents; i++) {
    if ((rc = world_add(w, &spec->agents[i], em))) goto fail;
  }
  *out = w;
  return AG_OK;
fail:
  world_free(w);
  return rc;
}

void world_free(world *w) {
  if (!w) return;
  for (size_t i = 0; i < w->n_slots; i++) slot_free(w->slots[i]);
  world_mcp_free(w->mcp); /* after the agents: each cancelled its own call */
  free(w->slots);
  free(w->ids);
  free(w->index);
  approval_desk_free(w->approvals); /* after the agents: each withdrew its own request */
  llm_client_free(w->llm);
  bus_free(w->bus);
  world_spec_free(&w->spec);
  template_vars_free(w->vars);
  free(w);
}

const char *world_id(const world *w) { return w->spec.id; }
const char *world_name(const world *w) { return w->spec.name; }
struct event_base *world_base(const world *w) { return w->base; }
bus *world_bus(const world *w) { return w->bus; }
llm_client *world_llm(const world *w) { return w->llm; }
int world_turn_limit(const world *w) { return w->spec.turn_limit; }
void world_set_turn_limit(world *w, int limit) { w->spec.turn_limit = limit < 1 ? 1 : limit; }
int world_memory_window(const world *w) { return w->spec.memory_window; }

int world_set_settings(world *w, const world_spec *from) {
  /* The variables live in the spec and in the template table built from it: both are made first. */
  world_spec vars = {.name = NULL};
  template_vars *tv = NULL;
  char *main_agent = from->main_agent ? strdup(from->main_agent) : NULL;
  int rc = from->main_agent && !main_agent ? AG_ERR_NOMEM : AG_OK;
  if (!rc) rc = world_time_copy(&vars, from);
  if (!rc) rc = world_time_vars(from, NULL, NULL, &tv);
  if (rc) goto done;
  for (size_t i = 0; i < w->spec.n_vars; i++) free(w->spec.var_names[i]), free(w->spec.var_values[i]);
  free(w->spec.var_names);
  free(w->spec.var_values);
  w->spec.var_names = vars.var_names, w->spec.var_values = vars.var_values, w->spec.n_vars = vars.n_vars;
  vars.var_names = vars.var_values = NULL, vars.n_vars = 0;
  template_vars_free(w->vars);
  w->vars = tv, tv = NULL;
  free(w->spec.main_agent);
  w->spec.main_agent = main_agent, main_agent = NULL;
  w->spec.turn_limit = from->turn_limit;
  w->spec.memory_window = from->memory_window;
  for (size_t i = 0; i < w->n_slots; i++) agent_set_memory_window(w->slots[i]->a, from->memory_window);
done:
  world_time_free(&vars); /* its schedule copy, and the variables when they were not taken */
  template_vars_free(tv);
  free(main_agent);
  return rc;
}
const char *world_main_agent(const world *w) { return w->spec.main_agent; }
size_t world_agent_count(const world *w) { return w->n_slots; }
agent *world_agent_at(const world *w, size_t i) { return i < w->n_slots ? w->slots[i]->a : NULL; }
void world_set_emit_chunks(world *w, int on) { w->emit_chunks = on; }
void world_set_last_seq(world *w, uint64_t last) { w->last_seq = last; }
uint64_t world_last_seq(const world *w) { return w->last_seq; }
size_t world_thinking(const world *w) { return w->thinking; }
size_t world_failed_calls(const world *w) { return w->failed_calls; }
int world_is_quiet(const world *w) { return w->thinking == 0 && bus_pending(w->bus) == 0; }
int world_quiet_now(world *w) {
  bus_flush(w->bus);
  return world_is_quiet(w);
}
void world_interrupt(world *w) { w->interrupted = 1; }
int world_interrupted(const world *w) { return w->interrupted; }
void world_interrupt_clear(world *w) { w->interrupted = 0; }

cJSON *world_settings_json(const world *w) {
  world_spec tmp = w->spec;
  const llm_budget *b = llm_client_budget(w->llm); /* the limits as raised since (borrowed, read only) */
  if (b) tmp.budget = *b;
  tmp.rate_limits = *llm_client_rate_limits(w->llm);
  tmp.agents = NULL;
  tmp.n_agents = 0;
  cJSON *j = world_spec_to_json(&tmp);
  cJSON *agents = j ? cJSON_GetObjectItemCaseSensitive(j, "agents") : NULL;
  for (size_t i = 0; agents && i < w->n_slots; i++)
    cJSON_AddItemToArray(agents, world_agent_to_json(agent_settings_of(w->slots[i]->a)));
  return j;
}

/* Through the id index, not a scan (issue 22: a scan per lookup was 30% of a 100,000-agent reply).
 * The rule is the one it replaces, "the id of name_or_id, or a name equal but for ASCII case": an agent's
 * id is its name's id and ids fold ASCII case, so a name equal but for case has the agent's id, and the
 * first rule alone finds every agent the second did. */
agent *world_agent_find(const world *w, const char *name_or_id) {
  char id[MENTION_ID_MAX];
  if (mention_id_from_name(name_or_id, id, sizeof id) != AG_OK) return NULL;
  world_slot *s = world__find_slot(w, id);
  return s ? s->a : NULL;
}

int world_add_agent(world *w, const agent_settings *s, ag_errmsg *em) {
  int rc = world_add(w, s, em);
  if (rc) return rc;
  agent *a = w->slots[w->n_slots - 1]->a;
  world_emit(w, &(world_event){EV_AGENT_ADDED, .u.agent = {agent_id(a), agent_name(a), llm_provider_name(s->llm.provider)}});
  return AG_OK;
}

int world_update_agent(world *w, const agent_settings *s, ag_errmsg *em) {
  agent *a = s->name ? world_agent_find(w, s->name) : NULL;
  if (!a) return ag_fail(em, AG_ERR_NOT_FOUND, "no agent '%s' in this world", s->name ? s->name : "");
  return agent_reconfigure(a, s, w->llm, em);
}

int world_remove_agent(world *w, const char *name_or_id) {
  agent *a = world_agent_find(w, name_or_id);
  if (!a) return AG_ERR_NOT_FOUND;
  size_t i = 0;
  while (w->slots[i]->a != a) i++;
  /* The event is built before the agent goes: it copies the id and name. */
  bus_event *e = bus_event_new(&(world_event){EV_AGENT_REMOVED, .u.agent = {agent_id(a), agent_name(a), NULL}});
  world_slot *s = w->slots[i];
  memmove(&w->slots[i], &w->slots[i + 1], (w->n_slots - i - 1) * sizeof *w->slots);
  w->n_slots--;
  world_refresh_ids(w, 0);
  slot_free(s);
  if (e) bus_publish_event(w->bus, e);
  bus_event_unref(e);
  return AG_OK;
}

void world_reset_conversation(world *w) {
  for (size_t i = 0; i < w->n_slots; i++) {
    agent_reset(w->slots[i]->a);
    w->slots[i]->started_seq = 0; /* seqs start again */
    w->slots[i]->rerun = 0;
  }
  w->last_seq = 0;
  llm_client_set_spent(w->llm, (llm_spend){0}); /* a budget's spend is the chat's (a restore sets it) */
}

/* A cancelled turn is over: the thread says so, or the chat's next opening would re-run it. */
void world_cancel_all(world *w) {
  for (size_t i = 0; i < w->n_slots; i++) {
    world_slot *s = w->slots[i];
    if (agent_is_thinking(s->a)) world_emit(w, &(world_event){EV_TURN_END, .u.turn_end = {agent_id(s->a), 0, 1, 0}});
    s->rerun = 0;
    agent_cancel(s->a);
  }
}

int world_rerun(world *w, const char *agent_id_, ag_msg *m) {
  world_slot *s = world__find_slot(w, agent_id_);
  if (!s) return AG_ERR_NOT_FOUND;
  agent_rules rules = {w->spec.turn_limit, w->spec.memory_window, w->spec.main_agent, w->emit_chunks};
  world_emit(w, &(world_event){EV_TURN_QUEUED, .u.turn_queued = {agent_id_, m->seq, 1}});
  s->rerun = 1;
  int rc = agent_answer(s->a, m, &rules);
  if (rc) s->rerun = 0;
  return rc;
}

int world_run_until_quiet(world *w) {
  w->interrupted = 0;
  while (!world_is_quiet(w)) {
    if (w->interrupted) return AG_ERR_CANCELLED;
    int r = event_base_loop(w->base, EVLOOP_ONCE);
    if (r < 0) return AG_ERR_STATE;
    if (r == 1 && !world_is_quiet(w)) return AG_ERR_STATE; /* nothing left that could make it quiet */
  }
  /* An interrupt that cancelled every reply in flight leaves the world quiet: still an interrupt. */
  return w->interrupted ? AG_ERR_CANCELLED : AG_OK;
}

const world_spec *world_time_spec(const world *w) { return &w->spec; }
world_mcp **world__mcp_slot(world *w) { return &w->mcp; }
void world_thinking_names(const world *w, char *out, size_t cap) {
  size_t len = 0;
  out[0] = '\0';
  for (size_t i = 0; i < world_agent_count(w); i++) {
    agent *a = world_agent_at(w, i);
    if (agent_is_thinking(a) && len + strlen(agent_id(a)) + 3 < cap)
      len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? ", " : "", agent_id(a));
  }
}
