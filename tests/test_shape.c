/* Reply shaping (docs/behaviour.md §5): the "shape" vectors of tests/data/vectors.json, then each rule's
 * edges — tags in any case and place, self-mentions, TO: lists, auto-mention. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/shape.h"
#include "common/error.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/vectors.h"

static const char *const ids[] = {"alice", "bob", "carol", "dave", "madame-pedagogue", "dr-who"};
#define N_IDS (sizeof ids / sizeof *ids)

/* The ids as a lookup, as a world's index offers them (shape_reply_known). */
static int ids_has(void *ctx, const char *id) {
  (void)ctx;
  for (size_t i = 0; i < N_IDS; i++)
    if (strcmp(ids[i], id) == 0) return 1;
  return 0;
}

/* Shapes raw and checks the result: want NULL means nothing is published, with outcome want_outcome.
 * The lookup variant must shape it the same way. */
static void check_shape(int line, const char *raw, const char *agent, const char *sender, int auto_reply,
                        shape_outcome want_outcome, const char *want) {
  shape_outcome oc = SHAPE_PUBLISH;
  char *out = (char *)"untouched";
  int rc = shape_reply(raw, agent, sender, auto_reply, ids, N_IDS, &oc, &out);
  if (rc != AG_OK) {
    unit_fail_(__FILE__, line, "shape_reply(\"%s\") failed: %d", raw, rc);
    return;
  }
  if (oc != want_outcome) unit_fail_(__FILE__, line, "shape_reply(\"%s\"): outcome %d, expected %d", raw, oc, want_outcome);
  if (want && (!out || strcmp(out, want) != 0))
    unit_fail_(__FILE__, line, "shape_reply(\"%s\") == \"%s\", expected \"%s\"", raw, out ? out : "(null)", want);
  if (!want && out) unit_fail_(__FILE__, line, "shape_reply(\"%s\") == \"%s\", expected nothing", raw, out);
  shape_outcome oc2 = SHAPE_PUBLISH;
  char *out2 = NULL;
  mention_known known = {.has = ids_has};
  if (shape_reply_known(raw, agent, sender, auto_reply, &known, &oc2, &out2) != AG_OK || oc2 != oc ||
      (out && (!out2 || strcmp(out, out2) != 0)) || (!out && out2))
    unit_fail_(__FILE__, line, "shape_reply_known(\"%s\") == \"%s\", shape_reply gave \"%s\"", raw,
               out2 ? out2 : "(null)", out ? out : "(null)");
  free(out2);
  free(out);
}

#define PUBLISHED(raw, agent, sender, want) check_shape(__LINE__, raw, agent, sender, 1, SHAPE_PUBLISH, want)
#define SILENT(raw, agent, sender) check_shape(__LINE__, raw, agent, sender, 1, SHAPE_SILENT, NULL)

static void vectors_shape(void) {
  const cJSON *shape = NULL, *v;
  cJSON *root = vectors_load("shape", 10, &shape);
  if (!root) return;
  cJSON_ArrayForEach(v, shape) {
    const char *reply = cJSON_GetObjectItemCaseSensitive(v, "reply")->valuestring;
    const char *agent = cJSON_GetObjectItemCaseSensitive(v, "agent")->valuestring;
    const char *sender = cJSON_GetObjectItemCaseSensitive(v, "sender")->valuestring;
    const cJSON *pub = cJSON_GetObjectItemCaseSensitive(v, "published");
    if (cJSON_IsString(pub)) {
      check_shape(__LINE__, reply, agent, sender, 1, SHAPE_PUBLISH, pub->valuestring);
    } else {
      /* Nothing published: white space is SHAPE_EMPTY, anything else SHAPE_SILENT. */
      int blank = strspn(reply, " \t\r\n") == strlen(reply);
      check_shape(__LINE__, reply, agent, sender, 1, blank ? SHAPE_EMPTY : SHAPE_SILENT, NULL);
    }
  }
  cJSON_Delete(root);
}

static void empty_replies(void) {
  check_shape(__LINE__, "", "alice", "bob", 1, SHAPE_EMPTY, NULL);
  check_shape(__LINE__, " \n\t\r\n ", "alice", "bob", 1, SHAPE_EMPTY, NULL);
  check_shape(__LINE__, "\n", "alice", "human", 0, SHAPE_EMPTY, NULL);
}

static void self_mentions_removed(void) {
  PUBLISHED("@ALICE, thanks", "alice", "human", "thanks");
  PUBLISHED("@bob @Alice: hi", "alice", "carol", "@bob hi");
  PUBLISHED("@bob, @alice, hi", "alice", "human", "@bob, hi");
  PUBLISHED("ok\n  @alice noted\n@alice", "alice", "human", "ok\n  noted");
  PUBLISHED("hey @alice, all good", "alice", "human", "hey all good");
  /* Only mentions opening a line go; one in the middle of a line stays. */
  PUBLISHED("I am @alice indeed", "alice", "human", "I am @alice indeed");
}

static void self_mention_in_display_name_form(void) {
  PUBLISHED("@Madame Pedagogue, here is the lesson", "madame-pedagogue", "human", "here is the lesson");
  PUBLISHED("@madame-pedagogue lesson", "madame-pedagogue", "human", "lesson");
  /* Even when the world's list does not hold the agent, its own name is known. */
  shape_outcome oc;
  char *out = NULL;
  CHECK_INT(shape_reply("@Dr Who: yes", "dr-who", "human", 1, NULL, 0, &oc, &out), AG_OK);
  CHECK_INT(oc, SHAPE_PUBLISH);
  CHECK_STR(out, "yes");
  free(out);
}

static void self_mentions_in_code_stay(void) {
  PUBLISHED("```\n@alice in code\n```\ndone", "alice", "human", "```\n@alice in code\n```\ndone");
}

static void stop_tags_any_case(void) {
  static const char *const tags[] = {"STOP", "stop", "Stop", "DONE", "done", "dOnE", "PASS", "pass", "Pass"};
  for (size_t i = 0; i < sizeof tags / sizeof *tags; i++) {
    char raw[128];
    snprintf(raw, sizeof raw, "@bob finished <World>%s</WORLD>", tags[i]);
    PUBLISHED(raw, "alice", "carol", "finished");
  }
}

static void stop_tag_mid_line_and_start(void) {
  PUBLISHED("wrap <world>DONE</world> up", "alice", "bob", "wrap up");
  PUBLISHED("<world>stop</world>\nThe end.", "alice", "bob", "The end.");
  PUBLISHED("line one\nline two <world>PASS</world>\nline three", "alice", "bob", "line one\nline two\nline three");
  PUBLISHED("tight<world>STOP</world>end", "alice", "bob", "tightend");
  PUBLISHED("x < world>STOP</world>", "alice", "human", "x < world>STOP</world>");
}

static void stop_removes_every_leading_mention(void) {
  PUBLISHED("@bob, @carol: we agree\n@dave too\nsee @bob later <world>DONE</world>", "alice", "bob",
            "we agree\ntoo\nsee @bob later");
}

static void bare_tags_are_silent(void) {
  SILENT("<world>PASS</world>", "alice", "bob");
  SILENT("  <world>done</world>  \n", "alice", "human");
  SILENT("@bob <world>STOP</world>", "alice", "carol");
  SILENT("@alice", "alice", "bob");
  SILENT("@alice, @Alice:", "alice", "human");
  SILENT("<world>TO: bob</world>", "alice", "carol");
}

static void to_tag_addresses(void) {
  PUBLISHED("Report ready.\n<WORLD>to: bob , carol,dave </world>", "alice", "human", "@bob\n@carol\n@dave\n\nReport ready.");
  PUBLISHED("<world>To:@bob</world> hi", "alice", "carol", "@bob\n\nhi");
  PUBLISHED("@carol\n@dave\nplan <world>TO: bob</world>", "alice", "carol", "@bob\n\nplan");
  /* Display names and duplicates in the list, and the agent itself, which it never addresses. */
  PUBLISHED("x <world>TO: Madame Pedagogue, bob, BOB, alice</world>", "alice", "human",
            "@madame-pedagogue\n@bob\n\nx");
}

static void to_tag_empty_or_invalid_is_no_tag(void) {
  PUBLISHED("plain <world>TO:</world>", "alice", "bob", "@bob plain");
  PUBLISHED("plain <world>TO: , ,</world>", "alice", "bob", "@bob plain");
  PUBLISHED("plain <world>TO: alice</world>", "alice", "bob", "@bob plain");
  PUBLISHED("plain <world>TO: b!b</world>", "alice", "human", "plain");
}

static void stop_wins_over_to(void) {
  PUBLISHED("bye <world>TO: bob</world> <world>STOP</world>", "alice", "carol", "bye");
}

static void unknown_tags_stay(void) {
  PUBLISHED("<world>FOO</world> hi", "alice", "human", "<world>FOO</world> hi");
  PUBLISHED("<world>FOO</world> <world>PASS</world>hi", "alice", "human", "<world>FOO</world> hi");
  PUBLISHED("open <world>STOP but never closed", "alice", "human", "open <world>STOP but never closed");
}

static void auto_mention_to_agents_only(void) {
  PUBLISHED("sure", "alice", "bob", "@bob sure");
  PUBLISHED("sure", "alice", "human", "sure");
  PUBLISHED("sure", "alice", "User", "sure");
  PUBLISHED("sure", "alice", "world", "sure");
  PUBLISHED("sure", "alice", "system", "sure");
  /* A mention later in the text does not address anyone: the reply still goes back. */
  PUBLISHED("ask @carol", "alice", "bob", "@bob ask @carol");
  PUBLISHED("hi @carol, your turn", "alice", "bob", "hi @carol, your turn");
  PUBLISHED("@Madame Pedagogue, your turn", "alice", "bob", "@Madame Pedagogue, your turn");
}

/* Issue 15 item 6: "@bob ```c" would break the fence; the mention goes on its own line. */
static void auto_mention_before_fence(void) {
  PUBLISHED("```c\nint x;\n```", "alice", "bob", "@bob\n```c\nint x;\n```");
  PUBLISHED("\n  ```\nx\n```\nthat is it", "alice", "bob", "@bob\n```\nx\n```\nthat is it");
  PUBLISHED("see:\n```\nx\n```", "alice", "bob", "@bob see:\n```\nx\n```");
  PUBLISHED("``inline`` code", "alice", "bob", "@bob ``inline`` code");
}

static void auto_mention_off(void) {
  check_shape(__LINE__, "sure", "alice", "bob", 0, SHAPE_PUBLISH, "sure");
  check_shape(__LINE__, "@alice sure", "alice", "bob", 0, SHAPE_PUBLISH, "sure");
  check_shape(__LINE__, "@carol sure", "alice", "bob", 0, SHAPE_PUBLISH, "@carol sure");
  check_shape(__LINE__, "x <world>TO: carol</world>", "alice", "bob", 0, SHAPE_PUBLISH, "@carol\n\nx");
}

static void only_mentions(void) {
  PUBLISHED("@bob @carol", "alice", "human", "@bob @carol");
  PUBLISHED("@alice @bob", "alice", "dave", "@bob");
  PUBLISHED("  \n@bob\n  ", "alice", "carol", "@bob");
}

static void output_is_trimmed(void) {
  PUBLISHED("\n\n  hello there  \n\n", "alice", "human", "hello there");
  PUBLISHED("\n  hello  \n", "alice", "bob", "@bob hello");
}

static void bad_arguments(void) {
  shape_outcome oc;
  char *out = NULL;
  CHECK_INT(shape_reply(NULL, "alice", "bob", 1, ids, N_IDS, &oc, &out), AG_ERR_INVALID);
  CHECK_INT(shape_reply("x", NULL, "bob", 1, ids, N_IDS, &oc, &out), AG_ERR_INVALID);
  CHECK(out == NULL);
  /* A missing sender means nobody to answer back to. */
  CHECK_INT(shape_reply("x", "alice", NULL, 1, ids, N_IDS, &oc, &out), AG_OK);
  CHECK_STR(out, "x");
  free(out);
}

SUITE_RUN((UNIT(vectors_shape), UNIT(empty_replies), UNIT(self_mentions_removed),
  UNIT(self_mention_in_display_name_form), UNIT(self_mentions_in_code_stay), UNIT(stop_tags_any_case),
  UNIT(stop_tag_mid_line_and_start), UNIT(stop_removes_every_leading_mention), UNIT(bare_tags_are_silent),
  UNIT(to_tag_addresses), UNIT(to_tag_empty_or_invalid_is_no_tag), UNIT(stop_wins_over_to), UNIT(unknown_tags_stay),
  UNIT(auto_mention_to_agents_only), UNIT(auto_mention_before_fence), UNIT(auto_mention_off), UNIT(only_mentions),
  UNIT(output_is_trimmed), UNIT(bad_arguments)))
