/* JSON text written straight into a buffer, as cJSON prints it (see json_write.h). */
#include "common/json_write.h"

#include "common/error.h"
#include "common/utf8.h"

#include <string.h>

/* The escape of a byte that needs one (len 2 or 6), written to esc. */
static size_t escape(unsigned char c, char esc[6]) {
  static const char hex[] = "0123456789abcdef";
  esc[0] = '\\';
  switch (c) {
  case '\b': esc[1] = 'b'; return 2;
  case '\f': esc[1] = 'f'; return 2;
  case '\n': esc[1] = 'n'; return 2;
  case '\r': esc[1] = 'r'; return 2;
  case '\t': esc[1] = 't'; return 2;
  case '"': case '\\': esc[1] = (char)c; return 2;
  default: memcpy(esc + 1, "u00", 3), esc[4] = hex[c >> 4], esc[5] = hex[c & 15]; return 6;
  }
}

int ag_json_put_string(ag_buf *b, const char *s, ag_json_utf8 utf8) {
  size_t n = strlen(s), run = 0; /* run: the bytes before i still to copy as they are */
  int rc = ag_buf_append(b, "\"", 1);
  for (size_t i = 0; !rc && i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80 && utf8 == AG_JSON_UTF8_CHECK) {
      size_t len = ag_utf8_seq_len(s + i, n - i);
      if (!len) return AG_ERR_INVALID;
      i += len - 1;
      run += len;
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\') {
      run++;
      continue;
    }
    char esc[6];
    size_t len = escape(c, esc);
    rc = ag_buf_append(b, s + i - run, run);
    run = 0;
    if (!rc) rc = ag_buf_append(b, esc, len);
  }
  if (!rc) rc = ag_buf_append(b, s + n - run, run);
  return rc ? rc : ag_buf_append(b, "\"", 1);
}

/* The comma before every member but the first, and the key. */
static int member_key(ag_json_members *m, const char *key) {
  if (m->rc) return m->rc;
  if (m->n++ && (m->rc = ag_buf_append(m->b, ",", 1))) return m->rc;
  if (!(m->rc = ag_json_put_string(m->b, key, AG_JSON_UTF8_RAW))) m->rc = ag_buf_append(m->b, ":", 1);
  return m->rc;
}

void ag_json_member_string(ag_json_members *m, const char *key, const char *v) {
  if (v && !member_key(m, key)) m->rc = ag_json_put_string(m->b, v, AG_JSON_UTF8_RAW);
}

void ag_json_member_int(ag_json_members *m, const char *key, int64_t v) {
  char digits[24], *p = digits + sizeof digits;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v; /* INT64_MIN too, in unsigned arithmetic */
  do *--p = (char)('0' + u % 10);
  while (u /= 10);
  if (v < 0) *--p = '-';
  if (!member_key(m, key)) m->rc = ag_buf_append(m->b, p, (size_t)(digits + sizeof digits - p));
}

void ag_json_member_bool(ag_json_members *m, const char *key, int v) {
  ag_json_member_raw(m, key, v ? "true" : "false");
}

void ag_json_member_null(ag_json_members *m, const char *key) { ag_json_member_raw(m, key, "null"); }

void ag_json_member_raw(ag_json_members *m, const char *key, const char *json) {
  if (!member_key(m, key)) m->rc = ag_buf_appends(m->b, json);
}
