/* `{{name}}` prompt variables (issue 13): rendering, world variables before built-ins, `{{{{`, the
 * load-time check, and every malformed placeholder failing with a message instead of an empty string. */
#include <stdio.h>
#include <stdlib.h>

#include "common/buf.h"
#include "common/error.h"
#include "support/suite.h"
#include "support/unit.h"
#include "world/template.h"

/* World variables town and season, built-ins world, agent, agents, turn_limit and the time ones at
 * 2026-03-01T08:00Z (a Sunday). */
static template_vars *vars_make(void) {
  template_vars *v = NULL;
  CHECK_INT(template_vars_new(&v), AG_OK);
  CHECK_INT(template_vars_set(v, "town", "Millbrook"), AG_OK);
  CHECK_INT(template_vars_set(v, "season", "autumn"), AG_OK);
  CHECK_INT(template_vars_set_builtin(v, "world", "Town"), AG_OK);
  CHECK_INT(template_vars_set_builtin(v, "agent", "mayor"), AG_OK);
  CHECK_INT(template_vars_set_builtin(v, "agents", "mayor, baker"), AG_OK);
  CHECK_INT(template_vars_set_time(v, 1772352000000), AG_OK);
  CHECK_INT(template_vars_set_builtin(v, "turn_limit", "5"), AG_OK);
  return v;
}

static void check_render(int line, const template_vars *v, const char *text, const char *want) {
  ag_buf out;
  ag_buf_init(&out, 4096);
  ag_errmsg em = {{0}};
  int rc = template_render(text, v, &out, &em);
  if (rc != AG_OK) unit_fail_(__FILE__, line, "render(\"%s\") failed: %d %s", text, rc, em.text);
  else if (strcmp(ag_buf_str(&out), want) != 0)
    unit_fail_(__FILE__, line, "render(\"%s\") == \"%s\", expected \"%s\"", text, ag_buf_str(&out), want);
  rc = template_check(text, v, &em);
  if (rc != AG_OK) unit_fail_(__FILE__, line, "check(\"%s\") failed: %s", text, em.text);
  ag_buf_free(&out);
}

/* Both render and check must fail with AG_ERR_INVALID and message want. */
static void check_bad(int line, const template_vars *v, const char *text, const char *want) {
  ag_buf out;
  ag_buf_init(&out, 4096);
  for (int render = 0; render <= 1; render++) {
    ag_errmsg em = {{0}};
    int rc = render ? template_render(text, v, &out, &em) : template_check(text, v, &em);
    if (rc != AG_ERR_INVALID)
      unit_fail_(__FILE__, line, "%s(\"%s\") == %d, expected AG_ERR_INVALID", render ? "render" : "check", text, rc);
    else if (strcmp(em.text, want) != 0)
      unit_fail_(__FILE__, line, "%s(\"%s\") said\n  \"%s\", expected\n  \"%s\"", render ? "render" : "check", text,
                 em.text, want);
  }
  ag_buf_free(&out);
}

#define RENDER(text, want) check_render(__LINE__, v, text, want)
#define BAD(text, want) check_bad(__LINE__, v, text, want)

#define KNOWN "(known: town, season, world, agent, agents, date, time, weekday, turn_limit)"

static void renders_variables(void) {
  template_vars *v = vars_make();
  RENDER("Good morning {{town}}. It is {{date}}, {{weekday}}.", "Good morning Millbrook. It is 2026-03-01, Sunday.");
  RENDER("{{agent}} of {{world}} with {{agents}} at {{time}}, limit {{turn_limit}}",
         "mayor of Town with mayor, baker at 08:00, limit 5");
  RENDER("{{town}}{{town}}", "MillbrookMillbrook");
  RENDER("{{season}}", "autumn");
  RENDER("", "");
  RENDER("no variables at all", "no variables at all");
  RENDER("caf\xc3\xa9 {{town}} \xe2\x9c\x93", "caf\xc3\xa9 Millbrook \xe2\x9c\x93");
  template_vars_free(v);
}

static void spaces_inside_braces(void) {
  template_vars *v = vars_make();
  RENDER("{{ town }}", "Millbrook");
  RENDER("{{\ttown\t}}", "Millbrook");
  RENDER("{{town }} and {{  season}}", "Millbrook and autumn");
  template_vars_free(v);
}

static void literal_braces(void) {
  template_vars *v = vars_make();
  RENDER("{{{{", "{{");
  RENDER("{{{{town}}", "{{town}}");
  RENDER("a {{{{ b }} c", "a {{ b }} c");
  RENDER("}}", "}}");
  RENDER("}} {{town}} }}", "}} Millbrook }}");
  RENDER("{ town }", "{ town }");
  RENDER("{town}", "{town}");
  RENDER("{{{{{{town}}", "{{Millbrook");
  RENDER("{{{{{", "{{{");
  template_vars_free(v);
}

static void values_are_not_expanded_again(void) {
  template_vars *v = vars_make();
  CHECK_INT(template_vars_set(v, "tricky", "{{town}} {{nope"), AG_OK);
  RENDER("x {{tricky}} y", "x {{town}} {{nope y");
  template_vars_free(v);
}

static void world_variables_come_first(void) {
  template_vars *v = vars_make();
  CHECK_INT(template_vars_set(v, "date", "the harvest day"), AG_OK);
  RENDER("{{date}} / {{time}}", "the harvest day / 08:00");
  /* Setting a name again replaces the value within its layer. */
  CHECK_INT(template_vars_set(v, "town", "Ashford"), AG_OK);
  CHECK_INT(template_vars_set_time(v, 1772352000000 + 86400000 + 90 * 60000), AG_OK);
  RENDER("{{town}} {{time}} {{weekday}}", "Ashford 09:30 Monday");
  /* The list of known names has each name once, world first. */
  BAD("{{nope}}", "unknown variable 'nope' (known: town, season, date, world, agent, agents, time, weekday, "
                  "turn_limit)");
  template_vars_free(v);
}

static void time_builtins(void) {
  template_vars *v = NULL;
  CHECK_INT(template_vars_new(&v), AG_OK);
  const struct {
    int64_t ms;
    const char *want;
  } cases[] = {
      {0, "1970-01-01 00:00 Thursday"},
      {-1, "1969-12-31 23:59 Wednesday"},
      {951782400000 + 86399999, "2000-02-29 23:59 Tuesday"},
      {1798761599000, "2026-12-31 23:59 Thursday"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    CHECK_INT(template_vars_set_time(v, cases[i].ms), AG_OK);
    RENDER("{{date}} {{time}} {{weekday}}", cases[i].want);
  }
  /* Within a minute nothing is formatted again, yet every change shows: a later second keeps the
   * value, the next minute moves it, and a built-in set by hand is put back by the next setting. */
  CHECK_INT(template_vars_set_time(v, 1798761599000 - 59000), AG_OK);
  RENDER("{{time}}", "23:59");
  CHECK_INT(template_vars_set_time(v, 1798761599000 + 1000), AG_OK);
  RENDER("{{date}} {{time}} {{weekday}}", "2027-01-01 00:00 Friday");
  CHECK_INT(template_vars_set_builtin(v, "time", "teatime"), AG_OK);
  RENDER("{{time}}", "teatime");
  CHECK_INT(template_vars_set_time(v, 1798761599000 + 2000), AG_OK);
  RENDER("{{time}}", "00:00");
  template_vars_free(v);
}

static void unknown_variable_lists_known(void) {
  template_vars *v = vars_make();
  BAD("Hello {{twn}}!", "unknown variable 'twn' " KNOWN);
  BAD("{{Town}}", "unknown variable 'Town' " KNOWN); /* names are case-sensitive */
  BAD("{{town}} {{ seasons }}", "unknown variable 'seasons' " KNOWN);
  template_vars_free(v);
  CHECK_INT(template_vars_new(&v), AG_OK);
  BAD("{{x}}", "unknown variable 'x' (known: none)");
  char name[16];
  for (int i = 0; i < 60; i++) {
    snprintf(name, sizeof name, "variable_%02d", i);
    CHECK_INT(template_vars_set(v, name, "x"), AG_OK);
  }
  ag_errmsg em = {{0}};
  CHECK_INT(template_check("{{y}}", v, &em), AG_ERR_INVALID);
  CHECK(strncmp(em.text, "unknown variable 'y' (known: variable_00, variable_01, ", 55) == 0);
  CHECK(strstr(em.text, ", ...)") != NULL);
  CHECK(strlen(em.text) < 400);
  template_vars_free(v);
}

static void malformed_placeholders(void) {
  template_vars *v = vars_make();
  BAD("Hi {{town", "'{{' with no '}}' after it at byte 4: '{{town'");
  BAD("{{town}} and {{", "'{{' with no '}}' after it at byte 14: '{{'");
  BAD("{{town} }", "'{{' with no '}}' after it at byte 1: '{{town} }'");
  BAD("{{}}", "empty variable name in '{{}}'");
  BAD("{{   }}", "empty variable name in '{{   }}'");
  BAD("{{to wn}}", "bad variable name in '{{to wn}}' (a letter or _, then letters, digits, _)");
  BAD("{{1town}}", "bad variable name in '{{1town}}' (a letter or _, then letters, digits, _)");
  BAD("{{town-name}}", "bad variable name in '{{town-name}}' (a letter or _, then letters, digits, _)");
  BAD("{{{town}}}", "bad variable name in '{{{town}}' (a letter or _, then letters, digits, _)");
  BAD("{{a{{town}}}}", "bad variable name in '{{a{{town}}' (a letter or _, then letters, digits, _)");
  BAD("{{town\n}}", "bad variable name in '{{town\n}}' (a letter or _, then letters, digits, _)");
  BAD("{{aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}}",
      "bad variable name in '{{aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' (a letter or _, then letters, digits, _)");
  template_vars_free(v);
}

/* Renders in into out (emptied first) and expects rc; want (when not NULL) is the text rendered, or on
 * an error the message. */
static void renders(template_vars *v, ag_buf *out, const char *in, int rc, const char *want) {
  ag_errmsg em = {{0}};
  ag_buf_reset(out);
  CHECK_INT(template_render(in, v, out, &em), rc);
  if (want) CHECK_STR(rc == AG_OK ? ag_buf_str(out) : em.text, want);
}

static void declared_without_value(void) {
  template_vars *v = NULL;
  CHECK_INT(template_vars_new(&v), AG_OK);
  CHECK_INT(template_vars_set_builtin(v, "date", NULL), AG_OK); /* known at load, valued when sent */
  ag_errmsg em = {{0}};
  CHECK_INT(template_check("It is {{date}}", v, &em), AG_OK);
  ag_buf out;
  ag_buf_init(&out, 100);
  renders(v, &out, "It is {{date}}", AG_ERR_STATE, "variable 'date' has no value here");
  CHECK_INT(template_vars_set_time(v, 0), AG_OK);
  renders(v, &out, "It is {{date}}", AG_OK, "It is 1970-01-01");
  ag_buf_free(&out);
  template_vars_free(v);
}

static void output_cap(void) {
  template_vars *v = vars_make();
  ag_buf out;
  ag_buf_init(&out, 12);
  renders(v, &out, "{{town}}{{town}}", AG_ERR_TOO_BIG, "rendered text is longer than 12 bytes");
  renders(v, &out, "abcdefghijklm", AG_ERR_TOO_BIG, NULL);
  renders(v, &out, "abc{{{{defghijk", AG_ERR_TOO_BIG, NULL);
  renders(v, &out, "{{town}}abc", AG_OK, "Millbrookabc");
  ag_buf_free(&out);
  template_vars_free(v);
}

static void names(void) {
  CHECK(template_name_valid("town"));
  CHECK(template_name_valid("_x9"));
  CHECK(template_name_valid("Turn_Limit"));
  CHECK(!template_name_valid(""));
  CHECK(!template_name_valid("9x"));
  CHECK(!template_name_valid("a-b"));
  CHECK(!template_name_valid("a b"));
  CHECK(!template_name_valid("caf\xc3\xa9"));
  char long_name[TEMPLATE_NAME_MAX + 2];
  memset(long_name, 'a', sizeof long_name - 1);
  long_name[TEMPLATE_NAME_MAX + 1] = '\0';
  CHECK(!template_name_valid(long_name));
  long_name[TEMPLATE_NAME_MAX] = '\0';
  CHECK(template_name_valid(long_name));
  template_vars *v = NULL;
  CHECK_INT(template_vars_new(&v), AG_OK);
  CHECK_INT(template_vars_set(v, "a b", "x"), AG_ERR_INVALID);
  CHECK_INT(template_vars_set_builtin(v, "", "x"), AG_ERR_INVALID);
  template_vars_free(v);
  template_vars_free(NULL);
}

SUITE_RUN((UNIT(renders_variables), UNIT(spaces_inside_braces), UNIT(literal_braces),
  UNIT(values_are_not_expanded_again), UNIT(world_variables_come_first), UNIT(time_builtins),
  UNIT(unknown_variable_lists_known), UNIT(malformed_placeholders), UNIT(declared_without_value), UNIT(output_cap),
  UNIT(names)))
