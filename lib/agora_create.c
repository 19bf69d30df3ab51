/* libagora: worlds created from JSON someone else wrote (API version 10), as agora serve's POST
 * /api/worlds takes an HTTP body: the document is checked by the world file's own readers and stored as
 * a new world, never opened as a file would be, so that it starts no program and sends no key anywhere
 * the program did not choose; opening it (AGORA_UNTRUSTED) then goes through the stored world's rules. */
#include "lib/agora_int.h"

#include "chat/archive.h"
#include "common/error.h"
#include "runtime/db.h"
#include "runtime/world_edit.h"
#include "world/world_file.h"

#include <stdio.h>
#include <stdlib.h>

/* json checked as a world file ("world: agents[0].provider: ...") and stored in st as a new world, its
 * id into id; fn names the call in errors. */
static int create_in(store *st, const char *json, const char *fn, char id[AGORA_ID_MAX], ag_errmsg *em) {
  cJSON *doc = NULL;
  world_spec spec;
  int rc = agora__json_parse(json, RT_EDIT_MAX, fn, "json", "world", &doc, em);
  if (!rc && (rc = world_spec_from_json(doc, "world", &spec, em)) == AG_OK) {
    rc = chat_world_create(st, &spec, em);
    if (!rc) snprintf(id, AGORA_ID_MAX, "%s", spec.id);
    world_spec_free(&spec);
  }
  cJSON_Delete(doc);
  return rc;
}

int agora__world_create(const char *json, const char *db_dir, store *st, char id[AGORA_ID_MAX], ag_errmsg *em) {
  store *own = NULL;
  int rc = st ? AG_OK : rt_store_open(db_dir, &own, em); /* closed again before the runtime opens it */
  if (!rc) rc = create_in(st ? st : own, json, "agora_world_open", id, em);
  chat_store_close(own);
  return rc;
}

int agora_db_world_create(agora_db *db, const char *json, char id[AGORA_ID_MAX]) {
  ag_errmsg em = {""};
  char made[AGORA_ID_MAX];
  if (!db) return agora__fail(ag_fail(&em, AG_ERR_INVALID, "agora_db_world_create: db is NULL"), &em);
  int rc = create_in(db->st, json, "agora_db_world_create", made, &em);
  if (rc) return agora__fail(rc, &em);
  if (id) snprintf(id, AGORA_ID_MAX, "%s", made);
  return AG_OK;
}
