/* For the tests of libagora's public API (tests/test_library*.c): one exchange with a world, as a
 * program makes it. */
#ifndef AG_TEST_LIB_SAY_H
#define AG_TEST_LIB_SAY_H

#include "agora.h"

/* Publishes text as the human, runs until quiet and hands back the event lines it produced (the
 * caller frees; "" when there were none or a call failed, which fails the case). */
char *lib_say(agora_world *w, const char *text);
/* Says prefix followed by 1, 2 ... n, one exchange each ("@ann hello" 3: "@ann hello 1" to "@ann hello 3"),
 * the lines dropped. */
void lib_say_numbered(agora_world *w, const char *prefix, int n);

#endif
