/* A world spread over processes (docs/distributed.md): the cluster's side of the world — messages that
 * arrive from the stream, turns ended elsewhere, agents taken over. */
#include "world/world_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

void world_set_cluster(world *w, const world_cluster *c) {
  if (c) w->cluster = *c;
  else memset(&w->cluster, 0, sizeof w->cluster);
}

int world_receive(world *w, const world_wire_msg *in) {
  ag_msg *m = ag_msg_new(in->sender, in->text, in->kind);
  if (!m) return AG_ERR_NOMEM;
  m->seq = in->seq;
  m->ts_ms = in->ts_ms;
  m->has_sim = in->has_sim;
  m->sim_ms = in->sim_ms;
  mention_list any = {0};
  int rc = world__parse(w, m, &any);
  mention_list_free(&any);
  /* A reply joins its author's memory here, in every process, at its place in the order. */
  world_slot *s = m->kind == AG_KIND_AGENT ? world__find_slot(w, m->sender) : NULL;
  if (!rc && s) rc = agent_memory_push(s->a, m);
  if (m->seq > w->last_seq) w->last_seq = m->seq;
  if (!rc) rc = bus_deliver(w->bus, m);
  ag_msg_unref(m);
  return rc;
}

void world_receive_turn_end(world *w, const char *agent_id, uint64_t trigger, size_t counter) {
  world_slot *s = world__find_slot(w, agent_id);
  if (!s || agent_turn_trigger(s->a, NULL) != trigger) return;
  agent_set_reply_counter(s->a, counter); /* a scripted agent goes on where the turn left it */
  agent_turn_done(s->a, trigger);
}

void world_resume_agent(world *w, const char *agent_id) {
  world_slot *s = world__find_slot(w, agent_id);
  if (!s) return;
  s->sent = 0;
  agent_turn_resume(s->a);
}

/* ev's memory into agent a (see world_receive_memory). */
static int remote_memory_apply(agent *a, const world_event *ev) {
  int rc = AG_ERR_INVALID;
  if (ev->kind == EV_SUMMARY) return agent_set_summary(a, ev->u.summary.summary, (size_t)ev->u.summary.upto);
  cJSON *j = cJSON_Parse(ev->kind == EV_REFLECTION     ? ev->u.reflection.insights
                         : ev->kind == EV_MEMORY_RATED ? ev->u.rated.ratings
                                                       : ev->u.tool.json);
  if (ev->kind == EV_MEMORY_RATED && cJSON_IsArray(j)) {
    for (const cJSON *p = j->child; p; p = p->next)
      agent_memory_rate(a, (uint64_t)cJSON_GetNumberValue(cJSON_GetArrayItem(p, 0)),
                        cJSON_GetNumberValue(cJSON_GetArrayItem(p, 1)));
    rc = AG_OK;
  } else if (ev->kind == EV_REFLECTION && cJSON_IsArray(j)) {
    rc = agent_memory_reflection(a, j, ev->u.reflection.at_ms);
  } else if (ev->kind == EV_TOOL_RESULT && !strcmp(ev->u.tool.tool, "remember") && !ev->u.tool.error) {
    const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "remembered"));
    double importance = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "importance"));
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(j, "at_ms");
    if (text && isfinite(importance) && cJSON_IsNumber(at))
      rc = agent_memory_note(a, text, importance, (int64_t)at->valuedouble);
  }
  cJSON_Delete(j);
  return rc == AG_ERR_STATE ? AG_OK : rc; /* not in mode stream here: nothing to add */
}

int world_receive_memory(world *w, const world_event *ev) {
  const char *id = world_event_agent(ev);
  world_slot *s = id ? world__find_slot(w, id) : NULL;
  if (!s) return AG_ERR_NOT_FOUND;
  if (ev->kind != EV_SUMMARY && ev->kind != EV_REFLECTION && ev->kind != EV_TOOL_RESULT && ev->kind != EV_MEMORY_RATED)
    return AG_ERR_INVALID;
  int rc = remote_memory_apply(s->a, ev);
  return rc ? rc : world_receive_event(w, ev); /* on the bus as this process's own */
}
