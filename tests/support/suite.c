/* The test binaries' one main (see suite.h). */
#include "support/suite.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "NAME=value" sets, "NAME" unsets. */
static void suite_env(const char *const *env) {
  for (size_t i = 0; env && env[i]; i++) {
    const char *eq = strchr(env[i], '=');
    char name[256];
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - env[i]) : (int)strlen(env[i]), env[i]);
    if (eq) setenv(name, eq + 1, 1);
    else unsetenv(name);
  }
}

int suite_main(int argc, char **argv, const suite *s) {
  int rc = 1, began = 0;
  suite_env(s->env);
  if (s->no_sigpipe) signal(SIGPIPE, SIG_IGN);
  if (s->many_fds) unit_raise_fd_limit();
  if (s->tmp && !(*s->tmp = unit_tmpdir())) {
    fprintf(stderr, "cannot make a scratch directory\n");
    goto out;
  }
  if (s->srv && llm_server_start(s->srv)) {
    fprintf(stderr, "cannot start the loopback server\n");
    *s->srv = NULL;
    goto out;
  }
  began = 1;
  if (s->before && s->before()) goto out;
  rc = unit_main(argc, argv, s->tests, s->n);
out:
  if (began && s->after) s->after();
  if (s->srv && *s->srv) llm_server_stop(*s->srv);
  if (s->tmp && *s->tmp) {
    if (!getenv("AGORA_KEEP_TMP")) unit_rmrf(*s->tmp);
    free(*s->tmp);
    *s->tmp = NULL;
  }
  return rc;
}

const char *suite_file(const char *dir, const char *name, const char *text) {
  static char path[8][4096];
  static int k;
  char *p = path[k++ % 8];
  snprintf(p, sizeof path[0], "%s/%s", dir, name);
  if (text && unit_write_file(p, text)) unit_fail_(__FILE__, __LINE__, "cannot write %s", p);
  return p;
}

char *suite_fresh(const char *dir, const char *name) {
  char *path = strdup(suite_file(dir, name, NULL));
  if (path) unit_rmrf(path);
  return path;
}
