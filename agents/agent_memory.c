/* An agent's memory stream (mode stream, docs/memory.md): every memory entry the agent gets is embedded
 * and kept, and each turn's prompt gets the memories that score best for the message being answered,
 * outside the verbatim window, under a token budget, each with when it happened. */
#include "agents/agent_int.h"

#include "agents/tool_exec.h"
#include "common/buf.h"
#include "common/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* When m happened: its simulated time in a virtual-clock world, else its wall time. */
static int64_t msg_time(const ag_msg *m) { return m->has_sim ? m->sim_ms : m->ts_ms; }

/* The hash embedder's vector of text into vec (MEM_HASH_DIM floats), and vec; NULL for a hosted embedder,
 * whose vectors come at the next turn's start (agent_embed.c), the stream's dimension unknown until then. */
static const float *embed_now(agent *a, const char *text, float *vec) {
  if (a->s.memory.embedder != MEM_EMBED_HASH) return NULL;
  if (!a->stream.dim) mem_stream_init(&a->stream, MEM_HASH_DIM);
  mem_embed_hash(text, vec, MEM_HASH_DIM);
  return vec;
}

int agent__stream_add(agent *a, ag_msg *m, uint64_t index) {
  if (a->s.memory.mode != MEM_MODE_STREAM) return AG_OK;
  float vec[MEM_HASH_DIM];
  /* The text alone: a sender's name in every entry would make all of one person's words look alike. */
  const float *v = embed_now(a, m->text, vec);
  mem_entry e = {.msg = m, .at_ms = msg_time(m), .importance = (float)a->s.memory.fixed_importance, .index = index,
                 .unrated = a->s.memory.importance == MEM_IMPORTANCE_LLM, .unembedded = !v};
  return mem_stream_add(&a->stream, &e, v);
}

const mem_stream *agent_memory_stream(const agent *a) { return &a->stream; }

int agent__note_add(agent *a, const char *text, double importance, int64_t at_ms, const uint64_t *sources,
                    size_t n_sources) {
  if (a->s.memory.mode != MEM_MODE_STREAM) return AG_ERR_STATE;
  ag_msg *m = ag_msg_new(a->id, text, AG_KIND_AGENT); /* seq 0: a note, in no chat's messages */
  if (!m) return AG_ERR_NOMEM;
  m->ts_ms = at_ms;
  float vec[MEM_HASH_DIM];
  const float *v = embed_now(a, text, vec);
  mem_entry e = {.msg = m, .at_ms = at_ms, .importance = (float)importance, .index = 0,
                 .sources = (uint64_t *)sources, .n_sources = n_sources, .note = 1, .unembedded = !v};
  int rc = mem_stream_add(&a->stream, &e, v);
  ag_msg_unref(m);
  return rc;
}

/* Whether the stream holds a note of text at at_ms (a note, not a reflection's insight: no sources). */
static int note_held(const agent *a, const char *text, int64_t at_ms) {
  for (size_t i = a->stream.n; i-- > 0;) { /* the times first: a scan of a long stream reads them alone */
    const mem_entry *e = &a->stream.e[i];
    if (a->stream.at_ms[i] == at_ms && e->note && !e->n_sources && !strcmp(e->msg->text, text)) return 1;
  }
  return 0;
}

int agent_memory_note(agent *a, const char *text, double importance, int64_t at_ms) {
  if (a->s.memory.mode == MEM_MODE_STREAM && text && note_held(a, text, at_ms)) return AG_OK;
  return agent__note_add(a, text, importance, at_ms, NULL, 0);
}

char *agent__remember(agent *a, const cJSON *args) {
  const char *text = cJSON_GetObjectItemCaseSensitive(args, "text")->valuestring;
  const cJSON *imp = cJSON_GetObjectItemCaseSensitive(args, "importance");
  double importance = cJSON_IsNumber(imp) ? imp->valuedouble : a->s.memory.fixed_importance;
  /* The note happened when the message it answers did: simulated time in a virtual-clock world. */
  int64_t at = a->answering ? msg_time(a->answering) : ag_now_ms();
  int rc = agent_memory_note(a, text, importance, at);
  if (rc == AG_ERR_STATE) return tool_exec_error("remember needs %s", "\"memory\": {\"mode\": \"stream\"}");
  if (rc) return tool_exec_error("could not remember: %s", ag_strerror(rc));
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "remembered", text);
  cJSON_AddNumberToObject(r, "importance", importance);
  cJSON_AddNumberToObject(r, "at_ms", (double)at);
  char *out = cJSON_PrintUnformatted(r);
  cJSON_Delete(r);
  return out;
}

size_t agent_memory_query(const agent *a, const char *query, int64_t now_ms, mem_hit *hits, size_t k) {
  if (!a->stream.n) return 0;
  float q[MEM_HASH_DIM];
  mem_embed_hash(query, q, MEM_HASH_DIM);
  const mem_config *c = &a->s.memory;
  /* A hosted embedder's query would be a call: here, outside a turn, relevance is left out (0). */
  mem_query mq = {.q = c->embedder == MEM_EMBED_HASH ? q : NULL, .now_ms = now_ms, .below = UINT64_MAX,
                  .w_recency = c->w_recency,
                  .w_importance = c->w_importance, .w_relevance = c->w_relevance};
  return mem_stream_top(&a->stream, &mq, k, hits, NULL);
}

/* Appends "- [time] sender: text\n" for hit h to b unless it would pass the budget of *left bytes. */
static int add_line(agent *a, const mem_hit *h, ag_buf *b, size_t *left) {
  const mem_entry *e = &a->stream.e[h->i];
  char when[AG_TIME_LEN];
  ag_time_format(e->at_ms, when, sizeof when);
  size_t need = strlen(when) + strlen(e->msg->sender) + strlen(e->msg->text) + 8;
  if (need > *left) return 0;
  *left -= need;
  return ag_buf_printf(b, "- [%s] %s: %s\n", when, e->msg->sender, e->msg->text) ? -1 : 1;
}

#define STREAM_HEADING "What you remember from earlier (most relevant first; times are when it happened):\n"

/* The retrieved memories as a prompt section (caller frees), NULL when none; room: its bound in tokens
 * beside retrieve_tokens, the heading and its separator included. */
static char *stream_section(agent *a, size_t room) {
  const mem_config *c = &a->s.memory;
  if (c->mode != MEM_MODE_STREAM || !a->answering || !a->stream.n || c->retrieve <= 0) return NULL;
  size_t total = agent_memory_total(a);
  size_t window = a->memory_window > 0 ? (size_t)a->memory_window : 10;
  float q[MEM_HASH_DIM];
  if (c->embedder == MEM_EMBED_HASH) mem_embed_hash(a->answering->text, q, MEM_HASH_DIM);
  else if (!a->query_ok) return NULL; /* the embedder failed this turn: no retrieval */
  mem_query mq = {.q = c->embedder == MEM_EMBED_HASH ? q : a->query_vec, .now_ms = msg_time(a->answering),
                  .below = total > window ? total - window : 0,
                  .w_recency = c->w_recency, .w_importance = c->w_importance, .w_relevance = c->w_relevance};
  mem_hit *hits = malloc((size_t)c->retrieve * sizeof *hits);
  if (!hits) return NULL;
  size_t got = mem_stream_top(&a->stream, &mq, (size_t)c->retrieve, hits, NULL), used = 0;
  /* The budgets are in tokens, estimated at four bytes each as elsewhere (agents/context_budget.h). */
  size_t left = (size_t)c->retrieve_tokens * 4, framing = sizeof STREAM_HEADING + 2;
  if (room < SIZE_MAX / 4 && room * 4 < left + framing) left = room * 4 > framing ? room * 4 - framing : 0;
  ag_buf b;
  ag_buf_init(&b, left + 256);
  int rc = ag_buf_printf(&b, "%s", STREAM_HEADING);
  for (size_t i = 0; !rc && i < got; i++) {
    int r = add_line(a, &hits[i], &b, &left);
    if (r < 0) rc = AG_ERR_NOMEM;
    used += r > 0;
  }
  free(hits);
  if (a->rounds == 0 && !a->shrunk && a->host->report) { /* once a turn, not again at its shrunk retry */
    agent_report ev = {.kind = AGENT_REPORT_MEMORY_RETRIEVED, .len = used, .seq = a->answering->seq};
    a->host->report(a->host->ctx, a, &ev);
  }
  if (rc || !used) {
    ag_buf_free(&b);
    return NULL;
  }
  return ag_buf_take(&b);
}

char *agent__stream_system(agent *a, char *sys, size_t room) {
  char *mem = stream_section(a, room);
  if (!mem) return sys;
  size_t n = (sys ? strlen(sys) : 0) + strlen(mem) + 3;
  char *out = malloc(n);
  if (out) snprintf(out, n, "%s%s%s", sys ? sys : "", sys && *sys ? "\n\n" : "", mem);
  free(mem);
  if (!out) return sys; /* out of memory: the turn goes on without its memories */
  free(sys);
  return out;
}

void agent__memory_call_done(agent *a, int err, const char *text, const llm_error_info *info) {
  llm_usage u = agent__call_settle(a);
  if (!a->host->report) return;
  agent_report ev = {.kind = err ? AGENT_REPORT_LLM_ERROR : AGENT_REPORT_LLM_DONE, .failed = err != 0, .info = info,
                     .text = err ? (info && info->message[0] ? info->message : ag_strerror(err)) : text,
                     .usage = u, .seq = a->answering ? a->answering->seq : 0};
  ev.len = strlen(ev.text);
  a->host->report(a->host->ctx, a, &ev);
}
