/* GET /metrics of agora serve in the Prometheus text format (version 0.0.4): the worlds loaded, their
 * agents and what they did since (LLM calls, tokens, bus messages, store commits), and the streams. */
#include "serve/serve_int.h"

#include <event2/buffer.h>
#include <inttypes.h>
#include <string.h>

static void metric(struct evbuffer *b, const char *name, const char *type, const char *help, uint64_t v) {
  evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n%s %" PRIu64 "\n", name, help, name, type, name, v);
}

/* What the worlds did since they were loaded (agora_world_counts), summed. */
typedef struct counts {
  uint64_t agents, thinking, messages, events, llm_done, llm_failed, rate_limited, tokens_in, tokens_out;
} counts;

static uint64_t count(const cJSON *j, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
  return cJSON_IsNumber(v) && v->valuedouble > 0 ? (uint64_t)v->valuedouble : 0;
}

static void add_world(counts *t, const serve_world *sw) {
  char *text = NULL;
  cJSON *j = !agora_world_counts(sw->w, &text) ? serve_lib_json(text) : NULL;
  t->agents += count(j, "agents"), t->thinking += count(j, "thinking");
  t->messages += count(j, "messages"), t->events += count(j, "events");
  t->llm_done += count(j, "llm_calls_done"), t->llm_failed += count(j, "llm_calls_failed");
  t->rate_limited += count(j, "rate_limited");
  t->tokens_in += count(j, "input_tokens"), t->tokens_out += count(j, "output_tokens");
  cJSON_Delete(j);
}

void serve_metrics_reply(serve *s, struct evhttp_request *req) {
  counts t = {0};
  uint64_t clients = 0, frames = 0, dropped = 0;
  for (size_t i = 0; i < s->n_worlds; i++) {
    const serve_world *sw = s->worlds[i];
    add_world(&t, sw);
    clients += sse_hub_clients(sw->hub);
    frames += sse_hub_frames(sw->hub);
    dropped += sse_hub_dropped(sw->hub);
  }
  char *text = NULL;
  cJSON *db = !agora_db_counts(s->db, &text) ? serve_lib_json(text) : NULL;
  uint64_t commits = count(db, "commits"), synced = count(db, "synced");
  cJSON_Delete(db);
  struct evbuffer *b = evbuffer_new();
  if (!b) return serve_reply_error(req, 500, "out of memory");
  metric(b, "agora_worlds_loaded", "gauge", "Worlds loaded by this server.", s->n_worlds);
  metric(b, "agora_agents", "gauge", "Agents in the loaded worlds.", t.agents);
  metric(b, "agora_llm_calls_in_flight", "gauge", "LLM calls in flight.", t.thinking);
  metric(b, "agora_llm_calls_done_total", "counter", "LLM calls that finished.", t.llm_done);
  metric(b, "agora_llm_calls_failed_total", "counter", "LLM calls that failed after retries.", t.llm_failed);
  metric(b, "agora_llm_rate_limited_total", "counter", "429s that paused an LLM endpoint (rate-limited events).",
         t.rate_limited);
  metric(b, "agora_llm_input_tokens_total", "counter", "Input tokens the providers reported.", t.tokens_in);
  metric(b, "agora_llm_output_tokens_total", "counter", "Output tokens the providers reported.", t.tokens_out);
  metric(b, "agora_bus_messages_total", "counter", "Messages delivered on the worlds' buses.", t.messages);
  metric(b, "agora_bus_events_total", "counter", "Events delivered on the worlds' buses.", t.events);
  metric(b, "agora_store_commits_total", "counter", "Store write transactions committed by this server.", commits);
  metric(b, "agora_store_synced_total", "counter", "Of them, those the storage thread has synced to disk.", synced);
  metric(b, "agora_sse_clients", "gauge", "Event stream clients connected.", clients);
  metric(b, "agora_sse_frames_total", "counter", "Event stream frames published.", frames);
  metric(b, "agora_sse_clients_dropped_total", "counter", "Stream clients dropped for falling behind.", dropped);
  metric(b, "agora_approvals_pending", "gauge", "Tool approvals waiting for an answer.", s->n_asks);
  metric(b, "agora_http_requests_total", "counter", "HTTP requests received.", s->requests);
  evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "text/plain; version=0.0.4");
  evhttp_send_reply(req, 200, "OK", b);
  evbuffer_free(b);
}
