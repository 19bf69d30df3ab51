/* Following a chat whose messages come from elsewhere, in a fixed order (a world spread over NATS,
 * docs/distributed.md), and taking up chat records kept elsewhere (titles, new chats). The chat becomes current under the id it already has, created when new, and
 * its stored memories and agent states are dropped because the delivery from its first message
 * rebuilds them. Its messages are then saved at the seqs they come with (a message delivered again
 * overwrites the same record): the copy is idempotent by seq. */
#include "chat/session_int.h"

#include "chat/title.h"
#include "common/clock.h"

#include <stdio.h>
#include <string.h>

typedef struct follow_op {
  chat_session *cs;
  const char *id;
  int64_t now;
  uint64_t count;
  int64_t created;
  char title[STORE_TITLE_LEN + 1];
} follow_op;

static int follow_txn(store_txn *t, void *arg) {
  follow_op *op = arg;
  chat_session *cs = op->cs;
  store_chat c;
  int rc = store_chat_get(t, op->id, &c);
  if (rc == AG_ERR_NOT_FOUND) {
    store_chat nc = {.id = op->id, .world_id = world_id(cs->w), .title = CHAT_TITLE_DEFAULT, .created_at_ms = op->now,
                     .updated_at_ms = op->now};
    op->count = 0, op->created = op->now;
    snprintf(op->title, sizeof op->title, "%s", CHAT_TITLE_DEFAULT);
    rc = store_chat_put(t, &nc);
  } else if (rc == AG_OK) {
    op->count = c.message_count, op->created = c.created_at_ms;
    snprintf(op->title, sizeof op->title, "%s", c.title);
    store_chat_free(&c);
  }
  if (!rc) rc = store_memory_clear(t, op->id, NULL);
  if (!rc) rc = store_agent_state_clear(t, op->id, NULL);
  if (!rc) rc = store_context_clear(t, op->id, NULL);
  if (!rc) rc = store_world_set_current(t, world_id(cs->w), op->id);
  return rc;
}

int chat_session_follow(chat_session *cs, const char *chat_id, ag_errmsg *em) {
  if (strlen(chat_id) >= STORE_ID_MAX) return ag_fail(em, AG_ERR_INVALID, "chat id '%s' is too long", chat_id);
  chat_session__save_last(cs);
  store_lock *lock = NULL;
  long pid = 0;
  int rc = cs->lock && !strcmp(store_lock_chat(cs->lock), chat_id) ? AG_OK
                                                                    : store_chat_lock(cs->st, chat_id, &lock, &pid, em);
  if (rc == AG_ERR_STATE) return ag_fail(em, rc, "chat '%s' is in use by another agora process (pid %ld)", chat_id, pid);
  if (rc) return rc;
  follow_op op = {cs, chat_id, chat_session__now(cs), 0, 0, ""};
  if ((rc = store_write(cs->st, follow_txn, &op, em)) || (rc = chat_session__set_title(cs, op.title))) {
    store_chat_unlock(lock);
    return rc;
  }
  if (lock) {
    store_chat_unlock(cs->lock);
    cs->lock = lock;
  }
  snprintf(cs->current, sizeof cs->current, "%s", chat_id);
  cs->has_current = 1;
  cs->count = op.count;
  cs->created_at = op.created;
  cs->live = 1;
  cs->seqs_fixed = 1;
  cs->followed_upto = op.count;
  if ((rc = chat_session__sync_tracks(cs))) return rc;
  chat_session__mark_saved(cs, 0);
  return AG_OK;
}

typedef struct adopt_op {
  chat_session *cs;
  const char *id, *title;
  int64_t created, now;
  int changed;
} adopt_op;

static int adopt_txn(store_txn *t, void *arg) {
  adopt_op *op = arg;
  store_chat c;
  int rc = store_chat_get(t, op->id, &c);
  if (rc == AG_ERR_NOT_FOUND) {
    store_chat nc = {.id = op->id, .world_id = world_id(op->cs->w), .title = op->title, .created_at_ms = op->created,
                     .updated_at_ms = op->created};
    op->changed = 1;
    return store_chat_put(t, &nc);
  }
  if (rc) return rc;
  /* A title never goes back to the default this way: every process names a chat from the same first
   * human message, and a record made before that message must not undo the name. */
  if (strcmp(c.world_id, world_id(op->cs->w)) || !strcmp(c.title, op->title) || !strcmp(op->title, CHAT_TITLE_DEFAULT)) {
    store_chat_free(&c);
    return AG_OK;
  }
  store_chat nc = {.id = c.id, .world_id = c.world_id, .title = op->title, .message_count = c.message_count,
                   .created_at_ms = c.created_at_ms, .updated_at_ms = op->now, .has_sim = c.has_sim, .sim_ms = c.sim_ms};
  op->changed = 1;
  rc = store_chat_put(t, &nc);
  store_chat_free(&c);
  return rc;
}

int chat_session_adopt(chat_session *cs, const char *chat_id, const char *title, int64_t created_ms, int *changed,
                       ag_errmsg *em) {
  *changed = 0;
  if (strlen(chat_id) >= STORE_ID_MAX) return ag_fail(em, AG_ERR_INVALID, "chat id '%s' is too long", chat_id);
  char t[STORE_TITLE_LEN + 1];
  snprintf(t, sizeof t, "%s", title);
  adopt_op op = {cs, chat_id, t, created_ms, chat_session__now(cs), 0};
  int rc = store_write(cs->st, adopt_txn, &op, em);
  if (rc || !op.changed || !cs->has_current || strcmp(cs->current, chat_id)) return rc;
  if ((rc = chat_session__set_title(cs, t))) return rc;
  *changed = 1;
  world_emit(cs->w, &(world_event){EV_TITLE_UPDATED, .u.title = {cs->title}});
  return AG_OK;
}
