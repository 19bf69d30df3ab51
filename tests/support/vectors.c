/* Loading vectors.json for the tests (see vectors.h). */
#include "support/vectors.h"

#include "support/unit.h"

#include <stdlib.h>

cJSON *vectors_load(const char *name, int min, const cJSON **section) {
  char *text = unit_read_file(unit_src_path("tests/data/vectors.json"));
  cJSON *root = text ? cJSON_Parse(text) : NULL;
  free(text);
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, name);
  if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) < min) {
    unit_fail_(__FILE__, __LINE__, "tests/data/vectors.json: no \"%s\" section with %d entries", name, min);
    cJSON_Delete(root);
    return NULL;
  }
  *section = s;
  return root;
}
