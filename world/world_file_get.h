/* The strict readers every part of the world file uses (world_file.c, world_time.c, llm_spec.c,
 * mcp_spec.c and any new section): each fails with "<label>: <path>.<key>: <reason>" in em and
 * AG_ERR_INVALID, and leaves *out alone when the key is absent. */
#ifndef AG_WORLD_FILE_GET_H
#define AG_WORLD_FILE_GET_H

#include <cjson/cJSON.h>

#include "common/error.h"

/* 1 when name is one of the NULL-terminated list. */
int world_file_in_list(const char *name, const char *const *list);
/* Rejects unknown and duplicate keys of obj. extra is one more allowed key (or NULL); allowed NULL:
 * any key, duplicates only. "_comment" is allowed everywhere. */
int world_file_check_keys(const cJSON *obj, const char *const *allowed, const char *extra, const char *label,
                          const char *path, ag_errmsg *em);
/* A string (or null when nullable: *out becomes NULL). *out is owned by the caller and replaced. */
int world_file_get_string(const cJSON *obj, const char *key, int nullable, char **out, const char *label,
                          const char *path, ag_errmsg *em);
/* An integer in [min, max]. */
int world_file_get_int(const cJSON *obj, const char *key, long min, long max, long *out, const char *label,
                       const char *path, ag_errmsg *em);
/* true or false, as 1 or 0. */
int world_file_get_bool(const cJSON *obj, const char *key, int *out, const char *label, const char *path,
                        ag_errmsg *em);

#endif
