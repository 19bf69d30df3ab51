/* Fuzzes snapshot validation and import (chat/snapshot.c) into a real LMDB in a temporary directory:
 * a snapshot that validates imports, exports again and that export validates too; one that does not
 * changes nothing. This harness found a context "version": 1e300 cast to uint64_t (issue 17). */
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
