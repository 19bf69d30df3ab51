/* An agent's embedder changed mid-chat (docs/memory.md "Changing the embedder"): from the hash embedder to
 * a hosted one, the next turn's one request embeds every memory again and the turn retrieves with the new
 * vectors (before: the old vectors stayed, and every answer of another dimension was an llm-error, each
 * turn); and back to the hash embedder, every memory is embedded again at once. In process, against the
 * loopback LLM server's chat and /embeddings routes. */
#include "support/llm_server.h"
#include "support/suite.h"
#include "support/tsession.h"
#include "support/unit.h"

#include "agents/agent.h"
#include "agents/memory_stream.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static llm_server *srv;

#define BRIDGE "@mayor the bridge is closed until spring"

/* The embeddings requests since the last reset, and the texts of the last one (joined by '\n') in out. */
static size_t embeddings(char *out, size_t cap) {
  size_t reqs = 0;
  out[0] = '\0';
  for (size_t i = 0; i < llm_server_request_count(srv); i++) {
    llm_server_request r;
    if (llm_server_request_get(srv, i, &r)) continue;
    if (strstr(r.path, "/embeddings")) {
      reqs++;
      out[0] = '\0';
      cJSON *j = cJSON_Parse(r.body);
      const cJSON *t;
      cJSON_ArrayForEach(t, cJSON_GetObjectItem(j, "input")) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s\n", cJSON_GetStringValue(t) ? cJSON_GetStringValue(t) : "?");
      }
      cJSON_Delete(j);
    }
    llm_server_request_free(&r);
  }
  return reqs;
}

/* The last chat request's body (caller frees), NULL when none. */
static char *last_chat_body(void) {
  char *body = NULL;
  for (size_t i = llm_server_request_count(srv); i-- > 0 && !body;) {
    llm_server_request r;
    if (llm_server_request_get(srv, i, &r)) continue;
    if (strstr(r.path, "/chat/completions")) body = strdup(r.body);
    llm_server_request_free(&r);
  }
  return body;
}

/* The mayor's embedder set to provider (MEM_EMBED_HASH, or the loopback server's OpenAI route). */
static void set_embedder(tsession *f, mem_embedder provider) {
  agent *a = world_agent_find(f->w, "mayor");
  agent_settings s;
  CHECK_INT(agent_settings_copy(&s, agent_settings_of(a)), AG_OK);
  s.memory.embedder = provider;
  free(s.memory.embed_base_url);
  free(s.memory.embed_api_key_env);
  s.memory.embed_base_url = provider == MEM_EMBED_HASH ? NULL : strdup(llm_server_url(srv, "/v1"));
  s.memory.embed_api_key_env = provider == MEM_EMBED_HASH ? NULL : strdup("");
  ag_errmsg em = {""};
  CHECK_INT(world_update_agent(f->w, &s, &em), AG_OK);
  agent_settings_free(&s);
}

/* Asks the bridge question: no llm-error, the old memory retrieved. */
static void asks_and_remembers(tsession *f, const char *text) {
  f->log.text[0] = '\0';
  tsession_say(f, "human", text);
  CHECK(strstr(f->log.text, "-- llm-error") == NULL);
  if (strstr(f->log.text, "-- llm-error")) fprintf(stderr, "  %s\n", f->log.text);
  char *body = last_chat_body();
  CHECK(body && strstr(body, "What you remember from earlier") && strstr(body, "human: " BRIDGE));
  free(body);
}

static void hash_to_hosted_and_back(void) {
  char json[2048], texts[4096];
  snprintf(json, sizeof json,
           "{\"name\": \"town\", \"memory_window\": 2, \"agents\": [{\"name\": \"mayor\", \"provider\": \"openai\","
           " \"model\": \"m\", \"base_url\": \"%s\", \"api_key_env\": \"\", \"memory\": {\"mode\": \"stream\","
           " \"weights\": {\"recency\": 0.1, \"importance\": 1, \"relevance\": 1}}}]}",
           llm_server_url(srv, "/v1"));
  tsession f;
  tsession_open(&f, json);
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "reply=noted");
  CHECK_INT(chat_session_new(f.cs, NULL), AG_OK);
  tsession_say(&f, "human", BRIDGE);
  tsession_say(&f, "human", "@mayor apples are cheap");
  tsession_say(&f, "human", "@mayor fish for dinner");
  CHECK_INT(embeddings(texts, sizeof texts), 0); /* the hash embedder sends nothing */
  set_embedder(&f, MEM_EMBED_OPENAI);
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "reply=noted");
  asks_and_remembers(&f, "@mayor can I cross the bridge?");
  /* one request: every memory again, and the question */
  CHECK_INT(embeddings(texts, sizeof texts), 1);
  CHECK(strstr(texts, BRIDGE "\n") && strstr(texts, "@mayor fish for dinner\n") && strstr(texts, "noted\n") &&
        strstr(texts, "@mayor can I cross the bridge?\n"));
  const mem_stream *ms = agent_memory_stream(world_agent_find(f.w, "mayor"));
  CHECK_INT(ms->dim, 3); /* the loopback embedder's */
  /* a second turn sends only what is new: the reply and the question */
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "reply=noted");
  asks_and_remembers(&f, "@mayor is the bridge open?");
  CHECK_INT(embeddings(texts, sizeof texts), 1);
  CHECK(strstr(texts, BRIDGE) == NULL);
  /* back to the hash embedder: embedded at once, nothing sent */
  set_embedder(&f, MEM_EMBED_HASH);
  CHECK_INT(ms->dim, MEM_HASH_DIM);
  llm_server_reset(srv);
  llm_server_rule(srv, NULL, "reply=noted");
  asks_and_remembers(&f, "@mayor and the bridge tomorrow?");
  CHECK_INT(embeddings(texts, sizeof texts), 0);
  tsession_close(&f);
}

SUITE_RUN((UNIT(hash_to_hosted_and_back)), .srv = &srv)
