/* MCP servers in worlds, end to end through the built binary (AGORA_PEERS: the npm reference servers,
 * tests/mcp/fake_server.js): world-file loading (strict errors with JSON paths, variable names only in
 * what is stored), `agora run` with agents calling MCP tools (transcript and the stored thread through
 * replay, approval refused and granted with --yes, a path outside the root), servers that fail (needed:
 * exit 1; not needed: the run goes on), a name clash after SERVER.* (exit 2), `agora tools`, and the
 * console answering an approval from its piped input. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "mcp/child.h"
#include "support/llm_drive.h"
#include "support/mcp_drive.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/tworld.h"
#include "world/world_mcp.h"
#include "support/unit.h"
#include "world/world_file.h"

static char *g_tmp;

static const char *peer(const char *bin) {
  static char path[2][4096];
  static int k;
  k ^= 1;
  const char *peers = getenv("AGORA_PEERS");
  snprintf(path[k], sizeof path[k], "%s/node_modules/.bin/%s", peers ? peers : "build/peers", bin);
  return path[k];
}

static char *write_world(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *write_world(const char *name, const char *fmt, ...) {
  static char path[4][4200];
  static int k;
  k = (k + 1) % 4;
  char text[16384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  snprintf(path[k], sizeof path[k], "%s/%s", g_tmp, name);
  unit_write_file(path[k], text);
  return path[k];
}

static int load_error(const char *json, const char *want) {
  world_spec spec;
  ag_errmsg em = {""};
  int rc = world_spec_parse(json, strlen(json), "w.json", &spec, &em);
  if (!rc) world_spec_free(&spec);
  if (rc != AG_ERR_INVALID || !strstr(em.text, want)) {
    fprintf(stderr, "  got: %s\n", em.text);
    return 0;
  }
  return 1;
}

static void world_file_strict(void) {
  CHECK(load_error("{\"name\":\"m\",\"mcp_servers\":{\"fs\":{\"args\":[]}}}", "mcp_servers.fs: missing command or url"));
  CHECK(load_error("{\"name\":\"m\",\"mcp_servers\":{\"fs\":{\"command\":\"x\",\"comand\":1}}}",
                   "mcp_servers.fs.comand: unknown field"));
  CHECK(load_error("{\"name\":\"m\",\"mcp_servers\":{\"fs\":{\"url\":\"http://127.0.0.1:1/\",\"args\":[]}}}",
                   "mcp_servers.fs.args: only for a server started with a command"));
  CHECK(load_error("{\"name\":\"m\",\"mcp_servers\":{\"fs\":{\"command\":\"x\",\"env\":{\"A\":1}}}}",
                   "mcp_servers.fs.env.A: must be a string"));
  CHECK(load_error("{\"name\":\"m\",\"mcp_servers\":{\"fs\":{\"command\":\"x\"}},\"agents\":[{\"name\":\"a\","
                   "\"tools\":[\"web.fetch\"]}]}", "agents[0].tools: 'web.fetch' names no server of mcp_servers"));
  CHECK(load_error("{\"name\":\"m\",\"mcp_servers\":{\"fs\":{\"command\":\"x\"}},\"agents\":[{\"name\":\"a\","
                   "\"tools\":[\"fs.read\",{\"name\":\"fs.get\",\"as\":\"read\"}]}]}",
                   "'fs.read' and 'fs.get' are both called read"));
  CHECK(load_error("{\"name\":\"m\",\"mcp_servers\":{\"fs\":{\"command\":\"x\"}},\"agents\":[{\"name\":\"a\","
                   "\"tools\":[{\"name\":\"fs.*\",\"as\":\"x\"}]}]}", "agents[0].tools[0].as: renames one tool"));
  CHECK(load_error("{\"name\":\"m\",\"mcp_servers\":{\"fs\":{\"command\":\"x\"}},\"agents\":[{\"name\":\"a\","
                   "\"tools\":[{\"name\":\"fs.x\",\"aprove\":true}]}]}", "agents[0].tools[0].aprove: unknown field"));
  /* What is stored holds the variable's name, never its value; it loads again the same. */
  setenv("AGORA_TEST_MCP_SECRET", "hunter2-value", 1);
  const char *ok = "{\"name\":\"m\",\"mcp_servers\":{\"fs\":{\"command\":\"x\",\"env\":{\"T\":\"${AGORA_TEST_MCP_SECRET}\"}}},"
                   "\"agents\":[{\"name\":\"a\",\"tools\":[\"fs.*\",{\"name\":\"fs.w\",\"as\":\"w2\",\"approve\":false}]}]}";
  world_spec spec, again;
  ag_errmsg em = {""};
  CHECK_INT(world_spec_parse(ok, strlen(ok), "w.json", &spec, &em), AG_OK);
  cJSON *j = world_spec_to_json(&spec);
  char *text = cJSON_PrintUnformatted(j);
  CHECK(strstr(text, "${AGORA_TEST_MCP_SECRET}") && !strstr(text, "hunter2"));
  CHECK(strstr(text, "\"fs.*\"") && strstr(text, "\"as\":\"w2\",\"approve\":false"));
  CHECK_INT(world_spec_from_json(j, "stored", &again, &em), AG_OK);
  CHECK_INT(again.n_mcp, 1);
  CHECK_INT(again.agents[0].n_mcp, 2);
  world_spec_free(&again);
  free(text);
  cJSON_Delete(j);
  world_spec_free(&spec);
}

/* Runs agora with args (and input on stdin), expecting exit status want. */
static void agora(const char *const *args, const char *input, int want, proc_result *r) {
  CHECK_INT(proc_agora(args, input, NULL, r), 0);
  CHECK_INT(r->status, want);
}

static int has(const char *s, const char *want) {
  if (s && strstr(s, want)) return 1;
  fprintf(stderr, "  missing: %s\n", want);
  return 0;
}

/* The library world: a filesystem server over notes/ and the everything server. */
static char *library_world(const char *notes) {
  return write_world("library.json",
    "{\"name\": \"library\", \"mcp_servers\": {"
    "  \"fs\": {\"command\": \"%s\", \"args\": [\"%s\"]}, \"ev\": {\"command\": \"%s\", \"timeout_ms\": 20000}},"
    " \"agents\": [{\"name\": \"Librarian\", \"tools\": [\"fs.list_directory\", \"fs.read_text_file\", \"fs.write_file\","
    "   {\"name\": \"ev.echo\", \"as\": \"say_back\"}],"
    "  \"replies\": [{\"tool\": \"list_directory\", \"args\": {\"path\": \"%s\"}},"
    "   {\"tool\": \"read_text_file\", \"args\": {\"path\": \"%s/a.txt\"}},"
    "   {\"tool\": \"write_file\", \"args\": {\"path\": \"%s/b.txt\", \"content\": \"written by the librarian\"}},"
    "   {\"tool\": \"read_text_file\", \"args\": {\"path\": \"/etc/hostname\"}},"
    "   {\"tool\": \"say_back\", \"args\": {\"message\": \"all done\"}}, \"Finished, @human.\"]}],"
    " \"script\": [{\"from\": \"human\", \"text\": \"@librarian look around\"}]}",
    peer("mcp-server-filesystem"), notes, peer("mcp-server-everything"), notes, notes, notes);
}

static void run_calls_mcp_tools(void) {
  char notes[4200], db[4200], b[4300], chat[64] = "";
  snprintf(notes, sizeof notes, "%s/notes", g_tmp);
  snprintf(db, sizeof db, "%s/db", g_tmp);
  snprintf(b, sizeof b, "%s/b.txt", notes);
  char a[8800];
  snprintf(a, sizeof a, "mkdir -p '%s' && printf 'the first note' > '%s/a.txt'", notes, notes);
  CHECK_INT(system(a), 0);
  char *w = strdup(library_world(notes));
  const char *run[] = {"run", w, "--db", db, "--json", NULL};
  proc_result r;
  agora(run, NULL, 0, &r);
  CHECK_HAS(r.out, "\"agent\":\"librarian\",\"tool\":\"list_directory\",\"call_id\":\"call_1\",\"args\":", "a.txt",
                   "the first note", "denied: write_file needs the user's approval");
  CHECK(has(r.out, "ccess denied")); /* /etc/hostname is outside the server's root */
  CHECK_HAS(r.out, "Echo: all done", "Finished, @human.");
  char *bt = unit_read_file(b);
  CHECK(bt == NULL); /* refused: nothing written */
  free(bt);
  /* The servers' stderr is in the run's log, not in the transcript. */
  CHECK(!strstr(r.out, "running on stdio") && !strstr(r.err, "running on stdio"));
  char grep[4400];
  snprintf(grep, sizeof grep, "grep -qs 'Secure MCP Filesystem Server running on stdio' '%s'/logs/mcp-*.log", db);
  CHECK_INT(system(grep), 0);
  const char *id = strstr(r.out, "\"chat\":\"");
  if (id) snprintf(chat, sizeof chat, "%.*s", (int)strcspn(id + 8, "\""), id + 8);
  proc_result_free(&r);
  /* The stored thread has every call and result. */
  const char *replay[] = {"replay", chat, "--db", db, NULL};
  CHECK_INT(proc_agora(replay, NULL, NULL, &r), 0);
  CHECK_HAS(r.out, "-- tool-call: agent=librarian tool=read_text_file",
                   "tool=say_back call_id=call_1 result=Echo: all done");
  proc_result_free(&r);
  /* --yes approves: the file is written. */
  const char *yes[] = {"run", w, "--no-save", "--yes", NULL};
  agora(yes, NULL, 0, &r);
  bt = unit_read_file(b);
  CHECK(bt && !strcmp(bt, "written by the librarian"));
  free(bt);
  proc_result_free(&r);
  /* agora tools lists each tool with its source and approval. */
  const char *tools[] = {"tools", w, "--db", db, "--json", NULL};
  agora(tools, NULL, 0, &r);
  CHECK_HAS(r.out, "{\"name\":\"write_file\",\"source\":\"fs.write_file\",\"approve\":true",
                   "{\"name\":\"read_text_file\",\"source\":\"fs.read_text_file\",\"approve\":false",
                   "{\"name\":\"say_back\",\"source\":\"ev.echo\",\"approve\":false",
                   "\"servers\":[{\"name\":\"fs\",\"ready\":true},{\"name\":\"ev\",\"ready\":true}]");
  proc_result_free(&r);
  free(w);
}

static const char *fake(void) { return unit_src_path("tests/mcp/fake_server.js"); }

static void failed_servers(void) {
  /* Needed by an agent: mcp-error, exit 1 naming it. */
  char *w = write_world("needed.json",
    "{\"name\": \"n\", \"mcp_servers\": {\"bad\": {\"command\": \"node\", \"args\": [\"%s\", \"exit\"]},"
    " \"good\": {\"command\": \"node\", \"args\": [\"%s\", \"ok\"]}},"
    " \"agents\": [{\"name\": \"a\", \"tools\": [\"bad.echo\"], \"replies\": [\"hi\"]}],"
    " \"script\": [{\"from\": \"human\", \"text\": \"@a hello\"}]}", fake(), fake());
  const char *run[] = {"run", w, "--no-save", "--json", NULL};
  proc_result r;
  agora(run, NULL, 1, &r);
  CHECK_HAS(r.out, "\"event\":\"mcp-error\"", "\"server\":\"bad\",\"error\":\"the server exited with status 3\"");
  CHECK(has(r.err, "MCP server bad failed: the server exited with status 3 (needed by a)\n"));
  proc_result_free(&r);
  const char *tools[] = {"tools", w, "--db", g_tmp, NULL};
  agora(tools, NULL, 1, &r);
  CHECK(has(r.err, "agora: MCP server bad failed: the server exited with status 3"));
  proc_result_free(&r);
  /* Needed by nobody: the event, and the world goes on. */
  w = write_world("unneeded.json",
    "{\"name\": \"u\", \"mcp_servers\": {\"bad\": {\"command\": \"node\", \"args\": [\"%s\", \"garbage\"]}},"
    " \"agents\": [{\"name\": \"a\", \"replies\": [\"hi there\"]}],"
    " \"script\": [{\"from\": \"human\", \"text\": \"@a hello\"}]}", fake());
  const char *run2[] = {"run", w, "--no-save", "--json", NULL};
  agora(run2, NULL, 0, &r);
  CHECK_HAS(r.out, "\"server\":\"bad\",\"error\":\"protocol garbage on stdout\"", "hi there");
  proc_result_free(&r);
  /* SERVER.* gives a name another entry has: exit 2 naming both. */
  w = write_world("clash.json",
    "{\"name\": \"c\", \"mcp_servers\": {\"f1\": {\"command\": \"node\", \"args\": [\"%s\", \"ok\"]},"
    " \"f2\": {\"command\": \"node\", \"args\": [\"%s\", \"ok\"]}},"
    " \"agents\": [{\"name\": \"a\", \"tools\": [\"f1.*\", \"f2.echo\"]}]}", fake(), fake());
  const char *run3[] = {"run", w, "--no-save", NULL};
  agora(run3, NULL, 2, &r);
  CHECK(has(r.err, "tool name 'echo' is given twice: f1.echo and f2.echo"));
  proc_result_free(&r);
}

static void console_approves_from_input(void) {
  char notes[4200], db[4200], b[4300];
  snprintf(notes, sizeof notes, "%s/cnotes", g_tmp);
  snprintf(db, sizeof db, "%s/cdb", g_tmp);
  snprintf(b, sizeof b, "%s/c.txt", notes);
  char mk[4300];
  snprintf(mk, sizeof mk, "mkdir -p '%s'", notes);
  CHECK_INT(system(mk), 0);
  char *w = write_world("console.json",
    "{\"name\": \"cw\", \"mcp_servers\": {\"fs\": {\"command\": \"%s\", \"args\": [\"%s\"]}},"
    " \"agents\": [{\"name\": \"Writer\", \"tools\": [\"fs.write_file\"],"
    "  \"replies\": [{\"tool\": \"write_file\", \"args\": {\"path\": \"%s\", \"content\": \"yes\"}}, \"wrote it\"]}]}",
    peer("mcp-server-filesystem"), notes, b);
  const char *args[] = {"console", "--db", db, w, NULL};
  proc_result r;
  agora(args, "@writer write it\ny\n", 0, &r);
  CHECK_HAS(r.out, "approve: writer wants to call write_file",
                   "-- approval: agent=writer tool=write_file approved=true", "writer: wrote it");
  char *bt = unit_read_file(b);
  CHECK(bt && !strcmp(bt, "yes"));
  free(bt);
  proc_result_free(&r);
}

/* ${VAR} in env reaches the server; what is stored keeps the name; an unset one fails the start. A
 * server that echoes the value back, in a result or in an error, gets it replaced by [redacted]
 * everywhere: the transcript, the stored thread (what the model is sent) and the database files. */
static void env_variables_read_at_start(void) {
  char db[4200];
  snprintf(db, sizeof db, "%s/envdb", g_tmp);
  char *w = write_world("env.json",
    "{\"name\": \"env\", \"mcp_servers\": {\"f\": {\"command\": \"node\", \"args\": [\"%s\", \"ok\"],"
    " \"env\": {\"FAKE_TOKEN\": \"tok-${AGORA_TEST_MCP_TOKEN}\"}}},"
    " \"agents\": [{\"name\": \"a\", \"tools\": [\"f.echo\"], \"replies\": [{\"tool\": \"echo\", \"args\": {\"env\": \"FAKE_TOKEN\"}},"
    "  {\"tool\": \"echo\", \"args\": {\"env_error\": \"FAKE_TOKEN\"}}, \"ok\"]}],"
    " \"script\": [{\"from\": \"human\", \"text\": \"@a check\"}]}", fake());
  const char *env[] = {"AGORA_TEST_MCP_TOKEN=s3cr3t-value", NULL};
  const char *run[] = {"run", w, "--db", db, NULL};
  proc_result r;
  PROC_OK(run, NULL, env, &r);
  CHECK(has(r.out, "env FAKE_TOKEN=tok-[redacted]")); /* it reached the server, and came back scrubbed */
  CHECK(has(r.out, "denied for header Bearer tok-[redacted]"));
  CHECK(!strstr(r.out, "s3cr3t") && !strstr(r.err, "s3cr3t"));
  proc_result_free(&r);
  char grep[4400];
  snprintf(grep, sizeof grep, "grep -rqs 's3cr3t' '%s'", db);
  CHECK(system(grep) != 0); /* not in any file of the database */
  snprintf(grep, sizeof grep, "grep -rqs 'tok-\\[redacted\\]' '%s'", db);
  CHECK_INT(system(grep), 0); /* while the scrubbed result is stored */
  const char *exp[] = {"worlds", "export", "env", "--db", db, NULL};
  agora(exp, NULL, 0, &r);
  CHECK(has(r.out, "tok-${AGORA_TEST_MCP_TOKEN}"));
  CHECK(!strstr(r.out, "s3cr3t"));
  proc_result_free(&r);
  const char *unset[] = {"run", w, "--no-save", NULL};
  agora(unset, NULL, 1, &r); /* the variable is not set here: the server does not start */
  CHECK(has(r.err, "mcp_servers.f.env.FAKE_TOKEN: environment variable AGORA_TEST_MCP_TOKEN is not set"));
  proc_result_free(&r);
}

/* An MCP tool under a built-in's name (here by "as"; a server may list one so named) is shown with its
 * server in the transcript and in the approval question, so it cannot pass for the built-in. */
static void mcp_tool_named_like_a_builtin(void) {
  char *w = write_world("builtin.json",
    "{\"name\": \"bn\", \"mcp_servers\": {\"f\": {\"command\": \"node\", \"args\": [\"%s\", \"ok\"]}},"
    " \"agents\": [{\"name\": \"a\", \"tools\": [{\"name\": \"f.echo\", \"as\": \"ask_human\", \"approve\": true}],"
    "  \"replies\": [{\"tool\": \"ask_human\", \"args\": {\"text\": \"hi\"}}, \"done\"]}],"
    " \"script\": [{\"from\": \"human\", \"text\": \"@a go\"}]}", fake());
  const char *run[] = {"run", w, "--no-save", "--yes", NULL};
  proc_result r;
  agora(run, NULL, 0, &r);
  CHECK_HAS(r.out, "-- tool-call: agent=a tool=f.echo call_id=", "-- tool-result: agent=a tool=f.echo call_id=",
                   "echo: hi pid");
  CHECK(!strstr(r.out, "tool=ask_human"));
  proc_result_free(&r);
  char db[4200];
  snprintf(db, sizeof db, "%s/bndb", g_tmp);
  const char *console[] = {"console", "--db", db, w, NULL};
  agora(console, "@a go\ny\n", 0, &r);
  CHECK(has(r.out, "approve: a wants to call f.echo"));
  proc_result_free(&r);
}

/* The column where the word col starts on the line holding key (-1: none). */
static int column_of(const char *out, const char *key, const char *col) {
  const char *k = out ? strstr(out, key) : NULL;
  if (!k) return -1;
  const char *line = k;
  while (line > out && line[-1] != '\n') line--;
  const char *c = strstr(k, col), *eol = strchr(k, '\n');
  return c && (!eol || c < eol) ? (int)(c - line) : -1;
}

/* agora tools keeps its columns in line when a name is long; a missing command is named once in the
 * error, with who needs the server; a misspelt tool gets the nearest name the server has. */
static void tools_columns_and_errors(void) {
  char *w = write_world("cols.json",
    "{\"name\": \"cols\", \"mcp_servers\": {\"f\": {\"command\": \"node\", \"args\": [\"%s\", \"ok\"]}},"
    " \"agents\": [{\"name\": \"a\", \"tools\": [\"f.grow\", {\"name\": \"f.echo\","
    "  \"as\": \"a_tool_name_much_longer_than_twenty_eight_characters\"}]}]}", fake());
  const char *tools[] = {"tools", w, "--db", g_tmp, NULL};
  proc_result r;
  agora(tools, NULL, 0, &r);
  int grow = column_of(r.out, "  grow ", "asks first"), echo = column_of(r.out, "  a_tool_name", "runs");
  if (grow < 0 || grow != echo) unit_fail_(__FILE__, __LINE__, "columns %d and %d:\n%s", grow, echo, r.out);
  proc_result_free(&r);
  w = write_world("missing.json",
    "{\"name\": \"mi\", \"mcp_servers\": {\"f\": {\"command\": \"no-such-mcp-command\"}},"
    " \"agents\": [{\"name\": \"a\", \"tools\": [\"f.echo\", \"f.grow\"], \"replies\": [\"hi\"]},"
    "  {\"name\": \"b\", \"tools\": [\"f.echo\"]}], \"script\": [{\"from\": \"human\", \"text\": \"@a hello\"}]}");
  const char *run[] = {"run", w, "--no-save", NULL};
  agora(run, NULL, 1, &r);
  CHECK(has(r.err, "agora: run: MCP server f failed: command 'no-such-mcp-command' not found (needed by a, b)\n"));
  const char *second = strstr(r.err, "no-such-mcp-command");
  CHECK(second && !strstr(second + 1, "no-such-mcp-command"));
  proc_result_free(&r);
  w = write_world("near.json",
    "{\"name\": \"ne\", \"mcp_servers\": {\"f\": {\"command\": \"node\", \"args\": [\"%s\", \"ok\"]}},"
    " \"agents\": [{\"name\": \"a\", \"tools\": [\"f.ecoh\"]}]}", fake());
  const char *near[] = {"run", w, "--no-save", NULL};
  agora(near, NULL, 2, &r);
  CHECK(has(r.err, "MCP server f has no tool 'ecoh' (did you mean 'f.echo'?)"));
  proc_result_free(&r);
}

/* A server reached by url (Streamable HTTP, mcp/http.c): server-everything on loopback, a header from
 * ${VAR}; the agent's call goes over HTTP and the session is DELETEd at the end. */
static void http_server_in_a_world(void) {
  mcp_everything e;
  if (mcp_everything_start(&e, g_tmp)) {
    CHECK(!"server-everything (streamableHttp) did not start");
    return;
  }
  char *w = write_world("http.json",
    "{\"name\": \"http\", \"mcp_servers\": {\"ev\": {\"url\": \"%s\", \"headers\": {\"X-Test\": \"${AGORA_TEST_MCP_TOKEN}\"}}},"
    " \"agents\": [{\"name\": \"a\", \"tools\": [\"ev.echo\", \"ev.get-sum\"],"
    "  \"replies\": [{\"tool\": \"echo\", \"args\": {\"message\": \"over http\"}},"
    "   {\"tool\": \"get-sum\", \"args\": {\"a\": 20, \"b\": 22}}, \"ok\"]}],"
    " \"script\": [{\"from\": \"human\", \"text\": \"@a go\"}]}", e.url);
  const char *env[] = {"AGORA_TEST_MCP_TOKEN=t0k", NULL};
  const char *run[] = {"run", w, "--no-save", "--json", NULL};
  proc_result r;
  PROC_OK(run, NULL, env, &r);
  CHECK_HAS(r.out, "Echo: over http", "42");
  CHECK(!strstr(r.out, "mcp-error"));
  proc_result_free(&r);
  mcp_everything_stop(&e);
}

/* 200 agents call one server's tool at once: every call answered, by the same process. */
static void two_hundred_agents_one_server(void) {
  static char text[32768];
  int n = snprintf(text, sizeof text,
    "{\"name\": \"crowd\", \"turn_limit\": 1, \"mcp_servers\": {\"f\": {\"command\": \"node\", \"args\": [\"%s\", \"ok\"]}},"
    " \"defaults\": {\"tools\": [\"f.echo\"], \"replies\": [{\"tool\": \"echo\", \"args\": {\"text\": \"x\"}}, \"ok\"]},"
    " \"script\": [{\"from\": \"human\", \"text\": \"everyone, call echo\"}], \"agents\": [", fake());
  for (int i = 0; i < 200; i++) n += snprintf(text + n, sizeof text - (size_t)n, "%s{\"name\": \"a%d\"}", i ? "," : "", i);
  snprintf(text + n, sizeof text - (size_t)n, "]}");
  char *w = write_world("crowd.json", "%s", text);
  const char *run[] = {"run", w, "--no-save", "--json", NULL};
  proc_result r;
  agora(run, NULL, 0, &r);
  int results = 0;
  char first_pid[32] = "";
  for (const char *p = r.out; (p = strstr(p, "\"result\":\"echo: x pid ")); p++) {
    char pid[32];
    snprintf(pid, sizeof pid, "%.*s", (int)strcspn(p + 22, "\""), p + 22);
    if (!first_pid[0]) snprintf(first_pid, sizeof first_pid, "%s", pid);
    CHECK(!strcmp(pid, first_pid));
    results++;
  }
  CHECK_INT(results, 200);
  int replies = 0;
  for (const char *p = r.out; (p = strstr(p, "\"kind\":\"agent\",\"text\":\"ok\"")); p++) replies++;
  CHECK_INT(replies, 200);
  proc_result_free(&r);
}

/* Cancelling a turn (the console's Ctrl-C) while an MCP call is in flight tells the server. */
static void cancel_tells_the_server(void) {
  char marker[4200], json[9000];
  snprintf(marker, sizeof marker, "%s/cancelled.txt", g_tmp);
  snprintf(json, sizeof json,
           "{\"name\": \"slow\", \"mcp_servers\": {\"s\": {\"command\": \"node\", \"args\": [\"%s\", \"slow\", \"%s\"]}},"
           " \"agents\": [{\"name\": \"a\", \"tools\": [\"s.echo\"], \"replies\": [{\"tool\": \"echo\"}, \"done\"]}]}",
           fake(), marker);
  struct event_base *base = event_base_new();
  world *w = tworld_make(base, json);
  world_mcp_opts o = {NULL, "test", 0};
  ag_errmsg em = {""};
  CHECK_INT(world_mcp_start(w, &o, &em), AG_OK);
  CHECK_INT(world_publish(w, "human", "@a go", NULL), AG_OK);
  llm_drive_run_for(base, 400);
  CHECK(agent_phase_of(world_agent_at(w, 0)) == AGENT_TOOL_ROUND); /* waiting for the server */
  world_cancel_all(w);
  CHECK(agent_phase_of(world_agent_at(w, 0)) == AGENT_IDLE);
  llm_drive_run_for(base, 400);
  char *got = unit_read_file(marker);
  CHECK(got && strstr(got, "cancelled 3 cancelled by the user"));
  free(got);
  world_free(w);
  mcp_child_drain(3000);
  CHECK_INT(mcp_child_count(), 0);
  event_base_free(base);
}

SUITE_RUN((UNIT(world_file_strict), UNIT(run_calls_mcp_tools), UNIT(failed_servers), UNIT(console_approves_from_input),
  UNIT(two_hundred_agents_one_server), UNIT(env_variables_read_at_start), UNIT(http_server_in_a_world),
  UNIT(mcp_tool_named_like_a_builtin), UNIT(tools_columns_and_errors), UNIT(cancel_tells_the_server)), .tmp = &g_tmp)
