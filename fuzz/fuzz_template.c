/* libFuzzer harness for world/template: any text is rendered or rejected with a message, checking and
 * rendering agree, and the output never passes its cap.
 * Build (standalone): clang -g -fsanitize=fuzzer,address,undefined -I. fuzz/fuzz_template.c \
 *   world/template.c common/buf.c common/clock.c common/error.c -o fuzz_template && \
 *   ./fuzz_template fuzz/corpus/template */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "world/template.h"

#define FUZZ_ASSERT(x) \
  do {                 \
    if (!(x)) abort(); \
  } while (0)

#define FUZZ_CAP 4096

static template_vars *fuzz_vars(void) {
  static template_vars *v;
  if (v) return v;
  if (template_vars_new(&v)) abort();
  if (template_vars_set(v, "town", "Millbrook") || template_vars_set(v, "loop", "{{town}} {{{{") ||
      template_vars_set(v, "date", "harvest") || template_vars_set_builtin(v, "agent", "mayor") ||
      template_vars_set_builtin(v, "later", NULL) || template_vars_set_time(v, 1772352000000))
    abort();
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  template_vars *v = fuzz_vars();
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  ag_errmsg check_em = {{0}}, render_em = {{0}};
  ag_buf out;
  ag_buf_init(&out, FUZZ_CAP);
  int checked = template_check(text, v, &check_em);
  int rendered = template_render(text, v, &out, &render_em);
  FUZZ_ASSERT(checked == AG_OK || checked == AG_ERR_INVALID);
  FUZZ_ASSERT(out.len <= FUZZ_CAP && strlen(ag_buf_str(&out)) == out.len);
  if (checked == AG_ERR_INVALID) {
    /* Render stops at the first problem too; a valueless variable before it is reported first. */
    FUZZ_ASSERT(rendered != AG_OK && render_em.text[0] != '\0');
    if (rendered == AG_ERR_INVALID) FUZZ_ASSERT(strcmp(check_em.text, render_em.text) == 0);
  } else {
    FUZZ_ASSERT(rendered == AG_OK || rendered == AG_ERR_TOO_BIG || rendered == AG_ERR_STATE);
    if (rendered == AG_OK && !strstr(text, "{{")) FUZZ_ASSERT(strcmp(ag_buf_str(&out), text) == 0);
  }
  ag_buf_free(&out);
  free(text);
  return 0;
}
