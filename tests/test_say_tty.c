/* End to end: `agora say` on a pseudo-terminal, as a person uses it (issue #23). say runs on libagora,
 * and on a terminal it shows what `run` shows: the status line on stderr (the agents thinking, the
 * messages so far) and a dim live line per streaming reply, replaced by the whole message. */
#include "support/llm_server.h"
#include "support/suite.h"
#include "support/tty.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *tmp;

/* One agent whose reply streams a word every 300 ms from the loopback server. */
static const char slow_world[] =
  "{\"name\": \"Say Tty\", \"agents\": [\n"
  " {\"name\": \"slow\", \"provider\": \"openai\", \"base_url\": \"%s\",\n"
  "  \"system_prompt\": \"[[mock delay=300 reply=\\\"first second third\\\"]]\"}]}\n";

/* `agora say WORLD "@slow hi" --db DB [extra]` on a pty over slow_world and a loopback server started
 * for it (stopped by say_case_end). 0, or -1 (the case failed) when something did not start. */
typedef struct say_case {
  llm_server *srv;
  char *w, *db;
  tty t;
} say_case;

static int say_case_start(say_case *c, const char *name, const char *extra) {
  static const char *const env[] = {"OPENAI_API_KEY=test-key", NULL};
  *c = (say_case){.srv = NULL};
  CHECK_INT(llm_server_start(&c->srv), 0);
  if (!c->srv) return -1;
  char world[1024], file[64];
  snprintf(world, sizeof world, slow_world, llm_server_url(c->srv, "/v1"));
  snprintf(file, sizeof file, "%s.json", name);
  c->w = strdup(suite_file(tmp, file, world));
  c->db = suite_fresh(tmp, name);
  const char *args[] = {"say", c->w, "@slow hi", "--db", c->db, extra, NULL};
  CHECK_INT(tty_start(&c->t, tmp, args, env), 0);
  return 0;
}

static void say_case_end(say_case *c) {
  tty_close(&c->t);
  llm_server_stop(c->srv);
  free(c->w);
  free(c->db);
}

/* The status line names the thinking agent while the reply streams, a live line shows the reply's
 * beginning before the whole message arrives, and the whole message ends the run. */
static void say_tty_shows_status_and_live_lines(void) {
  say_case c;
  if (say_case_start(&c, "live", NULL)) return;
  CHECK(tty_expect(&c.t, "1 thinking: slow")); /* the status line, while the reply is in flight */
  CHECK(tty_expect(&c.t, " messages · "));
  CHECK(tty_expect(&c.t, "slow: first \n")); /* the live line, before the reply is whole */
  CHECK(tty_expect(&c.t, "slow: first second third\n\n"));
  CHECK_INT(tty_exit(&c.t), 0);
  CHECK(strstr(c.t.text, "human: @slow hi") == NULL); /* the person's own message is not echoed */
  say_case_end(&c);
}

/* --quiet: whole messages only, no live line; the status line stays. */
static void say_tty_quiet_has_no_live_line(void) {
  say_case c;
  if (say_case_start(&c, "quiet", "--quiet")) return;
  CHECK(tty_expect(&c.t, "1 thinking: slow"));
  CHECK(tty_expect(&c.t, "slow: first second third\n\n"));
  CHECK_INT(tty_exit(&c.t), 0);
  CHECK(strstr(c.t.text, "slow: first \n") == NULL);
  say_case_end(&c);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(say_tty_shows_status_and_live_lines), UNIT(say_tty_quiet_has_no_live_line)};
  if (tty_skip_without_pty()) return 0;
  return suite_main(argc, argv, &(suite){SUITE_TESTS(tests), .tmp = &tmp, .no_sigpipe = 1});
}
