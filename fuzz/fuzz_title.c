/* Fuzzes the title heuristic (chat/title.c): any first message gives no title or one of at most 50
 * characters plus "…", in valid UTF-8 when the input was. */
#include "fuzz_util.h"

#include "chat/title.h"

/* Code points in s when it is valid UTF-8, else -1. */
static long utf8_count(const char *s) {
  long n = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; n++) {
    int k = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 0;
    if (!k) return -1;
    for (int i = 1; i < k; i++)
      if ((p[i] & 0xC0) != 0x80) return -1;
    p += k;
  }
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  char *title = NULL;
  if (chat_title_make(text, &title) != AG_OK) abort();
  if (title) {
    if (!title[0]) abort();
    long n = utf8_count(title);
    /* 50 characters and the ellipsis; only checked when the input itself was valid UTF-8. */
    if (utf8_count(text) >= 0 && (n < 0 || n > CHAT_TITLE_MAX_CHARS + 1)) abort();
  }
  free(title);
  free(text);
  return 0;
}
