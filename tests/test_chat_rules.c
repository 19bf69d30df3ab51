/* The session rules of docs/behaviour.md §6 as pure functions: when "new chat" reuses the current chat,
 * and which message of a batch titles a chat still called "New Chat". No store, world or loop. */
#include <stdlib.h>

#include "chat/rules.h"
#include "chat/title.h"
#include "common/error.h"
#include "support/suite.h"
#include "support/unit.h"

static void reusable_while_titled_new_chat_or_empty(void) {
  CHECK_INT(chat_rule_reusable(CHAT_TITLE_DEFAULT, 0), 1);
  CHECK_INT(chat_rule_reusable(CHAT_TITLE_DEFAULT, 7), 1); /* messages, but never titled */
  CHECK_INT(chat_rule_reusable("Plan a trip", 0), 1);       /* titled by hand, no messages */
  CHECK_INT(chat_rule_reusable("Plan a trip", 3), 0);
  CHECK_INT(chat_rule_reusable("new chat", 3), 0);          /* the default title exactly, case and all */
}

/* A batch of messages as the session hands it over (references to stack messages). */
typedef struct batch {
  ag_msg m[6];
  ag_msg *p[6];
  size_t n;
} batch;

static void add(batch *b, ag_kind kind, const char *text) {
  ag_msg *m = &b->m[b->n];
  memset(m, 0, sizeof *m);
  m->refs = 1;
  m->seq = b->n + 1;
  m->kind = kind;
  m->sender = (char *)(kind == AG_KIND_HUMAN ? "human" : kind == AG_KIND_WORLD ? "world" : "ann");
  m->text = (char *)text;
  b->p[b->n] = m;
  b->n++;
}

/* chat_rule_title(title, b): want NULL means the title stays. */
static void check_rule(int line, const char *title, const batch *b, const char *want) {
  char *out = (char *)"untouched";
  int rc = chat_rule_title(title, b->p, b->n, &out);
  if (rc != AG_OK) {
    unit_fail_(__FILE__, line, "chat_rule_title failed: %d", rc);
    return;
  }
  if (want && (!out || strcmp(out, want) != 0))
    unit_fail_(__FILE__, line, "title == \"%s\", expected \"%s\"", out ? out : "(null)", want);
  if (!want && out) unit_fail_(__FILE__, line, "title == \"%s\", expected none", out);
  free(out);
}

#define RULE(title, b, want) check_rule(__LINE__, title, b, want)

static void first_human_message_titles(void) {
  batch b = {0};
  add(&b, AG_KIND_HUMAN, "Hello, can you help me plan a trip"); /* the spec's example */
  add(&b, AG_KIND_HUMAN, "Something else");
  RULE(CHAT_TITLE_DEFAULT, &b, "Plan a trip");
}

static void other_kinds_never_title(void) {
  batch b = {0};
  add(&b, AG_KIND_WORLD, "Rain starts.");
  add(&b, AG_KIND_AGENT, "Let us plan a trip");
  add(&b, AG_KIND_SYSTEM, "turn limit");
  RULE(CHAT_TITLE_DEFAULT, &b, NULL);
  add(&b, AG_KIND_HUMAN, "@ann book the *hotel*");
  RULE(CHAT_TITLE_DEFAULT, &b, "Book the hotel");
}

static void nothing_left_lets_the_next_try(void) {
  batch b = {0};
  add(&b, AG_KIND_HUMAN, "@ann hello!");
  RULE(CHAT_TITLE_DEFAULT, &b, NULL); /* keep "New Chat" */
  add(&b, AG_KIND_AGENT, "Hi, what shall we do?");
  add(&b, AG_KIND_HUMAN, "hi, I need a name for my cat");
  RULE(CHAT_TITLE_DEFAULT, &b, "A name for my cat");
}

static void a_titled_chat_keeps_its_title(void) {
  batch b = {0};
  add(&b, AG_KIND_HUMAN, "Plan a trip to Rome");
  RULE("My own title", &b, NULL);
  RULE(NULL, &b, NULL); /* session mode off: no title to replace */
  batch none = {0};
  RULE(CHAT_TITLE_DEFAULT, &none, NULL);
}

SUITE_RUN((UNIT(reusable_while_titled_new_chat_or_empty), UNIT(first_human_message_titles),
  UNIT(other_kinds_never_title), UNIT(nothing_left_lets_the_next_try), UNIT(a_titled_chat_keeps_its_title)))
