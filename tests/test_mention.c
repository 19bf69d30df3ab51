/* Mention parsing (docs/behaviour.md §1–2): the "parse" vectors of tests/data/vectors.json, then the edges
 * the vectors leave out. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/mention.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/vectors.h"

static const char *const ids[] = {"alice", "bob", "carol", "dr-who", "madame-pedagogue", "a_1", "x-ray"};
#define N_IDS (sizeof ids / sizeof *ids)

/* "a,b,c" of a list, for messages and comparisons. */
static void list_join(const mention_list *l, char *out, size_t cap) {
  size_t o = 0;
  out[0] = '\0';
  for (size_t i = 0; i < l->n && o < cap; i++) o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? "," : "", l->ids[i]);
}

static void json_join(const cJSON *arr, char *out, size_t cap) {
  size_t o = 0;
  int i = 0;
  const cJSON *e;
  out[0] = '\0';
  cJSON_ArrayForEach(e, arr) {
    if (o < cap) o += (size_t)snprintf(out + o, cap - o, "%s%s", i++ ? "," : "", e->valuestring);
  }
}

#define CHECK_LEADING(text, want)                                                                        \
  do {                                                                                                   \
    mention_list l_ = {0};                                                                               \
    char got_[512];                                                                                      \
    CHECK_INT(mention_leading((text), ids, N_IDS, &l_), AG_OK);                                         \
    list_join(&l_, got_, sizeof got_);                                                                   \
    CHECK_STR(got_, (want));                                                                             \
    mention_list_free(&l_);                                                                              \
  } while (0)

#define CHECK_ANYWHERE(text, want)                                                                       \
  do {                                                                                                   \
    mention_list l_ = {0};                                                                               \
    char got_[512];                                                                                      \
    CHECK_INT(mention_anywhere((text), &l_), AG_OK);                                                    \
    list_join(&l_, got_, sizeof got_);                                                                   \
    CHECK_STR(got_, (want));                                                                             \
    mention_list_free(&l_);                                                                              \
  } while (0)

static void vectors_parse(void) {
  const cJSON *parse = NULL, *v;
  cJSON *root = vectors_load("parse", 20, &parse);
  if (!root) return;
  cJSON_ArrayForEach(v, parse) {
    const char *text = cJSON_GetObjectItemCaseSensitive(v, "text")->valuestring;
    const cJSON *agents = cJSON_GetObjectItemCaseSensitive(v, "agents"), *a;
    const char *vids[32];
    size_t n = 0;
    cJSON_ArrayForEach(a, agents) if (n < 32) vids[n++] = a->valuestring;
    char want[512], got[512];
    mention_list l = {0};

    json_join(cJSON_GetObjectItemCaseSensitive(v, "leading"), want, sizeof want);
    CHECK_INT(mention_leading(text, vids, n, &l), AG_OK);
    list_join(&l, got, sizeof got);
    if (strcmp(got, want) != 0) unit_fail_(__FILE__, __LINE__, "leading of \"%s\": [%s], expected [%s]", text, got, want);
    mention_list_free(&l);

    json_join(cJSON_GetObjectItemCaseSensitive(v, "anywhere"), want, sizeof want);
    CHECK_INT(mention_anywhere(text, &l), AG_OK);
    list_join(&l, got, sizeof got);
    if (strcmp(got, want) != 0) unit_fail_(__FILE__, __LINE__, "anywhere of \"%s\": [%s], expected [%s]", text, got, want);
    mention_list_free(&l);
  }
  cJSON_Delete(root);
}

static void leading_greetings_any_case(void) {
  CHECK_LEADING("HELLO @alice", "alice");
  CHECK_LEADING("hi\t@bob ok", "bob");
  CHECK_LEADING("To @carol: note", "carol");
  CHECK_LEADING("hey@bob", "");          /* the greeting needs white space after it */
  CHECK_LEADING("hi there @alice", "");  /* one greeting word only */
  CHECK_LEADING("hey hey @alice", "");   /* and only once */
  CHECK_LEADING("hiya @alice", "");      /* whole word */
}

static void leading_several_on_a_line(void) {
  CHECK_LEADING("@alice;@bob. @carol! go", "alice,bob,carol");
  CHECK_LEADING("@alice and @bob", "alice");
  CHECK_LEADING("@alice@bob", "alice");    /* glued: the second '@' is part of the first word */
  CHECK_LEADING("@alice.@bob go", "alice"); /* '@' after '.' is never a mention */
  CHECK_LEADING("hello @alice, @bob: x", "alice,bob");
}

static void leading_across_lines_no_duplicates(void) {
  CHECK_LEADING("@bob first\ntext\n@alice second\n@BOB third", "bob,alice");
  CHECK_LEADING("text\r\n@carol crlf", "carol");
  CHECK_LEADING("\n\n@alice", "alice");
}

static void leading_skips_fenced_code(void) {
  CHECK_LEADING("  ```c\n@bob x\n  ```\n@alice y", "alice");
  CHECK_LEADING("```\n@bob never closed\n@carol", "");
  CHECK_ANYWHERE("```\n@bob\n```\n@alice `@carol` and @dave", "alice,dave");
}

static void display_names(void) {
  CHECK_LEADING("@Madame Pedagogue", "madame-pedagogue");
  CHECK_LEADING("@Madame   Pedagogue: hi", "madame-pedagogue");
  CHECK_LEADING("@Madame pedagogue", "madame");  /* next word must start upper-case */
  CHECK_LEADING("@madame Pedagogue", "madame");  /* lower-case tokens never join */
  CHECK_LEADING("@Madame, Pedagogue", "madame"); /* punctuation breaks the name */
  CHECK_LEADING("@Alice Please review", "alice");
  CHECK_LEADING("@a2 Hi", "a2");
  CHECK_LEADING("@X-ray Vision", "x-ray");       /* a token with '-' never joins */
  CHECK_LEADING("@Madame Pedagogue @Dr Who go", "madame-pedagogue,dr-who");
  /* Without an agent list nothing joins. */
  mention_list l = {0};
  CHECK_INT(mention_leading("@Madame Pedagogue", NULL, 0, &l), AG_OK);
  CHECK_INT(l.n, 1);
  if (l.n == 1) CHECK_STR(l.ids[0], "madame");
  mention_list_free(&l);
}

/* A lookup standing for a world's index: the same answers as the list, and it is asked only about
 * candidates for a display name (counted), never handed the whole list. */
typedef struct counted_ids {
  int asked;
} counted_ids;

static int counted_has(void *ctx, const char *id) {
  ((counted_ids *)ctx)->asked++;
  for (size_t i = 0; i < N_IDS; i++)
    if (strcmp(ids[i], id) == 0) return 1;
  return 0;
}

static void display_names_through_a_lookup(void) {
  static const char *const texts[] = {"@Madame Pedagogue", "@Madame   Pedagogue: hi", "@Madame pedagogue",
                                      "@Alice Please review", "@Madame Pedagogue @Dr Who go", "@X-ray Vision",
                                      "hi @Bob Smith\n@Carol Jones\n```\n@Dr Who\n```\n@Dr Who", NULL};
  counted_ids c = {0};
  mention_known known = {.has = counted_has, .ctx = &c};
  for (size_t t = 0; texts[t]; t++) {
    mention_list a = {0}, b = {0};
    char got[256], want[256];
    CHECK_INT(mention_leading(texts[t], ids, N_IDS, &a), AG_OK);
    CHECK_INT(mention_leading_known(texts[t], &known, &b), AG_OK);
    list_join(&a, want, sizeof want);
    list_join(&b, got, sizeof got);
    CHECK_STR(got, want);
    mention_list_free(&a);
    mention_list_free(&b);
  }
  CHECK(c.asked > 0 && c.asked < 20);
  /* The line iterator resolves the same way, the extra id first. */
  size_t pos = 0;
  mention_at m;
  CHECK_INT(mention_line_next_known("@Zed Zz hi", 10, &pos, &known, "zed-zz", &m), 1);
  CHECK_STR(m.id, "zed-zz");
  pos = 0;
  CHECK_INT(mention_line_next_known("@Dr Who hi", 10, &pos, &known, NULL, &m), 1);
  CHECK_STR(m.id, "dr-who");
  pos = 0;
  CHECK_INT(mention_line_next_known("@Dr Who hi", 10, &pos, NULL, NULL, &m), 1); /* nobody known */
  CHECK_STR(m.id, "dr");
}

static void anywhere_code_spans_and_addresses(void) {
  CHECK_ANYWHERE("a `@x` b @y", "y");
  CHECK_ANYWHERE("unmatched ` tick @bob", "bob");
  CHECK_ANYWHERE("``a ` @in``, @out", "out");   /* a double-tick span ends at a double tick */
  CHECK_ANYWHERE("`a\n@next` line", "next");     /* spans stay on their line */
  CHECK_ANYWHERE("x@y a.@b c_@d e-@f 9@g (@h)", "h");
  CHECK_ANYWHERE("josé@example.com", "");
  CHECK_ANYWHERE("@Alice and @ALICE, @alice", "alice,alice,alice");
  CHECK_ANYWHERE("@ alone @- @_x", "");
}

static void long_tokens_are_cut(void) {
  char text[200], want[MENTION_ID_MAX];
  memset(text, 'a', sizeof text);
  text[0] = '@';
  text[sizeof text - 1] = '\0';
  memset(want, 'a', sizeof want);
  want[MENTION_ID_MAX - 1] = '\0';
  CHECK_LEADING(text, want);
  CHECK_ANYWHERE(text, want);
}

static void line_iterator_offsets(void) {
  const char *line = "hey @Madame Pedagogue, @bob: rest";
  size_t pos = 0;
  mention_at m;
  CHECK_INT(mention_line_next(line, strlen(line), &pos, NULL, 0, "madame-pedagogue", &m), 1);
  CHECK_INT(m.start, 4);
  CHECK_INT(m.end, 21);
  CHECK_INT(m.next, 23);
  CHECK_STR(m.id, "madame-pedagogue");
  CHECK_INT(mention_line_next(line, strlen(line), &pos, NULL, 0, NULL, &m), 1);
  CHECK_STR(m.id, "bob");
  CHECK_INT(m.next, 29);
  CHECK_INT(mention_line_next(line, strlen(line), &pos, NULL, 0, NULL, &m), 0);
  CHECK_INT(mention_is_fence("   ```js", 8), 1);
  CHECK_INT(mention_is_fence("a ```", 5), 0);
  CHECK_INT(mention_is_fence("``", 2), 0);
}

static void list_helpers(void) {
  mention_list l = {0};
  CHECK_INT(mention_list_contains(&l, "bob"), 0);
  for (int i = 0; i < 20; i++) CHECK_INT(mention_list_push(&l, i % 2 ? "bob" : "alice"), AG_OK);
  CHECK_INT(l.n, 20);
  CHECK_INT(mention_list_contains(&l, "bob"), 1);
  CHECK_INT(mention_list_contains(&l, "carol"), 0);
  mention_list_free(&l);
  CHECK_INT(l.n, 0);
  CHECK(l.ids == NULL);
  mention_list_free(&l); /* twice is harmless */
}

/* name's id is want. */
#define CHECK_ID(name, want)                                                                             \
  do {                                                                                                   \
    char id_[MENTION_ID_MAX] = "";                                                                       \
    CHECK_INT(mention_id_from_name((name), id_, sizeof id_), AG_OK);                                    \
    CHECK_STR(id_, (want));                                                                              \
  } while (0)

static void id_from_name(void) {
  CHECK_ID("Madame Pedagogue", "madame-pedagogue");
  CHECK_ID("Dr \t Who", "dr-who");
  CHECK_ID("a_1", "a_1");
  CHECK_ID("X-Ray ", "x-ray");
  CHECK_ID("2pac", "2pac");
}

/* Issue 15 item 10: any UTF-8 name; Latin letters fold to ASCII, other scripts get a stable hash. */
static void id_from_utf8_name(void) {
  char id[MENTION_ID_MAX], id2[MENTION_ID_MAX];
  CHECK_ID("José", "jose");
  CHECK_ID("Café Crème", "cafe-creme");
  CHECK_ID("Élodie Straße Łódź Œuvre", "elodie-strasse-lodz-oeuvre");
  CHECK_INT(mention_id_from_name("村長", id, sizeof id), AG_OK);
  CHECK_INT(strlen(id), 8);
  CHECK(strspn(id, "0123456789abcdef") == 8);
  CHECK_INT(mention_id_from_name("村長 ", id2, sizeof id2), AG_OK);
  CHECK_STR(id2, id); /* stable */
  CHECK_INT(mention_id_from_name("村人", id2, sizeof id2), AG_OK);
  CHECK(strcmp(id2, id) != 0);
  /* ASCII case and folded letters do not change the hash of a mixed name. */
  CHECK_INT(mention_id_from_name("José 村長", id, sizeof id), AG_OK);
  CHECK_INT(mention_id_from_name("JOSE 村長", id2, sizeof id2), AG_OK);
  CHECK_STR(id2, id);
}

/* Mentions by display name keep working for such names. */
static void mentions_of_utf8_names(void) {
  char jose[MENTION_ID_MAX], chief[MENTION_ID_MAX];
  mention_id_from_name("José", jose, sizeof jose);
  mention_id_from_name("村長", chief, sizeof chief);
  const char *const u_ids[] = {"bob", "cafe-creme", jose, chief};
  mention_list l = {0};
  char got[256], want[256];
  CHECK_INT(mention_leading("@José hi\n@村長、おはよう\n@Café Crème: tea\n@bob’s turn\n@jose again", u_ids, 4, &l), AG_OK);
  list_join(&l, got, sizeof got);
  snprintf(want, sizeof want, "jose,%s,cafe-creme,bob", chief);
  CHECK_STR(got, want);
  mention_list_free(&l);
  CHECK_INT(mention_anywhere("ask @José and @村長.", &l), AG_OK);
  list_join(&l, got, sizeof got);
  snprintf(want, sizeof want, "jose,%s", chief);
  CHECK_STR(got, want);
  mention_list_free(&l);
  /* Glued to a letter it is still an address, not a mention. */
  CHECK_ANYWHERE("josé@example.com", "");
}

static void id_from_name_rejects(void) {
  char id[MENTION_ID_MAX];
  CHECK_INT(mention_id_from_name("", id, sizeof id), AG_ERR_INVALID);
  CHECK_INT(mention_id_from_name(" bob", id, sizeof id), AG_ERR_INVALID);
  CHECK_INT(mention_id_from_name("-bob", id, sizeof id), AG_ERR_INVALID);
  CHECK_INT(mention_id_from_name("bob!", id, sizeof id), AG_ERR_INVALID);
  CHECK_INT(mention_id_from_name("«Élodie»", id, sizeof id), AG_ERR_INVALID);
  CHECK_INT(mention_id_from_name("bob\xff", id, sizeof id), AG_ERR_INVALID); /* not UTF-8 */
  CHECK_INT(mention_id_from_name("Jos\xc3", id, sizeof id), AG_ERR_INVALID); /* cut sequence */
  CHECK_INT(mention_id_from_name("Café!", id, sizeof id), AG_ERR_INVALID);
  CHECK_INT(mention_id_from_name("bob.smith", id, sizeof id), AG_ERR_INVALID);
  CHECK_INT(mention_id_from_name("abcd", id, 4), AG_ERR_INVALID); /* needs 5 bytes */
  CHECK_INT(mention_id_from_name("abc", id, 4), AG_OK);
  CHECK_INT(mention_id_from_name("abc", id, 0), AG_ERR_INVALID);
}

/* The line iterator mention and shape share: every line, code marked, the last one without a newline. */
static void lines_mark_code(void) {
  const char *text = "a @x\n  ```js\n@b\n```\nc\n";
  static const struct { const char *line; int code, nl; } want[] = {
    {"a @x", 0, 1}, {"  ```js", 1, 1}, {"@b", 1, 1}, {"```", 1, 1}, {"c", 0, 1}, {"", 0, 0}};
  mention_lines it = mention_lines_start(text);
  mention_line l;
  size_t n = 0;
  while (mention_lines_next(&it, &l)) {
    if (n < sizeof want / sizeof *want) {
      CHECK_INT(l.len, strlen(want[n].line));
      CHECK(strncmp(l.start, want[n].line, l.len) == 0);
      CHECK_INT(l.code, want[n].code);
      CHECK_INT(l.has_newline, want[n].nl);
    }
    n++;
  }
  CHECK_INT(n, 6);
  CHECK_INT(mention_lines_next(&it, &l), 0);
  /* An unclosed fence runs to the end; an empty text is one empty line. */
  it = mention_lines_start("```\nx");
  CHECK_INT(mention_lines_next(&it, &l), 1);
  CHECK_INT(mention_lines_next(&it, &l), 1);
  CHECK_INT(l.code, 1);
  it = mention_lines_start("");
  CHECK_INT(mention_lines_next(&it, &l), 1);
  CHECK_INT(l.len, 0);
  CHECK_INT(mention_lines_next(&it, &l), 0);
}

static void bad_arguments(void) {
  mention_list l = {0};
  CHECK_INT(mention_leading(NULL, ids, N_IDS, &l), AG_ERR_INVALID);
  CHECK_INT(mention_anywhere(NULL, &l), AG_ERR_INVALID);
  CHECK_INT(l.n, 0);
}

SUITE_RUN((UNIT(vectors_parse), UNIT(leading_greetings_any_case), UNIT(leading_several_on_a_line),
  UNIT(leading_across_lines_no_duplicates), UNIT(leading_skips_fenced_code), UNIT(display_names),
  UNIT(display_names_through_a_lookup), UNIT(anywhere_code_spans_and_addresses), UNIT(long_tokens_are_cut),
  UNIT(line_iterator_offsets), UNIT(lines_mark_code), UNIT(list_helpers), UNIT(id_from_name),
  UNIT(id_from_name_rejects), UNIT(id_from_utf8_name), UNIT(mentions_of_utf8_names), UNIT(bad_arguments)))
