/* End to end: `agora run` through the built binary on the worlds of vectors.json and the bundled
 * examples (exact transcripts: senders, texts, kinds, order), its output formats, and bad world files
 * (exit status 2 and a message naming the file and the JSON path). */
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/vectors.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;

static const char *tmp_file(const char *name, const char *text) { return suite_file(tmp, name, text); }

/* Runs the world file at path with --json --no-save: it must exit 0 and print the transcript want
 * (proc_messages' form); a failure is the caller's case, at its line. */
#define EXPECT_RUN(path, want) expect_run_(__FILE__, __LINE__, path, want)
static void expect_run_(const char *file, int line, const char *path, const char *want) {
  const char *args[] = {"run", path, "--json", "--no-save", NULL};
  proc_result r;
  if (proc_ok_(file, line, args, NULL, NULL, &r)) proc_check_messages_(file, line, r.out, want);
  proc_result_free(&r);
}

static void vectors_worlds(void) {
  const cJSON *worlds = NULL, *v;
  cJSON *root = vectors_load("worlds", 4, &worlds);
  if (!root) return;
  cJSON_ArrayForEach(v, worlds) {
    char *wjson = cJSON_PrintUnformatted(cJSON_GetObjectItem(v, "world"));
    const char *path = tmp_file("vector.json", wjson);
    char want[8192] = "";
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItem(v, "messages")) {
      strcat(want, cJSON_GetObjectItem(m, "sender")->valuestring);
      strcat(want, "|");
      strcat(want, cJSON_GetObjectItem(m, "kind")->valuestring);
      strcat(want, "|");
      strcat(want, cJSON_GetObjectItem(m, "text")->valuestring);
      strcat(want, "\n");
    }
    EXPECT_RUN(path, want);
    free(wjson);
  }
  cJSON_Delete(root);
}

static void example_relay(void) {
  EXPECT_RUN(unit_src_path("examples/relay.json"),
             "human|human|@Ann the relay starts now, take the baton.\n"
             "ann|agent|@ben\n\nBaton received, off I go.\n"
             "ben|agent|@cat\n\nHalfway there! Over to the anchor.\n"
             "cat|agent|Crossed the line. Relay complete.\n");
}

static void example_debate_stops_at_turn_limit(void) {
  EXPECT_RUN(unit_src_path("examples/debate.json"),
             "human|human|@alice Is C still relevant in 2026? Start the debate with Bob.\n"
             "alice|agent|@bob C still runs the kernels, databases and runtimes everything else stands on.\n"
             "bob|agent|@alice New systems code is increasingly written in memory-safe languages.\n"
             "alice|agent|@bob Memory safety is a discipline and a toolchain, not only a language feature.\n"
             "bob|agent|@alice Sanitizers find bugs; they do not prevent them.\n"
             "alice|agent|@bob Fifty years of libraries say otherwise.\n"
             "bob|agent|@alice Libraries can be wrapped, and they are.\n"
             "alice|turn-limit|@human Turn limit reached (3 LLM calls). Please take control of the conversation.\n");
}

static void example_town_hall(void) {
  /* Six public answers (streamed word by word, so the shortest finishes first), then only the mayor
   * answers what is addressed to it; a remark about the engineer addresses no one. Each scripted reply
   * answers the question it follows (issue 23 item 18): the budget line answers "can we afford it?",
   * the vote answers "what happens next?". */
  EXPECT_RUN(unit_src_path("examples/town-hall.json"),
             "world|world|The town hall meeting opens. Question of the night: should the town build a new library?\n"
             "teacher|agent|Yes, with a children's room, please.\n"
             "librarian|agent|Yes. The old building floods every spring.\n"
             "engineer|agent|Possible, but the road works cannot wait forever.\n"
             "student|agent|Longer opening hours, and quiet rooms for exams!\n"
             "mayor|agent|A library for every neighbourhood, if the numbers work.\n"
             "baker|agent|Only if it has a café. People need a reason to stay.\n"
             "human|human|@mayor can we afford it?\n"
             "mayor|agent|We have the budget if we delay the road works by a year.\n"
             "human|human|I think the @engineer is worried about the roads.\n"
             "human|human|@Mayor what happens next?\n"
             "mayor|agent|Then we vote next Tuesday.\n");
}

/* The NDJSON lines carry every field of docs/cli.md, seq counts from 1, and events are there too. */
static void json_output_fields(void) {
  const char *args[] = {"run", unit_src_path("examples/relay.json"), "--json", "--no-save", NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  int seq = 0, events = 0, lines = 0;
  for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
    lines++;
    cJSON *j = cJSON_Parse(line);
    CHECK(j != NULL);
    const char *type = cJSON_GetObjectItem(j, "type")->valuestring;
    CHECK_STR(cJSON_GetObjectItem(j, "world")->valuestring, "relay");
    if (!strcmp(type, "message")) {
      CHECK_INT(cJSON_GetObjectItem(j, "seq")->valueint, ++seq);
      const char *ts = cJSON_GetObjectItem(j, "ts")->valuestring;
      CHECK(strlen(ts) == 24 && ts[10] == 'T' && ts[23] == 'Z');
      CHECK(cJSON_IsString(cJSON_GetObjectItem(j, "kind")));
    } else {
      CHECK_STR(type, "event");
      CHECK(cJSON_IsString(cJSON_GetObjectItem(j, "event")));
      events++;
    }
    cJSON_Delete(j);
  }
  CHECK_INT(seq, 4);
  CHECK(events >= 6); /* llm-start and llm-done for each of the three agents */
  CHECK_INT(lines, seq + events);
  proc_result_free(&r);
}

/* Chunks are events only with --json --stream, and they add up to the reply. */
static void json_stream_chunks(void) {
  const char *args[] = {"run", unit_src_path("examples/relay.json"), "--json", "--stream", "--no-save", NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, NULL, &r), 0);
  char joined[1024] = "";
  for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
    cJSON *j = cJSON_Parse(line);
    const cJSON *ev = cJSON_GetObjectItem(j, "event");
    if (cJSON_IsString(ev) && !strcmp(ev->valuestring, "llm-chunk") &&
        !strcmp(cJSON_GetObjectItem(j, "agent")->valuestring, "cat"))
      strcat(joined, cJSON_GetObjectItem(j, "text")->valuestring);
    cJSON_Delete(j);
  }
  CHECK_STR(joined, "Crossed the line. Relay complete. <world>DONE</world>");
  proc_result_free(&r);
  const char *plain[] = {"run", unit_src_path("examples/relay.json"), "--json", "--no-save", NULL};
  CHECK_INT(proc_agora(plain, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "llm-chunk") == NULL);
  proc_result_free(&r);
}

static void plain_output(void) {
  const char *args[] = {"run", unit_src_path("examples/debate.json"), "--no-save", NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  CHECK(strncmp(r.out, "human: @alice Is C still relevant in 2026? Start the debate with Bob.\n\n"
                       "alice: @bob C still runs", 94) == 0);
  CHECK(strstr(r.out, "\n-- turn-limit: agent=alice limit=3\n") != NULL);
  CHECK(strstr(r.out, "llm-start") == NULL); /* progress events stay out of the plain transcript */
  CHECK(strstr(r.out, "\033[") == NULL);      /* not a terminal: no colour, no status line */
  CHECK(strstr(r.err, "\033[") == NULL);
  CHECK_STR(r.err, "");
  proc_result_free(&r);
}

static void help_and_usage(void) {
  proc_result r;
  const char *h[] = {"--help", NULL};
  PROC_OK(h, NULL, NULL, &r);
  CHECK(strstr(r.out, "run WORLD.json") != NULL && strstr(r.out, "replay") != NULL);
  proc_result_free(&r);
  const char *rh[] = {"run", "--help", NULL};
  PROC_OK(rh, NULL, NULL, &r);
  CHECK(strstr(r.out, "--no-save") != NULL && strstr(r.out, "--chat ID") != NULL);
  proc_result_free(&r);
  const char *none[] = {NULL};
  CHECK_INT(proc_agora(none, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 2);
  proc_result_free(&r);
  const char *bad[] = {"frobnicate", NULL};
  PROC_REFUSED(bad, NULL, "unknown command 'frobnicate'", NULL);
  const char *opt[] = {"run", unit_src_path("examples/relay.json"), "--jsn", NULL};
  PROC_REFUSED(opt, NULL, "unknown option '--jsn'", NULL);
  const char *missing[] = {"run", NULL};
  PROC_REFUSED(missing, NULL, "missing WORLD.json", NULL);
}

/* Each bad world file: exit 2, nothing on stdout, stderr names the file, the JSON path and the reason. */
static void bad_world_files(void) {
  static const struct {
    const char *json;
    const char *want; /* substring of stderr after the file name */
  } cases[] = {
    {"{\"name\": \"w\", \"agents\": [", "malformed JSON near line 1"},
    {"{\"name\": \"w\"}\n{}", "malformed JSON: unexpected text after the document"},
    {"[1, 2]", "the world file must hold a JSON object"},
    {"{\"agents\": []}", "name: missing"},
    {"{\"name\": 42}", "name: must be a string"},
    {"{\"name\": \"w\", \"colour\": 1}", "colour: unknown field"},
    {"{\"name\": \"w\", \"name\": \"x\"}", "name: duplicate field"},
    {"{\"name\": \"w\", \"agents\": [{\"name\": \"a\", \"modle\": \"x\"}]}", "agents[0].modle: unknown field"},
    {"{\"name\": \"w\", \"agents\": [{\"system_prompt\": \"x\"}]}", "agents[0].name: missing"},
    {"{\"name\": \"w\", \"agents\": [{\"name\": 7}]}", "agents[0].name: must be a string"},
    {"{\"name\": \"w\", \"agents\": [{\"name\": \"-x\"}]}", "agents[0].name: invalid name '-x'"},
    {"{\"name\": \"w\", \"agents\": [{\"name\": \"Ann\"}, {\"name\": \"ann\"}]}",
     "agents[1].name: duplicate agent id 'ann'"},
    {"{\"name\": \"w\", \"agents\": [{\"name\": \"a\"}, {\"name\": \"b\", \"provider\": \"nope\"}]}",
     "agents[1].provider: unknown provider 'nope'"},
    {"{\"name\": \"w\", \"agents\": [{\"name\": \"a\", \"provider\": 3}]}", "agents[0].provider: must be a string"},
    {"{\"name\": \"w\", \"turn_limit\": 0}", "turn_limit: must be between 1 and"},
    {"{\"name\": \"w\", \"turn_limit\": 2.5}", "turn_limit: must be an integer"},
    {"{\"name\": \"w\", \"turn_limit\": \"5\"}", "turn_limit: must be an integer"},
    {"{\"name\": \"w\", \"memory_window\": 0}", "memory_window: must be between 1 and"},
    {"{\"name\": \"w\", \"agents\": {}}", "agents: must be an array"},
    {"{\"name\": \"w\", \"agents\": [\"a\"]}", "agents[0]: must be an object"},
    {"{\"name\": \"w\", \"defaults\": {\"name\": \"x\"}}", "defaults.name: unknown field"},
    {"{\"name\": \"w\", \"defaults\": {\"temperature\": \"hot\"}}", "defaults.temperature: must be a number"},
    {"{\"name\": \"w\", \"defaults\": {\"stream\": 1}}", "defaults.stream: must be true or false"},
    {"{\"name\": \"w\", \"agents\": [{\"name\": \"a\", \"replies\": [\"x\", 2]}]}",
     "agents[0].replies[1]: must be a string"},
    {"{\"name\": \"w\", \"agents\": [{\"name\": \"a\", \"max_retries\": -1}]}", "agents[0].max_retries: must be between"},
    {"{\"name\": \"w\", \"main_agent\": \"zed\", \"agents\": [{\"name\": \"a\"}]}",
     "main_agent: 'zed' is not an agent of this world"},
    {"{\"name\": \"w\", \"script\": [{\"from\": \"human\"}]}", "script[0].text: missing"},
    {"{\"name\": \"w\", \"script\": [{\"text\": \"hi\"}]}", "script[0].from: missing"},
    {"{\"name\": \"w\", \"script\": [{\"from\": \"human\", \"txt\": \"hi\"}]}", "script[0].txt: unknown field"},
    {"{\"name\": \"w\", \"script\": [{\"new_chat\": false}]}", "script[0].new_chat: must be true"},
    {"{\"name\": \"w\", \"script\": [{\"from\": \"humna\", \"text\": \"hi\"}]}",
     "script[0].from: 'humna' is not an agent (did you mean 'human'?)"},
    {"{\"name\": \"w\", \"agents\": [{\"name\": \"Ann Lee\"}], \"script\": [{\"from\": \"ann-lee\", \"text\": \"a\"},"
     " {\"from\": \"ann le\", \"text\": \"b\"}]}",
     "script[1].from: 'ann le' is not an agent (did you mean 'Ann Lee'?)"},
    {"{\"name\": \"w\", \"script\": [{\"from\": \"zzzzzz\", \"text\": \"hi\"}]}",
     "script[0].from: 'zzzzzz' is not an agent; a step comes from human, world, system or an agent"},
    {"{\"name\": \"w\", \"script\": [{\"new_chat\": true, \"text\": \"x\"}]}",
     "script[0]: a new_chat step takes no other field"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *path = tmp_file("bad.json", cases[i].json);
    const char *args[] = {"run", path, "--no-save", NULL};
    proc_result r;
    CHECK_INT(proc_agora(args, NULL, NULL, &r), 0);
    char want[8192];
    snprintf(want, sizeof want, "agora: %s: %s", path, cases[i].want);
    if (r.status != 2 || !strstr(r.err, want) || r.out[0])
      unit_fail_(__FILE__, __LINE__, "case %zu: status %d, stderr \"%s\", want \"%s\"", i, r.status, r.err, want);
    proc_result_free(&r);
  }
  /* A file that does not exist names itself. */
  const char *args[] = {"run", "/nonexistent/world.json", NULL};
  PROC_REFUSED(args, NULL, "/nonexistent/world.json", NULL);
}

/* An empty reply publishes nothing, says so in an llm-error event, and the turn still counts. */
static void empty_reply_counts(void) {
  const char *path = tmp_file("empty.json",
    "{\"name\": \"e\", \"turn_limit\": 2, \"defaults\": {\"provider\": \"script\"},"
    " \"agents\": [{\"name\": \"a\", \"replies\": [\"  \", \"second\"]}, {\"name\": \"agent-x\", \"replies\": [\"  \"]}],"
    " \"script\": [{\"from\": \"human\", \"text\": \"@a one\"}, {\"from\": \"agent-x\", \"text\": \"@a two\"},"
    "  {\"from\": \"agent-x\", \"text\": \"@a three\"}]}");
  const char *args[] = {"run", path, "--json", "--no-save", NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  CHECK(strstr(r.out, "\"event\":\"llm-error\"") != NULL && strstr(r.out, "empty reply") != NULL);
  CHECK_MESSAGES(r.out, "human|human|@a one\n"
                        "agent-x|agent|@a two\n"
                        "a|agent|@agent-x second\n"
                        "agent-x|agent|@a three\n"
                        "a|turn-limit|@human Turn limit reached (2 LLM calls). Please take control of the conversation.\n");
  proc_result_free(&r);
}

/* Issue 15 item 10: UTF-8 world and agent names load, save and address each other by display name. */
static void utf8_names_end_to_end(void) {
  const char *path = tmp_file("utf8.json",
    "{\"name\": \"Café Crème\", \"agents\": ["
    " {\"name\": \"José\", \"replies\": [\"@村長 your turn\", \"thanks <world>DONE</world>\"]},"
    " {\"name\": \"村長\", \"replies\": [\"bien\"]}],"
    " \"script\": [{\"from\": \"human\", \"text\": \"@José hi\"}]}");
  char db[4096];
  snprintf(db, sizeof db, "%s/utf8-db", tmp);
  const char *args[] = {"run", path, "--json", "--db", db, NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  if (r.status) fprintf(stderr, "  stderr: %s\n", r.err);
  CHECK_MESSAGES(r.out, "human|human|@José hi\n"
                        "jose|agent|@村長 your turn\n"
                        "f4e7e60e|agent|@jose bien\n"
                        "jose|agent|thanks\n");
  proc_result_free(&r);
  const char *list[] = {"chats", "list", "--db", db, NULL};
  PROC_OK(list, NULL, NULL, &r);
  CHECK(strstr(r.out, "cafe-creme") != NULL);
  proc_result_free(&r);
}

/* A leading mention of nobody in the world is reported, never silently dropped. */
static void unknown_mention_event(void) {
  const char *path = tmp_file("typo.json",
    "{\"name\": \"t\", \"agents\": [{\"name\": \"bob\", \"replies\": [\"here\"]}],"
    " \"script\": [{\"from\": \"human\", \"text\": \"@bobb are you there?\"}]}");
  const char *args[] = {"run", path, "--no-save", NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  CHECK_STR(r.out, "human: @bobb are you there?\n\n-- unknown-mention: sender=human names=[\"bobb\"] seq=1\n\n");
  proc_result_free(&r);
}

/* With stderr on a terminal, run keeps one status line there while it works and clears it at the
 * end; stdout (a pipe here) gets the transcript only. */
static void progress_line_on_a_terminal(void) {
  int master = -1, slave = -1;
  if (openpty(&master, &slave, NULL, NULL, NULL) != 0) {
    printf("  (no pseudo-terminal here: skipped)\n");
    return;
  }
  int out[2];
  CHECK_INT(pipe(out), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(slave, 2);
    close(out[0]);
    close(master);
    const char *bin = getenv("AGORA_BIN");
    execl(bin, bin, "run", unit_src_path("examples/debate.json"), "--no-save", (char *)NULL);
    _exit(127);
  }
  close(slave);
  close(out[1]);
  char err[65536] = "", stdout_text[65536] = "";
  size_t n_err = 0, n_out = 0;
  int open_out = 1, open_err = 1;
  while (open_out || open_err) {
    struct pollfd p[2] = {{open_out ? out[0] : -1, POLLIN, 0}, {open_err ? master : -1, POLLIN, 0}};
    if (poll(p, 2, 5000) <= 0) break;
    if (p[0].revents) {
      ssize_t r = read(out[0], stdout_text + n_out, sizeof stdout_text - n_out - 1);
      if (r <= 0) open_out = 0;
      else n_out += (size_t)r;
    }
    if (p[1].revents) {
      ssize_t r = read(master, err + n_err, sizeof err - n_err - 1);
      if (r <= 0) open_err = 0; /* EIO once the child has exited */
      else n_err += (size_t)r;
    }
  }
  int st = 0;
  waitpid(pid, &st, 0);
  close(out[0]);
  close(master);
  err[n_err] = stdout_text[n_out] = '\0';
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CHECK(strstr(err, "step 1 of 1") != NULL);
  CHECK(strstr(err, "messages") != NULL);
  /* Cleared at the end: the last thing written is the erase sequence. */
  CHECK(n_err >= 4 && strcmp(err + n_err - 4, "\r\033[K") == 0);
  CHECK(strstr(stdout_text, "step 1 of") == NULL);
  CHECK(strncmp(stdout_text, "human: @alice", 13) == 0);
}

SUITE_RUN((UNIT(progress_line_on_a_terminal), UNIT(vectors_worlds), UNIT(example_relay),
  UNIT(example_debate_stops_at_turn_limit), UNIT(example_town_hall), UNIT(json_output_fields), UNIT(json_stream_chunks),
  UNIT(plain_output), UNIT(help_and_usage), UNIT(bad_world_files), UNIT(empty_reply_counts),
  UNIT(unknown_mention_event), UNIT(utf8_names_end_to_end)), .tmp = &tmp)
