/* Shared plumbing of the storage commands (see db.h). */
#include "runtime/db.h"
#include "chat/id_prefix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mode: 0 read-write, 1 read-only, 2 read-write with background sync. */
static int rt_store_open_mode(const char *db, int mode, store **out, ag_errmsg *em) {
  char dir[4096];
  *out = NULL;
  if (!db) {
    if (chat_store_default_dir(dir, sizeof dir))
      return ag_fail(em, AG_ERR_INVALID, "no data directory: pass --db DIR or set AGORA_HOME");
    db = dir;
  }
  return mode == 1 ? chat_store_open_read(db, out, em)
         : mode == 2 ? chat_store_open_background(db, out, em) : chat_store_open(db, out, em);
}

int rt_store_open_background(const char *db, store **out, ag_errmsg *em) { return rt_store_open_mode(db, 2, out, em); }

int rt_store_open(const char *db, store **out, ag_errmsg *em) { return rt_store_open_mode(db, 0, out, em); }

int rt_store_open_read(const char *db, store **out, ag_errmsg *em) { return rt_store_open_mode(db, 1, out, em); }

int rt_chat_world(store *st, const char *chat_id, char world_id[CHAT_ID_MAX], ag_errmsg *em) {
  chat_info c;
  char id[CHAT_ID_MAX];
  int rc = chat_id_resolve(st, chat_id, id, em); /* an id or a unique prefix */
  if (!rc) rc = chat_info_get(st, id, &c, em);
  if (!rc) snprintf(world_id, CHAT_ID_MAX, "%s", c.world_id);
  return rc;
}

typedef struct find_world {
  const char *want;
  char *out;
  int by_name; /* matches by display name (an id match wins) */
} find_world;

static int find_world_row(const chat_world_info *w, void *arg) {
  find_world *fw = arg;
  if (!strcmp(w->id, fw->want)) {
    snprintf(fw->out, CHAT_ID_MAX, "%s", w->id);
    fw->by_name = 0;
    return CHAT_STOP;
  }
  if (!fw->out[0] && !strcmp(w->name, fw->want)) {
    snprintf(fw->out, CHAT_ID_MAX, "%s", w->id);
    fw->by_name = 1;
  }
  return 0;
}

int rt_pick_world(store *st, const char *world_id, char out[CHAT_ID_MAX], ag_errmsg *em) {
  if (world_id) {
    /* By id, or by display name (issue 15 item 9). */
    out[0] = '\0';
    find_world fw = {world_id, out, 0};
    int rc = chat_worlds_each(st, find_world_row, &fw, em);
    if (rc) return rc;
    if (!out[0]) return ag_fail(em, AG_ERR_INVALID, "no world '%s' in the database (see agora worlds list)", world_id);
    return AG_OK;
  }
  size_t n;
  char first[CHAT_ID_MAX];
  int rc = chat_worlds_count(st, &n, first, em);
  if (rc) return rc;
  if (n == 0) return ag_fail(em, AG_ERR_INVALID, "the database holds no world yet (agora run WORLD.json first)");
  if (n > 1) return ag_fail(em, AG_ERR_INVALID, "the database holds %zu worlds: name one with --world ID", n);
  snprintf(out, CHAT_ID_MAX, "%s", first);
  return AG_OK;
}
