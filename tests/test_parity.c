/* Parity (issue 22 §4): ONE world — an MCP server from npm (server-everything, AGORA_PEERS), a virtual
 * clock with a schedule, {{variables}}, an "approve": true tool and ask_human, on the script provider —
 * through each door: run --yes --answers, say, the console piped and on a pty, serve's API (approvals
 * answered over HTTP) and its page in Chromium, and host + run --nats. What each door stored (`chats
 * show --json`: senders, texts, sim_times, the thread's tool steps) must equal what run stored, or differ
 * exactly where the table "Parity: features × doors" of docs/architecture.md says the door refuses, with
 * the reason it quotes said by the door. The table is read from the file, so it cannot drift. */
#include "support/nats_proc.h"
#include "support/parity.h"
#include "support/proc.h"
#include "support/serve_client.h"
#include "support/suite.h"
#include "support/tty.h"
#include "support/unit.h"
#include "support/wait.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MESSAGE "@clerk file the ledger"
#define ANSWER "the top shelf"

static char *g_tmp;
static char g_world[4200], g_answers[4200];
static parity_table g_table;
static parity_chat g_ref; /* what run stored: the reference every door is compared with */
static int g_have_ref;

/* The columns of the table, in its order: a door added to the table must be added here, and tested. */
static const char *const doors[] = {"run", "say", "console piped", "console pty", "serve API", "serve page",
                                    "host + run --nats"};

static const char *path_of(const char *name) { return suite_file(g_tmp, name, NULL); }

static int write_world(void) {
  const char *peers = getenv("AGORA_PEERS");
  char text[8192];
  snprintf(text, sizeof text,
    "{\"name\": \"parity\", \"variables\": {\"place\": \"Millbrook\"},\n"
    " \"clock\": {\"mode\": \"virtual\", \"start\": \"2026-03-02T09:00:00Z\"},\n"
    " \"schedule\": [{\"at\": \"2026-03-02T09:30:00Z\", \"from\": \"world\",\n"
    "   \"text\": \"{{place}} bell: it is {{time}} on {{weekday}}\"}],\n"
    " \"mcp_servers\": {\"ev\": {\"command\": \"%s/node_modules/.bin/mcp-server-everything\",\n"
    "   \"timeout_ms\": 20000}},\n"
    " \"agents\": [{\"name\": \"Clerk\", \"system_prompt\": \"You keep the {{place}} ledger.\",\n"
    "   \"tools\": [\"ev.echo\", {\"name\": \"ev.get-sum\", \"as\": \"add\", \"approve\": true}, \"ask_human\"],\n"
    "   \"replies\": [{\"tool\": \"echo\", \"args\": {\"message\": \"ledger open\"}},\n"
    "               {\"tool\": \"add\", \"args\": {\"a\": 20, \"b\": 22}},\n"
    "               {\"tool\": \"ask_human\", \"args\": {\"question\": \"Which shelf?\"}},\n"
    "               \"Filed on the shelf, @human.\", \"Bell noted.\"]}],\n"
    " \"script\": [{\"from\": \"human\", \"text\": \"" MESSAGE "\"}, {\"wait\": \"1h\"}]}\n",
    peers ? peers : "build/peers");
  snprintf(g_world, sizeof g_world, "%s", path_of("parity.json"));
  snprintf(g_answers, sizeof g_answers, "%s", path_of("answers.txt"));
  return unit_write_file(g_world, text) || unit_write_file(g_answers, ANSWER "\n");
}

/* What a door said: its output, then the stored lines (a refusal may be in either). */
static char *said_by(const char *out, const char *err, const parity_chat *c) {
  char *lines = parity_chat_text(c);
  size_t n = strlen(out ? out : "") + strlen(err ? err : "") + strlen(lines ? lines : "") + 3;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s\n%s\n%s", out ? out : "", err ? err : "", lines ? lines : "");
  free(lines);
  return s;
}

/* run --yes --answers, once: what it stored is the reference (NULL when it failed); its output in *said
 * (may be NULL; caller frees). */
static const parity_chat *reference(char **said) {
  if (g_have_ref) return &g_ref;
  const char *args[] = {"run", g_world, "--db", path_of("run.db"), "--yes", "--answers", g_answers, NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  if (r.status) fprintf(stderr, "  run: %s", r.err);
  g_have_ref = !r.status && !parity_chat_load(path_of("run.db"), &g_ref);
  if (said) *said = g_have_ref ? said_by(r.out, r.err, &g_ref) : NULL;
  proc_result_free(&r);
  return g_have_ref ? &g_ref : NULL;
}

/* Loads the chat stored in db and checks it as door's column says. */
static void check_door(const char *door, const char *db, const char *out, const char *err) {
  parity_chat got;
  if (!reference(NULL) || parity_chat_load(db, &got)) return;
  char *said = said_by(out, err, &got);
  parity_check(&g_table, door, &g_ref, &got, said);
  free(said);
  parity_chat_free(&got);
}

/* The table's columns are the doors this test drives, in order. */
static void table_names_every_door(void) {
  CHECK_INT(g_table.n_doors, sizeof doors / sizeof *doors);
  for (size_t d = 0; d < g_table.n_doors && d < sizeof doors / sizeof *doors; d++)
    CHECK_STR(g_table.doors[d], doors[d]);
}

/* run --yes --answers: the reference, which must also match its own column (all "same"). */
static void door_run(void) {
  char *said = NULL;
  const parity_chat *ref = reference(&said);
  CHECK(ref != NULL);
  if (ref) parity_check(&g_table, "run", ref, ref, said);
  free(said);
}

/* A door that runs to its end with piped input (may be NULL): exit 0, then check_door on its db. */
static void door_piped(const char *door, const char *const *args, const char *input, const char *db) {
  proc_result r;
  PROC_OK(args, input, NULL, &r);
  check_door(door, db, r.out, r.err);
  proc_result_free(&r);
}

static void door_say(void) {
  const char *args[] = {"say", g_world, MESSAGE, "--db", path_of("say.db"), "--yes", "--answers", g_answers, NULL};
  door_piped("say", args, NULL, path_of("say.db"));
}

static void door_console_piped(void) {
  const char *args[] = {"console", g_world, "--db", path_of("piped.db"), NULL};
  door_piped("console piped", args, MESSAGE "\ny\n" ANSWER "\n/advance 1h\n", path_of("piped.db"));
}

static void door_console_pty(void) {
  const char *args[] = {"console", g_world, "--db", path_of("pty.db"), NULL};
  tty t;
  CHECK_INT(tty_start(&t, g_tmp, args, NULL), 0);
  CHECK(tty_expect(&t, "New Chat"));
  CHECK(tty_expect(&t, "> "));
  tty_send(&t, MESSAGE "\r");
  CHECK(tty_expect(&t, "[y/N]"));
  tty_send(&t, "y\r");
  CHECK(tty_expect(&t, "Which shelf? > "));
  tty_send(&t, ANSWER "\r");
  CHECK(tty_expect(&t, "clerk: Filed on the shelf"));
  tty_send(&t, "/advance 1h\r");
  CHECK(tty_expect(&t, "clerk: Bell noted."));
  tty_send(&t, "\x04");
  CHECK_INT(tty_exit(&t), 0);
  check_door("console pty", path_of("pty.db"), t.text, NULL);
  tty_close(&t);
}

/* GET /api/worlds/parity, parsed (caller deletes); NULL when it did not answer 200. */
static cJSON *world_state(const serve_proc *sp) {
  http_reply r;
  cJSON *j = NULL;
  if (!http_call(sp->base, "GET", "/api/worlds/parity", NULL, 0, NULL, &r) && r.status == 200) j = cJSON_Parse(r.body);
  http_reply_free(&r);
  return j;
}

/* What a poll of the world waits for: a pending approval for tool (its id, once seen), or seq
 * messages with nobody thinking. */
typedef struct world_goal {
  const serve_proc *sp;
  const char *tool;
  long id;
  int seq;
} world_goal;

static int approval_shows(void *arg) {
  world_goal *g = arg;
  cJSON *j = world_state(g->sp), *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItem(j, "approvals"))
    if (cJSON_IsString(cJSON_GetObjectItem(a, "tool")) && !strcmp(cJSON_GetObjectItem(a, "tool")->valuestring, g->tool))
      g->id = (long)cJSON_GetNumberValue(cJSON_GetObjectItem(a, "id"));
  cJSON_Delete(j);
  return g->id >= 0;
}

static int world_quiet(void *arg) {
  const world_goal *g = arg;
  cJSON *j = world_state(g->sp);
  int done = j && cJSON_GetNumberValue(cJSON_GetObjectItem(j, "last_seq")) == g->seq &&
             cJSON_GetNumberValue(cJSON_GetObjectItem(j, "thinking")) == 0;
  cJSON_Delete(j);
  return done;
}

/* Polls the world until a pending approval for tool shows; its id, or -1 after 30 s. */
static long wait_approval(const serve_proc *sp, const char *tool) {
  world_goal g = {.sp = sp, .tool = tool, .id = -1};
  if (!wait_until_every(approval_shows, &g, 30000, 20))
    unit_fail_(__FILE__, __LINE__, "serve: no approval for %s came", tool);
  return g.id;
}

/* Polls the world until it holds seq messages and nobody is thinking; 0, or -1 after 30 s. */
static int wait_quiet(const serve_proc *sp, int seq) {
  if (wait_until_every(world_quiet, &(world_goal){.sp = sp, .seq = seq}, 30000, 20)) return 0;
  unit_fail_(__FILE__, __LINE__, "serve: the world never held %d messages, quiet", seq);
  return -1;
}

static void answer(const serve_proc *sp, long id, const char *body) {
  char path[64];
  http_reply r;
  snprintf(path, sizeof path, "/api/approvals/%ld", id);
  CHECK_INT(http_call(sp->base, "POST", path, body, strlen(body), NULL, &r), 0);
  CHECK_INT(r.status, 200);
  http_reply_free(&r);
}

/* serve with the world; drive (API or page); stopped; its stored chat checked as door. */
static void serve_door(const char *door, const char *db, void (*drive)(const serve_proc *sp)) {
  const char *args[] = {g_world, "--db", db, NULL};
  serve_proc sp;
  if (SERVE_START(g_tmp, args, NULL, &sp)) return;
  drive(&sp);
  wait_quiet(&sp, 2);
  CHECK_INT(serve_proc_stop(&sp), 0);
  char *err = unit_read_file(sp.err_path);
  check_door(door, db, NULL, err);
  free(err);
}

static void drive_api(const serve_proc *sp) {
  http_reply r;
  const char *msg = "{\"text\": \"" MESSAGE "\"}";
  CHECK_INT(http_call(sp->base, "POST", "/api/worlds/parity/messages", msg, strlen(msg), NULL, &r), 0);
  CHECK_INT(r.status, 202);
  http_reply_free(&r);
  long id = wait_approval(sp, "add");
  if (id >= 0) answer(sp, id, "{\"allow\": true}");
  if ((id = wait_approval(sp, "ask_human")) >= 0) answer(sp, id, "{\"allow\": true, \"answer\": \"" ANSWER "\"}");
}

static void drive_page(const serve_proc *sp) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "node '%s' '%s'", unit_src_path("tests/parity_page.js"), sp->base);
  int st = system(cmd);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void door_serve_api(void) { serve_door("serve API", path_of("api.db"), drive_api); }
static void door_serve_page(void) { serve_door("serve page", path_of("page.db"), drive_page); }

/* The stored messages (not the thread) of a and b are the same. */
static int same_messages(const parity_chat *a, const parity_chat *b) {
  size_t i = 0, j = 0;
  for (;;) {
    while (i < a->n && strncmp(a->lines[i].text, "msg ", 4) && strncmp(a->lines[i].text, "sim ", 4)) i++;
    while (j < b->n && strncmp(b->lines[j].text, "msg ", 4) && strncmp(b->lines[j].text, "sim ", 4)) j++;
    if (i == a->n || j == b->n) return i == a->n && j == b->n;
    if (strcmp(a->lines[i++].text, b->lines[j++].text)) return 0;
  }
}

/* host --yes (its database holds the thread: tool steps are stored where they ran) + run --nats, whose
 * copy of the chat must hold the same messages. */
static void door_host_nats(void) {
  nats_node node;
  if (!nats_available() || nats_start(path_of(""), 1, NULL, &node)) {
    CHECK(!"nats-server did not start (apt-get install nats-server)");
    return;
  }
  const char *url = nats_url(&node, 0, 1);
  const char *host[] = {"host", g_world, "--nats", url, "--yes", "--db", path_of("host.db"), NULL};
  pid_t h = agora_spawn(host, path_of("host.out"), path_of("host.err"), NULL);
  CHECK(h > 0 && file_wait_for(path_of("host.err"), "agora: holding Clerk", 30000));
  const char *run[] = {"run", g_world, "--db", path_of("nats.db"), "--nats", url, "--answers", g_answers, NULL};
  proc_result r;
  PROC_OK(run, NULL, NULL, &r);
  CHECK_INT(h > 0 ? agora_stop(h, SIGTERM) : 0, 0);
  nats_node_stop(&node, SIGTERM);
  char *out = unit_read_file(path_of("host.out")), *err = unit_read_file(path_of("host.err"));
  check_door("host + run --nats", path_of("host.db"), out, err);
  /* An MCP tool unknown on the host once, under load, with no clue kept: show the host's own account */
  if (err && strstr(err, "mcp")) fprintf(stderr, "  host stderr (MCP):\n%.3000s\n", err);
  parity_chat hc, rc;
  if (!parity_chat_load(path_of("host.db"), &hc) && !parity_chat_load(path_of("nats.db"), &rc)) {
    CHECK(same_messages(&hc, &rc));
    parity_chat_free(&rc);
  }
  parity_chat_free(&hc);
  free(out), free(err);
  proc_result_free(&r);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    UNIT(table_names_every_door), UNIT(door_run), UNIT(door_say), UNIT(door_console_piped), UNIT(door_console_pty),
    UNIT(door_serve_api), UNIT(door_serve_page), UNIT(door_host_nats),
  };
  signal(SIGPIPE, SIG_IGN);
  g_tmp = unit_tmpdir();
  if (!g_tmp || write_world() || parity_table_load(unit_src_path("docs/architecture.md"), &g_table)) {
    fprintf(stderr, "test_parity: cannot set up (%s)\n", g_tmp ? g_tmp : "no temporary directory");
    return 1;
  }
  int rc = unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
  if (g_have_ref) parity_chat_free(&g_ref);
  parity_table_free(&g_table);
  if (!getenv("AGORA_KEEP_TMP")) unit_rmrf(g_tmp);
  free(g_tmp);
  return rc;
}
