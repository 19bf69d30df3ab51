/* The stream's records as JSON (see wire.h). Decoding is strict: every field has its type, ids are
 * subject-safe, numbers are whole and in range, and the text has no NUL. */
#include "cluster/wire.h"

#include "common/jsonnum.h"
#include "world/events.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

int wire_id_ok(const char *s) {
  size_t n = 0;
  for (; s[n]; n++) {
    char c = s[n];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok || n + 1 >= WIRE_ID_MAX) return 0;
  }
  return n > 0;
}

/* Numbers are whole and within +-(2^53 - 1), JavaScript's safe integers: 2^53 itself is also what
 * 2^53 + 1 reads as, so a record holding it could not be told from one holding its neighbour. They are
 * written by ag_json_add_int, exactly (cJSON's own print sent a ts of 9000000001999981 as
 * 9.00000000199998e+15, 1 ms off: found by fuzz_record). */
#define NUM_MAX AG_JSON_INT_MAX

/* A reflection's insights, checked and copied to the fields a reader uses, into *out (the caller deletes
 * it): at most WIRE_INSIGHTS_MAX, each {"text": string, "sources": [at most WIRE_SOURCES_MAX seqs
 * 1..NUM_MAX], "importance": 1..10}. AG_ERR_INVALID (em says why) for anything else. */
static int insights_copy(const cJSON *in, cJSON **out, ag_errmsg *em) {
  int rc = AG_OK, n = 0;
  cJSON *arr = cJSON_CreateArray();
  if (!arr) return AG_ERR_NOMEM;
  if (!cJSON_IsArray(in) || cJSON_GetArraySize(in) > WIRE_INSIGHTS_MAX)
    rc = ag_fail(em, AG_ERR_INVALID, "record: \"insights\" must be an array of at most %d", WIRE_INSIGHTS_MAX);
  for (const cJSON *o = rc ? NULL : in->child; o && !rc; o = o->next, n++) {
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(o, "text"), *src = cJSON_GetObjectItemCaseSensitive(o, "sources");
    const cJSON *imp = cJSON_GetObjectItemCaseSensitive(o, "importance");
    int ok = cJSON_IsString(text) && cJSON_IsArray(src) && cJSON_GetArraySize(src) <= WIRE_SOURCES_MAX &&
             cJSON_IsNumber(imp) && imp->valuedouble >= 1 && imp->valuedouble <= 10;
    cJSON *c = cJSON_CreateObject(), *seqs = cJSON_CreateArray();
    int64_t seq;
    for (const cJSON *q = ok ? src->child : NULL; q && ok; q = q->next)
      if ((ok = ag_json_int(q, 1, NUM_MAX, &seq) == AG_OK)) cJSON_AddItemToArray(seqs, cJSON_CreateNumber((double)seq));
    if (!c || !seqs) rc = AG_ERR_NOMEM;
    else if (!ok) rc = ag_fail(em, AG_ERR_INVALID, "record: bad insight %d (text, sources, importance 1..10)", n);
    if (c) cJSON_AddItemToArray(arr, c);
    if (rc) {
      cJSON_Delete(seqs);
      break;
    }
    cJSON_AddStringToObject(c, "text", text->valuestring);
    cJSON_AddItemToObject(c, "sources", seqs);
    cJSON_AddNumberToObject(c, "importance", imp->valuedouble);
  }
  if (rc) cJSON_Delete(arr);
  else *out = arr;
  return rc;
}

/* A rating call's answer, checked and copied into *out (the caller deletes it): at most WIRE_RATINGS_MAX
 * pairs [seq 1..NUM_MAX, importance 1..10]. AG_ERR_INVALID (em says why) for anything else. */
static int ratings_copy(const cJSON *in, cJSON **out, ag_errmsg *em) {
  int ok = cJSON_IsArray(in) && cJSON_GetArraySize(in) <= WIRE_RATINGS_MAX;
  cJSON *arr = cJSON_CreateArray();
  for (const cJSON *p = ok ? in->child : NULL; p && ok && arr; p = p->next) {
    const cJSON *imp = cJSON_GetArrayItem(p, 1);
    int64_t seq;
    ok = cJSON_IsArray(p) && cJSON_GetArraySize(p) == 2 &&
         ag_json_int(cJSON_GetArrayItem(p, 0), 1, NUM_MAX, &seq) == AG_OK && cJSON_IsNumber(imp) &&
         imp->valuedouble >= 1 && imp->valuedouble <= 10;
    cJSON *pair = ok ? cJSON_CreateArray() : NULL;
    if (pair) {
      cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)seq));
      cJSON_AddItemToArray(pair, cJSON_CreateNumber(imp->valuedouble));
      cJSON_AddItemToArray(arr, pair);
    }
  }
  if (ok && arr) {
    *out = arr;
    return AG_OK;
  }
  cJSON_Delete(arr);
  if (!arr) return AG_ERR_NOMEM;
  return ag_fail(em, AG_ERR_INVALID, "record: \"ratings\" must be at most %d pairs [seq, importance 1..10]",
                 WIRE_RATINGS_MAX);
}

/* The checked copy of a reflection's insights or a rating call's ratings (a JSON array) as text. */
static int array_text(const cJSON *in, int (*copy)(const cJSON *, cJSON **, ag_errmsg *), char **out, ag_errmsg *em) {
  cJSON *c = NULL;
  int rc = copy(in, &c, em);
  if (rc) return rc;
  *out = cJSON_PrintUnformatted(c);
  cJSON_Delete(c);
  return *out ? AG_OK : AG_ERR_NOMEM;
}

static int mem_encodable(const wire_record *r) {
  if (!wire_id_ok(r->agent) || !wire_id_ok(r->origin) || !r->text || r->after_seq > (uint64_t)NUM_MAX) return 0;
  if (r->mem == WIRE_MEM_SUMMARY) return r->upto <= (uint64_t)NUM_MAX;
  if (r->mem != WIRE_MEM_RATED && (r->ts_ms < -NUM_MAX || r->ts_ms > NUM_MAX)) return 0;
  if (r->mem == WIRE_MEM_NOTE) return r->importance >= 1 && r->importance <= 10;
  if (r->mem != WIRE_MEM_REFLECTION && r->mem != WIRE_MEM_RATED) return 0;
  cJSON *in = cJSON_Parse(r->text);
  char *text = NULL;
  int rc = array_text(in, r->mem == WIRE_MEM_RATED ? ratings_copy : insights_copy, &text, NULL);
  cJSON_Delete(in);
  free(text);
  return rc == AG_OK;
}

/* The numbers' ranges wire_decode accepts, so that no number is sent that no reader would take. */
static int encodable(const wire_record *r) {
  if (r->type == WIRE_MSG)
    return r->sender && r->text && r->ts_ms >= 0 && r->ts_ms <= NUM_MAX &&
           (!r->has_sim || (r->sim_ms >= -NUM_MAX && r->sim_ms <= NUM_MAX));
  if (r->type == WIRE_EVENT)
    return r->text && wire_id_ok(r->origin) &&
           (r->ev == EV_LLM_ERROR ? wire_id_ok(r->agent) && (!r->has_info || (r->error_type && r->http_status >= 0 &&
                                                                               r->http_status <= 999 && r->attempts >= 0 &&
                                                                               r->attempts <= 1000000))
                                  : r->ev == EV_MCP_ERROR && r->sender && wire_id_ok(r->sender));
  if (r->type == WIRE_CHAT)
    return wire_id_ok(r->origin) && (r->deleted || (r->text && r->text[0] && r->ts_ms >= 0 && r->ts_ms <= NUM_MAX));
  if (r->type == WIRE_MEMORY) return mem_encodable(r);
  return r->trigger >= 1 && r->trigger <= (uint64_t)NUM_MAX && r->counter <= (uint64_t)NUM_MAX;
}

static int encode_event(cJSON *j, const wire_record *r) {
  int ok = cJSON_AddStringToObject(j, "ev", ev_kind_name((ev_kind)r->ev)) &&
           cJSON_AddStringToObject(j, "from", r->origin) && cJSON_AddStringToObject(j, "error", r->text);
  if (ok && r->ev == EV_MCP_ERROR) return cJSON_AddStringToObject(j, "server", r->sender) != NULL;
  ok = ok && cJSON_AddStringToObject(j, "agent", r->agent);
  if (ok && r->has_info)
    ok = ag_json_add_int(j, "status", r->http_status) && ag_json_add_int(j, "attempts", r->attempts) &&
         cJSON_AddStringToObject(j, "etype", r->error_type);
  return ok;
}

static const char *const mem_names[] = {"", "note", "reflection", "summary", "rated"};

static int encode_memory(cJSON *j, const wire_record *r) {
  int ok = cJSON_AddStringToObject(j, "agent", r->agent) && cJSON_AddStringToObject(j, "from", r->origin) &&
           cJSON_AddStringToObject(j, "step", mem_names[r->mem]) && ag_json_add_int(j, "after", (int64_t)r->after_seq);
  if (ok && r->mem == WIRE_MEM_SUMMARY)
    return cJSON_AddStringToObject(j, "text", r->text) && ag_json_add_int(j, "upto", (int64_t)r->upto);
  if (ok && r->mem == WIRE_MEM_RATED) {
    cJSON *v = cJSON_Parse(r->text);
    return v && cJSON_AddItemToObject(j, "ratings", v);
  }
  ok = ok && ag_json_add_int(j, "at", r->ts_ms);
  if (ok && r->mem == WIRE_MEM_NOTE)
    return cJSON_AddStringToObject(j, "text", r->text) && cJSON_AddNumberToObject(j, "importance", r->importance);
  cJSON *v = cJSON_Parse(r->text);
  return ok && v && cJSON_AddItemToObject(j, "insights", v);
}

int wire_encode(const wire_record *r, char **out, size_t *len) {
  if (!encodable(r)) return AG_ERR_INVALID;
  cJSON *j = cJSON_CreateObject();
  const char *t = r->type == WIRE_MSG ? "msg" : r->type == WIRE_EVENT ? "evt" : r->type == WIRE_CHAT ? "chat"
                : r->type == WIRE_MEMORY ? "mem" : "end";
  int ok = j && cJSON_AddStringToObject(j, "t", t) &&
           cJSON_AddStringToObject(j, "chat", r->chat);
  if (ok && r->type == WIRE_MSG) {
    ok = cJSON_AddStringToObject(j, "from", r->sender) && cJSON_AddStringToObject(j, "kind", ag_kind_name(r->kind)) &&
         cJSON_AddStringToObject(j, "text", r->text) && ag_json_add_int(j, "ts", r->ts_ms) &&
         (!r->has_sim || ag_json_add_int(j, "sim", r->sim_ms));
  } else if (ok && r->type == WIRE_EVENT) {
    ok = encode_event(j, r);
  } else if (ok && r->type == WIRE_MEMORY) {
    ok = encode_memory(j, r);
  } else if (ok && r->type == WIRE_CHAT) {
    ok = cJSON_AddStringToObject(j, "from", r->origin) &&
         (r->deleted ? cJSON_AddTrueToObject(j, "deleted") != NULL
                     : cJSON_AddStringToObject(j, "title", r->text) && ag_json_add_int(j, "created", r->ts_ms));
  } else if (ok) {
    ok = cJSON_AddStringToObject(j, "agent", r->agent) && ag_json_add_int(j, "trigger", (int64_t)r->trigger) &&
         ag_json_add_int(j, "counter", (int64_t)r->counter);
  }
  char *s = ok ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  if (!s) return AG_ERR_NOMEM;
  *out = s;
  *len = strlen(s);
  return AG_OK;
}

static const char *get_str(const cJSON *j, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A whole number in [min, NUM_MAX] (common/jsonnum.h: finite, whole, never cast out of range). */
static int get_num(const cJSON *j, const char *name, int64_t min, int64_t *out) {
  return ag_json_int_member(j, name, min, NUM_MAX, out) == AG_OK;
}

static int copy_id(char *dst, const char *src) {
  if (!src || !wire_id_ok(src)) return 0;
  strcpy(dst, src);
  return 1;
}

static int decode_msg(const cJSON *j, wire_record *r, ag_errmsg *em) {
  const char *from = get_str(j, "from"), *kind = get_str(j, "kind"), *text = get_str(j, "text");
  int k = kind ? ag_kind_parse(kind) : -1;
  if (!from || !from[0] || strlen(from) >= WIRE_ID_MAX) return ag_fail(em, AG_ERR_INVALID, "record: bad \"from\"");
  if (k < 0) return ag_fail(em, AG_ERR_INVALID, "record: bad \"kind\"");
  if (!text) return ag_fail(em, AG_ERR_INVALID, "record: \"text\" must be a string");
  if (!get_num(j, "ts", 0, &r->ts_ms)) return ag_fail(em, AG_ERR_INVALID, "record: bad \"ts\"");
  if (cJSON_GetObjectItemCaseSensitive(j, "sim")) {
    if (!get_num(j, "sim", -NUM_MAX, &r->sim_ms)) return ag_fail(em, AG_ERR_INVALID, "record: bad \"sim\"");
    r->has_sim = 1;
  }
  r->kind = (ag_kind)k;
  r->sender = strdup(from);
  r->text = strdup(text);
  return r->sender && r->text ? AG_OK : AG_ERR_NOMEM;
}

static int decode_end(const cJSON *j, wire_record *r, ag_errmsg *em) {
  int64_t trigger, counter;
  if (!copy_id(r->agent, get_str(j, "agent"))) return ag_fail(em, AG_ERR_INVALID, "record: bad \"agent\"");
  if (!get_num(j, "trigger", 1, &trigger)) return ag_fail(em, AG_ERR_INVALID, "record: bad \"trigger\"");
  if (!get_num(j, "counter", 0, &counter)) return ag_fail(em, AG_ERR_INVALID, "record: bad \"counter\"");
  r->trigger = (uint64_t)trigger;
  r->counter = (uint64_t)counter;
  return AG_OK;
}

static int decode_event(const cJSON *j, wire_record *r, ag_errmsg *em) {
  const char *ev = get_str(j, "ev"), *error = get_str(j, "error");
  ev_kind k;
  if (!ev || ev_kind_parse(ev, &k) || (k != EV_LLM_ERROR && k != EV_MCP_ERROR))
    return ag_fail(em, AG_ERR_INVALID, "record: bad \"ev\"");
  if (!copy_id(r->origin, get_str(j, "from"))) return ag_fail(em, AG_ERR_INVALID, "record: bad \"from\"");
  if (!error) return ag_fail(em, AG_ERR_INVALID, "record: \"error\" must be a string");
  r->ev = (int)k;
  if (k == EV_MCP_ERROR) {
    const char *server = get_str(j, "server");
    if (!server || !wire_id_ok(server)) return ag_fail(em, AG_ERR_INVALID, "record: bad \"server\"");
    r->sender = strdup(server);
  } else {
    if (!copy_id(r->agent, get_str(j, "agent"))) return ag_fail(em, AG_ERR_INVALID, "record: bad \"agent\"");
    int64_t status, attempts;
    const char *etype = get_str(j, "etype");
    if ((r->has_info = cJSON_GetObjectItemCaseSensitive(j, "status") != NULL)) {
      if (!get_num(j, "status", 0, &status) || status > 999 || !get_num(j, "attempts", 0, &attempts) ||
          attempts > 1000000 || !etype)
        return ag_fail(em, AG_ERR_INVALID, "record: bad \"status\", \"attempts\" or \"etype\"");
      r->http_status = (long)status, r->attempts = (int)attempts;
      if (!(r->error_type = strdup(etype))) return AG_ERR_NOMEM;
    }
    r->sender = NULL;
  }
  r->text = strdup(error);
  return r->text && (k != EV_MCP_ERROR || r->sender) ? AG_OK : AG_ERR_NOMEM;
}

static int decode_chat(const cJSON *j, wire_record *r, ag_errmsg *em) {
  const char *title = get_str(j, "title");
  if (!copy_id(r->origin, get_str(j, "from"))) return ag_fail(em, AG_ERR_INVALID, "record: bad \"from\"");
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "deleted"))) {
    r->deleted = 1;
    return AG_OK;
  }
  if (!title || !title[0]) return ag_fail(em, AG_ERR_INVALID, "record: bad \"title\"");
  if (!get_num(j, "created", 0, &r->ts_ms)) return ag_fail(em, AG_ERR_INVALID, "record: bad \"created\"");
  return (r->text = strdup(title)) ? AG_OK : AG_ERR_NOMEM;
}

/* A memory step (see wire_record): every field checked, the insights copied to what a reader uses. */
static int decode_memory(const cJSON *j, wire_record *r, ag_errmsg *em) {
  const char *step = get_str(j, "step"), *text = get_str(j, "text");
  int64_t after, n;
  if (!copy_id(r->agent, get_str(j, "agent"))) return ag_fail(em, AG_ERR_INVALID, "record: bad \"agent\"");
  if (!copy_id(r->origin, get_str(j, "from"))) return ag_fail(em, AG_ERR_INVALID, "record: bad \"from\"");
  for (int k = WIRE_MEM_NOTE; step && k <= WIRE_MEM_RATED; k++)
    if (!strcmp(step, mem_names[k])) r->mem = (wire_mem)k;
  if (!r->mem) return ag_fail(em, AG_ERR_INVALID, "record: bad \"step\"");
  if (!get_num(j, "after", 0, &after)) return ag_fail(em, AG_ERR_INVALID, "record: bad \"after\"");
  r->after_seq = (uint64_t)after;
  if (r->mem == WIRE_MEM_SUMMARY) {
    if (!text) return ag_fail(em, AG_ERR_INVALID, "record: \"text\" must be a string");
    if (!get_num(j, "upto", 0, &n)) return ag_fail(em, AG_ERR_INVALID, "record: bad \"upto\"");
    r->upto = (uint64_t)n;
    return (r->text = strdup(text)) ? AG_OK : AG_ERR_NOMEM;
  }
  if (r->mem == WIRE_MEM_RATED)
    return array_text(cJSON_GetObjectItemCaseSensitive(j, "ratings"), ratings_copy, &r->text, em);
  if (!get_num(j, "at", -NUM_MAX, &r->ts_ms)) return ag_fail(em, AG_ERR_INVALID, "record: bad \"at\"");
  if (r->mem == WIRE_MEM_NOTE) {
    const cJSON *imp = cJSON_GetObjectItemCaseSensitive(j, "importance");
    if (!text) return ag_fail(em, AG_ERR_INVALID, "record: \"text\" must be a string");
    if (!cJSON_IsNumber(imp) || !(imp->valuedouble >= 1 && imp->valuedouble <= 10))
      return ag_fail(em, AG_ERR_INVALID, "record: \"importance\" must be a number from 1 to 10");
    r->importance = imp->valuedouble;
    return (r->text = strdup(text)) ? AG_OK : AG_ERR_NOMEM;
  }
  return array_text(cJSON_GetObjectItemCaseSensitive(j, "insights"), insights_copy, &r->text, em);
}

int wire_decode(const char *data, size_t len, wire_record *r, ag_errmsg *em) {
  memset(r, 0, sizeof *r);
  if (len > WIRE_MAX) return ag_fail(em, AG_ERR_TOO_BIG, "record: %zu bytes (at most %u)", len, WIRE_MAX);
  if (ag_json_find_nul(data, len) >= 0) return ag_fail(em, AG_ERR_INVALID, "record: a NUL in a string");
  cJSON *j = cJSON_ParseWithLength(data, len);
  if (!cJSON_IsObject(j)) {
    cJSON_Delete(j);
    return ag_fail(em, AG_ERR_INVALID, "record: not a JSON object");
  }
  const char *t = get_str(j, "t");
  int rc;
  if (!copy_id(r->chat, get_str(j, "chat"))) rc = ag_fail(em, AG_ERR_INVALID, "record: bad \"chat\"");
  else if (t && !strcmp(t, "msg")) r->type = WIRE_MSG, rc = decode_msg(j, r, em);
  else if (t && !strcmp(t, "end")) r->type = WIRE_TURN_END, rc = decode_end(j, r, em);
  else if (t && !strcmp(t, "evt")) r->type = WIRE_EVENT, rc = decode_event(j, r, em);
  else if (t && !strcmp(t, "chat")) r->type = WIRE_CHAT, rc = decode_chat(j, r, em);
  else if (t && !strcmp(t, "mem")) r->type = WIRE_MEMORY, rc = decode_memory(j, r, em);
  else rc = ag_fail(em, AG_ERR_INVALID, "record: unknown type");
  cJSON_Delete(j);
  if (rc) wire_record_free(r);
  return rc;
}

const char *wire_subject_token(wire_type t) {
  switch (t) {
  case WIRE_MSG: return "msg";
  case WIRE_TURN_END: return "turn";
  case WIRE_EVENT: return "evt";
  case WIRE_CHAT: return "rec";
  case WIRE_MEMORY: return "mem";
  }
  return "";
}

int wire_subject_check(const wire_record *r, const char *prefix, const char *subject, ag_errmsg *em) {
  size_t np = strlen(prefix), nc = strlen(r->chat);
  const char *tok = wire_subject_token(r->type);
  if (!subject || strncmp(subject, prefix, np) || subject[np] != '.')
    return ag_fail(em, AG_ERR_INVALID, "record on subject %s: not the world's", subject ? subject : "(none)");
  const char *chat = subject + np + 1;
  if (strncmp(chat, r->chat, nc) || chat[nc] != '.')
    return ag_fail(em, AG_ERR_INVALID, "record on subject %s names chat %s", subject, r->chat);
  if (strcmp(chat + nc + 1, tok))
    return ag_fail(em, AG_ERR_INVALID, "record on subject %s is a .%s record", subject, tok);
  return AG_OK;
}

void wire_record_free(wire_record *r) {
  free(r->sender);
  free(r->text);
  free(r->error_type);
  r->sender = r->text = r->error_type = NULL;
}
