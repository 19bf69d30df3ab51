/* Chat titles from the first human message (docs/behaviour.md §6): markdown, mentions and greetings
 * stripped, white space collapsed, first letter capitalised, 50-character cut on a word boundary. */
#include <stdlib.h>

#include "chat/title.h"
#include "common/error.h"
#include "support/suite.h"
#include "support/unit.h"

/* Checks chat_title_make(text): want NULL means no title (keep "New Chat"). */
static void check_title(int line, const char *text, const char *want) {
  char *out = (char *)"untouched";
  int rc = chat_title_make(text, &out);
  if (rc != AG_OK) {
    unit_fail_(__FILE__, line, "chat_title_make(\"%s\") failed: %d", text, rc);
    return;
  }
  if (want && (!out || strcmp(out, want) != 0))
    unit_fail_(__FILE__, line, "title of \"%s\" == \"%s\", expected \"%s\"", text, out ? out : "(null)", want);
  if (!want && out) unit_fail_(__FILE__, line, "title of \"%s\" == \"%s\", expected none", text, out);
  free(out);
}

#define TITLE(text, want) check_title(__LINE__, text, want)

/* Code points in s. */
static size_t chars(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

static void plain_text_is_kept(void) {
  TITLE("Plan a trip to Rome", "Plan a trip to Rome");
  TITLE("plan a trip", "Plan a trip");
}

static void spec_example(void) { TITLE("Hello, can you help me plan a trip", "Plan a trip"); }

static void greetings_chained(void) {
  TITLE("hi! please, could you help me: fix my bike?", "Fix my bike?");
  TITLE("HEY hey Hello... I want to learn Rust", "Learn Rust");
  TITLE("Hi - I need a name for my cat", "A name for my cat");
  TITLE("Could you please summarise this", "Summarise this");
}

static void greetings_whole_words_only(void) {
  TITLE("hiking in the alps", "Hiking in the alps");
  TITLE("Heyday of jazz", "Heyday of jazz");
  TITLE("pleased to meet you", "Pleased to meet you");
  TITLE("i needed a break", "I needed a break");
  TITLE("Helpful tips", "Helpful tips");
  TITLE("hiçbir şey", "Hiçbir şey");
}

static void greetings_only_in_front(void) {
  TITLE("Tell me, can you hear me", "Tell me, can you hear me");
}

static void markdown_marks_stripped(void) {
  TITLE("# **Bold** _plan_ for `main.c`", "Bold plan for main.c");
  TITLE("## Heading\n\n* item one\n* item two", "Heading item one item two");
}

static void markdown_links_keep_text(void) {
  TITLE("read [the docs](https://example.com/a_b) today", "Read the docs today");
  TITLE("see ![a cat](cat.png) and [x] box", "See a cat and [x] box");
  TITLE("[unclosed link](nowhere", "[unclosed link](nowhere");
}

static void mentions_stripped(void) {
  TITLE("@alice, @bob: compare these", "Compare these");
  TITLE("Hi @alice, please review my essay", "Review my essay");
  TITLE("ask @alice about it", "Ask @alice about it");
  TITLE("mail bob@example.com", "Mail bob@example.com");
}

static void nothing_left_is_null(void) {
  TITLE("", NULL);
  TITLE("   \n\t ", NULL);
  TITLE("@alice @bob", NULL);
  TITLE("Hello!", NULL);
  TITLE("hi, can you please help me?", NULL);
  TITLE("**__##``", NULL);
  TITLE("@alice hello", NULL);
}

static void white_space_collapsed(void) {
  TITLE("  plan\n\n a   \t trip  ", "Plan a trip");
  TITLE("line one\r\nline two", "Line one line two");
}

static void long_text_cut_on_word_boundary(void) {
  TITLE("please write a detailed comparison of the economic policies of several European countries",
        "Write a detailed comparison of the economic…");
  TITLE("Explain, in simple terms, how the immune system fights off viruses",
        "Explain, in simple terms, how the immune system…");
}

static void cut_trims_punctuation(void) {
  /* The 50th character ends "done," so the cut lands after a comma, which goes. */
  TITLE("aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii done, and then some more",
        "Aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii done…");
  TITLE("aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jj -- and more words", "Aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jj…");
}

static void exactly_fifty_is_not_cut(void) {
  const char *fifty = "Abcd efgh ijkl mnop qrst uvwx yzab cdef ghij klmno";
  CHECK_INT(strlen(fifty), 50);
  TITLE(fifty, fifty);
  TITLE("Abcd efgh ijkl mnop qrst uvwx yzab cdef ghij klmnop", "Abcd efgh ijkl mnop qrst uvwx yzab cdef ghij…");
  TITLE("Abcd efgh ijkl mnop qrst uvwx yzab cdef ghij klmno p", "Abcd efgh ijkl mnop qrst uvwx yzab cdef ghij klmno…");
}

static void long_first_word_cut_hard(void) {
  char text[80], want[64];
  memset(text, 'a', 70);
  text[70] = '\0';
  memset(want, 'a', 50);
  want[0] = 'A';
  strcpy(want + 50, "…");
  TITLE(text, want);
}

static void unicode_counts_characters(void) {
  /* 69 characters, far more bytes: the cut is by characters and never splits one. */
  TITLE("étude des écoles élémentaires à la campagne française et leurs élèves",
        "Étude des écoles élémentaires à la campagne…");
  TITLE("🎉🎉🎉 party planning for the whole team next friday evening ok",
        "🎉🎉🎉 party planning for the whole team next friday…");
  /* 50 accented characters fit; 2 bytes each. */
  char text[128] = "";
  for (int i = 0; i < 25; i++) strcat(text, i ? " é" : "àé");
  CHECK_INT(chars(text), 50);
  char *out = NULL;
  CHECK_INT(chat_title_make(text, &out), AG_OK);
  CHECK(out && strncmp(out, "Àé é", strlen("Àé é")) == 0);
  CHECK(out && chars(out) == 50);
  free(out);
}

static void unicode_hard_cut_never_splits(void) {
  char text[512] = "";
  for (int i = 0; i < 60; i++) strcat(text, "ü");
  char *out = NULL;
  CHECK_INT(chat_title_make(text, &out), AG_OK);
  CHECK(out != NULL);
  if (out) {
    CHECK_INT(chars(out), 51); /* 50 + "…" */
    CHECK(strncmp(out, "Üü", strlen("Üü")) == 0);
    CHECK_INT(strlen(out), 100 + 3);
  }
  free(out);
}

static void capitalise_only_letters(void) {
  TITLE("42 ways to relax", "42 ways to relax");
  TITLE("ÿes", "ÿes"); /* ÿ's capital is outside Latin-1: left alone */
  TITLE("÷ division", "÷ division");
}

/* Issue 15 item 4: emphasis only where it is emphasis; identifiers, numbers and URLs untouched. */
static void markdown_emphasis_only(void) {
  static const char *const cases[][2] = {
    {"rename my_variable_name to camelCase", "Rename my_variable_name to camelCase"},
    {"What is 5*3*2?", "What is 5*3*2?"},
    {"C_API_VERSION is wrong", "C_API_VERSION is wrong"},
    {"what does C_API_VERSION mean", "What does C_API_VERSION mean"},
    {"fix _init and __exit", "Fix _init and __exit"},
    {"open https://example.com/a_b_c/*x* now", "Open https://example.com/a_b_c/*x* now"},
    {"visit www.my_site.org/_p_ today", "Visit www.my_site.org/_p_ today"},
    {"a *very* **bold** _idea_ __here__", "A very bold idea here"},
    {"(*note*) and *unclosed emphasis", "(note) and *unclosed emphasis"},
    {"compute 2 * 3 quickly", "Compute 2 * 3 quickly"},
    {"***all three*** marks", "All three marks"},
    {"C# and F# tips", "C# and F# tips"},
    {"## Heading\n\n* item one\n* item two", "Heading item one item two"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_title(__LINE__, cases[i][0], cases[i][1]);
}

/* A greeting followed by a single word keeps the original: "There" says less than "Hello there". */
static void greeting_and_one_word_kept(void) {
  TITLE("hello there", "Hello there");
  TITLE("hello all", "Hello all");
  TITLE("@bob hi there", "Hi there");
  TITLE("Hey, please, thanks!", "Hey, please, thanks!");
  TITLE("hello there, plan a trip", "There, plan a trip");
  TITLE("@alice thanks", "Thanks");
}

static void bad_arguments(void) {
  char *out = NULL;
  CHECK_INT(chat_title_make(NULL, &out), AG_ERR_INVALID);
  CHECK_INT(chat_title_make("x", NULL), AG_ERR_INVALID);
}

SUITE_RUN((UNIT(plain_text_is_kept), UNIT(spec_example), UNIT(greetings_chained), UNIT(greetings_whole_words_only),
  UNIT(greetings_only_in_front), UNIT(markdown_marks_stripped), UNIT(markdown_links_keep_text), UNIT(mentions_stripped),
  UNIT(nothing_left_is_null), UNIT(white_space_collapsed), UNIT(long_text_cut_on_word_boundary),
  UNIT(cut_trims_punctuation), UNIT(exactly_fifty_is_not_cut), UNIT(long_first_word_cut_hard),
  UNIT(unicode_counts_characters), UNIT(unicode_hard_cut_never_splits), UNIT(capitalise_only_letters),
  UNIT(markdown_emphasis_only), UNIT(greeting_and_one_word_kept), UNIT(bad_arguments)))
