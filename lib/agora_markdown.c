/* libagora's Markdown documents (API version 9): a chat's snapshot and a world's settings as a person
 * reads them (`agora chats export --format md`, `agora worlds export --format md`), from the JSON the
 * database calls hand out; nothing is opened. */
#include "lib/agora_int.h"

#include "chat/markdown.h"
#include "chat/snapshot.h"
#include "common/jsonnum.h"

#include <stdlib.h>

_Static_assert(AGORA_SNAPSHOT_MAX == SNAPSHOT_MAX, "agora_db.h's cap is the snapshot reader's");

/* json parsed (at most max bytes), then made into Markdown by make; fn names the call. */
static int markdown_of(const char *json, size_t max, const char *fn, char *(*make)(const cJSON *), char **md) {
  ag_errmsg em = {""};
  cJSON *j = NULL;
  int rc = md ? agora__json_parse(json, max, fn, "json", "document", &j, &em)
              : ag_fail(&em, AG_ERR_INVALID, "%s: md is NULL", fn);
  if (md) *md = NULL;
  if (!rc && ag_json_exact_ints(j)) rc = ag_fail(&em, AG_ERR_NOMEM, "out of memory");
  if (!rc && !(*md = make(j))) rc = ag_fail(&em, AG_ERR_NOMEM, "out of memory");
  cJSON_Delete(j);
  return rc ? agora__fail(rc, &em) : AG_OK;
}

int agora_snapshot_markdown(const char *snapshot_json, char **md) {
  return markdown_of(snapshot_json, AGORA_SNAPSHOT_MAX, "agora_snapshot_markdown", markdown_chat, md);
}

int agora_world_markdown(const char *world_json, char **md) {
  return markdown_of(world_json, AGORA_SNAPSHOT_MAX, "agora_world_markdown", markdown_world, md);
}
