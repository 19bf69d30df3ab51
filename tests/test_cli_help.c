/* `agora --help` names every command and --version; every command answers --help; and docs/cli.md, the
 * command reference, documents every command and every option the commands' own --help prints, so the
 * reference cannot fall behind the binary unnoticed. */
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every command main.c dispatches. */
static const char *const commands[] = {"run", "say", "init", "console", "tools", "replay", "serve",
                                       "chats", "worlds", "host", "memory", NULL};

/* 1 when text has a line that starts with two spaces and then word followed by a space. */
static int lists(const char *text, const char *word) {
  char want[64];
  snprintf(want, sizeof want, "\n  %s ", word);
  return text && strstr(text, want) != NULL;
}

static void help_lists_every_command(void) {
  proc_result r;
  const char *h[] = {"--help", NULL};
  PROC_OK(h, NULL, NULL, &r);
  for (int i = 0; commands[i]; i++)
    if (!lists(r.out, commands[i])) unit_fail_(__FILE__, __LINE__, "agora --help does not list '%s'", commands[i]);
  CHECK(strstr(r.out, "--version") != NULL);
  CHECK(strstr(r.out, "chats list|show|new|delete|export|import|branch") != NULL);
  proc_result_free(&r);
  const char *word[] = {"help", NULL};
  PROC_OK(word, NULL, NULL, &r);
  CHECK(lists(r.out, "run"));
  proc_result_free(&r);
}

/* "agora X.Y.Z" and nothing else, exit 0. */
static void version_prints_the_version(void) {
  proc_result r;
  const char *v[] = {"--version", NULL};
  PROC_OK(v, NULL, NULL, &r);
  int a = -1, b = -1, c = -1, n = 0;
  CHECK_INT(sscanf(r.out, "agora %d.%d.%d\n%n", &a, &b, &c, &n), 3);
  CHECK(a >= 0 && b >= 0 && c >= 0);
  CHECK_INT((int)strlen(r.out), n);
  CHECK_STR(r.err, "");
  proc_result_free(&r);
}

/* Appends every "--option" word of text to the list (duplicates kept; the caller only looks them up). */
static size_t options_of(const char *text, char opts[][40], size_t n, size_t cap) {
  for (const char *p = text; (p = strstr(p, "--")) && n < cap; p += 2) {
    if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-')) continue;
    size_t len = 2;
    while (isalnum((unsigned char)p[len]) || p[len] == '-') len++;
    if (len < 4 || len >= 40) continue;
    memcpy(opts[n], p, len);
    opts[n][len] = '\0';
    n++;
  }
  return n;
}

/* docs/cli.md has a section per command and mentions every option of its --help. */
static void reference_documents_every_command_and_option(void) {
  char *doc = unit_read_file(unit_src_path("docs/cli.md"));
  CHECK(doc != NULL);
  if (!doc) return;
  static char opts[512][40];
  for (int i = 0; commands[i]; i++) {
    char head[64];
    snprintf(head, sizeof head, "## agora %s", commands[i]);
    if (!strstr(doc, head)) unit_fail_(__FILE__, __LINE__, "docs/cli.md has no '%s' section", head);
    const char *args[] = {commands[i], "--help", NULL};
    proc_result r;
    PROC_OK(args, NULL, NULL, &r);
    size_t n = options_of(r.out, opts, 0, 512);
    for (size_t k = 0; k < n; k++)
      if (!strstr(doc, opts[k]))
        unit_fail_(__FILE__, __LINE__, "docs/cli.md does not mention %s (agora %s --help)", opts[k], commands[i]);
    proc_result_free(&r);
  }
  free(doc);
}

SUITE_RUN((UNIT(help_lists_every_command), UNIT(version_prints_the_version),
  UNIT(reference_documents_every_command_and_option)))
