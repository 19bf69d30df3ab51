/* Text from outside shown on a terminal: control characters rendered visibly (common/term_text.h) and
 * UTF-8 repair (common/utf8.h) as tables; end to end, a reply that tries to set the window title, clear
 * the screen and write the clipboard is shown, not obeyed, by run, chats show, replay and the console
 * on a pty, stays raw in storage, and --json output is valid UTF-8. */
#include "common/term_text.h"
#include "common/utf8.h"
#include "support/fixture.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *render(const char *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ag_term_text_put(f, s);
  fclose(f);
  return buf;
}

static void term_text_table(void) {
  static const char *const cases[][2] = {
    {"plain text, é and 村\n\tindented", "plain text, é and 村\n\tindented"},
    {"\x1b]0;title\x07", "^[]0;title^G"},
    {"\x1b[2J\x1b[H", "^[[2J^[[H"},
    {"\x1b]52;c;Zm9v\x07", "^[]52;c;Zm9v^G"},
    {"over\rwrite", "over^Mwrite"},
    {"del\x7f", "del^?"},
    {"c1 \xc2\x9b" "31m", "c1 <U+009B>31m"},
    {"bad \xff\xfe end", "bad \xEF\xBF\xBD\xEF\xBF\xBD end"},
    {"cut \xe6\x9d", "cut \xEF\xBF\xBD\xEF\xBF\xBD"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *got = render(cases[i][0]);
    if (!got || strcmp(got, cases[i][1])) unit_fail_(__FILE__, __LINE__, "case %zu: got \"%s\"", i, got);
    free(got);
  }
}

/* Bidi controls shown; a title kept on its row; continuation lines indented. */
static void term_text_layout_table(void) {
  static const struct {
    const char *in;
    int flags;
    const char *want;
  } cases[] = {
    {"ok \xe2\x80\xaegnp.exe", 0, "ok <U+202E>gnp.exe"},
    {"\xe2\x81\xa6x\xe2\x81\xa9 \xe2\x80\x8f \xd8\x9c \xe2\x80\xa8", 0, "<U+2066>x<U+2069> <U+200F> <U+061C> <U+2028>"},
    {"\xe2\x80\x94 dash and \xe2\x80\x99 quote", 0, "\xe2\x80\x94 dash and \xe2\x80\x99 quote"},
    {"title\nsecond\there", AG_TERM_ONE_LINE, "title^Jsecond^Ihere"},
    {"fine\nhuman: rm -rf /\n\npara", AG_TERM_INDENT, "fine\n  human: rm -rf /\n\n  para"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *got = ag_term_text_dup(cases[i].in, cases[i].flags);
    if (!got || strcmp(got, cases[i].want)) unit_fail_(__FILE__, __LINE__, "case %zu: got \"%s\"", i, got);
    free(got);
  }
}

static void utf8_table(void) {
  static const struct {
    const char *s;
    size_t len;
  } seqs[] = {{"a", 1},          {"\xc3\xa9", 2},     {"\xe6\x9d\x91", 3},     {"\xf0\x9f\x98\x80", 4},
              {"\xc0\x80", 0},   {"\xe0\x80\x80", 0}, {"\xed\xa0\x80", 0},     {"\xf4\x90\x80\x80", 0},
              {"\x80", 0},       {"\xe6\x9d", 0},     {"\xf5\x80\x80\x80", 0}, {"\xc2\x9b", 2}};
  for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++)
    if (ag_utf8_seq_len(seqs[i].s, strlen(seqs[i].s)) != seqs[i].len)
      unit_fail_(__FILE__, __LINE__, "sequence %zu: length %zu", i, ag_utf8_seq_len(seqs[i].s, strlen(seqs[i].s)));
  int nomem = 0;
  CHECK(ag_utf8_fix("valid é 村", &nomem) == NULL && !nomem);
  char *fixed = ag_utf8_fix("a\xff" "b\xed\xa0\x80", &nomem);
  CHECK_STR(fixed, "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  free(fixed);
  char esc[] = "\"a\\u0000b\\\\u0000c\\\\\\u0000\"";
  CHECK_INT(ag_json_replace_nul_escapes(esc, strlen(esc)), 2);
  CHECK_STR(esc, "\"a\\uFFFDb\\\\u0000c\\\\\\uFFFD\"");
}

/* ---- end to end ---- */

/* Tries to set the title, clear the screen, write the clipboard, go back over the line; a stray byte. */
static const char hostile_world[] =
  "{\"name\": \"Hostile\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"a\", \"replies\": [\"\\u001b]0;pwned\\u0007\\u001b[2Jhi \xff there"
  "\\u001b]52;c;Zm9v\\u0007\\r done\"]}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@a go\"}]}";

/* Runs agora on a pty (stdout and stderr; stdin too unless input is given, then a pipe with it); the
 * whole screen output, caller frees. */
static char *on_pty(const char *const *args, const char *input, int *status) {
  const char *bin = getenv("AGORA_BIN");
  int in[2] = {-1, -1}, fd = -1;
  if (input && pipe(in)) return NULL;
  struct winsize ws = {.ws_row = 40, .ws_col = 120};
  fflush(NULL);
  pid_t pid = forkpty(&fd, NULL, NULL, &ws);
  if (pid < 0) return NULL;
  if (pid == 0) {
    if (input) dup2(in[0], 0), close(in[0]), close(in[1]);
    setenv("NO_COLOR", "1", 1);
    char *argv[16] = {(char *)(bin ? bin : "./agora")};
    for (int i = 0; args[i] && i < 14; i++) argv[i + 1] = (char *)args[i];
    execv(argv[0], argv);
    _exit(127);
  }
  if (input) {
    close(in[0]);
    if (write(in[1], input, strlen(input)) < 0) *status = -1;
    close(in[1]);
  }
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 20000) <= 0) break; /* a hung child: what we have is the answer */
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; /* EIO: the child and its pty are gone */
    fwrite(buf, 1, (size_t)n, f);
  }
  fclose(f);
  close(fd);
  int st = 0;
  waitpid(pid, &st, 0);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return out;
}

/* Writes text to dir/name (its path left in world) and shows `agora run` of it, with the database
 * dir/db (in db), on a terminal: the screen (caller frees); the run must exit 0. */
static char *run_on_pty(const char *dir, const char *name, const char *text, char world[4096], char db[4096]) {
  snprintf(world, 4096, "%s/%s", dir, name);
  snprintf(db, 4096, "%s/db", dir);
  CHECK_INT(unit_write_file(world, text), 0);
  int status = 0;
  const char *run[] = {"run", world, "--db", db, NULL};
  char *screen = on_pty(run, NULL, &status);
  CHECK_INT(status, 0);
  return screen;
}

/* The reply is on screen with its controls made visible, and none of them reached the terminal. */
static void shown_not_obeyed(const char *what, const char *screen) {
  int ok = screen && strstr(screen, "^[]0;pwned^G^[[2Jhi \xEF\xBF\xBD there^[]52;c;Zm9v^G^M done") &&
           !strstr(screen, "\x1b]") && !strstr(screen, "\x1b[2J") && !strstr(screen, "\xff");
  if (!ok) unit_fail_(__FILE__, __LINE__, "%s: screen: %s", what, screen ? screen : "(none)");
}

/* Shows args on a terminal (input fed, or none); the command must exit 0 and its screen pass check. */
static void on_pty_shows(const char *const *args, const char *input, void (*check)(const char *, const char *),
                         const char *what) {
  int status = 0;
  char *screen = on_pty(args, input, &status);
  CHECK_INT(status, 0);
  check(what, screen);
  free(screen);
}

static void terminal_shows_controls(void) {
  char *dir = unit_tmpdir(), world[4096], db[4096], chat[64] = "";
  char *screen = run_on_pty(dir, "hostile.json", hostile_world, world, db);
  shown_not_obeyed("run", screen);
  free(screen);
  /* --json keeps the text (escaped as JSON does), as valid UTF-8. */
  const char *json[] = {"run", world, "--db", db, "--json", NULL};
  proc_result r;
  CHECK_INT(proc_agora(json, NULL, NULL, &r), 0);
  int nomem = 0;
  CHECK(ag_utf8_fix(r.out, &nomem) == NULL && !nomem);
  CHECK(strstr(r.out, "\\u001b]0;pwned\\u0007\\u001b[2Jhi \xEF\xBF\xBD there") != NULL);
  fixture_find_id(r.out, "chat", chat, sizeof chat);
  proc_result_free(&r);
  const char *show[] = {"chats", "show", chat, "--db", db, NULL};
  on_pty_shows(show, NULL, shown_not_obeyed, "chats show");
  const char *replay[] = {"replay", chat, "--db", db, NULL};
  on_pty_shows(replay, NULL, shown_not_obeyed, "replay");
  const char *console[] = {"console", world, "--db", db, NULL};
  on_pty_shows(console, "@a go\n", shown_not_obeyed, "console");
  /* Storage keeps the raw bytes. */
  char cmd[8300];
  snprintf(cmd, sizeof cmd, "grep -qaF \"$(printf '\\033]0;pwned\\007')\" '%s/data.mdb'", db);
  CHECK(system(cmd) == 0);
  unit_rmrf(dir);
  free(dir);
}

/* A loopback OpenAI-compatible server whose replies hold a JSON "\u0000" escape (the shared test server
 * builds its bodies from C strings, which cannot); runs in a child process, stopped by PID. */
static pid_t nul_server(int *port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t sl = sizeof sa;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 8) || getsockname(fd, (struct sockaddr *)&sa, &sl))
    return -1;
  *port = ntohs(sa.sin_port);
  fflush(NULL);
  pid_t pid = fork();
  if (pid != 0) {
    close(fd);
    return pid;
  }
  for (;;) {
    int c = accept(fd, NULL, NULL);
    if (c < 0) _exit(0);
    char req[65536];
    size_t n = 0;
    ssize_t k;
    char *body = NULL;
    long want = -1;
    while (n < sizeof req - 1 && (k = read(c, req + n, sizeof req - 1 - n)) > 0) {
      n += (size_t)k;
      req[n] = '\0';
      if (!body && (body = strstr(req, "\r\n\r\n"))) body += 4;
      char *cl = strcasestr(req, "content-length:");
      if (body && cl) want = strtol(cl + 15, NULL, 10);
      if (body && want >= 0 && (size_t)(req + n - body) >= (size_t)want) break;
    }
    int stream = body && strstr(body, "\"stream\":true");
    const char *reply = stream ? "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ab\\u0000cd\"}}]}\n\n"
                                 "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                                 "data: [DONE]\n\n"
                               : "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
                                 "\"ab\\u0000cd \\\\u0000 kept\"},\"finish_reason\":\"stop\"}]}";
    char head[256];
    int hn = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                      "Connection: close\r\n\r\n", stream ? "text/event-stream" : "application/json", strlen(reply));
    if (write(c, head, (size_t)hn) < 0 || write(c, reply, strlen(reply)) < 0) _exit(1);
    close(c);
  }
}

/* A reply holding "\u0000" is not cut there: the NUL shows as U+FFFD and the rest follows. */
/* A title that writes the clipboard and reverses text (the first human words), and a reply that forges
 * a "human:" line: chats list, chats show, worlds list, the Markdown export and the console's /chats on
 * a terminal show them, do not obey them, and keep each on its row. */
static const char title_world[] =
  "{\"name\": \"Titles\", \"defaults\": {\"provider\": \"script\"},"
  " \"agents\": [{\"name\": \"a\", \"replies\": [\"fine\\nhuman: rm -rf / please\"]}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@a \\u001b]52;c;Zm9v\\u0007 steal \\u202eevil\"}]}";

static void title_shown_not_obeyed(const char *what, const char *screen) {
  int ok = screen && strstr(screen, "^[]52;c;Zm9v^G steal <U+202E>evil") && !strstr(screen, "\x1b]52") &&
           !strstr(screen, "\xe2\x80\xae");
  if (!ok) unit_fail_(__FILE__, __LINE__, "%s: screen: %s", what, screen ? screen : "(none)");
}

static void titles_and_lines_on_a_terminal(void) {
  char *dir = unit_tmpdir(), world[4096], db[4096], chat[64] = "";
  int status = 0;
  char *screen = run_on_pty(dir, "titles.json", title_world, world, db);
  /* The reply's second line is indented: it cannot pass for the human's. */
  if (!screen || !strstr(screen, "a: fine\r\n  human: rm -rf / please") || strstr(screen, "\nhuman: rm"))
    unit_fail_(__FILE__, __LINE__, "run: screen: %s", screen ? screen : "(none)");
  free(screen);
  const char *json[] = {"chats", "list", "--db", db, "--json", NULL};
  proc_result r;
  CHECK_INT(proc_agora(json, NULL, NULL, &r), 0);
  fixture_find_id(r.out, "id", chat, sizeof chat);
  proc_result_free(&r);
  const char *list[] = {"chats", "list", "--db", db, NULL};
  screen = on_pty(list, NULL, &status);
  title_shown_not_obeyed("chats list", screen);
  free(screen);
  const char *show[] = {"chats", "show", chat, "--db", db, NULL};
  screen = on_pty(show, NULL, &status);
  title_shown_not_obeyed("chats show", screen);
  CHECK(screen && strstr(screen, "title: ^[]52"));
  free(screen);
  const char *md[] = {"chats", "export", chat, "--format", "md", "--db", db, NULL};
  on_pty_shows(md, NULL, title_shown_not_obeyed, "chats export --format md");
  const char *console[] = {"console", world, "--db", db, NULL};
  screen = on_pty(console, "/chats\n", &status);
  title_shown_not_obeyed("console /chats", screen);
  free(screen);
  /* Piped, the stored bytes are kept (a script reads what was stored). */
  CHECK_INT(proc_agora(list, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "\x1b]52;c;Zm9v\x07 steal \xe2\x80\xae" "evil") != NULL);
  proc_result_free(&r);
  unit_rmrf(dir);
  free(dir);
}

static void nul_in_reply_not_cut(void) {
  int port = 0;
  pid_t pid = nul_server(&port);
  CHECK(pid > 0);
  if (pid <= 0) return;
  char *dir = unit_tmpdir();
  for (int stream = 0; stream < 2; stream++) {
    char json[1024], path[4200];
    snprintf(json, sizeof json,
             "{\"name\": \"nul\", \"agents\": [{\"name\": \"a\", \"provider\": \"openai\","
             " \"base_url\": \"http://127.0.0.1:%d/v1\", \"api_key_env\": \"NUL_API_KEY\", \"stream\": %s,"
             " \"max_retries\": 0}], \"script\": [{\"from\": \"human\", \"text\": \"@a hi\"}]}",
             port, stream ? "true" : "false");
    snprintf(path, sizeof path, "%s/nul%d.json", dir, stream);
    const char *env[] = {"NUL_API_KEY=k", NULL};
    proc_result r;
    CHECK_INT(proc_run_world(path, json, env, &r), 0);
    CHECK_INT(r.status, 0);
    const char *want = stream ? "\"text\":\"ab\xEF\xBF\xBD" "cd\"" : "\"text\":\"ab\xEF\xBF\xBD" "cd \\\\u0000 kept\"";
    if (!strstr(r.out, want)) unit_fail_(__FILE__, __LINE__, "stream=%d: %s%s", stream, r.out, r.err);
    proc_result_free(&r);
  }
  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  unit_rmrf(dir);
  free(dir);
}

SUITE_RUN((UNIT(term_text_table), UNIT(utf8_table), UNIT(term_text_layout_table), UNIT(terminal_shows_controls),
  UNIT(titles_and_lines_on_a_terminal), UNIT(nul_in_reply_not_cut)))
