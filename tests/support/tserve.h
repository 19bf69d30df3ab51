/* Helpers for the end-to-end tests of agora serve (test_serve, test_serve_stream): serve started on a
 * world file in the suite's scratch directory, JSON fields read, and a reply's status and error code
 * expected. */
#ifndef AG_TEST_TSERVE_H
#define AG_TEST_TSERVE_H

#include <cjson/cJSON.h>

#include "support/serve_client.h"
#include "support/tjson.h"

/* The suite's scratch directory: a test file hands it to suite_main (.tmp = &tserve_tmp). */
extern char *tserve_tmp;

/* A world of one script agent "a" that counts (six replies). */
extern const char tserve_counter_world[];

/* A file in the scratch directory (name unique per test); returns its path (static buffer). */
const char *tserve_scratch(const char *name, const char *text);
/* Starts serve on world file text with database db-name (in the scratch directory), with env
 * ("NAME=value", NULL-terminated, or NULL); 0, or non-zero (the test failed) when it did not start. */
int tserve_start(const char *name, const char *world, serve_proc *sp, const char *const *env);

/* Expects status and, for an error (code not NULL), the JSON error shape with code. */
void tserve_expect(const serve_proc *sp, const char *method, const char *path, const char *body, long want,
                   const char *code);

#endif
