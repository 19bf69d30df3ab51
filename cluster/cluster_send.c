/* A world on NATS, the sending side (see cluster.h): messages, turn ends, failures and chat records
 * go to the stream with a de-duplication id, signed when the world has a key, and stay in flight until
 * the stream brings them back (cluster.c). Also the small shared pieces of cluster_int.h. */
#include "cluster/cluster_int.h"

#include "world/events.h"

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cluster__idset_has(const idset *s, const char *id) {
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->v[i], id)) return 1;
  return 0;
}

int cluster__idset_add(idset *s, const char *id) {
  if (cluster__idset_has(s, id)) return 1;
  char(*p)[WIRE_ID_MAX] = realloc(s->v, (s->n + 1) * sizeof *p);
  if (!p) return 0;
  s->v = p;
  snprintf(s->v[s->n++], WIRE_ID_MAX, "%s", id);
  return 1;
}

void cluster__notice(cluster *c, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (c->on_notice) c->on_notice(c->on_notice_ud, line);
  else if (!c->o.quiet) fprintf(stderr, "agora: %s\n", line);
}

int cluster__held_cmp(const void *a, const void *b) { return strcmp(((const held *)a)->id, ((const held *)b)->id); }

held *cluster__held_find(const cluster *c, const char *id) {
  held key = {id, 0};
  return c->n_held ? bsearch(&key, c->held, c->n_held, sizeof *c->held, cluster__held_cmp) : NULL;
}

int cluster__is_local(void *ctx, const char *id) {
  cluster *c = ctx;
  held *h = c->ready ? cluster__held_find(c, id) : NULL;
  return h && h->leased;
}

/* ---- sending ---- */

int cluster__send_record(cluster *c, const wire_record *rec, const char *key) {
  char *data = NULL, subject[256], id[WIRE_ID_MAX * 2 + 96];
  size_t len = 0;
  int rc = wire_encode(rec, &data, &len);
  if (rc) return rc;
  snprintf(subject, sizeof subject, "%s.%s.%s", c->prefix, rec->chat, wire_subject_token(rec->type));
  if (key) snprintf(id, sizeof id, "%s.%s", rec->chat, key);
  else snprintf(id, sizeof id, "%s.p%s.%llu", rec->chat, c->nonce, (unsigned long long)++c->n_sent);
  char sig[SIGN_HEX];
  if (c->key) sign_record(c->key, subject, id, data, len, sig);
  return flights_add(&c->fl, c->js, id, subject, data, len, c->key ? sig : NULL); /* takes data */
}

/* The bus's transport: a message goes to the stream. Before this process has caught up, what the
 * world publishes is the replay of decisions already in the stream (turn-limit notices): not sent. */
int cluster__send(void *ctx, ag_msg *m, const char *key) {
  cluster *c = ctx;
  if (!c->ready || !c->chat[0]) return AG_OK;
  wire_record rec = {.type = WIRE_MSG, .sender = m->sender, .text = m->text, .kind = m->kind, .ts_ms = m->ts_ms,
                     .has_sim = m->has_sim, .sim_ms = m->sim_ms};
  snprintf(rec.chat, sizeof rec.chat, "%s", c->chat);
  return cluster__send_record(c, &rec, key);
}

size_t cluster__in_flight(void *ctx) { return flights_count(&((cluster *)ctx)->fl); }

int cluster__turn_end(void *ctx, const char *agent_id, uint64_t trigger, size_t counter) {
  cluster *c = ctx;
  if (!c->ready || !c->chat[0]) return 0;
  wire_record rec = {.type = WIRE_TURN_END, .kind = AG_KIND_AGENT, .trigger = trigger, .counter = counter};
  snprintf(rec.chat, sizeof rec.chat, "%s", c->chat);
  snprintf(rec.agent, sizeof rec.agent, "%s", agent_id);
  char key[WIRE_ID_MAX + 32];
  snprintf(key, sizeof key, "%s.%llu.end", agent_id, (unsigned long long)trigger);
  return cluster__send_record(c, &rec, key);
}

/* A note's de-duplication id: the note itself (its agent, its time, a digest of its text), not who
 * made it, so that the same note of a turn run again on the host that took the agent over is dropped by
 * JetStream as a duplicate; every copy also holds one note per identity (agent_memory_note). */
static void cl_note_key(const wire_record *rec, char *key, size_t size) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!EVP_Digest(rec->text, strlen(rec->text), md, &n, EVP_sha256(), NULL) || n < 8) memset(md, 0, 8);
  snprintf(key, size, "n%s.%lld.%02x%02x%02x%02x%02x%02x%02x%02x", rec->agent, (long long)rec->ts_ms, md[0], md[1],
           md[2], md[3], md[4], md[5], md[6], md[7]);
}

/* A memory step of an agent answered here (a remember result, a reflection, a model's summary, the ratings
 * of importance "llm") goes to the
 * stream, so that every copy of the chat stores it and every process's agent has it: the one that takes
 * the agent over remembers what it noted, reflected and summarised (docs/distributed.md "Memory across
 * hosts"). Its place is the last message this process had delivered when it was made, which is where
 * its own thread stores it (the bus delivers in order). 1 when ev is such a step (sent or not). */
static int cl_report_memory(cluster *c, const world_event *ev) {
  const char *agent = world_event_agent(ev);
  int note = ev->kind == EV_TOOL_RESULT && !ev->u.tool.error && !strcmp(ev->u.tool.tool, "remember");
  if (!note && ev->kind != EV_REFLECTION && ev->kind != EV_SUMMARY && ev->kind != EV_MEMORY_RATED) return 0;
  if (!agent || !cluster__is_local(c, agent)) return 1;
  wire_record rec = {.type = WIRE_MEMORY, .after_seq = world_last_seq(c->w)};
  cJSON *j = note ? cJSON_Parse(ev->u.tool.json) : NULL;
  const cJSON *at = cJSON_GetObjectItemCaseSensitive(j, "at_ms");
  if (note) {
    rec.mem = WIRE_MEM_NOTE, rec.text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "remembered"));
    rec.importance = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "importance"));
    rec.ts_ms = cJSON_IsNumber(at) ? (int64_t)at->valuedouble : 0;
  } else if (ev->kind == EV_REFLECTION) {
    rec.mem = WIRE_MEM_REFLECTION, rec.text = (char *)ev->u.reflection.insights, rec.ts_ms = ev->u.reflection.at_ms;
  } else if (ev->kind == EV_MEMORY_RATED) {
    rec.mem = WIRE_MEM_RATED, rec.text = (char *)ev->u.rated.ratings;
  } else {
    rec.mem = WIRE_MEM_SUMMARY, rec.text = (char *)ev->u.summary.summary, rec.upto = ev->u.summary.upto;
  }
  snprintf(rec.chat, sizeof rec.chat, "%s", c->chat);
  snprintf(rec.agent, sizeof rec.agent, "%s", agent);
  snprintf(rec.origin, sizeof rec.origin, "%s", control_host_id(c->ctl));
  char key[WIRE_ID_MAX + 64];
  if (note && rec.text) cl_note_key(&rec, key, sizeof key);
  else snprintf(key, sizeof key, "m%s.%llu", rec.origin, (unsigned long long)++c->n_events);
  /* A result without a note is not one (no such remember result is made): nothing to send. Anything else
   * that cannot be sent (a field out of range) is said, never fatal. */
  if (rec.text && cluster__send_record(c, &rec, key))
    cluster__notice(c, "NATS: the %s of %s could not be sent: the other processes will not have it",
                    ev_kind_name(ev->kind), agent);
  cJSON_Delete(j);
  return 1;
}

/* A failure reported here, about an agent answered here (llm-error) or an MCP server of a host
 * (mcp-error), goes to the stream so that every viewer shows why an agent did not answer; before the
 * turn's end, so a viewer waiting for that end has seen it. Events of other processes are given to the
 * bus directly (cl_show_event), not through world_emit: they do not come back here. */
void cluster__report(void *ctx, const world_event *ev) {
  cluster *c = ctx;
  /* every event passes here, chunks included: only memory steps and the two failures go on */
  if (!c->ready || !c->chat[0] || cl_report_memory(c, ev) || (ev->kind != EV_LLM_ERROR && ev->kind != EV_MCP_ERROR))
    return;
  wire_record rec = {.type = WIRE_EVENT, .kind = AG_KIND_AGENT, .ev = (int)ev->kind};
  if (ev->kind == EV_LLM_ERROR && cluster__is_local(c, ev->u.llm_error.agent)) {
    const ev_llm_error *x = &ev->u.llm_error;
    rec.text = (char *)x->error, rec.has_info = x->has_info, rec.http_status = x->http_status;
    rec.attempts = x->attempts, rec.error_type = (char *)(x->error_type ? x->error_type : "");
    snprintf(rec.agent, sizeof rec.agent, "%s", x->agent);
  } else if (ev->kind == EV_MCP_ERROR && c->o.hosting) {
    rec.sender = (char *)ev->u.mcp.server, rec.text = (char *)ev->u.mcp.error;
  } else {
    return;
  }
  snprintf(rec.chat, sizeof rec.chat, "%s", c->chat);
  snprintf(rec.origin, sizeof rec.origin, "%s", control_host_id(c->ctl));
  char key[WIRE_ID_MAX + 32];
  snprintf(key, sizeof key, "e%s.%llu", rec.origin, (unsigned long long)++c->n_events);
  (void)cluster__send_record(c, &rec, key); /* a report only: one that cannot be sent is not worth failing for */
}

static int cl_chat_put(cluster *c, const char *chat, const char *title, int64_t created_ms) {
  if (!wire_id_ok(chat)) return AG_ERR_INVALID;
  wire_record rec = {.type = WIRE_CHAT, .text = (char *)title, .deleted = title == NULL, .ts_ms = created_ms};
  snprintf(rec.chat, sizeof rec.chat, "%s", chat);
  snprintf(rec.origin, sizeof rec.origin, "%s", control_host_id(c->ctl));
  return cluster__send_record(c, &rec, NULL);
}

int cluster_record_title(cluster *c, const char *chat, const char *title, int64_t created_ms) {
  return title && title[0] ? cl_chat_put(c, chat, title, created_ms) : AG_ERR_INVALID;
}

/* The tombstone goes first; then the chat's records are purged from the stream (control thread), so
 * that a process joining later neither replays nor stores them. A chat left behind never becomes the
 * stream's chat again, so the tombstone is honoured wherever it lands in the order. */
int cluster_record_delete(cluster *c, const char *chat) {
  if (c->chat[0] && !strcmp(chat, c->chat)) return AG_ERR_STATE;
  int rc = cl_chat_put(c, chat, NULL, 0);
  char prefix[sizeof c->prefix + WIRE_ID_MAX + 1];
  snprintf(prefix, sizeof prefix, "%s.%s", c->prefix, chat);
  if (!rc) control_purge(c->ctl, prefix);
  return rc;
}

