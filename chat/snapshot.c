/* Snapshot export, validation and import (see snapshot.h). The snapshot is built from the store, never
 * from a live world, so it holds exactly what was saved — and the store never holds a key. */
#include "chat/snapshot.h"

#include "chat/inflight.h"

#include "agents/context.h"
#include "agents/msg.h"
#include "common/buf.h"
#include "common/clock.h"
#include "storage/store.h"
#include "common/jsonnum.h"
#include "common/strset.h"
#include "world/events.h"
#include "world/world_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* ---- export ---- */

typedef struct export_ctx {
  const char *chat_id;
  cJSON *root;
  cJSON *agents;
  store_txn *t;
  ag_errmsg *em;
} export_ctx;

static int export_msg(const store_message *m, void *arg) {
  cJSON *arr = arg;
  cJSON *o = cJSON_CreateObject();
  if (!o) return AG_ERR_NOMEM;
  char ts[40];
  ag_time_format(m->ts_ms, ts, sizeof ts);
  ag_json_add_int(o, "seq", (int64_t)m->seq);
  cJSON_AddStringToObject(o, "sender", m->sender);
  cJSON_AddStringToObject(o, "kind", ag_kind_name((ag_kind)m->kind));
  cJSON_AddStringToObject(o, "text", m->text);
  cJSON_AddStringToObject(o, "ts", ts);
  if (m->has_sim) {
    ag_time_format(m->sim_ms, ts, sizeof ts);
    cJSON_AddStringToObject(o, "sim_time", ts);
  }
  cJSON_AddItemToArray(arr, o);
  return 0;
}

static int export_mem(uint64_t seq, void *arg) {
  cJSON_AddItemToArray((cJSON *)arg, ag_json_create_int((int64_t)seq));
  return 0;
}

static int export_agent(const char *agent_id, const store_agent_state *st, void *arg) {
  export_ctx *ec = arg;
  cJSON *o = cJSON_CreateObject();
  if (!o) return AG_ERR_NOMEM;
  cJSON_AddStringToObject(o, "id", agent_id);
  ag_json_add_int(o, "turn_count", st->turn_count);
  cJSON_AddBoolToObject(o, "notice_sent", st->notice_sent);
  ag_json_add_int(o, "reply_counter", (int64_t)st->counter);
  cJSON *mem = cJSON_AddArrayToObject(o, "memory");
  cJSON_AddItemToArray(ec->agents, o);
  int rc = store_memory_scan(ec->t, ec->chat_id, agent_id, export_mem, mem);
  if (rc) return rc;
  store_context c;
  rc = store_context_get(ec->t, ec->chat_id, agent_id, &c);
  if (rc == AG_ERR_NOT_FOUND) return AG_OK;
  if (rc) return rc;
  context_state cs = {c.version, c.updated_at_ms, cJSON_Parse(c.data_json)};
  store_context_free(&c);
  if (!cs.data) return ag_fail(ec->em, AG_ERR_STORAGE, "context of %s is not JSON", agent_id);
  cJSON_AddItemToObject(o, "context", context_to_json(&cs));
  context_free(&cs);
  return AG_OK;
}

static int export_thread(const char *json, size_t len, void *arg) {
  cJSON *e = cJSON_ParseWithLength(json, len);
  if (!e) return AG_ERR_STORAGE;
  if (chat_thread_bookkeeping(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "type")))) cJSON_Delete(e);
  else cJSON_AddItemToArray((cJSON *)arg, e);
  return 0;
}

static int export_txn(store_txn *t, void *arg) {
  export_ctx *ec = arg;
  ec->t = t;
  store_chat c;
  store_world w;
  memset(&w, 0, sizeof w);
  int rc = store_chat_get(t, ec->chat_id, &c);
  if (rc == AG_ERR_NOT_FOUND) return ag_fail(ec->em, rc, "no chat '%s'", ec->chat_id);
  if (rc) return rc;
  if ((rc = store_world_get(t, c.world_id, &w))) goto done;
  cJSON *root = ec->root = cJSON_CreateObject();
  if (!root) {
    rc = AG_ERR_NOMEM;
    goto done;
  }
  ag_json_add_int(root, "format", SNAPSHOT_FORMAT);
  cJSON *world = cJSON_Parse(w.settings_json);
  if (!world) {
    rc = ag_fail(ec->em, AG_ERR_STORAGE, "world '%s': stored settings are not JSON", w.id);
    goto done;
  }
  cJSON_AddItemToObject(root, "world", world);
  cJSON *chat = cJSON_AddObjectToObject(root, "chat");
  char ts[40];
  cJSON_AddStringToObject(chat, "id", c.id);
  cJSON_AddStringToObject(chat, "world", c.world_id);
  cJSON_AddStringToObject(chat, "title", c.title);
  ag_json_add_int(chat, "message_count", (int64_t)c.message_count);
  ag_time_format(c.created_at_ms, ts, sizeof ts);
  cJSON_AddStringToObject(chat, "created_at", ts);
  ag_time_format(c.updated_at_ms, ts, sizeof ts);
  cJSON_AddStringToObject(chat, "updated_at", ts);
  cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
  if ((rc = store_message_scan(t, ec->chat_id, 1, export_msg, msgs))) goto done;
  ec->agents = cJSON_AddArrayToObject(root, "agents");
  if ((rc = store_agent_state_scan(t, ec->chat_id, export_agent, ec))) goto done;
  cJSON *thread = cJSON_AddArrayToObject(root, "thread");
  rc = store_thread_scan(t, ec->chat_id, export_thread, thread);
  /* The world's settings, the thread and the contexts' data were parsed from storage: print their integers exactly. */
  if (!rc) rc = ag_json_exact_ints(root);
done:
  store_chat_free(&c);
  store_world_free(&w);
  return rc;
}

int chat_snapshot_export(store *st, const char *chat_id, cJSON **out, ag_errmsg *em) {
  export_ctx ec = {chat_id, NULL, NULL, NULL, em};
  int rc = store_read(st, export_txn, &ec, em);
  if (rc) {
    cJSON_Delete(ec.root);
    return rc;
  }
  *out = ec.root;
  return AG_OK;
}

/* ---- validation ---- */

#define BAD(...) ag_fail(em, AG_ERR_INVALID, __VA_ARGS__)

static int only_keys(const cJSON *o, const char *const *keys, const char *label, const char *path, ag_errmsg *em) {
  for (const cJSON *c = o->child; c; c = c->next) {
    int ok = 0;
    for (size_t i = 0; keys[i] && !ok; i++) ok = strcmp(c->string, keys[i]) == 0;
    if (!ok) return BAD("%s: %s%s%s: unknown field", label, path, *path ? "." : "", c->string);
  }
  return AG_OK;
}

static const cJSON *need(const cJSON *o, const char *key, int (*is)(const cJSON *), const char *what,
                         const char *label, const char *path, ag_errmsg *em, int *rc) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v) *rc = BAD("%s: %s%s%s: missing", label, path, *path ? "." : "", key);
  else if (!is(v)) *rc = BAD("%s: %s%s%s: must be %s", label, path, *path ? "." : "", key, what);
  else return v;
  return NULL;
}

static int is_str(const cJSON *v) { return cJSON_IsString(v); }
static int is_obj(const cJSON *v) { return cJSON_IsObject(v); }
static int is_arr(const cJSON *v) { return cJSON_IsArray(v); }
static int is_bool(const cJSON *v) { return cJSON_IsBool(v); }
/* Whole, finite, 0 ≤ n ≤ 2^53 − 1: every number a snapshot holds (seqs, counters, format, versions). */
static int is_count(const cJSON *v) {
  int64_t n;
  return ag_json_int(v, 0, AG_JSON_INT_MAX, &n) == AG_OK;
}
/* A turn count is stored as a 32-bit signed integer. */
static int is_turn_count(const cJSON *v) {
  int64_t n;
  return ag_json_int(v, 0, INT32_MAX, &n) == AG_OK;
}

static int validate_agents(const cJSON *agents, const double *seqs, size_t n_seqs, const char *label, ag_errmsg *em);

/* The format, the world's settings and the chat's metadata. */
static int validate_head(const cJSON *snap, const char *label, ag_errmsg *em) {
  int rc = AG_OK;
  if (!cJSON_IsObject(snap)) return BAD("%s: a snapshot must be a JSON object", label);
  /* A world file given for a snapshot (they are both JSON): say so, rather than name its first field. */
  if (!cJSON_GetObjectItemCaseSensitive(snap, "format") && cJSON_GetObjectItemCaseSensitive(snap, "name"))
    return BAD("%s: this is a world file, not a chat snapshot: load a world with `agora run FILE` or `agora "
               "console FILE`; `agora worlds list` shows the stored worlds", label);
  static const char *const top[] = {"format", "world", "chat", "messages", "agents", "thread", NULL};
  if ((rc = only_keys(snap, top, label, "", em))) return rc;
  const cJSON *fmt = need(snap, "format", is_count, "a whole number", label, "", em, &rc);
  if (!fmt) return rc;
  int64_t format = 0;
  ag_json_int(fmt, 0, AG_JSON_INT_MAX, &format); /* cannot fail: is_count held */
  if (format > SNAPSHOT_FORMAT)
    return ag_fail(em, AG_ERR_VERSION, "%s: format: %lld is newer than this Agora reads (%d); upgrade Agora",
                   label, (long long)format, SNAPSHOT_FORMAT);
  if (format < 1) return BAD("%s: format: must be at least 1", label);
  const cJSON *world = need(snap, "world", is_obj, "an object", label, "", em, &rc);
  if (!world) return rc;
  world_spec spec;
  char wlabel[512];
  snprintf(wlabel, sizeof wlabel, "%s: world", label);
  if ((rc = world_spec_from_json(world, wlabel, &spec, em))) return rc;
  world_spec_free(&spec);
  const cJSON *chat = need(snap, "chat", is_obj, "an object", label, "", em, &rc);
  if (!chat) return rc;
  static const char *const chat_keys[] = {"id", "world", "title", "message_count", "created_at", "updated_at", NULL};
  if ((rc = only_keys(chat, chat_keys, label, "chat", em))) return rc;
  const cJSON *title = need(chat, "title", is_str, "a string", label, "chat", em, &rc);
  if (!title) return rc;
  if (!title->valuestring[0] || strlen(title->valuestring) > STORE_TITLE_LEN)
    return BAD("%s: chat.title: must be 1 to %d bytes", label, STORE_TITLE_LEN);
  for (int i = 0; i < 2; i++) {
    const char *k = i ? "updated_at" : "created_at";
    const cJSON *t = need(chat, k, is_str, "an RFC 3339 time", label, "chat", em, &rc);
    if (!t) return rc;
    if (ag_time_parse(t->valuestring) < 0) return BAD("%s: chat.%s: must be an RFC 3339 UTC time", label, k);
  }
  return AG_OK;
}

/* The messages, numbered 1..n; their number goes to *n. */
static int validate_messages(const cJSON *msgs, const char *label, ag_errmsg *em, size_t *n) {
  int rc = AG_OK;
  char path[64];
  double last = 0;
  size_t i = 0;
  static const char *const msg_keys[] = {"seq", "sender", "kind", "text", "ts", "sim_time", NULL};
  for (const cJSON *m = msgs->child; m; m = m->next, i++) {
    snprintf(path, sizeof path, "messages[%zu]", i);
    if (!cJSON_IsObject(m)) return BAD("%s: %s: must be an object", label, path);
    if ((rc = only_keys(m, msg_keys, label, path, em))) return rc;
    const cJSON *seq = need(m, "seq", is_count, "a whole number", label, path, em, &rc);
    const cJSON *sender = seq ? need(m, "sender", is_str, "a string", label, path, em, &rc) : NULL;
    const cJSON *kind = sender ? need(m, "kind", is_str, "a string", label, path, em, &rc) : NULL;
    const cJSON *text = kind ? need(m, "text", is_str, "a string", label, path, em, &rc) : NULL;
    const cJSON *ts = text ? need(m, "ts", is_str, "an RFC 3339 time", label, path, em, &rc) : NULL;
    if (!ts) return rc;
    /* seq counts the chat's messages from 1 (docs/cli.md), so a snapshot's seqs are exactly 1..n. */
    if (seq->valuedouble != last + 1) return BAD("%s: %s.seq: must be %.0f (seqs count from 1 without gaps)", label, path, last + 1);
    last = seq->valuedouble;
    if (!sender->valuestring[0] || strlen(sender->valuestring) > STORE_ID_LEN)
      return BAD("%s: %s.sender: must be 1 to %d bytes", label, path, STORE_ID_LEN);
    if (ag_kind_parse(kind->valuestring) < 0)
      return BAD("%s: %s.kind: unknown kind '%s' (human, world, system, agent, turn-limit)", label, path,
                 kind->valuestring);
    if (strlen(text->valuestring) > STORE_TEXT_LEN) return BAD("%s: %s.text: longer than %d bytes", label, path, STORE_TEXT_LEN);
    if (ag_time_parse(ts->valuestring) < 0) return BAD("%s: %s.ts: must be an RFC 3339 UTC time", label, path);
    const cJSON *sim = cJSON_GetObjectItemCaseSensitive(m, "sim_time");
    if (sim && (!cJSON_IsString(sim) || ag_time_parse(sim->valuestring) < 0))
      return BAD("%s: %s.sim_time: must be an RFC 3339 UTC time", label, path);
  }
  *n = i;
  return AG_OK;
}

/* The thread of tool steps, each anchored after one of the n_seqs messages (or before all: 0). */
static int validate_thread(const cJSON *snap, size_t n_seqs, const char *label, ag_errmsg *em) {
  int rc = AG_OK;
  char path[64];
  /* Optional: snapshots of chats without tools have an empty one, or none. */
  const cJSON *thread = cJSON_GetObjectItemCaseSensitive(snap, "thread");
  if (!thread) return AG_OK;
  if (!cJSON_IsArray(thread)) return BAD("%s: thread: must be an array", label);
  size_t i = 0;
  for (const cJSON *e = thread->child; e; e = e->next, i++) {
    snprintf(path, sizeof path, "thread[%zu]", i);
    if (!cJSON_IsObject(e)) return BAD("%s: %s: must be an object", label, path);
    const cJSON *type = need(e, "type", is_str, "a string", label, path, em, &rc);
    if (!type) return rc;
    ev_kind kind = EV_KIND_COUNT;
    ev_kind_parse(type->valuestring, &kind);
    int tool_step = kind == EV_TOOL_CALL || kind == EV_TOOL_RESULT;
    /* Memory mode stream's reflection and memory-rated steps are what a restore rebuilds its notes and
     * ratings from (docs/memory.md): a snapshot carries them like summary mode's summary. */
    if (!tool_step && kind != EV_LLM_ERROR && kind != EV_LLM_DONE && kind != EV_SUMMARY && kind != EV_REFLECTION &&
        kind != EV_MEMORY_RATED)
      return BAD("%s: %s.type: must be tool-call, tool-result, llm-error, llm-done, summary, reflection or "
                 "memory-rated", label, path);
    if (!need(e, "agent", is_str, "a string", label, path, em, &rc) ||
        (tool_step && !need(e, "tool", is_str, "a string", label, path, em, &rc)) ||
        (kind == EV_SUMMARY && (!need(e, "summary", is_str, "a string", label, path, em, &rc) ||
                                !need(e, "upto", is_count, "a whole number", label, path, em, &rc))) ||
        (kind == EV_REFLECTION && !need(e, "insights", is_arr, "an array", label, path, em, &rc)) ||
        (kind == EV_MEMORY_RATED && !need(e, "ratings", is_arr, "an array", label, path, em, &rc)))
      return rc;
    const cJSON *after = need(e, "after_seq", is_count, "a whole number", label, path, em, &rc);
    if (!after) return rc;
    if (after->valuedouble > (double)n_seqs) return BAD("%s: %s.after_seq: no such message", label, path);
  }
  return AG_OK;
}

int chat_snapshot_validate(const cJSON *snap, const char *label, ag_errmsg *em) {
  int rc = validate_head(snap, label, em);
  if (rc) return rc;
  const cJSON *msgs = need(snap, "messages", is_arr, "an array", label, "", em, &rc);
  if (!msgs) return rc;
  size_t n_seqs = 0;
  if ((rc = validate_messages(msgs, label, em, &n_seqs))) return rc;
  const cJSON *agents = need(snap, "agents", is_arr, "an array", label, "", em, &rc);
  if (!agents) return rc;
  /* Seqs are strictly increasing (checked above), so memories are checked by binary search. */
  double *seqs = malloc((n_seqs ? n_seqs : 1) * sizeof *seqs);
  if (!seqs) return AG_ERR_NOMEM;
  size_t i = 0;
  for (const cJSON *m = msgs->child; m; m = m->next) seqs[i++] = cJSON_GetObjectItemCaseSensitive(m, "seq")->valuedouble;
  rc = validate_agents(agents, seqs, n_seqs, label, em);
  free(seqs);
  if (rc) return rc;
  return validate_thread(snap, n_seqs, label, em);
}

static int validate_agent(const cJSON *a, const char *path, const double *seqs, size_t n_seqs, const char *label,
                          ag_errmsg *em);

/* Each agent once: a second entry with the same id would merge two agents' memories on import. */
static int validate_agents(const cJSON *agents, const double *seqs, size_t n_seqs, const char *label, ag_errmsg *em) {
  int rc = AG_OK;
  char path[64];
  size_t i = 0;
  ag_strset seen = {0};
  for (const cJSON *a = agents->child; a && !rc; a = a->next, i++) {
    snprintf(path, sizeof path, "agents[%zu]", i);
    if ((rc = validate_agent(a, path, seqs, n_seqs, label, em))) break;
    const char *id = cJSON_GetObjectItemCaseSensitive(a, "id")->valuestring;
    rc = ag_strset_add(&seen, id);
    if (rc == AG_ERR_EXISTS) rc = BAD("%s: %s.id: duplicate agent id '%s'", label, path, id);
  }
  ag_strset_clear(&seen);
  return rc;
}

static int validate_agent(const cJSON *a, const char *path, const double *seqs, size_t n_seqs, const char *label,
                          ag_errmsg *em) {
  int rc = AG_OK;
  static const char *const agent_keys[] = {"id", "turn_count", "notice_sent", "reply_counter", "memory", "context", NULL};
  if (!cJSON_IsObject(a)) return BAD("%s: %s: must be an object", label, path);
  if ((rc = only_keys(a, agent_keys, label, path, em))) return rc;
  const cJSON *id = need(a, "id", is_str, "a string", label, path, em, &rc);
  if (!id) return rc;
  char want[STORE_ID_MAX];
  if (mention_id_from_name(id->valuestring, want, sizeof want) || strcmp(want, id->valuestring))
    return BAD("%s: %s.id: '%s' is not an agent id", label, path, id->valuestring);
  if (!need(a, "turn_count", is_turn_count, "a whole number from 0 to 2147483647", label, path, em, &rc) ||
      !need(a, "notice_sent", is_bool, "true or false", label, path, em, &rc) ||
      !need(a, "reply_counter", is_count, "a whole number", label, path, em, &rc))
    return rc;
  const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(a, "context");
  if (ctx) {
    context_state cs;
    const cJSON *version = cJSON_IsObject(ctx) ? cJSON_GetObjectItemCaseSensitive(ctx, "version") : NULL;
    if (version && !is_count(version))
      return BAD("%s: %s.context.version: must be a whole number from 0 to 2^53-1", label, path);
    if (context_from_json(ctx, &cs))
      return BAD("%s: %s.context: must be {version, updated_at, data}", label, path);
    context_free(&cs);
  }
  const cJSON *mem = need(a, "memory", is_arr, "an array", label, path, em, &rc);
  if (!mem) return rc;
  size_t k = 0;
  for (const cJSON *s = mem->child; s; s = s->next, k++) {
    int found = 0;
    if (is_count(s)) {
      size_t lo = 0, hi = n_seqs;
      while (lo < hi && !found) {
        size_t mid = lo + (hi - lo) / 2;
        if (seqs[mid] == s->valuedouble) found = 1;
        else if (seqs[mid] < s->valuedouble) lo = mid + 1;
        else hi = mid;
      }
    }
    if (!found) return BAD("%s: %s.memory[%zu]: must be the seq of one of the messages", label, path, k);
  }
  return AG_OK;
}

/* ---- import ---- */

typedef struct import_ctx {
  const cJSON *snap;
  const char *id;
  char *settings;
  ag_errmsg *em;
} import_ctx;

static int import_txn(store_txn *t, void *arg) {
  import_ctx *ic = arg;
  const cJSON *snap = ic->snap;
  const cJSON *world = cJSON_GetObjectItemCaseSensitive(snap, "world");
  const cJSON *chat = cJSON_GetObjectItemCaseSensitive(snap, "chat");
  const char *name = cJSON_GetObjectItemCaseSensitive(world, "name")->valuestring;
  char wid[STORE_ID_MAX];
  int rc = mention_id_from_name(name, wid, sizeof wid);
  if (rc) return ag_fail(ic->em, AG_ERR_INVALID, "world.name: '%s' gives no valid id", name);
  store_world old;
  rc = store_world_get(t, wid, &old);
  if (rc == AG_ERR_NOT_FOUND) {
    int64_t now = (int64_t)time(NULL) * 1000;
    store_world nw = {wid, name, ic->settings, "", now, now, NULL};
    rc = store_world_put(t, &nw);
  } else if (rc == AG_OK) {
    store_world_free(&old);
  }
  if (rc) return rc;
  const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(snap, "messages");
  uint64_t count = 0;
  for (const cJSON *m = msgs->child; m; m = m->next) count = (uint64_t)cJSON_GetObjectItem(m, "seq")->valuedouble;
  store_chat c = {.id = ic->id, .world_id = wid, .title = cJSON_GetObjectItemCaseSensitive(chat, "title")->valuestring,
                  .message_count = count,
                  .created_at_ms = ag_time_parse(cJSON_GetObjectItemCaseSensitive(chat, "created_at")->valuestring),
                  .updated_at_ms = ag_time_parse(cJSON_GetObjectItemCaseSensitive(chat, "updated_at")->valuestring)};
  if ((rc = store_chat_put(t, &c))) return rc;
  for (const cJSON *m = msgs->child; m; m = m->next) {
    store_message sm = {(uint64_t)cJSON_GetObjectItem(m, "seq")->valuedouble,
                        ag_time_parse(cJSON_GetObjectItem(m, "ts")->valuestring),
                        (uint8_t)ag_kind_parse(cJSON_GetObjectItem(m, "kind")->valuestring),
                        cJSON_GetObjectItem(m, "sender")->valuestring, cJSON_GetObjectItem(m, "text")->valuestring,
                        0, NULL, 0, 0};
    const cJSON *sim = cJSON_GetObjectItemCaseSensitive(m, "sim_time");
    if (sim) sm.has_sim = 1, sm.sim_ms = ag_time_parse(sim->valuestring);
    if ((rc = store_message_put(t, ic->id, &sm))) return rc;
  }
  const cJSON *agents = cJSON_GetObjectItemCaseSensitive(snap, "agents");
  for (const cJSON *a = agents->child; a; a = a->next) {
    const char *aid = cJSON_GetObjectItem(a, "id")->valuestring;
    store_agent_state st = {(int32_t)cJSON_GetObjectItem(a, "turn_count")->valuedouble,
                            (uint8_t)cJSON_IsTrue(cJSON_GetObjectItem(a, "notice_sent")),
                            (uint64_t)cJSON_GetObjectItem(a, "reply_counter")->valuedouble};
    if ((rc = store_agent_state_put(t, ic->id, aid, &st))) return rc;
    for (const cJSON *s = cJSON_GetObjectItem(a, "memory")->child; s; s = s->next)
      if ((rc = store_memory_append(t, ic->id, aid, (uint64_t)s->valuedouble))) return rc;
    const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(a, "context");
    if (ctx) {
      context_state cs;
      if ((rc = context_from_json(ctx, &cs))) return rc;
      char *data = ag_json_print_exact(cs.data);
      store_context c = {cs.version, cs.updated_at_ms, data, NULL};
      rc = data ? store_context_put(t, ic->id, aid, &c) : AG_ERR_NOMEM;
      free(data);
      context_free(&cs);
      if (rc) return rc;
    }
  }
  const cJSON *thread = cJSON_GetObjectItemCaseSensitive(snap, "thread");
  for (const cJSON *e = thread ? thread->child : NULL; e; e = e->next) {
    char *text = ag_json_print_exact(e);
    rc = text ? store_thread_append(t, ic->id, text) : AG_ERR_NOMEM;
    free(text);
    if (rc) return rc;
  }
  return AG_OK;
}

int chat_snapshot_import(store *st, const cJSON *snap, const char *label, char id_out[CHAT_ID_MAX],
                         ag_errmsg *em) {
  int rc = chat_snapshot_validate(snap, label, em);
  if (rc) return rc;
  char id[STORE_ID_MAX];
  store_chat_id_new(id);
  /* The world's settings are stored in world-file form, checked above, never with a key. */
  import_ctx ic = {snap, id, ag_json_print_exact(cJSON_GetObjectItemCaseSensitive(snap, "world")), em};
  if (!ic.settings) return AG_ERR_NOMEM;
  rc = store_write(st, import_txn, &ic, em);
  free(ic.settings);
  if (!rc) memcpy(id_out, id, STORE_ID_MAX);
  return rc;
}

int chat_snapshot_load(const char *path, cJSON **out, ag_errmsg *em) {
  char *text = NULL;
  size_t len = 0;
  int rc = ag_file_read(path, SNAPSHOT_MAX, &text, &len, em);
  if (rc == AG_ERR_NOT_FOUND || rc == AG_ERR_IO) rc = AG_ERR_INVALID; /* a bad argument: exit 2 */
  if (rc) return rc;
  cJSON *j = cJSON_ParseWithLength(text, len);
  if (j && (rc = ag_json_check_nul(text, len, path, em))) {
    cJSON_Delete(j);
    j = NULL;
  }
  free(text);
  if (rc) return rc;
  if (!j) return ag_fail(em, AG_ERR_INVALID, "%s: malformed JSON", path);
  *out = j;
  return AG_OK;
}
