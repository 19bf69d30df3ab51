/* End to end through the agora binary, what a new user trips over (issue 15): local servers need no
 * key, the progress line and live text on a terminal (run under a pty), one-shot `say`, `init`,
 * per-run overrides, and the hints that say why nobody answered. */
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *tmp;
static llm_server *srv;

static const char *world_file(const char *name, const char *json) { return suite_file(tmp, name, json); }

/* `agora run NAME --no-save` on json into r (the caller frees it): the exit status is status. */
static void run_world(const char *name, const char *json, int status, proc_result *r) {
  const char *args[] = {"run", world_file(name, json), "--no-save", NULL};
  CHECK_INT(proc_agora(args, NULL, NULL, r), 0);
  CHECK_INT(r->status, status);
}

/* Runs `agora run NAME --no-save` on json: the exit status is status and needle is in stdout (or
 * stderr when on_err). */
static void expect_run(const char *name, const char *json, int status, int on_err, const char *needle) {
  proc_result r;
  run_world(name, json, status, &r);
  const char *where = on_err ? r.err : r.out;
  if (!strstr(where, needle)) unit_fail_(__FILE__, __LINE__, "%s: no '%s' in: %s", name, needle, where);
  proc_result_free(&r);
}

/* s with every occurrence of from replaced by to (caller frees). */
static char *replace_all(const char *s, const char *from, const char *to) {
  size_t n = strlen(s) + 1, fl = strlen(from), tl = strlen(to);
  for (const char *p = s; (p = strstr(p, from)); p += fl) n += tl;
  char *out = malloc(n), *d = out;
  for (const char *p = s;;) {
    const char *q = strstr(p, from);
    if (!q) {
      strcpy(d, p);
      break;
    }
    memcpy(d, p, (size_t)(q - p));
    d += q - p;
    memcpy(d, to, tl);
    d += tl;
    p = q + fl;
  }
  return out;
}

/* ---- item 2: local servers need no key ---- */

/* The shipped example, pointed at the loopback server, runs without OPENAI_API_KEY and sends no
 * Authorization header to a server at an explicit base_url. */
static void local_example_needs_no_key(void) {
  llm_server_reset(srv);
  char *text = unit_read_file(unit_src_path("examples/local-llm.json"));
  CHECK(text != NULL);
  if (!text) return;
  char *a = replace_all(text, "http://127.0.0.1:11434", llm_server_url(srv, ""));
  char *b = replace_all(a, "http://127.0.0.1:8080", llm_server_url(srv, ""));
  const char *args[] = {"run", world_file("local.json", b), "--json", "--no-save", NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, NULL, &r), 0);
  if (r.status) fprintf(stderr, "%s\n%s\n", r.err, r.out);
  CHECK_INT(r.status, 0);
  CHECK(strstr(r.out, "\"sender\":\"moderator\"") != NULL);
  CHECK(strstr(r.out, "llm-error") == NULL);
  proc_result_free(&r);
  CHECK(llm_server_request_count(srv) >= 1);
  for (size_t i = 0; i < llm_server_request_count(srv); i++) {
    llm_server_request q;
    if (llm_server_request_get(srv, i, &q)) continue;
    char *auth = llm_server_request_header(&q, "Authorization");
    CHECK(auth == NULL);
    free(auth);
    llm_server_request_free(&q);
  }
  free(text);
  free(a);
  free(b);
}

/* "api_key_env": "" sends no key even when the default variable is set; the hosted default URL still
 * needs its key (the call fails before any request, so nothing leaves the machine). */
static void empty_key_env_and_hosted_default(void) {
  llm_server_reset(srv);
  char json[1024];
  snprintf(json, sizeof json,
           "{\"name\": \"w\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\", \"base_url\": \"%s\","
           " \"api_key_env\": \"\", \"system_prompt\": \"[[mock reply=hi]]\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@ann hi\"}]}",
           llm_server_url(srv, "/v1"));
  const char *args[] = {"run", world_file("e.json", json), "--no-save", NULL};
  const char *env[] = {"OPENAI_API_KEY=sk-should-not-be-sent-1234", NULL};
  proc_result r;
  PROC_OK(args, NULL, env, &r);
  CHECK(strstr(r.out, "ann: hi") != NULL);
  proc_result_free(&r);
  llm_server_request q;
  CHECK_INT(llm_server_request_get(srv, 0, &q), 0);
  CHECK(strstr(q.headers, "sk-should-not-be-sent") == NULL);
  llm_server_request_free(&q);

  const char *hosted = "{\"name\": \"w\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\"}],"
                       " \"script\": [{\"from\": \"human\", \"text\": \"@ann hi\"}]}";
  expect_run("h.json", hosted, 1, 0, "OPENAI_API_KEY is not set");
}

/* ---- item 15: say why nobody answered ---- */

static void mid_line_mention_is_explained(void) {
  const char *json = "{\"name\": \"w\", \"agents\": [{\"name\": \"bob\", \"replies\": [\"yes?\"]}],"
                     " \"script\": [{\"from\": \"human\", \"text\": \"Hi, @bob and @nobody\"},"
                     " {\"from\": \"human\", \"text\": \"@bob hi\"}, {\"from\": \"human\", \"text\": \"about @zed\"}]}";
  proc_result r;
  run_world("m.json", json, 0, &r);
  const char *hint = strstr(r.out, "-- not-addressed:");
  CHECK(hint != NULL);
  CHECK(hint && strstr(hint, "@bob is mentioned but not at the start of a line; nobody was addressed") != NULL);
  /* Once only: the addressed message and the unknown name give none. */
  CHECK(hint && strstr(hint + 17, "not-addressed") == NULL);
  CHECK(strstr(r.out, "bob: yes?") != NULL);
  CHECK(strstr(r.err, "warning") == NULL); /* bob has replies: no script warning */
  proc_result_free(&r);
  const char *args2[] = {"run", world_file("m.json", json), "--no-save", "--json", NULL};
  CHECK_INT(proc_agora(args2, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "\"event\":\"not-addressed\"") && strstr(r.out, "\"names\":[\"bob\"]"));
  proc_result_free(&r);
}

static void agent_without_provider_is_warned_once(void) {
  const char *json = "{\"name\": \"w\", \"agents\": [{\"name\": \"ann\"}, {\"name\": \"cy\"}],"
                     " \"script\": [{\"from\": \"human\", \"text\": \"hello\"}, {\"from\": \"human\", \"text\": \"again\"}]}";
  proc_result r;
  run_world("p.json", json, 0, &r);
  const char *w = strstr(r.err, "warning: agents 'ann', 'cy' have no provider");
  CHECK(w != NULL);
  CHECK(w && strstr(w + 1, "warning") == NULL);
  CHECK(strstr(r.err, "'script'") != NULL);
  proc_result_free(&r);
}

static void unknown_field_suggests_the_name(void) {
  expect_run("u.json", "{\"name\": \"w\", \"turnlimit\": 3, \"agents\": [{\"name\": \"ann\"}]}", 2, 1,
             "turnlimit: unknown field (did you mean 'turn_limit'?)");
  expect_run("u2.json", "{\"name\": \"w\", \"agents\": [{\"name\": \"ann\", \"sytem_prompt\": \"x\"}]}", 2, 1,
             "agents[0].sytem_prompt: unknown field (did you mean 'system_prompt'?)");
  /* Nothing near: no suggestion. */
  const char *far = "{\"name\": \"w\", \"agents\": [{\"name\": \"ann\"}], \"zzzzzz\": 1}";
  expect_run("u3.json", far, 2, 1, "zzzzzz: unknown field\n");
}

/* ---- item 12: overrides for every agent ---- */

static void overrides_apply_to_every_agent(void) {
  llm_server_reset(srv);
  llm_server_rule(srv, "", "echo=1");
  const char *json = "{\"name\": \"w\", \"agents\": [{\"name\": \"ann\", \"replies\": [\"scripted\"]},"
                     " {\"name\": \"bo\", \"provider\": \"anthropic\", \"model\": \"claude\"}],"
                     " \"script\": [{\"from\": \"human\", \"text\": \"hello\"}]}";
  const char *args[] = {"run", world_file("o.json", json), "--no-save", "--provider", "openai", "--model",
                        "tiny", "--base-url", llm_server_url(srv, "/v1"), NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  CHECK(strstr(r.out, "ann: echo: human: hello") && strstr(r.out, "bo: echo: human: hello"));
  proc_result_free(&r);
  CHECK_INT(llm_server_request_count(srv), 2);
  for (size_t i = 0; i < 2; i++) {
    llm_server_request q;
    if (llm_server_request_get(srv, i, &q)) continue;
    CHECK(strstr(q.path, "/v1/chat/completions") != NULL);
    CHECK(strstr(q.body, "\"model\":\"tiny\"") != NULL);
    llm_server_request_free(&q);
  }
  const char *bad[] = {"run", world_file("o.json", json), "--provider", "gpt", NULL};
  PROC_REFUSED(bad, NULL, "unknown provider 'gpt'", NULL);
}

/* ---- items 3 and 11: the terminal display of run ---- */

/* Runs agora with stdout and stderr on a pty (stdout on a pipe instead when piped_out) and returns all
 * the terminal got (caller frees); *out_text gets the pipe's text when piped_out (caller frees). */
static char *on_pty(const char *const *args, int piped_out, char **out_text, int *status) {
  const char *bin = getenv("AGORA_BIN");
  int pfd[2] = {-1, -1};
  if (piped_out && pipe(pfd)) return NULL;
  int fd;
  struct winsize ws = {24, 100, 0, 0};
  pid_t pid = forkpty(&fd, NULL, NULL, &ws);
  if (pid == 0) {
    if (piped_out) dup2(pfd[1], 1), close(pfd[0]), close(pfd[1]);
    size_t n = 0;
    while (args[n]) n++;
    char **argv = calloc(n + 2, sizeof *argv);
    argv[0] = (char *)bin;
    for (size_t i = 0; i < n; i++) argv[i + 1] = (char *)args[i];
    execv(bin, argv);
    _exit(127);
  }
  if (piped_out) close(pfd[1]);
  char *screen = NULL, *text = NULL;
  size_t len = 0, tlen = 0;
  FILE *f = open_memstream(&screen, &len), *t = open_memstream(&text, &tlen);
  int open_pty = 1, open_pipe = piped_out;
  while (open_pty || open_pipe) {
    struct pollfd p[2] = {{open_pty ? fd : -1, POLLIN, 0}, {open_pipe ? pfd[0] : -1, POLLIN, 0}};
    if (poll(p, 2, 20000) <= 0) break;
    char buf[4096];
    if (p[0].revents) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) open_pty = 0;
      else fwrite(buf, 1, (size_t)n, f);
    }
    if (p[1].revents) {
      ssize_t n = read(pfd[0], buf, sizeof buf);
      if (n <= 0) open_pipe = 0;
      else fwrite(buf, 1, (size_t)n, t);
    }
  }
  fclose(f);
  fclose(t);
  close(fd);
  if (piped_out) close(pfd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  if (out_text) *out_text = text;
  else free(text);
  return screen;
}

/* While ann's reply is slow, the status line names her and its clock goes on. */
static void progress_line_names_and_ticks(void) {
  llm_server_reset(srv);
  char json[1024];
  snprintf(json, sizeof json,
           "{\"name\": \"w\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\", \"base_url\": \"%s\","
           " \"system_prompt\": \"[[mock latency=1200 reply=done]]\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@ann go\"}]}",
           llm_server_url(srv, "/v1"));
  const char *args[] = {"run", world_file("slow.json", json), "--no-save", NULL};
  int status = 0;
  char *screen = on_pty(args, 1, NULL, &status);
  CHECK_INT(status, 0);
  const char *key = "1 thinking: ann \xC2\xB7 1 messages \xC2\xB7 ";
  double max = -1;
  int draws = 0;
  for (const char *p = screen; p && (p = strstr(p, key)); p += strlen(key)) {
    double secs = atof(p + strlen(key));
    if (secs > max) max = secs;
    draws++;
  }
  CHECK(draws >= 5); /* redrawn on the timer, not only on events */
  CHECK(max >= 0.8);
  free(screen);
}

/* On a terminal the reply streams in a live line, then the whole message; --quiet and a pipe print
 * whole messages only; --stream on a pipe prints the chunks as lines. */
static void live_text_on_a_terminal(void) {
  char json[1024];
  snprintf(json, sizeof json,
           "{\"name\": \"w\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\", \"base_url\": \"%s\","
           " \"system_prompt\": \"[[mock delay=120 reply=\\\"one two three four\\\"]]\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@ann go\"}]}",
           llm_server_url(srv, "/v1"));
  const char *path = world_file("live.json", json);
  const char *args[] = {"run", path, "--no-save", NULL};
  int status = 0;
  char *screen = on_pty(args, 0, NULL, &status);
  CHECK_INT(status, 0);
  const char *live = screen ? strstr(screen, "\033[2mann: one") : NULL;
  CHECK(live != NULL);
  CHECK(live && strstr(live, "\033[2mann: one two") != NULL);
  CHECK(live && strstr(live, "ann: one two three four\r\n") != NULL);
  free(screen);

  const char *quiet[] = {"run", path, "--no-save", "--quiet", NULL};
  screen = on_pty(quiet, 0, NULL, &status);
  CHECK_INT(status, 0);
  CHECK(screen && strstr(screen, "\033[2mann:") == NULL);
  CHECK(screen && strstr(screen, "ann: one two three four") != NULL);
  free(screen);

  char *text = NULL;
  screen = on_pty(args, 1, &text, &status);
  CHECK_INT(status, 0);
  CHECK_STR(text, "human: @ann go\n\nann: one two three four\n\n");
  free(text);
  free(screen);

  const char *stream[] = {"run", path, "--no-save", "--stream", NULL};
  proc_result r;
  PROC_OK(stream, NULL, NULL, &r);
  CHECK(strstr(r.out, "-- llm-chunk: agent=ann text=one \n-- llm-chunk: agent=ann text=two \n") != NULL);
  CHECK(strstr(r.out, "ann: one two three four\n\n") != NULL);
  proc_result_free(&r);
}

/* ---- item 12: say and init ---- */

static void say_publishes_one_message(void) {
  llm_server_reset(srv);
  char json[1024], db[4096];
  snprintf(db, sizeof db, "%s/db-say", tmp);
  snprintf(json, sizeof json,
           "{\"name\": \"w\", \"agents\": [{\"name\": \"alice\", \"provider\": \"openai\", \"base_url\": \"%s\","
           " \"system_prompt\": \"[[mock echo=1]]\"}, {\"name\": \"bob\", \"replies\": [\"not me\"]}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"the script is not run\"}]}",
           llm_server_url(srv, "/v1"));
  const char *path = world_file("say.json", json);
  const char *args[] = {"say", path, "@alice hi", "--db", db, NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  CHECK(strstr(r.out, "alice: echo: human: @alice hi\n") != NULL);
  CHECK(strncmp(r.out, "human:", 6) && !strstr(r.out, "\nhuman:") && strstr(r.out, "script is not run") == NULL && !strstr(r.out, "bob:"));
  proc_result_free(&r);
  /* The next say continues the same chat (the prompt holds the first exchange); --new-chat starts one. */
  const char *again[] = {"say", path, "@alice again", "--db", db, "--json", NULL};
  PROC_OK(again, NULL, NULL, &r);
  CHECK(strstr(r.out, "\"seq\":3") && strstr(r.out, "\"text\":\"echo: human: @alice again\""));
  proc_result_free(&r);
  const char *fresh[] = {"say", path, "@alice new", "--db", db, "--new-chat", "--json", NULL};
  CHECK_INT(proc_agora(fresh, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "\"seq\":1,") != NULL);
  proc_result_free(&r);
  const char *list[] = {"chats", "list", "--db", db, "--json", NULL};
  CHECK_INT(proc_agora(list, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "\"message_count\":4") && strstr(r.out, "\"message_count\":2"));
  proc_result_free(&r);
  /* An LLM failure is exit 1, as for run; a missing message is usage (2). */
  llm_server_rule(srv, "", "status=500");
  const char *fail[] = {"say", path, "@alice x", "--no-save", NULL};
  const char *env[] = {"AGORA_LLM_BACKOFF_MS=1", NULL};
  CHECK_INT(proc_agora(fail, NULL, env, &r), 0);
  CHECK_INT(r.status, 1);
  proc_result_free(&r);
  const char *usage[] = {"say", path, NULL};
  CHECK_INT(proc_agora(usage, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 2);
  proc_result_free(&r);
}

static void init_writes_a_world_that_runs(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/starter.json", tmp);
  const char *args[] = {"init", path, NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  proc_result_free(&r);
  char *text = unit_read_file(path);
  CHECK(text && strstr(text, "\"_comment\"") && strstr(text, "127.0.0.1:11434/v1"));
  /* Refuses to overwrite. */
  unit_write_file(path, "{\"mine\": 1}");
  PROC_REFUSED(args, NULL, "already exists", NULL);
  char *mine = unit_read_file(path);
  CHECK_STR(mine, "{\"mine\": 1}");
  free(mine);
  unit_write_file(path, text);
  /* Offline with the script provider, and against the loopback server with no key. */
  const char *offline[] = {"run", path, "--provider", "script", "--no-save", NULL};
  PROC_OK(offline, NULL, NULL, &r);
  CHECK(strstr(r.out, "host: Welcome!") && strstr(r.out, "guest: Coffee, every time."));
  proc_result_free(&r);
  llm_server_reset(srv);
  const char *local[] = {"run", path, "--base-url", llm_server_url(srv, "/v1"), "--no-save", NULL};
  PROC_OK(local, NULL, NULL, &r);
  CHECK(strstr(r.out, "host: mock reply") != NULL);
  proc_result_free(&r);
  free(text);
  /* A database holding Starter already: the new starter is named Starter 2, so that running it does
   * not replace the stored world's settings. */
  char db[4200], second[4200];
  snprintf(db, sizeof db, "%s/initdb", tmp);
  snprintf(second, sizeof second, "%s/second.json", tmp);
  const char *saved[] = {"run", path, "--provider", "script", "--db", db, NULL};
  PROC_OK(saved, NULL, NULL, &r);
  proc_result_free(&r);
  const char *again[] = {"init", second, "--db", db, NULL};
  PROC_OK(again, NULL, NULL, &r);
  CHECK(strstr(r.out, "named the world 'Starter 2'") != NULL);
  proc_result_free(&r);
  text = unit_read_file(second);
  CHECK(text && strstr(text, "\"name\": \"Starter 2\","));
  free(text);
}

static const char *const env[] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", NULL};
SUITE_RUN((UNIT(local_example_needs_no_key), UNIT(empty_key_env_and_hosted_default),
  UNIT(mid_line_mention_is_explained), UNIT(agent_without_provider_is_warned_once),
  UNIT(unknown_field_suggests_the_name), UNIT(overrides_apply_to_every_agent), UNIT(progress_line_names_and_ticks),
  UNIT(live_text_on_a_terminal), UNIT(say_publishes_one_message),
  UNIT(init_writes_a_world_that_runs)), .env = env, .tmp = &tmp, .srv = &srv)
