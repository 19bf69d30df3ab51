/* Versioned agent context and its reduction (see context.h). */
#include "agents/context.h"

#include "common/clock.h"
#include "common/jsonnum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int context_init(context_state *st) {
  st->version = 0;
  st->updated_at_ms = 0;
  st->data = cJSON_CreateObject();
  return st->data ? AG_OK : AG_ERR_NOMEM;
}

void context_free(context_state *st) {
  cJSON_Delete(st->data);
  st->data = NULL;
}

int context_copy(context_state *dst, const context_state *src) {
  dst->version = src->version;
  dst->updated_at_ms = src->updated_at_ms;
  dst->data = cJSON_Duplicate(src->data, 1);
  return dst->data ? AG_OK : AG_ERR_NOMEM;
}

static int array_has(const cJSON *arr, const cJSON *item) {
  const cJSON *x;
  cJSON_ArrayForEach(x, arr) if (cJSON_Compare(x, item, 1)) return 1;
  return 0;
}

int context_apply(context_state *st, const cJSON *args, int64_t at_ms) {
  if (!cJSON_IsObject(args)) return AG_ERR_INVALID;
  /* Work on a copy so that a failure leaves the state as it was. */
  cJSON *data = cJSON_Duplicate(st->data, 1);
  if (!data) return AG_ERR_NOMEM;
  const cJSON *a;
  cJSON_ArrayForEach(a, args) {
    if (!strcmp(a->string, "message") || !strcmp(a->string, "drop")) continue;
    cJSON *cur = cJSON_GetObjectItemCaseSensitive(data, a->string);
    if (cJSON_IsArray(a)) {
      if (!cJSON_IsArray(cur)) {
        cJSON_DeleteItemFromObjectCaseSensitive(data, a->string);
        cur = cJSON_AddArrayToObject(data, a->string);
      }
      const cJSON *item;
      cJSON_ArrayForEach(item, a) if (!array_has(cur, item)) cJSON_AddItemToArray(cur, cJSON_Duplicate(item, 1));
    } else if (cur) {
      cJSON_ReplaceItemInObjectCaseSensitive(data, a->string, cJSON_Duplicate(a, 1)); /* keeps key order */
    } else {
      cJSON_AddItemToObject(data, a->string, cJSON_Duplicate(a, 1));
    }
  }
  const cJSON *drop = cJSON_GetObjectItemCaseSensitive(args, "drop");
  if (cJSON_IsObject(drop)) {
    const cJSON *d;
    cJSON_ArrayForEach(d, drop) {
      cJSON *cur = cJSON_GetObjectItemCaseSensitive(data, d->string);
      if (!cJSON_IsArray(cur) || !cJSON_IsArray(d)) continue;
      const cJSON *gone;
      cJSON_ArrayForEach(gone, d) {
        for (int i = cJSON_GetArraySize(cur) - 1; i >= 0; i--)
          if (cJSON_Compare(cJSON_GetArrayItem(cur, i), gone, 1)) cJSON_DeleteItemFromArray(cur, i);
      }
    }
  }
  cJSON_Delete(st->data);
  st->data = data;
  st->version++;
  st->updated_at_ms = at_ms;
  return AG_OK;
}

cJSON *context_to_json(const context_state *st) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  ag_json_add_int(j, "version", (int64_t)st->version);
  if (st->version) {
    char ts[40];
    ag_time_format(st->updated_at_ms, ts, sizeof ts);
    cJSON_AddStringToObject(j, "updated_at", ts);
  } else {
    cJSON_AddNullToObject(j, "updated_at");
  }
  cJSON_AddItemToObject(j, "data", st->data ? cJSON_Duplicate(st->data, 1) : cJSON_CreateObject());
  return j;
}

int context_from_json(const cJSON *j, context_state *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "version");
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "updated_at");
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "data");
  int64_t version = 0;
  if (ag_json_int(v, 0, AG_JSON_INT_MAX, &version) || !cJSON_IsObject(d)) return AG_ERR_INVALID;
  if (!(cJSON_IsNull(u) || cJSON_IsString(u))) return AG_ERR_INVALID;
  int64_t ms = 0;
  if (cJSON_IsString(u) && (ms = ag_time_parse(u->valuestring)) < 0) return AG_ERR_INVALID;
  out->version = (uint64_t)version;
  out->updated_at_ms = ms;
  out->data = cJSON_Duplicate(d, 1);
  return out->data ? AG_OK : AG_ERR_NOMEM;
}
