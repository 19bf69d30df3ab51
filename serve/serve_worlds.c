/* The worlds agora serve hosts: each opened with agora_world_open on the server's one loop (the library
 * saves, runs its clock and, with --nats, joins its stream), and its event stream fed from the world's
 * events, whose JSON is the very object `run --json` prints. Tool approvals and ask_human questions wait
 * here for an HTTP answer. */
#include "serve/serve_int.h"

#include "common/jsonnum.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the stream ---- */

/* The current chat for a frame of the server's own; on a change of chat its position starts at the
 * chat's last message (as the library places its events). */
static const char *frame_chat(serve_world *sw) {
  const char *cur = agora_chat_current(sw->w);
  if (strcmp(cur ? cur : "", sw->chat)) {
    snprintf(sw->chat, sizeof sw->chat, "%s", cur ? cur : "");
    sw->seq = serve_world_last_seq(sw);
  }
  return sw->chat[0] ? sw->chat : NULL;
}

uint64_t serve_world_last_seq(serve_world *sw) {
  char *text = NULL;
  if (!agora_chat_current(sw->w) || agora_messages(sw->w, NULL, 0, 1, &text)) return 0;
  cJSON *a = serve_lib_json(text);
  const cJSON *seq = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(a, 0), "seq");
  uint64_t n = cJSON_IsNumber(seq) ? (uint64_t)seq->valuedouble : 0;
  cJSON_Delete(a);
  return n;
}

void serve_world_frame(serve_world *sw, cJSON *j) {
  const char *chat = frame_chat(sw);
  char *text = j ? ag_json_print_line(j) : NULL;
  cJSON_Delete(j);
  if (text) sse_hub_publish(sw->hub, text, chat, sw->seq);
  free(text);
}

/* {"type":"event","event":KIND,"world":ID,"chat":CHAT|null}: the head of an event of the server's own. */
static cJSON *event_head(serve_world *sw, const char *kind) {
  cJSON *j = cJSON_CreateObject();
  const char *chat = frame_chat(sw);
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "type", "event");
  cJSON_AddStringToObject(j, "event", kind);
  cJSON_AddStringToObject(j, "world", agora_world_id(sw->w));
  if (chat) cJSON_AddStringToObject(j, "chat", chat);
  else cJSON_AddNullToObject(j, "chat");
  return j;
}

void serve_world_chat_loaded(serve_world *sw) {
  cJSON *row = NULL;
  const char *cur = agora_chat_current(sw->w);
  char id[AGORA_ID_MAX], *text = NULL;
  if (!cur) return;
  snprintf(id, sizeof id, "%s", cur);
  if (agora_db_chat_info(sw->srv->db, id, &text) || !(row = serve_lib_json(text))) return;
  cJSON *j = event_head(sw, "chat-loaded");
  const cJSON *title = cJSON_GetObjectItemCaseSensitive(row, "title");
  const cJSON *count = cJSON_GetObjectItemCaseSensitive(row, "message_count");
  if (j) {
    cJSON_AddStringToObject(j, "id", id);
    cJSON_AddStringToObject(j, "title", cJSON_IsString(title) ? title->valuestring : "");
    ag_json_add_int(j, "messages", cJSON_IsNumber(count) ? (int64_t)count->valuedouble : 0);
  }
  cJSON_Delete(row);
  serve_world_frame(sw, j);
}

/* A turns-resumed event kept for GET /api/worlds/{id}; a storage-error kept for the report at stop,
 * which nobody may be streaming. */
static void keep_event(serve_world *sw, const agora_event *ev, const char *chat) {
  const char *kind = agora_event_kind(ev);
  int resumed = !strcmp(kind, "turns-resumed"), storage = !strcmp(kind, "storage-error");
  if (!resumed && !storage) return;
  cJSON *j = cJSON_Parse(agora_event_json(ev));
  const cJSON *agents = cJSON_GetObjectItemCaseSensitive(j, "agents");
  const cJSON *replies = cJSON_GetObjectItemCaseSensitive(j, "replies");
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(j, "error");
  if (storage && cJSON_IsString(error))
    snprintf(sw->srv->storage_error, sizeof sw->srv->storage_error, "%s", error->valuestring);
  if (resumed) {
    snprintf(sw->resumed_chat, sizeof sw->resumed_chat, "%s", chat ? chat : "");
    snprintf(sw->resumed_agents, sizeof sw->resumed_agents, "%s", cJSON_IsString(agents) ? agents->valuestring : "");
    sw->resumed_replies = cJSON_IsNumber(replies) ? (size_t)replies->valuedouble : 0;
  }
  cJSON_Delete(j);
}

/* ---- approvals ---- */

static serve_ask *ask_find(serve *s, uint64_t id, size_t *at) {
  for (size_t i = 0; i < s->n_asks; i++)
    if (s->asks[i].id == id) return *at = i, &s->asks[i];
  return NULL;
}

static void ask_remove(serve *s, size_t i) {
  serve_ask *a = &s->asks[i];
  free(a->agent), free(a->tool), free(a->args), free(a->question);
  memmove(a, a + 1, (s->n_asks - i - 1) * sizeof *a);
  s->n_asks--;
}

/* sw's approvals go: they can no longer be answered. */
static void asks_drop(serve *s, const serve_world *sw) {
  for (size_t i = s->n_asks; i-- > 0;)
    if (s->asks[i].sw == sw) ask_remove(s, i);
}

/* The end of a request, for the page: its prompt goes away. A tool approval also gets its "approval"
 * event, made here from the request serve keeps: the library emits none (agora_answer only answers;
 * docs/decisions.md "serve's own approval events"), so serve, which answers, says what happened. */
static void ask_ended(serve_world *sw, const serve_ask *a, int approved, const char *ended) {
  const char *chat = frame_chat(sw);
  cJSON *j = cJSON_CreateObject();
  if (!j) return;
  cJSON_AddStringToObject(j, "type", "approval-ended");
  cJSON_AddStringToObject(j, "world", agora_world_id(sw->w));
  if (chat) cJSON_AddStringToObject(j, "chat", chat);
  else cJSON_AddNullToObject(j, "chat");
  cJSON_AddNumberToObject(j, "id", (double)a->id);
  serve_world_frame(sw, j);
  if (a->question || !(j = event_head(sw, "approval"))) return;
  cJSON_AddStringToObject(j, "agent", a->agent);
  cJSON_AddStringToObject(j, "tool", a->tool);
  cJSON_AddBoolToObject(j, "approved", approved);
  if (ended) cJSON_AddStringToObject(j, "ended", ended);
  serve_world_frame(sw, j);
}

cJSON *serve_ask_json(const serve_ask *a, const char *chat) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "type", "approval-request");
  cJSON_AddStringToObject(j, "world", agora_world_id(a->sw->w));
  if (chat) cJSON_AddStringToObject(j, "chat", chat);
  else cJSON_AddNullToObject(j, "chat");
  cJSON_AddNumberToObject(j, "id", (double)a->id);
  cJSON_AddStringToObject(j, "agent", a->agent);
  cJSON_AddStringToObject(j, "tool", a->tool);
  cJSON *args = cJSON_Parse(a->args);
  cJSON_AddItemToObject(j, "args", args ? args : cJSON_CreateString(a->args));
  if (a->question) cJSON_AddStringToObject(j, "question", a->question);
  return j;
}

static char *field_dup(const cJSON *j, const char *name) {
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, name);
  return cJSON_IsString(f) ? strdup(f->valuestring) : NULL;
}

/* A request of the world (AGORA_EVENT_REQUEST): kept under the server's id, shown on the stream; denied
 * when it cannot be kept. */
static void on_ask(serve_world *sw, const agora_event *ev) {
  serve *s = sw->srv;
  uint64_t local = agora_event_request(ev);
  cJSON *j = cJSON_Parse(agora_event_json(ev));
  serve_ask a = {.id = s->next_ask + 1, .local = local, .sw = sw, .agent = field_dup(j, "agent"),
                 .tool = field_dup(j, "tool"), .question = field_dup(j, "question")};
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(j, "args");
  a.args = args ? ag_json_print_line(args) : strdup("{}");
  int question = cJSON_GetObjectItemCaseSensitive(j, "question") != NULL;
  cJSON_Delete(j);
  if (s->n_asks == s->cap_asks) {
    size_t ncap = s->cap_asks ? s->cap_asks * 2 : 8;
    serve_ask *p = realloc(s->asks, ncap * sizeof *p);
    if (p) s->asks = p, s->cap_asks = ncap;
  }
  if (s->n_asks == s->cap_asks || !a.agent || !a.tool || !a.args || (question && !a.question)) {
    free(a.agent), free(a.tool), free(a.args), free(a.question);
    if (question) agora_reply(sw->w, local, 0, "agora serve ran out of memory");
    else agora_answer(sw->w, local, 0);
    return;
  }
  s->next_ask++;
  s->asks[s->n_asks++] = a;
  serve_world_frame(sw, serve_ask_json(&s->asks[s->n_asks - 1], frame_chat(sw)));
}

/* A request ended unanswered (AGORA_EVENT_WITHDRAWN): its turn was cancelled, or it timed out. */
static void on_withdrawn(serve_world *sw, const agora_event *ev) {
  serve *s = sw->srv;
  uint64_t local = agora_event_request(ev);
  for (size_t i = 0; i < s->n_asks; i++) {
    if (s->asks[i].sw != sw || s->asks[i].local != local) continue;
    cJSON *j = cJSON_Parse(agora_event_json(ev));
    int timed_out = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "timed_out"));
    cJSON_Delete(j);
    ask_ended(sw, &s->asks[i], 0, timed_out ? "timed out" : "cancelled");
    ask_remove(s, i);
    return;
  }
}

int serve_approval_answer(serve *s, uint64_t id, int allow, const char *text) {
  size_t i;
  serve_ask *a = ask_find(s, id, &i);
  /* Ids are handed out in order and never reused: one not pending but handed out has ended. */
  if (!a) return id && id <= s->next_ask ? AG_ERR_STATE : AG_ERR_NOT_FOUND;
  agora_world *w = a->sw->w;
  int rc = a->question ? agora_reply(w, a->local, allow, text) : agora_answer(w, a->local, allow);
  if (rc == AGORA_ERR_STATE) return rc;
  if (!rc) ask_ended(a->sw, a, allow, NULL);
  ask_remove(s, i);
  return rc;
}

/* ---- the world's events ---- */

/* Every event of the world, in order (agora_options.on_event: from the open on). */
static void on_event(const agora_event *ev, void *ctx) {
  serve_world *sw = ctx;
  if (!sw->w) sw->w = agora_event_world(ev); /* during agora_world_open */
  const char *chat = agora_event_chat(ev);
  snprintf(sw->chat, sizeof sw->chat, "%s", chat ? chat : "");
  sw->seq = agora_event_position(ev);
  switch (agora_event_type(ev)) {
  case AGORA_EVENT_REQUEST: return on_ask(sw, ev);
  case AGORA_EVENT_WITHDRAWN: return on_withdrawn(sw, ev);
  case AGORA_EVENT_WORLD: keep_event(sw, ev, chat); /* fall through */
  default: {
    const char *text = agora_event_json(ev);
    if (text) sse_hub_publish(sw->hub, text, chat, sw->seq);
  }
  }
}

/* Frames go out when the bus has delivered what it had, before the commit: they never wait for the
 * disk (AGORA_SUB_IDLE). */
static void on_idle(const agora_event *ev, void *ctx) {
  if (agora_event_type(ev) == AGORA_EVENT_IDLE) sse_hub_flush(((serve_world *)ctx)->hub);
}

/* ---- resuming from stored messages ---- */

#define REPLAY_PAGE 64 /* messages read from the database at a time, at most */

/* How many messages to read next for a slice of about budget bytes, when msgs messages read so far took
 * bytes (none yet: 1): at least 1, at most max. A chat of 900 KB messages is read one at a time, never a
 * page of them at once (ten stalled resumes of them held 57 MB each so). */
static size_t page_size(size_t bytes, size_t msgs, size_t budget, size_t max) {
  if (!msgs) return 1;
  size_t each = bytes / msgs + 1, n = budget / each;
  return n < 1 ? 1 : n > max ? max : n;
}

/* Sends the messages of page (an array of message objects) with seq <= until to c until max_bytes are
 * sent; *last gets the last one sent, *bytes counts. 1 when until was passed, -1 out of memory, else 0. */
static int replay_page(serve_world *sw, sse_client *c, const char *chat, const cJSON *page, uint64_t until,
                       size_t max_bytes, size_t *bytes, uint64_t *last) {
  const cJSON *m;
  cJSON_ArrayForEach(m, page) {
    const cJSON *seq = cJSON_GetObjectItemCaseSensitive(m, "seq");
    uint64_t n = cJSON_IsNumber(seq) ? (uint64_t)seq->valuedouble : 0;
    if (n > until || *bytes >= max_bytes) return 1;
    char id[SSE_ID_MAX], *text = ag_json_print_line(m);
    sse_id_format(sw->hub, 0, chat, n, id);
    int rc = text ? sse_client_send(c, id, text) : -1;
    *bytes += text ? strlen(text) + strlen(id) + 16 : 0;
    free(text);
    if (rc) return -1;
    *last = n;
  }
  return 0;
}

/* A resume from a position the ring no longer holds: the messages stored after it, if it is in the
 * current chat (otherwise the client is told to resync and reloads), one slice per call. */
static int fallback(void *ud, sse_client *c, const char *chat, uint64_t after, uint64_t *until, size_t max_bytes,
                    uint64_t *last) {
  serve_world *sw = ud;
  char cur[AGORA_ID_MAX];
  const char *now = agora_chat_current(sw->w);
  if (!chat || !now || strcmp(chat, now)) return -1;
  snprintf(cur, sizeof cur, "%s", now); /* the library's is borrowed until the next call */
  if (!*until) {
    *until = serve_world_last_seq(sw);
    if (*until > after && *until - after > SSE_FALLBACK_MAX) return -1;
  }
  size_t bytes = 0, read = 0, n = 0;
  int rc = 0;
  *last = after;
  for (uint64_t from = after + 1; !rc && from <= *until && bytes < max_bytes; from = *last + 1) {
    char *text = NULL;
    size_t max = page_size(read, n, max_bytes - bytes, REPLAY_PAGE);
    if (agora_messages(sw->w, cur, from, max, &text)) return -1;
    read += text ? strlen(text) : 0;
    cJSON *page = serve_lib_json(text);
    if (!page) return -1;
    uint64_t before = *last;
    n += (size_t)cJSON_GetArraySize(page);
    rc = cJSON_GetArraySize(page) ? replay_page(sw, c, cur, page, *until, max_bytes, &bytes, last) : 1;
    cJSON_Delete(page);
    if (rc < 0) return -1;
    if (!rc && *last == before) break; /* nothing new: a gap in storage ends the replay too */
  }
  if (bytes < max_bytes) *last = *until;
  return 0;
}

/* ---- opening and closing ---- */

static serve_world *find_loaded(serve *s, const char *id) {
  for (size_t i = 0; i < s->n_worlds; i++)
    if (!strcmp(agora_world_id(s->worlds[i]->w), id)) return s->worlds[i];
  return NULL;
}

/* The library's options for one world on the server's loop: a file of the command line (its MCP
 * servers start, with --nats it joins its stream as a viewer) or a stored world (never a program). */
static agora_options world_options(serve *s, serve_world *sw, int stored) {
  agora_options o = s->open;
  /* the notes for the operator (a key withheld, MCP servers not started) on serve's stderr */
  o.flags = AGORA_STREAM | AGORA_NOTES | AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | AGORA_OPTIONS_5 | AGORA_OPTIONS_8 |
            AGORA_OPTIONS_10;
  if (stored) o.flags |= AGORA_FROM_STORE;
  if (!stored && o.nats_url) o.flags |= AGORA_VIEW;
  if (stored || !o.nats_url) o.nats_url = NULL;
  o.program = NULL; /* errors name the world's file or id alone */
  o.loop = s->base;
  o.sync = AGORA_SYNC_BACKGROUND; /* the loop, and so every stream, never waits for the disk */
  o.on_event = on_event;
  o.on_event_ctx = sw;
  return o;
}

/* Opens world (a file, or a stored world's id with stored) on the server's loop and resumes its current
 * chat (a new one when it has none); a file with --nats joins its world over NATS (the stream's chat). */
static int host(serve *s, const char *world, int stored) {
  serve_world *sw = calloc(1, sizeof *sw);
  serve_world **list = realloc(s->worlds, (s->n_worlds + 1) * sizeof *list);
  if (list) s->worlds = list;
  if (!sw || !list) {
    free(sw);
    return AGORA_ERR_NOMEM;
  }
  sw->srv = s;
  sw->named = !stored;
  int rc = sse_hub_new(s->base, s->boot, fallback, sw, &sw->hub);
  agora_options o = world_options(s, sw, stored);
  agora_world *w = NULL;
  if (!rc && !(rc = agora_world_open(world, s->db_dir, &o, &w)) &&
      (rc = agora_subscribe_chat(w, NULL, AGORA_SUB_IDLE, on_idle, sw)) > 0)
    rc = AGORA_OK;
  if (rc) {
    agora_world_close(w);
    asks_drop(s, sw); /* a request made while it opened */
    sse_hub_free(sw->hub);
    free(sw);
    return rc;
  }
  sw->w = w;
  sse_hub_set_closecb(sw->hub, serve_conn_closed, s); /* a stream's connection is still counted */
  const char *still = agora_clock_note(w);
  if (still) fprintf(stderr, "agora: serve: world %s: %s\n", agora_world_id(w), still);
  s->worlds[s->n_worlds++] = sw;
  return AGORA_OK;
}

int serve_world_get(serve *s, const char *id, serve_world **out) {
  if ((*out = find_loaded(s, id))) return AGORA_OK;
  int rc = host(s, id, 1);
  if (!rc) *out = s->worlds[s->n_worlds - 1];
  return rc;
}

serve_world *serve_world_find(serve *s, const char *id) { return find_loaded(s, id); }

int serve_world_add_file(serve *s, const char *path) { return host(s, path, 0); }

/* Its approvals go, then the world: its last events still reach the stream, which then ends. */
static void world_free(serve *s, serve_world *sw) {
  asks_drop(s, sw);
  agora_world_close(sw->w);
  sse_hub_free(sw->hub);
  free(sw);
}

/* Takes sw out of the list of worlds served. */
static void unlist(serve *s, serve_world *sw) {
  for (size_t i = 0; i < s->n_worlds; i++) {
    if (s->worlds[i] != sw) continue;
    memmove(&s->worlds[i], &s->worlds[i + 1], (s->n_worlds - i - 1) * sizeof *s->worlds);
    s->n_worlds--;
    return;
  }
}

void serve_world_unload(serve *s, serve_world *sw) {
  unlist(s, sw);
  s->unsaved += agora_unsaved(sw->w);
  world_free(s, sw);
}

void serve_world_cancel(serve_world *sw) { agora_cancel(sw->w); }

void serve_worlds_settle(serve *s) {
  /* Replies in flight are cancelled; what was published is delivered, and so saved. */
  for (size_t i = 0; i < s->n_worlds; i++)
    if (!agora_is_quiet(s->worlds[i]->w)) serve_world_cancel(s->worlds[i]);
  for (int k = 0; k < 100000; k++) {
    int quiet = 1;
    for (size_t i = 0; i < s->n_worlds; i++) {
      if (agora_is_quiet(s->worlds[i]->w)) continue;
      quiet = 0;
      agora_cancel(s->worlds[i]->w);
    }
    if (quiet) break;
    event_base_loop(s->base, EVLOOP_NONBLOCK);
  }
}

/* A world closed at the stop: what it could not store or sync is reported. */
static void on_closed(const char *world_id, int rc, void *ctx) {
  (void)world_id;
  serve *s = ctx;
  s->closing--;
  if (rc != AGORA_ERR_STORAGE) return;
  s->close_failed = 1;
  if (!s->storage_error[0]) snprintf(s->storage_error, sizeof s->storage_error, "%s", agora_errmsg());
}

void serve_worlds_close(serve *s) {
  for (size_t i = 0; i < s->n_worlds; i++) {
    serve_world *sw = s->worlds[i];
    s->unsaved += agora_unsaved(sw->w);
    if (!agora_world_close_later(sw->w, 0, on_closed, s)) s->closing++;
    else agora_world_close(sw->w); /* not on the loop the server gave: cannot be */
  }
  while (s->closing && event_base_loop(s->base, EVLOOP_ONCE) == 0) {
  }
}

void serve_worlds_free(serve *s) {
  for (size_t i = 0; i < s->n_worlds; i++) {
    serve_world *sw = s->worlds[i];
    asks_drop(s, sw);
    sse_hub_free(sw->hub);
    free(sw);
  }
  free(s->worlds);
  s->worlds = NULL;
  s->n_worlds = 0;
  free(s->asks);
  s->asks = NULL;
}
