/* The console's time commands (issue 13): /clock shows the world's clock, /advance D moves a virtual
 * clock (delivering what falls due, as a script's wait would), /branch SEQ branches the current chat
 * there and continues in the branch. */
#include "chat/branch.h"
#include "console/console_int.h"
#include "common/clock.h"
#include "world/duration.h"

#include <stdlib.h>
#include <string.h>

void con_clock_label(console *c, char *out, size_t cap) {
  char t[AG_TIME_LEN];
  *out = 0;
  if (!world_is_virtual(c->cw.w)) return;
  ag_time_format(world_now(c->cw.w), t, sizeof t);
  snprintf(out, cap, " [%.10s %.5s]", t, t + 11); /* " [2026-03-01 09:00]" */
}

int con_cmd_clock(console *c, char *args, ag_errmsg *em) {
  (void)args, (void)em;
  const world_clock_spec *k = &world_time_spec(c->cw.w)->clock;
  char t[AG_TIME_LEN];
  int64_t due;
  ag_time_format(world_now(c->cw.w), t, sizeof t);
  con_print(c, "clock: %s, now %s\n", world_is_virtual(c->cw.w) ? "virtual" : "real", t);
  if (!world_clock_next_due(c->clock, &due)) ag_time_format(due, t, sizeof t), con_print(c, "next due: %s\n", t);
  else con_print(c, "next due: nothing scheduled\n");
  if (k->has_until) ag_time_format(k->until_ms, t, sizeof t), con_print(c, "until: %s\n", t);
  return AG_OK;
}

int con_cmd_advance(console *c, char *args, ag_errmsg *em) {
  int64_t ms;
  if (!world_is_virtual(c->cw.w)) return ag_fail(em, AG_ERR_STATE, "the clock is real: only a virtual clock advances");
  if (!args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /advance DURATION (e.g. 3h, 1d, 90m)");
  ag_errmsg why = {""};
  if (duration_parse(args, &ms, &why)) return ag_fail(em, AG_ERR_INVALID, "%s", why.text);
  if (world_clock_advancing(c->clock)) return ag_fail(em, AG_ERR_STATE, "the clock is already advancing");
  /* Piped lines are handled outside the loop's callbacks, so the advance can run to its end before the
   * next line, as a script's wait; at a terminal the line comes from a callback on the loop. */
  if (!c->tty) return world_clock_wait(c->clock, ms, NULL);
  return world_clock_advance_start(c->clock, ms);
}

int con_cmd_branch(console *c, char *args, ag_errmsg *em) {
  const char *src = chat_session_current(c->cw.cs);
  char *end = NULL, id[CHAT_ID_MAX];
  unsigned long long seq = args[0] >= '0' && args[0] <= '9' ? strtoull(args, &end, 10) : 0;
  if (!seq || *end) return ag_fail(em, AG_ERR_INVALID, "usage: /branch SEQ (a message number of this chat)");
  if (!src) return ag_fail(em, AG_ERR_STATE, "no current chat");
  if (!world_quiet_now(c->cw.w)) return ag_fail(em, AG_ERR_STATE, "wait until the replies in flight are in");
  char from[CHAT_ID_MAX];
  snprintf(from, sizeof from, "%s", src);
  int rc = chat_branch(c->st, from, seq, id, em);
  if (!rc) rc = chat_session_load(c->cw.cs, id, em);
  if (!rc) con_chat_announce(c, EV_CHAT_LOADED);
  return rc;
}
