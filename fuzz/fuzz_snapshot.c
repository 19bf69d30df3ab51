/* Fuzzes snapshot validation and import (chat/snapshot.c) into a real LMDB in a temporary directory:
 * a snapshot that validates imports, exports again and that export validates too, and imports again to
 * export the same text (but for the chat's new id: numbers exact, issue 17); one that does not changes
 * nothing. This harness found a context "version": 1e300 cast to uint64_t (issue 17). */
#include "fuzz_util.h"

#include "chat/snapshot.h"
#include "storage/store.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <unistd.h>

static store *db;
static char dir[] = "/tmp/agora-fuzz-snap-XXXXXX";

static void cleanup(void) {
  store_close(db);
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) {
  }
}

static int drop_chat(store_txn *t, void *arg) { return store_chat_delete(t, arg); }

/* The export's text printed with the chat's id as "x" (caller frees). */
static char *without_id(cJSON *snap) {
  cJSON *chat = cJSON_GetObjectItemCaseSensitive(snap, "chat");
  if (!cJSON_ReplaceItemInObjectCaseSensitive(chat, "id", cJSON_CreateString("x"))) abort();
  char *s = cJSON_Print(snap);
  if (!s) abort();
  return s;
}

/* export -> import -> export gives the same text: nothing printed inexactly (issue 17: integers from
 * 10^15 lost their 16th digit, 2^53 + 1 read as 2^53). first is the export, text its printed form. */
static void export_again(const char *text, cJSON *first) {
  ag_errmsg em = {""};
  char id[STORE_ID_MAX];
  cJSON *snap = cJSON_Parse(text), *out = NULL;
  if (!snap || chat_snapshot_import(db, snap, "again.json", id, &em) != AG_OK) abort();
  if (chat_snapshot_export(db, id, &out, &em) != AG_OK) abort();
  char *a = without_id(first), *b = without_id(out);
  if (strcmp(a, b)) abort();
  free(a), free(b);
  cJSON_Delete(out);
  cJSON_Delete(snap);
  if (store_write(db, drop_chat, id, &em) != AG_OK) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!db) {
    ag_errmsg em;
    store_options opt = {0};
    opt.sync = STORE_SYNC_NONE; /* a scratch database: speed over durability */
    if (!mkdtemp(dir) || store_open_ex(dir, &opt, &db, &em)) abort();
    atexit(cleanup);
  }
  cJSON *snap = cJSON_ParseWithLength((const char *)data, size);
  if (!snap) return 0;
  ag_errmsg em = {""};
  char id[STORE_ID_MAX];
  int rc = chat_snapshot_import(db, snap, "s.json", id, &em);
  if (rc == AG_OK) {
    cJSON *out = NULL;
    if (chat_snapshot_export(db, id, &out, &em) != AG_OK) abort();
    if (chat_snapshot_validate(out, "export", &em) != AG_OK) abort();
    char *text = cJSON_Print(out);
    if (!text) abort();
    if (size <= 65536) export_again(text, out); /* fuzz/run.sh's -max_len; not for its large input's timing */
    free(text);
    cJSON_Delete(out);
    /* Keep the scratch database small. */
    if (store_write(db, drop_chat, id, &em) != AG_OK) abort();
  } else if (rc == AG_ERR_INVALID || rc == AG_ERR_VERSION) {
    if (strncmp(em.text, "s.json", 6) && strncmp(em.text, "world.name", 10)) abort();
  } else if (rc != AG_ERR_NOMEM && rc != AG_ERR_TOO_BIG) {
    abort();
  }
  cJSON_Delete(snap);
  return 0;
}
