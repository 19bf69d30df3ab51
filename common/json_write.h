/* JSON text written straight into an ag_buf, byte for byte as cJSON_PrintUnformatted writes the same
 * values, without building a tree: for the hot writers (the stored thread's steps, libagora's event
 * lines), where a tree's allocations and cJSON's number printing (a "%1.15g" and a sscanf per number)
 * cost more than the rest of the work. */
#ifndef AG_JSON_WRITE_H
#define AG_JSON_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* How ag_json_put_string treats bytes of 0x80 and above. */
typedef enum ag_json_utf8 {
  AG_JSON_UTF8_RAW,   /* copied as they are, valid UTF-8 or not (what cJSON does) */
  AG_JSON_UTF8_CHECK, /* AG_ERR_INVALID when s is not valid UTF-8 (the caller repairs it another way) */
} ag_json_utf8;

/* Appends s as a JSON string, escaped as cJSON escapes: \" \\ \b \f \n \r \t, the other bytes below
 * 0x20 as \u00xx, everything else (0x7F and non-ASCII included) as it is. AG_OK, AG_ERR_TOO_BIG past
 * b's cap, AG_ERR_NOMEM, or AG_ERR_INVALID (AG_JSON_UTF8_CHECK). On an error b holds part of the string:
 * the caller cuts it back. */
int ag_json_put_string(ag_buf *b, const char *s, ag_json_utf8 utf8);

/* The members of one JSON object, written in order into b (the braces are the caller's). Each add
 * writes a comma first unless it is the first member; the first error sticks in rc and later adds do
 * nothing. Keys are written escaped. */
typedef struct ag_json_members {
  ag_buf *b;
  size_t n;  /* members written */
  int rc;    /* AG_OK, or the first error */
} ag_json_members;

/* A string member; v NULL writes nothing, as cJSON_AddStringToObject adds nothing for NULL. */
void ag_json_member_string(ag_json_members *m, const char *key, const char *v);
/* A whole number, in its decimal digits: what cJSON prints for ag_json_add_int's items
 * (common/jsonnum.h). */
void ag_json_member_int(ag_json_members *m, const char *key, int64_t v);
void ag_json_member_bool(ag_json_members *m, const char *key, int v);
void ag_json_member_null(ag_json_members *m, const char *key);
/* A member whose value is the JSON text json (written as it is: the caller vouches for it). */
void ag_json_member_raw(ag_json_members *m, const char *key, const char *json);

#endif
