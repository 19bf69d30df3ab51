/* A JSON object's fields for tests, read without a crash when the object or the field is missing or of
 * another type (cJSON's own getters return the item, not its value). */
#ifndef AG_TEST_TJSON_H
#define AG_TEST_TJSON_H

#include <cjson/cJSON.h>

/* The string field key of o (borrowed), or NULL. */
const char *tjson_str(const cJSON *o, const char *key);
/* The number field key of o, or -1. */
double tjson_num(const cJSON *o, const char *key);

#endif
