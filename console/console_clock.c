/* The console's time and spend commands (issue 13): /clock shows the world's clock, /advance D moves a
 * virtual clock (delivering what falls due, as a script's wait would), /branch SEQ branches the current
 * chat there and continues in the branch, /budget shows and sets the world's budget. */
#include "console/console_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The clock as agora_clock gives it (the caller's), or NULL. */
static cJSON *clock_get(console *c, ag_errmsg *em) {
  char *s = NULL;
  int rc = agora_clock(c->w, &s);
  return con_json_take(rc, s, em);
}

static int is_virtual(const cJSON *k) {
  const char *mode = con_str(k, "mode");
  return mode && !strcmp(mode, "virtual");
}

void con_clock_label(console *c, char *out, size_t cap) {
  ag_errmsg em = {""};
  cJSON *k = clock_get(c, &em);
  const char *t = con_str(k, "now");
  *out = 0;
  if (is_virtual(k) && t && strlen(t) >= 16) snprintf(out, cap, " [%.10s %.5s]", t, t + 11); /* " [2026-03-01 09:00]" */
  cJSON_Delete(k);
}

int con_cmd_clock(console *c, char *args, ag_errmsg *em) {
  (void)args;
  cJSON *k = clock_get(c, em);
  if (!k) return AG_ERR_NOMEM;
  const char *now = con_str(k, "now"), *due = con_str(k, "next_due"), *until = con_str(k, "until");
  con_print(c, "clock: %s, now %s\n", is_virtual(k) ? "virtual" : "real", now ? now : "?");
  if (due) con_print(c, "next due: %s\n", due);
  else con_print(c, "next due: nothing scheduled\n");
  if (until) con_print(c, "until: %s\n", until);
  cJSON_Delete(k);
  return AG_OK;
}

int con_cmd_advance(console *c, char *args, ag_errmsg *em) {
  int64_t ms;
  cJSON *k = clock_get(c, em);
  int virt = is_virtual(k);
  cJSON_Delete(k);
  if (!virt) return ag_fail(em, AG_ERR_STATE, "the clock is real: only a virtual clock advances");
  if (!args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /advance DURATION (e.g. 3h, 1d, 90m)");
  int rc = agora_duration_parse(args, &ms);
  if (rc) return con_lib_fail(rc, em);
  if (agora_clock_advancing(c->w)) return ag_fail(em, AG_ERR_STATE, "the clock is already advancing");
  if ((rc = agora_clock_advance(c->w, ms))) return con_lib_fail(rc, em);
  /* Piped lines wait for the advance to end before the next line, as a script's wait; at a terminal the
   * loop delivers what falls due while the person types. */
  if (!c->tty) con_run_quiet(c);
  return AG_OK;
}

int con_cmd_branch(console *c, char *args, ag_errmsg *em) {
  char *end = NULL, id[AGORA_ID_MAX];
  unsigned long long seq = args[0] >= '0' && args[0] <= '9' ? strtoull(args, &end, 10) : 0;
  if (!seq || *end) return ag_fail(em, AG_ERR_INVALID, "usage: /branch SEQ (a message number of this chat)");
  if (!agora_chat_current(c->w)) return ag_fail(em, AG_ERR_STATE, "no current chat");
  if (!agora_is_quiet(c->w)) return ag_fail(em, AG_ERR_STATE, "wait until the replies in flight are in");
  int rc = agora_chat_branch(c->w, NULL, seq, id);
  if (!rc) rc = agora_chat_load(c->w, id);
  if (rc) return con_lib_fail(rc, em);
  con_chat_announce(c, "chat-loaded", 1);
  return AG_OK;
}

/* "/budget": the limits and the current chat's spend; "/budget tokens N usd X" (either or both; 0: no limit)
 * sets them, and a limit above the spend lets calls start again. */
int con_cmd_budget(console *c, char *args, ag_errmsg *em) {
  cJSON *settings = con_settings(c, em);
  if (!settings) return AG_ERR_NOMEM;
  const cJSON *b = cJSON_GetObjectItem(settings, "budget");
  int64_t limit_tokens = (int64_t)con_num(b, "tokens", 0), tokens = limit_tokens, spent_tokens = 0;
  double limit_usd = con_num(b, "usd", 0), usd = limit_usd, spent_usd = 0;
  cJSON_Delete(settings);
  while (args[0]) {
    char *key = con_next_word(&args), *val = con_next_word(&args), *end = NULL;
    errno = 0;
    double n = val[0] ? strtod(val, &end) : -1;
    int is_tokens = !strcmp(key, "tokens");
    if ((!is_tokens && strcmp(key, "usd")) || errno || !end || *end || !(n >= 0) || n > 9e15 ||
        (is_tokens && n != (double)(int64_t)n))
      return ag_fail(em, AG_ERR_INVALID, "usage: /budget [tokens N] [usd X] (0: no limit), not '%s %s'", key, val);
    if (is_tokens) tokens = (int64_t)n;
    else usd = n;
  }
  if (tokens != limit_tokens || usd != limit_usd) {
    int rc = agora_budget_set(c->w, tokens, usd);
    if (rc) return con_lib_fail(rc, em);
  }
  int reached = agora_budget_spent(c->w, &spent_tokens, &spent_usd);
  char lt[32] = "no limit", lu[32] = "no limit";
  if (tokens) snprintf(lt, sizeof lt, "%lld", (long long)tokens);
  if (usd > 0) snprintf(lu, sizeof lu, "$%.4f", usd);
  con_print(c, "budget: %lld tokens of %s, $%.4f of %s spent in this chat%s\n", (long long)spent_tokens, lt,
            spent_usd, lu, reached ? " (reached: no new LLM call starts; raise it with /budget tokens N or usd X)" : "");
  return AG_OK;
}
