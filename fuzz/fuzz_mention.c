/* Fuzzes the mention parser and the should-answer decision (agents/mention.c, agents/turn.c): any
 * text must parse without a crash or a leak, leading mentions must be unique and well formed, and
 * the decision must follow from them for every sender kind. */
#include "fuzz_util.h"

#include "agents/mention.h"
#include "agents/turn.h"
#include "common/strset.h"

#include <stdio.h>

/* The first five are the agents that decide; with all twenty, display names resolve through the hashed
 * lookup (past 16 ids) instead of a scan. */
static const char *const ids[] = {"alice", "bob", "madame-pedagogue", "x_1", "carol-2", "a0", "a1", "a2", "a3",
                                  "a4", "a5", "a6", "a7", "a8", "a9", "a10", "a11", "a12", "big-bird", "c-3po"};
#define N_IDS 5
#define N_ALL_IDS (sizeof ids / sizeof *ids)

static void check_list(const mention_list *l, int unique) {
  ag_strset seen = {0};
  for (size_t i = 0; i < l->n; i++) {
    size_t n = strlen(l->ids[i]);
    if (n == 0 || n >= MENTION_ID_MAX) abort();
    for (size_t k = 0; k < n; k++)
      if (l->ids[i][k] >= 'A' && l->ids[i][k] <= 'Z') abort(); /* lower-cased */
    if (unique && ag_strset_add(&seen, l->ids[i])) abort();
  }
  ag_strset_clear(&seen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_in in = {data, size};
  uint8_t ctl = fuzz_byte(&in), limit = fuzz_byte(&in);
  char *text = fuzz_cstr(in.data, in.size);
  mention_list lead = {0}, any = {0};
  size_t n_ids = ctl & 1 ? (ctl & 0x80 ? N_ALL_IDS : N_IDS) : 0;
  if (mention_leading(text, ids, n_ids, &lead) || mention_anywhere(text, &any)) abort();
  check_list(&lead, 1);
  check_list(&any, 0);
  /* Every agent decides on the message, as the world would deliver it. */
  static const char *const senders[] = {"human", "world", "system", "alice", "bob"};
  const char *sender = senders[(ctl >> 1) % 5];
  for (size_t i = 0; i < N_IDS; i++) {
    turn_state st = {(int)(limit % 8), (ctl >> 4) & 1};
    turn_input ti = {ids[i], sender, ag_sender_kind(sender), &lead, any.n > 0,
                     ctl & 0x20 ? "bob" : NULL, 1 + limit % 6};
    if (ctl & 0x40) ti.kind = AG_KIND_TURN_LIMIT;
    turn_decision d = turn_decide(&st, &ti);
    if (d != TURN_SKIP && d != TURN_ANSWER && d != TURN_NOTICE) abort();
    /* An agent never answers itself, and answering counts the turn. */
    if (d == TURN_ANSWER && !strcmp(sender, ids[i])) abort();
    if (d == TURN_ANSWER && st.count < 1) abort();
  }
  char notice[256];
  if (turn_notice_text(1 + limit, notice, sizeof notice) < 0) abort();
  /* The line iterator on the first line, with an extra id. */
  const char *nl = strchr(text, '\n');
  size_t len = nl ? (size_t)(nl - text) : strlen(text), pos = 0, guard = 0;
  mention_at m;
  while (mention_line_next(text, len, &pos, ids, n_ids, "zed-z", &m)) {
    if (m.start >= m.end || m.end > m.next || m.next > len || pos != m.next) abort();
    if (++guard > len) abort(); /* it must advance */
  }
  char id[MENTION_ID_MAX];
  if (mention_id_from_name(text, id, sizeof id) == AG_OK && !id[0]) abort();
  mention_list_free(&lead);
  mention_list_free(&any);
  free(text);
  return 0;
}
