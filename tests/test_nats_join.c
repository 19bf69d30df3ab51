/* console and serve joined to a world on NATS JetStream (docs/distributed.md), end to end through the
 * binary with a real nats-server started here on loopback: `agora host` answers, `agora console --nats`
 * (driven through its stdin) and `agora serve --nats` (driven with libcurl, its event stream read) see
 * what every process publishes, and what each of them sends is answered by the host. */
#include "support/llm_server.h"
#include "support/nats_proc.h"
#include "support/nats_suite.h"
#include "support/proc.h"
#include "support/serve_client.h"
#include "support/unit.h"
#include "support/wait.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char duo_world[] =
  "{\"name\": \"Duo\", \"defaults\": {\"provider\": \"script\"}, \"agents\": ["
  " {\"name\": \"alice\", \"replies\": [\"@human alice one\", \"@human alice two\", \"@human alice three\"]},"
  " {\"name\": \"bob\", \"replies\": [\"@human bob one\", \"@human bob two\"]}],"
  " \"script\": [{\"from\": \"human\", \"text\": \"@alice hello from run\"}]}\n";

static void say(int fd, const char *line) {
  size_t n = strlen(line);
  if (write(fd, line, n) != (ssize_t)n) unit_fail_(__FILE__, __LINE__, "cannot write to the console");
}

/* The messages of chat id in database db as "sender|kind|text" lines with their seqs checked to be
 * 1..n (caller frees). */
static char *stored(const char *db, const char *id) {
  const char *show[] = {"chats", "show", id, "--db", db, "--json", NULL};
  proc_result r;
  if (proc_agora(show, NULL, NULL, &r) || r.status) {
    unit_fail_(__FILE__, __LINE__, "chats show %s --db %s failed", id, db);
    return NULL;
  }
  char *out = proc_messages(r.out);
  long seq = 0;
  for (const char *p = r.out; (p = strstr(p, "\"seq\":")); p += 6)
    if (strtol(p + 6, NULL, 10) != ++seq) unit_fail_(__FILE__, __LINE__, "%s: seq %ld out of place", db, seq);
  proc_result_free(&r);
  return out;
}

/* The chat id of serve's stream frames (the first message frame's "chat"). */
static int frame_chat(const sse_conn *c, char *out, size_t cap) {
  size_t n;
  const sse_frame_rec *f = sse_frames(c, &n);
  for (size_t i = 0; i < n; i++) {
    const char *p = strstr(f[i].data, "\"type\":\"message\",\"world\":\"duo\",\"chat\":\"");
    if (!p) continue;
    p += strlen("\"type\":\"message\",\"world\":\"duo\",\"chat\":\"");
    snprintf(out, cap, "%.*s", (int)strcspn(p, "\""), p);
    return 0;
  }
  return -1;
}

/* One nats-server with its data in the scratch subdirectory sub, and world file name holding duo_world.
 * 0, or -1 after failing the case. */
static int node_start(const char *sub, const char *name, nats_node *node, char world[4096], char url[256]) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/%s", nats_tmp(), sub);
  mkdir(dir, 0700);
  if (nats_start(dir, 1, NULL, node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server did not start");
    return -1;
  }
  snprintf(world, 4096, "%s", nats_path(name));
  unit_write_file(world, duo_world);
  snprintf(url, 256, "%s", nats_url(node, 0, 1));
  return 0;
}

/* A world joined by three processes: a host (with a database when host_db), a console driven through
 * its stdin and serve; their files are TAG-host.out, TAG-con.out, TAG-con.db, TAG-srv.db, ... */
typedef struct trio {
  nats_node node;
  char world[4096], url[256], cdb[4096], sdb[4096], hdb[4096], cout[4096], cerr[4096];
  pid_t host, con;
  int in;
  serve_proc sp;
} trio;

static const char *tagged(const char *tag, const char *what) {
  char name[128];
  snprintf(name, sizeof name, "%s-%s", tag, what);
  return nats_path(name);
}

static int trio_start(trio *t, const char *tag, int host_db) {
  char name[64];
  snprintf(name, sizeof name, "%s.json", tag);
  if (node_start(tag, name, &t->node, t->world, t->url)) return -1;
  snprintf(t->cdb, sizeof t->cdb, "%s", tagged(tag, "con.db"));
  snprintf(t->sdb, sizeof t->sdb, "%s", tagged(tag, "srv.db"));
  snprintf(t->hdb, sizeof t->hdb, "%s", tagged(tag, "host.db"));
  snprintf(t->cout, sizeof t->cout, "%s", tagged(tag, "con.out"));
  snprintf(t->cerr, sizeof t->cerr, "%s", tagged(tag, "con.err"));
  char herr[4096];
  snprintf(herr, sizeof herr, "%s", tagged(tag, "host.err"));
  const char *host[] = {"host", t->world, "--nats", t->url, "--lease-ms", "900", host_db ? "--db" : NULL, t->hdb, NULL};
  t->host = agora_spawn(host, tagged(tag, "host.out"), herr, NULL);
  const char *con[] = {"console", t->world, "--db", t->cdb, "--nats", t->url, NULL};
  t->con = agora_spawn_piped(con, t->cout, t->cerr, NULL, &t->in);
  const char *sargs[] = {t->world, "--db", t->sdb, "--nats", t->url, NULL};
  if (t->host < 0 || t->con < 0 || serve_proc_start(nats_tmp(), sargs, NULL, &t->sp)) {
    unit_fail_(__FILE__, __LINE__, "host, console or serve did not start");
    return -1;
  }
  CHECK(file_wait_for(herr, "hosting world duo", 20000));
  CHECK(file_wait_for(t->cout, "new-chat-created", 20000)); /* the console has joined */
  return 0;
}

/* EOF to the console (it saves and ends), serve and the host stopped: each exits 0. */
static void trio_stop(trio *t) {
  close(t->in);
  CHECK_INT(agora_wait(t->con, 20000), 0);
  CHECK_INT(serve_proc_stop(&t->sp), 0);
  CHECK_INT(agora_stop(t->host, SIGTERM), 0);
}

static void test_console_and_serve(void) {
  trio t;
  if (trio_start(&t, "join", 0)) return;
  const char *world = t.world, *url = t.url;
  int in = t.in;
  char events[256];
  snprintf(events, sizeof events, "%s/api/worlds/duo/events", t.sp.base);
  sse_set *set = sse_set_new();
  sse_conn *sse = sse_open(set, events, NULL, NULL);
  sse_pump(set, 300);

  /* another process publishes: the console and serve's stream show it and the host's answer */
  const char *run[] = {"run", world, "--nats", url, "--no-save", "--json", NULL};
  proc_result r;
  PROC_OK(run, NULL, NULL, &r);
  proc_result_free(&r);
  CHECK(file_wait_for(t.cout, "human: @alice hello from run\n", 20000));
  CHECK(file_wait_for(t.cout, "alice: @human alice one\n", 20000));
  CHECK(file_wait_for(t.cout, "-- title-updated: title=From run\n", 1000)); /* the same title rule */
  CHECK_INT(sse_wait(set, 1, "\"text\":\"@human alice one\"", 20000), 0);
  CHECK_INT(sse_count(sse, "\"text\":\"@alice hello from run\""), 1);

  /* the console sends: the host answers, serve's stream shows both */
  say(in, "@bob from console\n");
  CHECK(file_wait_for(t.cout, "human: @bob from console\n\nbob: @human bob one\n", 20000));
  CHECK_INT(sse_wait(set, 1, "\"text\":\"@human bob one\"", 20000), 0);

  /* serve takes a message: the console shows it and the answer */
  char chat[64] = "";
  CHECK_INT(frame_chat(sse, chat, sizeof chat), 0);
  http_reply hr;
  const char *body = "{\"text\": \"@alice from serve\"}";
  CHECK_INT(http_call(t.sp.base, "POST", "/api/worlds/duo/messages", body, strlen(body), NULL, &hr), 0);
  CHECK_INT(hr.status, 202);
  CHECK(strstr(hr.body, chat) != NULL); /* into the stream's chat */
  http_reply_free(&hr);
  CHECK(file_wait_for(t.cout, "human: @alice from serve\n\nalice: @human alice two\n", 20000));
  CHECK_INT(sse_wait(set, 1, "\"text\":\"@human alice two\"", 20000), 0);
  /* every frame's chat is the stream's: one chat, seqs 1..6 in order */
  CHECK_INT(sse_count(sse, "\"type\":\"message\""), 6);

  /* what would hold in one process only is refused, with a reason. /branch asks for a quiet world first:
   * the host's turn-end may reach the console after the answer it printed, so it is asked again while
   * the console says "wait until the replies in flight are in" (seen once under load). */
  int refused = 0;
  for (int i = 0; i < 20 && !refused; i++) {
    say(in, "/branch 2\n");
    refused = file_wait_for(t.cerr, "/branch: not available on a world joined over NATS", 500);
  }
  CHECK(refused);
  say(in, "/add carol\n/load 0000000000000\n");
  CHECK(file_wait_for(t.cerr, "/add: not available on a world joined over NATS", 10000));
  CHECK(file_wait_for(t.cerr, "/load: on a world joined over NATS", 1000));
  char sel[256];
  snprintf(sel, sizeof sel, "/api/worlds/duo/chats/%s", chat);
  CHECK_INT(http_call(t.sp.base, "DELETE", sel, NULL, 0, NULL, &hr), 0);
  CHECK_INT(hr.status, 409); /* the stream's chat cannot be deleted from one process */
  http_reply_free(&hr);
  /* nor branched: the other processes would not follow (docs/decisions.md "serve on agora.h") */
  snprintf(sel, sizeof sel, "/api/worlds/duo/chats/%s/branch", chat);
  for (int i = 0; i < 20; i++) { /* as the console's: asked again once serve sees no agent thinking */
    CHECK(serve_wait_body(&t.sp, "/api/worlds/duo", "\"thinking\":0,", 10000));
    CHECK_INT(http_call(t.sp.base, "POST", sel, "{\"at\": 2}", 9, NULL, &hr), 0);
    if (!hr.body || !strstr(hr.body, "in flight")) break;
    http_reply_free(&hr);
  }
  CHECK_INT(hr.status, 409);
  CHECK(hr.body && strstr(hr.body, "not available on a world joined over NATS"));
  CHECK(hr.body && !strstr(hr.body, "agora_chat_branch")); /* said in the API's words */
  http_reply_free(&hr);

  sse_set_free(set);
  trio_stop(&t);
  /* the console's and serve's databases hold the same copy of the chat */
  const char *want = "human|human|@alice hello from run\nalice|agent|@human alice one\n"
                     "human|human|@bob from console\nbob|agent|@human bob one\n"
                     "human|human|@alice from serve\nalice|agent|@human alice two\n";
  char *c1 = stored(t.cdb, chat), *c2 = stored(t.sdb, chat);
  CHECK_STR(c1, want);
  CHECK_STR(c2, want);
  free(c1), free(c2);
  nats_node_stop(&t.node, SIGTERM);
}

/* `chats list --json` of database db as "id|title" lines, chats with messages only (caller frees). */
static char *chat_rows(const char *db) {
  const char *list[] = {"chats", "list", "--db", db, "--json", NULL};
  proc_result r;
  if (proc_agora(list, NULL, NULL, &r) || r.status) {
    unit_fail_(__FILE__, __LINE__, "chats list --db %s failed", db);
    return NULL;
  }
  size_t cap = strlen(r.out) + 1, k = 0;
  char *out = calloc(1, cap);
  for (char *line = strtok(r.out, "\n"); line && out; line = strtok(NULL, "\n")) {
    cJSON *j = cJSON_Parse(line);
    const cJSON *id = cJSON_GetObjectItem(j, "id"), *title = cJSON_GetObjectItem(j, "title");
    const cJSON *n = cJSON_GetObjectItem(j, "message_count");
    /* a process's own empty chat (started when it joined) stays in its copy only */
    if (cJSON_IsString(id) && cJSON_IsString(title) && cJSON_IsNumber(n) && n->valuedouble > 0)
      k += (size_t)snprintf(out + k, cap - k, "%s|%s\n", id->valuestring, title->valuestring);
    cJSON_Delete(j);
  }
  proc_result_free(&r);
  return out;
}

/* What every database copy must come to hold: the renamed chat, and not the deleted one. */
typedef struct copies_goal {
  const char *const *dbs;
  const char *gone;
} copies_goal;

static int copies_agree(void *arg) {
  const copies_goal *g = arg;
  int seen = 0;
  for (int i = 0; i < 3; i++) {
    char *rows = chat_rows(g->dbs[i]);
    seen += rows && strstr(rows, "|Second renamed\n") && !strstr(rows, g->gone);
    free(rows);
  }
  return seen == 3;
}

/* Chat records in the world's bucket: a chat started, renamed or deleted in one process is so in every
 * database copy (console, serve, host --db). */
static void test_chat_records(void) {
  trio t;
  if (trio_start(&t, "rec", 1)) return;
  int in = t.in;
  say(in, "@alice first chat\n");
  CHECK(file_wait_for(t.cout, "alice: @human alice one\n", 20000));
  /* the title comes from the first human words in every copy */
  CHECK(serve_wait_body(&t.sp, "/api/worlds/duo", "\"title\":\"First chat\"", 10000));
  say(in, "/new\n@bob second chat\n");
  CHECK(file_wait_for(t.cout, "bob: @human bob one\n", 20000));
  say(in, "/title Second renamed\n");
  CHECK(serve_wait_body(&t.sp, "/api/worlds/duo", "\"title\":\"Second renamed\"", 10000));
  CHECK(serve_wait_body(&t.sp, "/api/worlds/duo/chats", "\"title\":\"First chat\"", 1000));
  /* serve deletes the first chat: gone from the console's copy too */
  char first[64] = "";
  char *rows = chat_rows(t.cdb);
  const char *p = rows ? strstr(rows, "|First chat\n") : NULL;
  CHECK(p != NULL);
  if (p) {
    const char *s0 = p;
    while (s0 > rows && s0[-1] != '\n') s0--;
    snprintf(first, sizeof first, "%.*s", (int)(p - s0), s0);
  }
  free(rows);
  char del[256];
  snprintf(del, sizeof del, "/api/worlds/duo/chats/%s", first);
  http_reply hr;
  CHECK_INT(http_call(t.sp.base, "DELETE", del, NULL, 0, NULL, &hr), 0);
  CHECK_INT(hr.status, 200);
  http_reply_free(&hr);
  say(in, "/chats\n");
  char listed[128];
  snprintf(listed, sizeof listed, "Second renamed\n");
  CHECK(file_wait_for(t.cout, listed, 10000));
  /* wait until the delete and the rename have reached every copy, as seen by `chats list` */
  const char *dbs[] = {t.cdb, t.sdb, t.hdb};
  CHECK(wait_until_every(copies_agree, &(copies_goal){.dbs = dbs, .gone = first}, 60000, 100));
  trio_stop(&t);
  /* every copy holds the same chats with the same titles: the second one, renamed */
  char *a = chat_rows(t.cdb), *b = chat_rows(t.sdb), *c = chat_rows(t.hdb);
  CHECK(a && strstr(a, "|Second renamed\n") && !strstr(a, first));
  CHECK_STR(b, a);
  CHECK_STR(c, a);
  free(a), free(b), free(c);
  nats_node_stop(&t.node, SIGTERM);
}

/* run --nats --chat ID continues the stream's chat; another id, or --resume, is refused. */
/* `agora host WORLD --nats URL`, its output in TAG.out and TAG.err, once it says it hosts world_id;
 * returns its pid (stopped by the caller). */
static pid_t host_up(const char *world, const char *url, const char *tag, const char *world_id) {
  char name[64], out[4096], err[4096], needle[128];
  snprintf(name, sizeof name, "%s.out", tag);
  snprintf(out, sizeof out, "%s", nats_path(name));
  snprintf(name, sizeof name, "%s.err", tag);
  snprintf(err, sizeof err, "%s", nats_path(name));
  const char *host[] = {"host", world, "--nats", url, "--lease-ms", "900", NULL};
  pid_t h = agora_spawn(host, out, err, NULL);
  snprintf(needle, sizeof needle, "hosting world %s", world_id);
  if (!file_wait_for(err, needle, 20000)) unit_fail_(__FILE__, __LINE__, "%s: the host did not start", tag);
  return h;
}

static void test_run_chat(void) {
  nats_node node;
  char world[4096], url[256], db[4096];
  if (node_start("runchat", "runchat.json", &node, world, url)) return;
  snprintf(db, sizeof db, "%s", nats_path("runchat.db"));
  pid_t h = host_up(world, url, "rc", "duo");
  const char *first[] = {"run", world, "--nats", url, "--db", nats_path("runchat1.db"), "--json", NULL};
  proc_result r;
  PROC_OK(first, NULL, NULL, &r);
  char chat[64] = "";
  const char *p = strstr(r.out, "\"chat\":\"");
  if (p) snprintf(chat, sizeof chat, "%.*s", (int)strcspn(p + 8, "\""), p + 8);
  proc_result_free(&r);
  CHECK(chat[0] != '\0');
  const char *again[] = {"run", world, "--nats", url, "--db", db, "--chat", chat, "--json", NULL};
  PROC_OK(again, NULL, NULL, &r);
  char *m = proc_messages(r.out);
  CHECK_STR(m, "human|human|@alice hello from run\nalice|agent|@human alice two\n"); /* the chat goes on */
  free(m);
  proc_result_free(&r);
  char *all = stored(db, chat); /* the copy holds the chat from its first message */
  CHECK_STR(all, "human|human|@alice hello from run\nalice|agent|@human alice one\n"
                 "human|human|@alice hello from run\nalice|agent|@human alice two\n");
  free(all);
  const char *other[] = {"run", world, "--nats", url, "--db", db, "--chat", "0000000000000", NULL};
  PROC_REFUSED(other, NULL, "only that chat can be continued with --nats", NULL);
  const char *resume[] = {"run", world, "--nats", url, "--db", db, "--resume", chat, NULL};
  PROC_REFUSED(resume, NULL, "--resume cannot go with --nats", NULL);
  CHECK_INT(agora_stop(h, SIGTERM), 0);
  nats_node_stop(&node, SIGTERM);
}

/* The line of out holding needle (caller frees), or NULL. */
static char *line_with(const char *out, const char *needle) {
  const char *p = strstr(out, needle);
  if (!p) return NULL;
  const char *b = p;
  while (b > out && b[-1] != '\n') b--;
  return strndup(b, strcspn(b, "\n"));
}

/* A hosted agent whose LLM call fails: `run --nats --json` shows the host's llm-error naming it (the
 * provider's status and message with it), and the other agent's answer as before, and exits 1 as a
 * local run does (issue 28 item 14). */
static void test_failure_shown(void) {
  llm_server *srv = NULL;
  nats_node node;
  char world[4096], url[256], text[2048];
  if (llm_server_start(&srv)) {
    unit_fail_(__FILE__, __LINE__, "the LLM server did not start");
    return;
  }
  if (node_start("evt", "evt.json", &node, world, url)) {
    llm_server_stop(srv);
    return;
  }
  snprintf(text, sizeof text,
           "{\"name\": \"Evt\", \"agents\": ["
           " {\"name\": \"alice\", \"provider\": \"script\", \"replies\": [\"@human alice one\"]},"
           " {\"name\": \"bob\", \"provider\": \"openai\", \"model\": \"m\", \"base_url\": \"%s\","
           " \"system_prompt\": \"[[mock status=400 error_message=bob-is-broken]]\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@alice @bob hello\"}]}\n",
           llm_server_url(srv, "/v1"));
  unit_write_file(world, text);
  pid_t h = host_up(world, url, "evt", "evt");
  const char *run[] = {"run", world, "--nats", url, "--db", nats_path("evt.db"), "--json", NULL};
  proc_result r;
  CHECK_INT(proc_agora(run, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 1); /* as a local run whose call failed (it exited 0) */
  CHECK(strstr(r.err, "1 LLM call(s) failed") != NULL);
  char *err = line_with(r.out, "\"llm-error\"");
  CHECK(err && strstr(err, "\"agent\":\"bob\"") && strstr(err, "bob-is-broken") && strstr(err, "400"));
  CHECK(strstr(r.out, "alice one") != NULL);
  free(err);
  proc_result_free(&r);
  CHECK_INT(agora_stop(h, SIGTERM), 0);
  nats_node_stop(&node, SIGTERM);
  llm_server_stop(srv);
}

/* `run --nats` twice with one database, each time on a new stream (a server started afresh): the
 * database's current chat, still titled "New Chat" and holding the first run's messages, is not
 * reused, since the copy's seqs must be the stream's (reused, they moved on and the turns' ends, counted
 * by the stream, matched no turn: the second run waited for ever). */
static void test_run_twice_one_db(void) {
  static const char untitled[] =
    "{\"name\": \"Duo\", \"defaults\": {\"provider\": \"script\"}, \"agents\": ["
    " {\"name\": \"alice\", \"replies\": [\"@human alice one\", \"@human alice two\"]}],"
    " \"script\": [{\"from\": \"human\", \"text\": \"@alice hello\"}]}\n";
  char db[4096], out[4096];
  snprintf(db, sizeof db, "%s", nats_path("twice.db"));
  for (int i = 0; i < 2; i++) {
    nats_node node;
    char world[4096], url[256], tag[32];
    snprintf(tag, sizeof tag, "twice%d", i);
    if (node_start(tag, "twice.json", &node, world, url)) return;
    unit_write_file(world, untitled);
    pid_t h = host_up(world, url, "tw", "duo");
    snprintf(out, sizeof out, "%s", nats_path(i ? "tw-run1.out" : "tw-run0.out"));
    const char *run[] = {"run", world, "--nats", url, "--db", db, "--json", NULL};
    pid_t r = agora_spawn(run, out, nats_path("tw-run.err"), NULL);
    int st = agora_wait(r, 60000);
    if (st < 0) st = agora_stop(r, SIGKILL);
    CHECK_INT(st, 0);
    char *text = unit_read_file(out);
    CHECK(text && strstr(text, "\"event\":\"new-chat-created\"") && !strstr(text, "chat-reused") &&
          !strstr(text, "seqs-moved") && strstr(text, "@human alice one"));
    free(text);
    CHECK_INT(agora_stop(h, SIGTERM), 0);
    nats_node_stop(&node, SIGTERM);
  }
  const char *list[] = {"chats", "list", "--db", db, "--json", NULL};
  proc_result lr;
  CHECK_INT(proc_agora(list, NULL, NULL, &lr), 0);
  int chats = 0;
  for (const char *p = lr.out; (p = strstr(p, "\"message_count\":2")); p++) chats++;
  CHECK_INT(chats, 2); /* two chats of two messages each, not one of four */
  proc_result_free(&lr);
}

/* A host starts its world's MCP servers before it joins: a message published while a server is still
 * starting (held here by the gated fake server) waits for the host, and is answered with the tool, never
 * with "unknown tool" (the host used to join first, and under load parity caught it answering so). */
static void test_host_tools_before_join(void) {
  nats_node node;
  char world[4096], url[256], gate[4096], text[9000];
  if (node_start("gate", "gate.json", &node, world, url)) return;
  snprintf(gate, sizeof gate, "%s", nats_path("gate.marker"));
  snprintf(text, sizeof text,
           "{\"name\": \"Gate\", \"mcp_servers\": {\"g\": {\"command\": \"node\", \"args\": [\"%s\", \"gated\", \"%s\"]}},"
           " \"agents\": [{\"name\": \"clerk\", \"provider\": \"script\", \"tools\": [\"g.echo\"],"
           " \"replies\": [{\"tool\": \"echo\", \"args\": {\"text\": \"ledger\"}}, \"@human filed\"]}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@clerk file it\"}]}\n",
           unit_src_path("tests/mcp/fake_server.js"), gate);
  unit_write_file(world, text);
  const char *host[] = {"host", world, "--nats", url, "--db", nats_path("gate-host.db"), NULL};
  pid_t h = agora_spawn(host, nats_path("gate-host.out"), nats_path("gate-host.err"), NULL);
  CHECK(h > 0 && file_wait_for(gate, "initialize", 20000));
  const char *run[] = {"run", world, "--nats", url, "--db", nats_path("gate.db"), "--json", NULL};
  pid_t r = agora_spawn(run, nats_path("gate-run.out"), nats_path("gate-run.err"), NULL);
  /* While the server is held, a host that joined anyway would answer without the tool and the run would
   * end: give it the time to (3 s; the host that waits shows nothing, so this is the one bounded wait for
   * a thing that must not happen), then let the server start. */
  int ended = agora_wait(r, 3000); /* agora_wait stretches its own budget on slow builds */
  snprintf(text, sizeof text, "%s.open", gate);
  unit_write_file(text, "");
  CHECK_INT(ended == -1 ? agora_wait(r, 30000) : ended, 0);
  CHECK_INT(agora_stop(h, SIGTERM), 0);
  char *out = unit_read_file(nats_path("gate-host.out"));
  CHECK(out && strstr(out, "echo: ledger") && !strstr(out, "unknown tool"));
  if (out && !strstr(out, "echo: ledger")) fprintf(stderr, "  host printed:\n%s\n", out);
  free(out);
  nats_node_stop(&node, SIGTERM);
}

static void test_usage(void) {
  char world[4096];
  snprintf(world, sizeof world, "%s", nats_path("usage.json"));
  unit_write_file(world, duo_world);
  proc_result r;
  const char *no_value[] = {"console", world, "--nats", NULL};
  PROC_REFUSED(no_value, NULL, "--nats needs a value", NULL);
  const char *no_world[] = {"serve", "--nats", "nats://127.0.0.1:1", "--db", nats_path("u.db"), NULL};
  PROC_REFUSED(no_world, NULL, "--nats needs the world file", NULL);
  /* no server there: exit 2 at once, naming it */
  const char *con[] = {"console", world, "--db", nats_path("u.db"), "--nats", "nats://127.0.0.1:1", NULL};
  CHECK_INT(proc_agora(con, "hello\n", NULL, &r), 0);
  CHECK_INT(r.status, 2);
  CHECK(strstr(r.err, "cannot connect to NATS at") != NULL);
  proc_result_free(&r);
  const char *srv[] = {"serve", world, "--db", nats_path("u.db"), "--listen", "127.0.0.1:0", "--nats", "nats://127.0.0.1:1", NULL};
  PROC_REFUSED(srv, NULL, "cannot connect to NATS at", NULL);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    {"console_and_serve", test_console_and_serve}, {"chat_records", test_chat_records},
    {"run_chat", test_run_chat}, {"failure_shown", test_failure_shown},
    {"run_twice_one_db", test_run_twice_one_db}, {"host_tools_before_join", test_host_tools_before_join},
    {"usage", test_usage},
  };
  return nats_suite_main(argc, argv, tests, sizeof tests / sizeof *tests, NULL);
}
