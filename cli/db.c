/* Shared plumbing of the storage commands (see db.h). */
#include "cli/db.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cli_store_open_mode(const char *db, int read_only, store **out, ag_errmsg *em) {
  char dir[4096];
  *out = NULL;
  if (!db) {
    if (store_default_dir(dir, sizeof dir))
      return ag_fail(em, AG_ERR_INVALID, "no data directory: pass --db DIR or set AGORA_HOME");
    db = dir;
  }
  return read_only ? store_open_read(db, out, em) : store_open(db, out, em);
}

int cli_store_open(const char *db, store **out, ag_errmsg *em) { return cli_store_open_mode(db, 0, out, em); }

int cli_store_open_read(const char *db, store **out, ag_errmsg *em) { return cli_store_open_mode(db, 1, out, em); }

typedef struct world_get_ctx {
  const char *id;
  char *settings;
  ag_errmsg *em;
} world_get_ctx;

static int world_get_txn(store_txn *t, void *arg) {
  world_get_ctx *c = arg;
  store_world w;
  int rc = store_world_get(t, c->id, &w);
  if (rc == AG_ERR_NOT_FOUND) return ag_fail(c->em, rc, "no world '%s' in the database", c->id);
  if (rc) return rc;
  c->settings = strdup(w.settings_json);
  store_world_free(&w);
  return c->settings ? AG_OK : AG_ERR_NOMEM;
}

int cli_world_open(store *st, const char *world_id, cli_world *out, ag_errmsg *em) {
  memset(out, 0, sizeof *out);
  world_get_ctx c = {world_id, NULL, em};
  world_spec spec;
  memset(&spec, 0, sizeof spec);
  int rc = store_read(st, world_get_txn, &c, em);
  if (rc) return rc;
  char label[128];
  snprintf(label, sizeof label, "world '%s' (stored settings)", world_id);
  if ((rc = world_spec_parse(c.settings, strlen(c.settings), label, &spec, em))) goto fail;
  if (!(out->base = event_base_new())) {
    rc = AG_ERR_NOMEM;
    goto fail;
  }
  if ((rc = world_new(out->base, &spec, &out->w, em))) goto fail;
  if ((rc = chat_session_open(st, out->w, &out->cs, em))) goto fail;
  world_spec_free(&spec);
  free(c.settings);
  return AG_OK;
fail:
  world_spec_free(&spec);
  free(c.settings);
  cli_world_close(out);
  return rc;
}

void cli_world_settle(cli_world *cw) {
  if (cw->w) world_run_until_quiet(cw->w);
}

void cli_world_close(cli_world *cw) {
  chat_session_free(cw->cs);
  world_free(cw->w);
  if (cw->base) event_base_free(cw->base);
  memset(cw, 0, sizeof *cw);
}

typedef struct chat_world_ctx {
  const char *chat;
  char *out;
  ag_errmsg *em;
} chat_world_ctx;

static int chat_world_txn(store_txn *t, void *arg) {
  chat_world_ctx *c = arg;
  store_chat ch;
  int rc = store_chat_get(t, c->chat, &ch);
  if (rc == AG_ERR_NOT_FOUND) return ag_fail(c->em, rc, "no chat '%s' in the database", c->chat);
  if (rc) return rc;
  snprintf(c->out, STORE_ID_MAX, "%s", ch.world_id);
  store_chat_free(&ch);
  return AG_OK;
}

int cli_chat_world(store *st, const char *chat_id, char world_id[STORE_ID_MAX], ag_errmsg *em) {
  chat_world_ctx c = {chat_id, world_id, em};
  return store_read(st, chat_world_txn, &c, em);
}

typedef struct pick_ctx {
  size_t n;
  char first[STORE_ID_MAX];
} pick_ctx;

static int pick_cb(const store_world *w, void *arg) {
  pick_ctx *p = arg;
  if (p->n++ == 0) snprintf(p->first, sizeof p->first, "%s", w->id);
  return 0;
}

static int pick_txn(store_txn *t, void *arg) { return store_world_list(t, pick_cb, arg); }

int cli_pick_world(store *st, const char *world_id, char out[STORE_ID_MAX], ag_errmsg *em) {
  if (world_id) {
    snprintf(out, STORE_ID_MAX, "%s", world_id);
    return AG_OK;
  }
  pick_ctx p = {0, ""};
  int rc = store_read(st, pick_txn, &p, em);
  if (rc) return rc;
  if (p.n == 0) return ag_fail(em, AG_ERR_INVALID, "the database holds no world yet (agora run WORLD.json first)");
  if (p.n > 1) return ag_fail(em, AG_ERR_INVALID, "the database holds %zu worlds: name one with --world ID", p.n);
  snprintf(out, STORE_ID_MAX, "%s", p.first);
  return AG_OK;
}
