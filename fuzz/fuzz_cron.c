/* libFuzzer harness for world/cron: any text either parses or fails with a message; a parsed schedule's
 * next fire is a whole minute strictly after the start that matches it, found within the bounded search.
 * Build (standalone): clang -g -fsanitize=fuzzer,address,undefined -I. fuzz/fuzz_cron.c world/cron.c \
 *   common/clock.c common/error.c -o fuzz_cron && ./fuzz_cron fuzz/corpus/cron */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "world/cron.h"

#define FUZZ_ASSERT(x) \
  do {                 \
    if (!(x)) abort(); \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  cron c;
  ag_errmsg em = {{0}};
  if (cron_parse(text, &c, &em) != AG_OK) {
    FUZZ_ASSERT(em.text[0] != '\0');
    free(text);
    return 0;
  }
  /* Starts: the epoch, the example, before 1970, mid-minute, and late in year 9999. */
  static const int64_t starts[] = {0, 1772352000000, -86400001, 951782399999, 4102444800000, 253402300000000};
  for (size_t i = 0; i < sizeof starts / sizeof *starts; i++) {
    int64_t next = 0;
    int rc = cron_next(&c, starts[i], &next);
    if (starts[i] < 253000000000000) FUZZ_ASSERT(rc == AG_OK); /* a valid schedule fires within 8 years */
    if (rc != AG_OK) continue;
    FUZZ_ASSERT(next > starts[i] && next % 60000 == 0 && cron_matches(&c, next));
    FUZZ_ASSERT(next - starts[i] <= (int64_t)9 * 366 * 86400000);
    int64_t again = 0;
    if (cron_next(&c, next - 1, &again) == AG_OK) FUZZ_ASSERT(again == next);
  }
  free(text);
  return 0;
}
