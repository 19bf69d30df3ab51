/* The stream's records as JSON (see wire.h). Decoding is strict: every field has its type, ids are
 * subject-safe, numbers are whole and in range, and the text has no NUL. */
#include "cluster/wire.h"

#include "common/jsonnum.h"

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

/* The numbers' ranges wire_decode accepts, so that no number is sent that no reader would take. */
static int encodable(const wire_record *r) {
  if (r->type == WIRE_MSG)
    return r->sender && r->text && r->ts_ms >= 0 && r->ts_ms <= NUM_MAX &&
           (!r->has_sim || (r->sim_ms >= -NUM_MAX && r->sim_ms <= NUM_MAX));
  return r->trigger >= 1 && r->trigger <= (uint64_t)NUM_MAX && r->counter <= (uint64_t)NUM_MAX;
}

int wire_encode(const wire_record *r, char **out, size_t *len) {
  if (!encodable(r)) return AG_ERR_INVALID;
  cJSON *j = cJSON_CreateObject();
  int ok = j && cJSON_AddStringToObject(j, "t", r->type == WIRE_MSG ? "msg" : "end") &&
           cJSON_AddStringToObject(j, "chat", r->chat);
  if (ok && r->type == WIRE_MSG) {
    ok = cJSON_AddStringToObject(j, "from", r->sender) && cJSON_AddStringToObject(j, "kind", ag_kind_name(r->kind)) &&
         cJSON_AddStringToObject(j, "text", r->text) && ag_json_add_int(j, "ts", r->ts_ms) &&
         (!r->has_sim || ag_json_add_int(j, "sim", r->sim_ms));
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
  else rc = ag_fail(em, AG_ERR_INVALID, "record: unknown type");
  cJSON_Delete(j);
  if (rc) wire_record_free(r);
  return rc;
}

void wire_record_free(wire_record *r) {
  free(r->sender);
  free(r->text);
  r->sender = r->text = NULL;
}
