/* End to end: `agora console` on a pseudo-terminal, as a person uses it. The binary runs on the slave
 * side of a pty (forkpty); the test types into the master and reads the screen output with poll and a
 * deadline, stripping escape sequences to assert on the text: replies, tab completion, Ctrl-C
 * cancelling a slow reply from the loopback LLM server, chat commands, Ctrl-D. */
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/tty.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *tmp;

static const char world_json[] =
  "{\"name\": \"Console Test\", \"defaults\": {\"provider\": \"script\"},\n"
  " \"agents\": [{\"name\": \"alice\", \"replies\": [\"one\", \"two\", \"three\"]},\n"
  "            {\"name\": \"bob\", \"replies\": [\"@alice pong\"]}]}\n";

static int start_console(tty *t, const char *world, const char *db, const char *const *env) {
  const char *args[] = {"console", world, "--db", db, NULL};
  return tty_start(t, tmp, args, env);
}

/* A console on a terminal over a world file written from text and a fresh database: what every case
 * starts from; srv is the loopback LLM server of a case that started one (stopped with the console). */
typedef struct tcon {
  char *w, *db;
  tty t;
  llm_server *srv;
} tcon;

static int tcon_open(tcon *c, const char *file, const char *text, const char *db, const char *const *env) {
  c->srv = NULL;
  c->w = strdup(suite_file(tmp, file, text));
  c->db = suite_fresh(tmp, db);
  return start_console(&c->t, c->w, c->db, env);
}

/* Ctrl-D at the prompt: the console exits 0. */
static void tcon_quit(tcon *c) {
  tty_send(&c->t, "\x04");
  int st = tty_exit(&c->t);
  CHECK_INT(st, 0);
  if (st && c->t.text) { /* what the console said last belongs in the failure */
    size_t n = strlen(c->t.text);
    fprintf(stderr, "  the console's last words:\n%s\n", c->t.text + (n > 1500 ? n - 1500 : 0));
  }
}

static void tcon_close(tcon *c) {
  tty_close(&c->t);
  llm_server_stop(c->srv);
  free(c->w);
  free(c->db);
}

/* tcon_open over the world printf'd from fmt with the URL of a loopback server started for the case
 * (its agents' key in OPENAI_API_KEY). 0, or -1 (the case failed) when the server did not start. */
static int tcon_open_served(tcon *c, const char *file, const char *fmt, const char *db) {
  static const char *const env[] = {"OPENAI_API_KEY=test-key", NULL};
  char world[2048];
  llm_server *srv = NULL;
  CHECK_INT(llm_server_start(&srv), 0);
  if (!srv) return -1;
  snprintf(world, sizeof world, fmt, llm_server_url(srv, "/v1"));
  CHECK_INT(tcon_open(c, file, world, db, env), 0);
  c->srv = srv;
  return 0;
}

/* The saved transcript of a chat as "sender|text" lines (caller frees). */
static char *saved(const char *db, const char *id) {
  char cmd[8800];
  snprintf(cmd, sizeof cmd, "'%s' chats show %s --db '%s' --json", getenv("AGORA_BIN"), id, db);
  FILE *p = popen(cmd, "r");
  char *out = calloc(1, 65536);
  size_t len = 0;
  char line[16384];
  while (p && fgets(line, sizeof line, p)) {
    cJSON *j = cJSON_Parse(line);
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(j, "type"));
    if (type && !strcmp(type, "message") && len < 60000)
      len += (size_t)snprintf(out + len, 65536 - len, "%s|%s\n", cJSON_GetStringValue(cJSON_GetObjectItem(j, "sender")),
                              cJSON_GetStringValue(cJSON_GetObjectItem(j, "text")));
    cJSON_Delete(j);
  }
  if (p) pclose(p);
  return out;
}

/* A message typed at the prompt is answered; the prompt shows the world and the chat's new title; the
 * line goes to the history file (private); Ctrl-D saves and exits 0. */
static void tty_message_and_reply(void) {
  tcon c;
  CHECK_INT(tcon_open(&c, "world.json", world_json, "db-reply", NULL), 0);
  char id[64] = "";
  CHECK(tty_expect(&c.t, "console-test · New Chat> "));
  CHECK_INT(tty_event_id(&c.t, "new-chat-created", id), 0);
  CHECK(tty_send_expect(&c.t, "@alice tell me a story\r", "human: @alice tell me a story\n\n"));
  CHECK(tty_expect(&c.t, "alice: one\n\n"));
  CHECK(tty_expect(&c.t, "console-test · Tell me a story> "));
  CHECK(strstr(c.t.raw, "\033[2m") != NULL); /* events are dim on a terminal */
  tcon_quit(&c);
  char *s = saved(c.db, id);
  CHECK_STR(s, "human|@alice tell me a story\nalice|one\n");
  free(s);
  char hist[4200];
  snprintf(hist, sizeof hist, "%s/console_history", c.db);
  char *h = unit_read_file(hist);
  CHECK(h && strstr(h, "story")); /* libedit writes it vis(3)-encoded */
  struct stat sb;
  CHECK(stat(hist, &sb) == 0 && (sb.st_mode & 0777) == 0600);
  free(h);
  tcon_close(&c);
}

/* Tab completes commands, @names and chat ids. */
static void tty_completion(void) {
  tcon c;
  CHECK_INT(tcon_open(&c, "world.json", world_json, "db-complete", NULL), 0);
  char id[64] = "";
  CHECK_INT(tty_event_id(&c.t, "new-chat-created", id), 0);
  CHECK(tty_expect(&c.t, "> "));
  CHECK(tty_send_expect(&c.t, "/he\t", "/help"));
  CHECK(tty_send_expect(&c.t, "\r", "/turnlimit N"));
  CHECK(tty_expect(&c.t, "> "));
  CHECK(tty_send_expect(&c.t, "@al\t", "@alice"));
  CHECK(tty_send_expect(&c.t, "hi\r", "human: @alice hi\n\n"));
  CHECK(tty_expect(&c.t, "alice: one\n\n"));
  CHECK(tty_expect(&c.t, "> "));
  CHECK(tty_send_expect(&c.t, "/lo\t", "/load"));
  CHECK(tty_send_expect(&c.t, "\t", id));
  tty_send(&c.t, "\r");
  char loaded[128];
  snprintf(loaded, sizeof loaded, "chat-loaded: id=%s", id);
  CHECK(tty_expect(&c.t, loaded));
  tty_send(&c.t, "/quit\r");
  CHECK_INT(tty_exit(&c.t), 0);
  tcon_close(&c);
}

/* A slow agent keeps a reply in flight (a word every 700 ms, from the loopback server). */
static const char slow_world[] =
  "{\"name\": \"Slow World\", \"agents\": [\n"
  " {\"name\": \"alice\", \"provider\": \"script\", \"replies\": [\"hello from alice\"]},\n"
  " {\"name\": \"slow\", \"provider\": \"openai\", \"base_url\": \"%s\",\n"
  "  \"system_prompt\": \"You are slow. [[mock delay=700 reply=\\\"first second third fourth fifth\\\"]]\"}]}\n";

/* Ctrl-C while an agent streams its reply slowly (the loopback server sends a word every 700 ms)
 * cancels it: the rest never comes, nothing of it is saved, and the console goes on. */
static void tty_ctrl_c_cancels_slow_reply(void) {
  tcon c;
  if (tcon_open_served(&c, "slow.json", slow_world, "db-slow")) return;
  char id[64] = "";
  CHECK_INT(tty_event_id(&c.t, "new-chat-created", id), 0);
  CHECK(tty_expect(&c.t, "> "));
  long long sent = tty_now_ms();
  tty_send(&c.t, "@slow hi\r");
  CHECK(tty_expect(&c.t, "slow: first")); /* the live line, while it streams */
  CHECK(tty_send_expect(&c.t, "\x03", "-- cancelled: agents=slow"));
  CHECK(tty_send_expect(&c.t, "@alice are you there\r", "alice: hello from alice\n\n"));
  /* Past the time the whole reply would have taken: none of its end arrived. */
  tty_idle(&c.t, (int)(sent + 3800 - tty_now_ms()));
  CHECK(strstr(c.t.text, "fifth") == NULL);
  tcon_quit(&c);
  char *s = saved(c.db, id);
  CHECK_STR(s, "human|@slow hi\nhuman|@alice are you there\nalice|hello from alice\n");
  free(s);
  CHECK_INT(llm_server_request_count(c.srv), 1);
  tcon_close(&c);
}

/* /retry and /edit while a reply is in flight are refused with a note, and the console goes on (they
 * freed an uninitialised record: free(): invalid pointer, exit 134). */
static void tty_edit_retry_while_busy(void) {
  tcon c;
  if (tcon_open_served(&c, "busy.json", slow_world, "db-busy")) return;
  CHECK(tty_expect(&c.t, "> "));
  CHECK(tty_send_expect(&c.t, "@slow hi\r", "slow: first"));
  CHECK(tty_send_expect(&c.t, "/retry\r", "error: /retry: wait until the replies in flight are in\n"));
  CHECK(tty_send_expect(&c.t, "/edit 1 hello again\r", "error: /edit: wait until the replies in flight are in\n"));
  CHECK(tty_expect(&c.t, "slow: first second third fourth fifth\n\n"));
  tcon_quit(&c);
  tcon_close(&c);
}

/* The chat's lock is free (another process can delete the chat): the console that held it is gone. */
static int chat_deletable(const char *db, const char *id) {
  const char *args[] = {"chats", "delete", id, "--db", db, NULL};
  proc_result r;
  int st = proc_agora(args, NULL, NULL, &r) ? -1 : r.status;
  if (st) fprintf(stderr, "  chats delete: %s", r.err ? r.err : "");
  proc_result_free(&r);
  return st == 0;
}

/* The terminal goes away (its window closed) or SIGTERM comes while a reply is in flight: the console
 * cancels it, saves, releases the chat and exits within 2 s (it spun on EPOLLHUP at 70% CPU, holding
 * the chat, and ignored SIGTERM). */
static void hang_up_while_busy(int how) {
  tcon c;
  if (tcon_open_served(&c, "hangup.json", slow_world, "db-hangup")) return;
  char id[64] = "";
  CHECK_INT(tty_event_id(&c.t, "new-chat-created", id), 0);
  CHECK(tty_expect(&c.t, "> "));
  CHECK(tty_send_expect(&c.t, "@slow hi\r", "slow: first"));
  if (how) kill(c.t.pid, how);
  else tty_hang_up(&c.t);
  long long t0 = tty_now_ms();
  int st = tty_exit_within(&c.t, 2000);
  long long took = tty_now_ms() - t0;
  CHECK(st >= 0 && st < 128); /* it ended by itself, not by the signal's default action */
  CHECK(took < 2000);
  fprintf(stderr, "  %s: exit %d after %lld ms\n", how ? "SIGTERM" : "hang-up", st, took);
  char *s = saved(c.db, id);
  CHECK_STR(s, "human|@slow hi\n");
  free(s);
  CHECK(chat_deletable(c.db, id));
  tcon_close(&c);
}

static void tty_hang_up_while_busy(void) { hang_up_while_busy(0); }
static void tty_sigterm_while_busy(void) { hang_up_while_busy(SIGTERM); }

/* Ctrl-C with text typed clears the line (nothing is sent); twice at an empty, idle prompt it quits. */
static void tty_ctrl_c_clears_then_quits(void) {
  const char *env[] = {"NO_COLOR=1", NULL};
  tcon c;
  CHECK_INT(tcon_open(&c, "world.json", world_json, "db-ctrlc", env), 0);
  CHECK(tty_expect(&c.t, "> "));
  CHECK(tty_send_expect(&c.t, "@bob never sent", "never sent"));
  CHECK(tty_send_expect(&c.t, "\x03", "> "));
  CHECK(tty_send_expect(&c.t, "@alice only this\r", "human: @alice only this\n\n"));
  CHECK(tty_expect(&c.t, "alice: one\n\n"));
  CHECK(tty_expect(&c.t, "> "));
  CHECK(tty_send_expect(&c.t, "\x03", "press Ctrl-C again or Ctrl-D to quit"));
  tty_send(&c.t, "\x03");
  CHECK_INT(tty_exit(&c.t), 0);
  CHECK(strstr(c.t.text, "human: @bob") == NULL);
  CHECK(strstr(c.t.raw, "\033[2m") == NULL); /* NO_COLOR */
  tcon_close(&c);
}

/* /new reuses the empty chat; after a message it makes a new one; /delete of the current chat falls
 * back to the other (the prompt shows its title). */
static void tty_new_and_delete(void) {
  tcon c;
  CHECK_INT(tcon_open(&c, "world.json", world_json, "db-new", NULL), 0);
  char x[64] = "", r[64] = "", y[64] = "";
  CHECK_INT(tty_event_id(&c.t, "new-chat-created", x), 0);
  CHECK(tty_expect(&c.t, "> "));
  tty_send(&c.t, "/new\r");
  CHECK_INT(tty_event_id(&c.t, "chat-reused", r), 0);
  CHECK_STR(r, x);
  CHECK(tty_send_expect(&c.t, "@alice plan a trip\r", "alice: one\n\n"));
  CHECK(tty_expect(&c.t, "console-test · Plan a trip> "));
  tty_send(&c.t, "/new\r");
  CHECK_INT(tty_event_id(&c.t, "new-chat-created", y), 0);
  CHECK(strcmp(x, y) != 0);
  CHECK(tty_expect(&c.t, "console-test · New Chat> "));
  char cmd[128], want[256];
  snprintf(cmd, sizeof cmd, "/delete %s\r", y);
  tty_send(&c.t, cmd);
  snprintf(want, sizeof want, "chat-deleted: id=%s current=%s", y, x);
  CHECK(tty_expect(&c.t, want));
  CHECK(tty_expect(&c.t, "console-test · Plan a trip> "));
  tty_send(&c.t, "/chats\r");
  snprintf(want, sizeof want, "* %s", x);
  CHECK(tty_expect(&c.t, want));
  tty_send(&c.t, "/frob\r"); /* an error is one line, and the console goes on */
  CHECK(tty_expect(&c.t, "error: unknown command '/frob' (try /help)\n"));
  CHECK(tty_expect(&c.t, "console-test · Plan a trip> "));
  CHECK(tty_send_expect(&c.t, "@alice again\r", "alice: two\n\n"));
  tcon_quit(&c);
  tcon_close(&c);
}

/* Ctrl-D exits 0, also when typed ahead while a command runs. */
static void tty_ctrl_d_exits(void) {
  tcon c;
  CHECK_INT(tcon_open(&c, "world.json", world_json, "db-ctrld", NULL), 0);
  CHECK(tty_expect(&c.t, "> "));
  tcon_quit(&c);
  tty_close(&c.t);
  CHECK_INT(start_console(&c.t, c.w, c.db, NULL), 0);
  CHECK(tty_expect(&c.t, "> "));
  CHECK(tty_send_expect(&c.t, "/agents\r\x04", "alice  script"));
  CHECK_INT(tty_exit(&c.t), 0);
  tcon_close(&c);
}

/* Signals while the console's output waits on a full terminal: a write interrupted by one is carried on,
 * not failed. The console's own signal handlers had no SA_RESTART, so a Ctrl-C (SIGINT) landing while a
 * reply waited for the terminal failed that write with EINTR, and the console exited 1 at the end ("cannot
 * write the output": once in CI). Here the reply is far more than the terminal holds, the test reads it
 * slowly, and a SIGWINCH goes to the console between reads. */
static void tty_signals_while_output_waits(void) {
  enum { WORDS = 20000 };
  char *json = malloc(WORDS * 8 + 512), *p = json;
  p += sprintf(p, "{\"name\": \"Loud\", \"defaults\": {\"provider\": \"script\"}, \"agents\": [{\"name\": "
                  "\"alice\", \"replies\": [\"");
  for (int i = 0; i < WORDS; i++) p += sprintf(p, "w%05d ", i);
  sprintf(p, "end-of-reply\"]}]}\n");
  tcon c;
  CHECK_INT(tcon_open(&c, "loud.json", json, "db-loud", NULL), 0);
  free(json);
  CHECK(tty_expect(&c.t, "> "));
  tty_send(&c.t, "@alice talk\r");
  long long until = tty_now_ms() + 60000;
  while (!strstr(c.t.text + c.t.seen, "end-of-reply") && tty_now_ms() < until) {
    kill(c.t.pid, SIGWINCH);
    tty_pump(&c.t, 1);
  }
  CHECK(tty_expect(&c.t, "end-of-reply"));
  tcon_quit(&c);
  tcon_close(&c);
}

/* Lines of text starting with prefix contain none of the words (NULL-terminated). */
static int lines_clean(const char *text, const char *prefix, const char *const *words) {
  for (const char *l = text; l && *l;) {
    const char *nl = strchr(l, '\n');
    size_t n = nl ? (size_t)(nl - l) : strlen(l);
    if (!strncmp(l, prefix, strlen(prefix))) {
      for (size_t i = 0; words[i]; i++) {
        const char *hit = strstr(l, words[i]);
        if (hit && hit < l + n) return 0;
      }
    }
    l = nl ? nl + 1 : NULL;
  }
  return 1;
}

/* Two agents streaming at once: each has its own labelled live line, never mixed with the other's words,
 * and each finished reply is one clean paragraph. */
static void tty_two_streams(void) {
  static const char streams_world[] =
    "{\"name\": \"Streams\", \"defaults\": {\"provider\": \"openai\", \"base_url\": \"%s\"}, \"agents\": [\n"
    " {\"name\": \"s1\", \"system_prompt\": \"[[mock delay=150 reply=\\\"alpha beta gamma delta\\\"]]\"},\n"
    " {\"name\": \"s2\", \"system_prompt\": \"[[mock delay=200 reply=\\\"uno dos tres cuatro\\\"]]\"}]}\n";
  tcon c;
  if (tcon_open_served(&c, "streams.json", streams_world, "db-streams")) return;
  CHECK(tty_expect(&c.t, "> "));
  tty_send(&c.t, "@s1 @s2 go\r");
  long long end = tty_now_ms() + WAIT_MS;
  while (tty_now_ms() < end && !(strstr(c.t.text, "s1: alpha beta gamma delta\n\n") &&
                             strstr(c.t.text, "s2: uno dos tres cuatro\n\n")))
    tty_pump(&c.t, 50);
  CHECK(strstr(c.t.text, "s1: alpha beta gamma delta\n\n") != NULL);
  CHECK(strstr(c.t.text, "s2: uno dos tres cuatro\n\n") != NULL);
  CHECK(strstr(c.t.text, "s1: alpha beta \n") != NULL); /* a live line while it streamed */
  CHECK(strstr(c.t.text, "s2: uno dos \n") != NULL);
  static const char *const s1_words[] = {"alpha", "beta", "gamma", "delta", NULL};
  static const char *const s2_words[] = {"uno", "dos", "tres", "cuatro", NULL};
  CHECK(lines_clean(c.t.text, "s1: ", s2_words));
  CHECK(lines_clean(c.t.text, "s2: ", s1_words));
  tcon_quit(&c);
  tcon_close(&c);
}

/* A tool call waiting for approval: the question is the prompt, another agent's reply streams and
 * completes meanwhile, the typed line answers; Ctrl-C withdraws a pending question. */
static void tty_approval_waits_while_another_streams(void) {
  tcon c;
  CHECK_INT(tcon_open(&c, "approve.json",
                      "{\"name\": \"Approvals\", \"agents\": [{\"name\": \"careful\", \"tools\": [{\"name\": \"save_context\","
                      " \"approve\": true}], \"replies\": [{\"tool\": \"save_context\", \"args\": {\"message\": \"saved\"}}]},"
                      " {\"name\": \"chatty\", \"replies\": [\"a reply of seven words, streamed meanwhile\"]}]}\n",
                      "db-approve", NULL), 0);
  CHECK(tty_expect(&c.t, "> "));
  tty_send(&c.t, "@careful @chatty go\r");
  CHECK(tty_expect(&c.t, "approve: careful wants to call save_context {\"message\":\"saved\"} [y/N] "));
  CHECK(tty_expect(&c.t, "chatty: a reply of seven words, streamed meanwhile\n\n"));
  CHECK(strstr(c.t.text, "careful: saved") == NULL); /* still waiting for the person */
  CHECK(tty_send_expect(&c.t, "y\r", "-- approval: agent=careful tool=save_context approved=true"));
  CHECK(tty_expect(&c.t, "careful: saved\n\n"));
  CHECK(tty_send_expect(&c.t, "@careful again\r", "approve: careful wants to call save_context"));
  CHECK(tty_send_expect(&c.t, "\x03", "-- approval: agent=careful tool=save_context approved=false ended=cancelled"));
  CHECK(tty_expect(&c.t, "approvals · Go> "));
  tcon_quit(&c);
  tcon_close(&c);
}

/* Started again on a terminal, the console says which chat continues and shows its last messages. */
static void tty_resume_shows_recent(void) {
  tcon c = {.w = strdup(suite_file(tmp, "world.json", world_json)), .db = suite_fresh(tmp, "db-resume")};
  const char *args[] = {"console", c.w, "--db", c.db, NULL};
  proc_result r;
  PROC_OK(args, "@alice first words\n", NULL, &r);
  proc_result_free(&r);
  CHECK_INT(start_console(&c.t, c.w, c.db, NULL), 0);
  CHECK(tty_expect(&c.t, "chat-resumed: id="));
  CHECK(tty_expect(&c.t, "title=First words messages=2"));
  CHECK(tty_expect(&c.t, "human: @alice first words\n\nalice: one\n\n"));
  CHECK(tty_expect(&c.t, "console-test · First words> "));
  CHECK(tty_send_expect(&c.t, "@alice more\r", "alice: two\n\n"));
  tcon_quit(&c);
  tcon_close(&c);
}

/* 1 when this system gives pseudo-terminals (a bare container may not). */
/* Sends prefix, n bytes of 'x' in pty-sized pieces (reading the screen meanwhile), then suffix. */
static void tty_send_big(tty *t, const char *prefix, size_t n, const char *suffix) {
  char chunk[4096];
  memset(chunk, 'x', sizeof chunk);
  tty_send(t, prefix);
  for (size_t done = 0; done < n;) {
    size_t k = n - done < sizeof chunk ? n - done : sizeof chunk;
    ssize_t w = write(t->fd, chunk, k);
    if (w < 0 && errno != EINTR && errno != EAGAIN) {
      unit_fail_(__FILE__, __LINE__, "write to the pty failed");
      return;
    }
    if (w > 0) done += (size_t)w;
    tty_pump(t, 0);
  }
  tty_send(t, suffix);
}

/* What reaches libedit is bounded (issue 17: libedit 3.1-20221030 corrupts its heap on a line of a few
 * KB): a short bracketed paste goes into the line whole; 8 KB and 1 MB pastes are refused with a note
 * and the console goes on; text typed without paste marks stops at the line limit (1,000 bytes). */
static void tty_paste_bounded(void) {
  tcon c;
  CHECK_INT(tcon_open(&c, "world.json", world_json, "db-paste", NULL), 0);
  char id[64] = "";
  CHECK_INT(tty_event_id(&c.t, "new-chat-created", id), 0);
  tty_send_big(&c.t, "\033[200~@alice ", 500, "\033[201~");
  CHECK(tty_send_expect(&c.t, "\r", "alice: one\n\n"));
  tty_send_big(&c.t, "\033[200~", 8192, "\033[201~");
  CHECK(tty_expect(&c.t, "paste of 8192 bytes refused"));
  tty_send_big(&c.t, "\033[200~line one\nline two ", 1 << 20, "\033[201~");
  CHECK(tty_expect(&c.t, "paste of 1048594 bytes refused"));
  tty_send_big(&c.t, "@bob ", 8192, "\r");
  CHECK(tty_expect(&c.t, "the line is full"));
  CHECK(tty_expect(&c.t, "bob: @alice pong\n\n"));
  tcon_quit(&c);
  char *s = saved(c.db, id);
  char *want = malloc(4096);
  size_t o = (size_t)snprintf(want, 4096, "human|@alice ");
  memset(want + o, 'x', 500);
  o += 500;
  o += (size_t)snprintf(want + o, 4096 - o, "\nalice|one\nhuman|@bob ");
  memset(want + o, 'x', 1000 - 5);
  o += 1000 - 5;
  snprintf(want + o, 4096 - o, "\nbob|@alice pong\n"); /* then their volley to the turn limit */
  CHECK(s && strncmp(s, want, strlen(want)) == 0);
  free(want);
  free(s);
  tcon_close(&c);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    UNIT(tty_message_and_reply), UNIT(tty_completion),         UNIT(tty_ctrl_c_cancels_slow_reply),
    UNIT(tty_ctrl_c_clears_then_quits), UNIT(tty_new_and_delete), UNIT(tty_ctrl_d_exits),
    UNIT(tty_two_streams),             UNIT(tty_resume_shows_recent), UNIT(tty_approval_waits_while_another_streams),
    UNIT(tty_paste_bounded),           UNIT(tty_edit_retry_while_busy),
    UNIT(tty_hang_up_while_busy),      UNIT(tty_sigterm_while_busy), UNIT(tty_signals_while_output_waits),
  };
  if (tty_skip_without_pty()) return 0;
  return suite_main(argc, argv, &(suite){SUITE_TESTS(tests), .tmp = &tmp, .no_sigpipe = 1});
}
