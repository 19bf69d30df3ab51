/* Should an agent answer? (docs/behaviour.md §3–4): every rule of turn_decide in order, and its edges. */
#include <stdio.h>

#include "agents/turn.h"
#include "support/suite.h"
#include "support/unit.h"

/* A message as the world would describe it to one agent. */
typedef struct msg {
  const char *sender;
  ag_kind kind;
  const char *leading[4]; /* NULL-terminated */
  int other;
} msg;

static const char *main_agent;
static int limit = 5;

static turn_decision decide(turn_state *st, const char *agent, msg m) {
  mention_list l = {0};
  for (int i = 0; i < 4 && m.leading[i]; i++) CHECK_INT(mention_list_push(&l, m.leading[i]), AG_OK);
  turn_input in = {.agent_id = agent, .sender = m.sender, .kind = m.kind, .leading = &l,
                   .has_other_mentions = m.other || l.n > 0, .main_agent = main_agent, .turn_limit = limit};
  turn_decision d = turn_decide(st, &in);
  mention_list_free(&l);
  return d;
}

static void reset_globals(void) {
  main_agent = NULL;
  limit = 5;
}

#define HUMAN(...) ((msg){"human", AG_KIND_HUMAN, {__VA_ARGS__}, 0})
#define FROM(s, k, ...) ((msg){s, k, {__VA_ARGS__}, 0})

static void public_human_message_addresses_everyone(void) {
  reset_globals();
  turn_state a = {0}, b = {0};
  CHECK_INT(decide(&a, "alice", HUMAN(NULL)), TURN_ANSWER);
  CHECK_INT(decide(&b, "bob", HUMAN(NULL)), TURN_ANSWER);
  CHECK_INT(a.count, 1);
  CHECK_INT(b.count, 1);
}

static void public_world_message_addresses_everyone(void) {
  reset_globals();
  turn_state a = {0};
  CHECK_INT(decide(&a, "alice", FROM("world", AG_KIND_WORLD, NULL)), TURN_ANSWER);
  CHECK_INT(decide(&a, "alice", FROM("World", AG_KIND_WORLD, NULL)), TURN_ANSWER);
}

static void user_and_you_are_human(void) {
  reset_globals();
  turn_state a = {3, 1};
  CHECK_INT(decide(&a, "alice", FROM("USER", AG_KIND_HUMAN, NULL)), TURN_ANSWER);
  CHECK_INT(a.count, 1);
  a.count = 4;
  CHECK_INT(decide(&a, "alice", FROM("You", AG_KIND_HUMAN, NULL)), TURN_ANSWER);
  CHECK_INT(a.count, 1);
}

static void leading_mentions_address_exactly(void) {
  reset_globals();
  turn_state a = {0}, b = {0}, c = {0};
  msg m = HUMAN("alice", "bob");
  CHECK_INT(decide(&a, "alice", m), TURN_ANSWER);
  CHECK_INT(decide(&b, "bob", m), TURN_ANSWER);
  CHECK_INT(decide(&c, "carol", m), TURN_SKIP);
  CHECK_INT(c.count, 0);
}

static void other_mentions_only_address_nobody(void) {
  reset_globals();
  turn_state a = {0};
  msg m = HUMAN(NULL);
  m.other = 1; /* "talk to @alice later" */
  CHECK_INT(decide(&a, "alice", m), TURN_SKIP);
  CHECK_INT(decide(&a, "bob", m), TURN_SKIP);
  m.sender = "world";
  CHECK_INT(decide(&a, "alice", m), TURN_SKIP);
}

static void main_agent_takes_public_messages(void) {
  reset_globals();
  main_agent = "ann";
  turn_state a = {0}, b = {0};
  CHECK_INT(decide(&a, "ann", HUMAN(NULL)), TURN_ANSWER);
  CHECK_INT(decide(&b, "ben", HUMAN(NULL)), TURN_SKIP);
  CHECK_INT(decide(&b, "ben", FROM("world", AG_KIND_WORLD, NULL)), TURN_SKIP);
  main_agent = "ANN"; /* compared like ids, case-insensitively */
  CHECK_INT(decide(&a, "ann", HUMAN(NULL)), TURN_ANSWER);
  reset_globals();
}

static void main_agent_yields_to_leading_mentions(void) {
  reset_globals();
  main_agent = "ann";
  turn_state a = {0}, b = {0};
  CHECK_INT(decide(&a, "ann", HUMAN("ben")), TURN_SKIP);
  CHECK_INT(decide(&b, "ben", HUMAN("ben")), TURN_ANSWER);
  reset_globals();
}

static void main_agent_other_mentions_still_nobody(void) {
  reset_globals();
  main_agent = "ann";
  turn_state a = {0};
  msg m = HUMAN(NULL);
  m.other = 1;
  CHECK_INT(decide(&a, "ann", m), TURN_SKIP);
  main_agent = ""; /* an empty main agent is none */
  CHECK_INT(decide(&a, "ben", HUMAN(NULL)), TURN_ANSWER);
  reset_globals();
}

static void main_agent_does_not_apply_to_agents(void) {
  reset_globals();
  main_agent = "ann";
  turn_state a = {0};
  CHECK_INT(decide(&a, "ann", FROM("ben", AG_KIND_AGENT, NULL)), TURN_SKIP);
  reset_globals();
}

static void agent_sender_needs_leading_mention(void) {
  reset_globals();
  turn_state a = {0}, b = {0};
  CHECK_INT(decide(&a, "alice", FROM("carol", AG_KIND_AGENT, NULL)), TURN_SKIP);
  CHECK_INT(decide(&a, "alice", FROM("carol", AG_KIND_AGENT, "alice")), TURN_ANSWER);
  CHECK_INT(decide(&b, "bob", FROM("carol", AG_KIND_AGENT, "alice")), TURN_SKIP);
  msg m = FROM("carol", AG_KIND_AGENT, NULL);
  m.other = 1;
  CHECK_INT(decide(&b, "bob", m), TURN_SKIP);
}

static void self_sender_never_answers(void) {
  reset_globals();
  turn_state a = {0};
  CHECK_INT(decide(&a, "alice", FROM("alice", AG_KIND_AGENT, "alice")), TURN_SKIP);
  CHECK_INT(decide(&a, "alice", FROM("Alice", AG_KIND_AGENT, "alice")), TURN_SKIP);
  CHECK_INT(decide(&a, "alice", FROM("ALICE", AG_KIND_AGENT, NULL)), TURN_SKIP);
  CHECK_INT(a.count, 0);
}

static void notices_are_never_answered(void) {
  reset_globals();
  turn_state a = {0};
  CHECK_INT(decide(&a, "alice", FROM("bob", AG_KIND_TURN_LIMIT, "alice")), TURN_SKIP);
  CHECK_INT(decide(&a, "human", FROM("bob", AG_KIND_TURN_LIMIT, "human")), TURN_SKIP);
}

static void notices_do_not_reset_counts(void) {
  reset_globals();
  turn_state a = {4, 1};
  CHECK_INT(decide(&a, "alice", FROM("bob", AG_KIND_TURN_LIMIT, "human")), TURN_SKIP);
  CHECK_INT(a.count, 4);
  CHECK_INT(a.notice_sent, 1);
}

static void system_is_never_answered(void) {
  reset_globals();
  turn_state a = {2, 0};
  CHECK_INT(decide(&a, "alice", FROM("system", AG_KIND_SYSTEM, NULL)), TURN_SKIP);
  CHECK_INT(decide(&a, "alice", FROM("SYSTEM", AG_KIND_SYSTEM, "alice")), TURN_SKIP);
  CHECK_INT(a.count, 2); /* and does not reset */
}

static void human_resets_count_and_notice(void) {
  reset_globals();
  turn_state a = {5, 1};
  CHECK_INT(decide(&a, "alice", HUMAN("bob")), TURN_SKIP); /* reset even when not addressed */
  CHECK_INT(a.count, 0);
  CHECK_INT(a.notice_sent, 0);
}

static void world_resets_count_and_notice(void) {
  reset_globals();
  turn_state a = {5, 1};
  msg m = FROM("world", AG_KIND_WORLD, NULL);
  m.other = 1;
  CHECK_INT(decide(&a, "alice", m), TURN_SKIP);
  CHECK_INT(a.count, 0);
  CHECK_INT(a.notice_sent, 0);
}

static void agent_message_does_not_reset(void) {
  reset_globals();
  turn_state a = {3, 0};
  CHECK_INT(decide(&a, "alice", FROM("bob", AG_KIND_AGENT, "carol")), TURN_SKIP);
  CHECK_INT(a.count, 3);
}

static void count_increments_on_answer_only(void) {
  reset_globals();
  turn_state a = {0};
  CHECK_INT(decide(&a, "alice", FROM("bob", AG_KIND_AGENT, "alice")), TURN_ANSWER);
  CHECK_INT(decide(&a, "alice", FROM("bob", AG_KIND_AGENT, "carol")), TURN_SKIP);
  CHECK_INT(decide(&a, "alice", FROM("bob", AG_KIND_AGENT, "alice")), TURN_ANSWER);
  CHECK_INT(a.count, 2);
}

static void limit_gives_one_notice_then_skips(void) {
  reset_globals();
  limit = 3;
  turn_state a = {0};
  msg m = FROM("bob", AG_KIND_AGENT, "alice");
  for (int i = 0; i < 3; i++) CHECK_INT(decide(&a, "alice", m), TURN_ANSWER);
  CHECK_INT(a.count, 3);
  CHECK_INT(decide(&a, "alice", m), TURN_NOTICE);
  CHECK_INT(a.notice_sent, 1);
  CHECK_INT(decide(&a, "alice", m), TURN_SKIP);
  CHECK_INT(decide(&a, "alice", m), TURN_SKIP);
  CHECK_INT(a.count, 3); /* the notice is no LLM call */
  reset_globals();
}

static void limit_not_reached_when_unaddressed(void) {
  reset_globals();
  limit = 1;
  turn_state a = {1, 0};
  CHECK_INT(decide(&a, "alice", FROM("bob", AG_KIND_AGENT, "carol")), TURN_SKIP);
  CHECK_INT(a.notice_sent, 0); /* no notice for a message not addressed to us */
  reset_globals();
}

static void limit_resets_after_human(void) {
  reset_globals();
  limit = 2;
  turn_state a = {0};
  msg m = FROM("bob", AG_KIND_AGENT, "alice");
  CHECK_INT(decide(&a, "alice", m), TURN_ANSWER);
  CHECK_INT(decide(&a, "alice", m), TURN_ANSWER);
  CHECK_INT(decide(&a, "alice", m), TURN_NOTICE);
  CHECK_INT(decide(&a, "alice", HUMAN("alice")), TURN_ANSWER); /* reset, then this is call 1 */
  CHECK_INT(decide(&a, "alice", m), TURN_ANSWER);
  CHECK_INT(decide(&a, "alice", m), TURN_NOTICE); /* a second notice after the reset */
  CHECK_INT(decide(&a, "alice", m), TURN_SKIP);
  reset_globals();
}

static void human_over_limit_is_impossible(void) {
  reset_globals();
  limit = 1;
  turn_state a = {1, 1};
  /* A human message resets first, so it is always answered. */
  CHECK_INT(decide(&a, "alice", HUMAN(NULL)), TURN_ANSWER);
  CHECK_INT(decide(&a, "alice", FROM("bob", AG_KIND_AGENT, "alice")), TURN_NOTICE);
  reset_globals();
}

static void turn_limit_one(void) {
  reset_globals();
  limit = 1;
  turn_state p = {0}, q = {0};
  /* The "loop" world with limit 1: human → p, p → q, q → p is over the limit. */
  CHECK_INT(decide(&p, "p", HUMAN("p")), TURN_ANSWER);
  CHECK_INT(decide(&q, "q", FROM("p", AG_KIND_AGENT, "q")), TURN_ANSWER);
  CHECK_INT(decide(&p, "p", FROM("q", AG_KIND_AGENT, "p")), TURN_NOTICE);
  CHECK_INT(decide(&q, "q", FROM("p", AG_KIND_TURN_LIMIT, "human")), TURN_SKIP);
  reset_globals();
}

static void turn_limit_below_one_reads_as_one(void) {
  reset_globals();
  limit = 0;
  turn_state a = {0};
  CHECK_INT(decide(&a, "alice", FROM("bob", AG_KIND_AGENT, "alice")), TURN_ANSWER);
  CHECK_INT(decide(&a, "alice", FROM("bob", AG_KIND_AGENT, "alice")), TURN_NOTICE);
  reset_globals();
}

static void loop_world_sequence(void) {
  /* The "loop" vector world (turn_limit 3): p and q bounce until p sends the notice. */
  reset_globals();
  limit = 3;
  turn_state p = {0}, q = {0};
  CHECK_INT(decide(&p, "p", HUMAN("p")), TURN_ANSWER);
  CHECK_INT(decide(&q, "q", HUMAN("p")), TURN_SKIP);
  int answers = 1;
  const char *who = "p";
  for (;;) {
    turn_state *next = who[0] == 'p' ? &q : &p;
    const char *name = who[0] == 'p' ? "q" : "p";
    turn_decision d = decide(next, name, FROM(who, AG_KIND_AGENT, name));
    if (d != TURN_ANSWER) {
      CHECK_INT(d, TURN_NOTICE);
      CHECK_STR(name, "p");
      break;
    }
    answers++;
    who = name;
    if (answers > 10) break;
  }
  CHECK_INT(answers, 6);
  reset_globals();
}

static void null_leading_is_empty(void) {
  turn_state a = {0};
  turn_input in = {.agent_id = "alice", .sender = "bob", .kind = AG_KIND_AGENT, .turn_limit = 5};
  CHECK_INT(turn_decide(&a, &in), TURN_SKIP);
  in.sender = "human";
  in.kind = AG_KIND_HUMAN;
  CHECK_INT(turn_decide(&a, &in), TURN_ANSWER);
}

static void notice_text_exact(void) {
  char buf[128];
  const char *want = "@human Turn limit reached (5 LLM calls). Please take control of the conversation.";
  CHECK_INT(turn_notice_text(5, buf, sizeof buf), (int)strlen(want));
  CHECK_STR(buf, want);
  CHECK_INT(turn_notice_text(12, buf, sizeof buf), (int)strlen(want) + 1);
  CHECK_STR(buf, "@human Turn limit reached (12 LLM calls). Please take control of the conversation.");
}

static void notice_text_small_buffer(void) {
  char buf[128];
  size_t need = strlen("@human Turn limit reached (3 LLM calls). Please take control of the conversation.") + 1;
  CHECK_INT(turn_notice_text(3, buf, need - 1), -1);
  CHECK_INT(turn_notice_text(3, buf, need), (int)need - 1);
  CHECK_INT(turn_notice_text(3, buf, 0), -1);
}

SUITE_RUN((UNIT(public_human_message_addresses_everyone), UNIT(public_world_message_addresses_everyone),
  UNIT(user_and_you_are_human), UNIT(leading_mentions_address_exactly), UNIT(other_mentions_only_address_nobody),
  UNIT(main_agent_takes_public_messages), UNIT(main_agent_yields_to_leading_mentions),
  UNIT(main_agent_other_mentions_still_nobody), UNIT(main_agent_does_not_apply_to_agents),
  UNIT(agent_sender_needs_leading_mention), UNIT(self_sender_never_answers), UNIT(notices_are_never_answered),
  UNIT(notices_do_not_reset_counts), UNIT(system_is_never_answered), UNIT(human_resets_count_and_notice),
  UNIT(world_resets_count_and_notice), UNIT(agent_message_does_not_reset), UNIT(count_increments_on_answer_only),
  UNIT(limit_gives_one_notice_then_skips), UNIT(limit_not_reached_when_unaddressed), UNIT(limit_resets_after_human),
  UNIT(human_over_limit_is_impossible), UNIT(turn_limit_one), UNIT(turn_limit_below_one_reads_as_one),
  UNIT(loop_world_sequence), UNIT(null_leading_is_empty), UNIT(notice_text_exact), UNIT(notice_text_small_buffer)))
