/* The worked examples of tests/data/vectors.json (shown in docs/behaviour.md), loaded for the tests
 * that run them as data. */
#ifndef AG_TEST_VECTORS_H
#define AG_TEST_VECTORS_H

#include <cjson/cJSON.h>

/* The whole document (caller frees with cJSON_Delete), and in *section the array named name with at
 * least min entries. Fails the running test and returns NULL when the file or section is missing. */
cJSON *vectors_load(const char *name, int min, const cJSON **section);

#endif
