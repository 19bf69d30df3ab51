/* Fuzzes the world-file loader (world/world_file.c): any bytes load or fail with a message naming
 * the file; a world that loads serialises to settings that load again (what the database and
 * snapshots keep must be readable later). */
#include "fuzz_util.h"

#include "world/world_file.h"

#include <cjson/cJSON.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  world_spec spec;
  ag_errmsg em = {""};
  int rc = world_spec_parse(text, size, "w.json", &spec, &em);
  if (rc == AG_OK) {
    cJSON *j = world_spec_to_json(&spec);
    world_spec again;
    ag_errmsg em2 = {""};
    if (!j) abort();
    if (world_spec_from_json(j, "again", &again, &em2) != AG_OK) abort();
    if (again.n_agents != spec.n_agents || strcmp(again.id, spec.id)) abort();
    world_spec_free(&again);
    cJSON_Delete(j);
    world_spec_free(&spec);
  } else if (rc == AG_ERR_INVALID || rc == AG_ERR_TOO_BIG) {
    if (strncmp(em.text, "w.json", 6) != 0) abort(); /* the error names the file */
  } else if (rc != AG_ERR_NOMEM) {
    abort();
  }
  free(text);
  return 0;
}
