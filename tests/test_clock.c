/* Worlds that live in time (issue 13, docs/time.md): the world file's variables, clock, schedule and
 * wait steps (strict loading, JSON-path errors, {{name}} checked at load), and end to end through the
 * built binary a virtual-clock world whose transcript — simulated times included — is checked exactly,
 * sim_time kept in storage, and a real-clock schedule firing on the loop. */
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"
#include "support/wait.h"
#include "world/world_file.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char *tmp;

static const char *tmp_file(const char *name, const char *text) { return suite_file(tmp, name, text); }

/* The NDJSON messages of out as "sim_time|sender|text" lines (caller frees); chat (may be NULL) gets
 * the chat id of the last message. */
static char *sim_messages(const char *out, char *chat, size_t cap) {
  size_t len = 0, size = 1 << 16;
  char *s = calloc(1, size);
  for (const char *p = out; s && p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    cJSON *j = cJSON_ParseWithLength(p, n);
    const cJSON *type = cJSON_GetObjectItem(j, "type");
    if (cJSON_IsString(type) && !strcmp(type->valuestring, "message")) {
      const cJSON *sim = cJSON_GetObjectItem(j, "sim_time"), *c = cJSON_GetObjectItem(j, "chat");
      len += (size_t)snprintf(s + len, size - len, "%s|%s|%s\n", cJSON_IsString(sim) ? sim->valuestring : "-",
                              cJSON_GetObjectItem(j, "sender")->valuestring, cJSON_GetObjectItem(j, "text")->valuestring);
      if (chat && cJSON_IsString(c)) snprintf(chat, cap, "%s", c->valuestring);
    }
    cJSON_Delete(j);
    p = nl ? nl + 1 : NULL;
  }
  return s;
}

/* `agora run PATH --json --no-save`: its messages as sim_messages writes them (caller frees). */
static char *run_sim(const char *path) {
  const char *args[] = {"run", path, "--json", "--no-save", NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  char *got = sim_messages(r.out, NULL, 0);
  proc_result_free(&r);
  return got;
}

static const char town[] =
  "{\"name\": \"Town\", \"variables\": {\"town\": \"Millbrook\"},\n"
  " \"clock\": {\"mode\": \"virtual\", \"start\": \"2026-03-01T08:00:00Z\", \"until\": \"2026-03-03T00:00:00Z\"},\n"
  " \"agents\": [{\"name\": \"Mayor\", \"provider\": \"script\", \"system_prompt\": \"You are {{agent}} of {{town}}.\",\n"
  "             \"replies\": [\"Noted.\", \"All quiet.\", \"Fine.\", \"Yes.\", \"Indeed.\"]},\n"
  "            {\"name\": \"Clerk\", \"provider\": \"script\", \"replies\": [\"Filed.\"]}],\n"
  " \"schedule\": [\n"
  "   {\"cron\": \"0 9 * * *\", \"from\": \"world\", \"text\": \"Good morning {{town}}. It is {{date}}, {{weekday}} {{time}}.\"},\n"
  "   {\"every\": \"20h\", \"from\": \"world\", \"text\": \"@mayor Any news?\", \"when_busy\": \"skip\"},\n"
  "   {\"at\": \"2026-03-02T12:00:00Z\", \"from\": \"human\", \"text\": \"@clerk The bridge has collapsed! {{{{x}}\"}],\n"
  " \"script\": [{\"from\": \"human\", \"text\": \"@mayor Hello {{world}} ({{agents}})\"}, {\"wait\": \"2h\"},\n"
  "            {\"from\": \"human\", \"text\": \"@mayor time is {{time}}\"}]}\n";

/* Script steps at 08:00, the wait to 10:00 delivering the 09:00 cron, then the schedule alone until
 * `until`: every item in time order, each answered before the clock moves on. */
static const char town_transcript[] =
  "2026-03-01T08:00:00.000Z|human|@mayor Hello Town (Mayor, Clerk)\n"
  "2026-03-01T08:00:00.000Z|mayor|Noted.\n"
  "2026-03-01T09:00:00.000Z|world|Good morning Millbrook. It is 2026-03-01, Sunday 09:00.\n"
  "2026-03-01T09:00:00.000Z|clerk|Filed.\n"
  "2026-03-01T09:00:00.000Z|mayor|All quiet.\n"
  "2026-03-01T10:00:00.000Z|human|@mayor time is 10:00\n"
  "2026-03-01T10:00:00.000Z|mayor|Fine.\n"
  "2026-03-02T04:00:00.000Z|world|@mayor Any news?\n"
  "2026-03-02T04:00:00.000Z|mayor|Yes.\n"
  "2026-03-02T09:00:00.000Z|world|Good morning Millbrook. It is 2026-03-02, Monday 09:00.\n"
  "2026-03-02T09:00:00.000Z|mayor|Indeed.\n"
  "2026-03-02T09:00:00.000Z|clerk|Filed.\n"
  "2026-03-02T12:00:00.000Z|human|@clerk The bridge has collapsed! {{x}}\n"
  "2026-03-02T12:00:00.000Z|clerk|Filed.\n";

static void virtual_transcript_exact(void) {
  char *got = run_sim(tmp_file("town.json", town));
  CHECK_STR(got, town_transcript);
  free(got);
}

/* A week of hourly items with no LLM in the way takes well under a second; and the transcript stops at
 * `until` (exclusive). */
static void virtual_week_ends_at_until(void) {
  const char *path = tmp_file("week.json",
    "{\"name\": \"Week\", \"clock\": {\"mode\": \"virtual\", \"start\": \"2026-03-01T00:00:00Z\","
    " \"until\": \"2026-03-08T00:00:00Z\"},"
    " \"schedule\": [{\"cron\": \"0 * * * *\", \"from\": \"world\", \"text\": \"{{weekday}} {{time}}\"}]}");
  char *got = run_sim(path);
  size_t lines = 0;
  for (const char *p = got; p && *p; p++) lines += *p == '\n';
  CHECK_INT((long)lines, 7 * 24);
  CHECK(strncmp(got, "2026-03-01T00:00:00.000Z|world|Sunday 00:00\n", 44) == 0);
  CHECK(strstr(got, "2026-03-07T23:00:00.000Z|world|Saturday 23:00\n") != NULL);
  free(got);
}

/* sim_time is stored with the message: the snapshot export of the saved chat carries it. */
static void sim_time_stored(void) {
  char db[4096];
  snprintf(db, sizeof db, "%s/db", tmp);
  const char *path = tmp_file("town2.json", town);
  const char *args[] = {"run", path, "--json", "--db", db, NULL};
  proc_result r;
  PROC_OK(args, NULL, NULL, &r);
  char chat[128] = "";
  free(sim_messages(r.out, chat, sizeof chat));
  proc_result_free(&r);
  CHECK(chat[0] != 0);
  const char *exp[] = {"chats", "export", chat, "--db", db, NULL};
  PROC_OK(exp, NULL, NULL, &r);
  cJSON *snap = cJSON_Parse(r.out);
  const cJSON *msgs = cJSON_GetObjectItem(snap, "messages");
  CHECK_INT(cJSON_GetArraySize(msgs), 14);
  const cJSON *m7 = cJSON_GetArrayItem(msgs, 7);
  CHECK_STR(cJSON_GetObjectItem(m7, "sim_time")->valuestring, "2026-03-02T04:00:00.000Z");
  CHECK_STR(cJSON_GetObjectItem(m7, "text")->valuestring, "@mayor Any news?");
  /* The stored world keeps its variables, clock and schedule. */
  const cJSON *world = cJSON_GetObjectItem(snap, "world");
  CHECK(cJSON_GetObjectItem(world, "schedule") != NULL);
  CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(world, "variables"), "town")->valuestring, "Millbrook");
  cJSON_Delete(snap);
  proc_result_free(&r);
}

/* In order, each after the one before: every want[i] in out (else a failure naming it). */
static void in_order(const char *out, const char *const *want, size_t n, int line) {
  const char *at = out;
  for (size_t i = 0; i < n && at; i++) {
    const char *hit = strstr(at, want[i]);
    if (!hit) unit_fail_(__FILE__, line, "missing (in order) '%s' in:\n%s", want[i], out);
    at = hit;
  }
}

/* `agora console` on the town world (written to tmp/town-<db>.json) with the database tmp/<db>, fed
 * input; it must exit 0. */
static void town_console(const char *db, const char *input, proc_result *r) {
  char name[64];
  snprintf(name, sizeof name, "town-%s.json", db);
  const char *args[] = {"console", tmp_file(name, town), "--db", suite_file(tmp, db, NULL), NULL};
  CHECK_INT(proc_agora(args, input, NULL, r), 0);
  CHECK_INT(r->status, 0);
}

/* A virtual clock belongs to the chat (issue 22): a console opened again continues from the chat's
 * stored time (an /advance with no message after it included), a new chat starts at the clock's start,
 * and /load of the first chat goes back to its time, never the other chat's; what fell due at the time
 * a chat rests at is not delivered twice. */
static void clock_belongs_to_the_chat(void) {
  proc_result r;
  town_console("dbt", "@mayor hello\n/advance 5h\n", &r);
  char first[64] = "";
  const char *id = strstr(r.out, "-- new-chat-created: id=");
  if (id) sscanf(id + strlen("-- new-chat-created: id="), "%63s", first);
  CHECK(first[0] != 0);
  proc_result_free(&r);
  char input[512];
  snprintf(input, sizeof input, "/clock\n@mayor again\n/new\n/clock\n/advance 1d\n/load %s\n/clock\n@mayor back\n", first);
  town_console("dbt", input, &r);
  const char *want[] = {"clock: virtual, now 2026-03-01T13:00:00.000Z\nnext due: 2026-03-02T09:00:00.000Z\n",
                        "[2026-03-01 13:00] human: @mayor again", "-- new-chat-created: ",
                        "clock: virtual, now 2026-03-01T08:00:00.000Z\nnext due: 2026-03-01T09:00:00.000Z\n",
                        "[2026-03-01 09:00] world: Good morning", "-- chat-loaded: ",
                        "clock: virtual, now 2026-03-01T13:00:00.000Z\n", "[2026-03-01 13:00] human: @mayor back"};
  in_order(r.out, want, sizeof want / sizeof *want, __LINE__);
  /* The first chat's 09:00 item is delivered once, though the console reopened after it. */
  const char *g1 = strstr(r.out, "-- chat-loaded: ");
  CHECK(g1 && !strstr(g1, "Good morning"));
  proc_result_free(&r);
}

/* Real mode: an `every` item fires on the loop's timer while a wait step sleeps; no sim_time. */
static void real_clock_fires_on_timer(void) {
  const char *path = tmp_file("real.json",
    "{\"name\": \"Real\", \"schedule\": [{\"every\": \"1s\", \"from\": \"world\", \"text\": \"tick {{world}}\"}],"
    " \"script\": [{\"from\": \"human\", \"text\": \"start\"}, {\"wait\": \"2s\"}, {\"from\": \"human\", \"text\": \"end\"}]}");
  char *got = run_sim(path);
  CHECK(strncmp(got, "-|human|start\n-|world|tick Real\n", 32) == 0);
  /* The run ends with the script: after its last step only a tick that fell due while that step was
   * answered (the 2 s tick races the wait's own 2 s deadline, and loses under a sanitizer) may follow. */
  const char *end = strstr(got, "-|human|end\n");
  CHECK(end != NULL);
  for (const char *p = end ? end + 12 : ""; *p; p += strlen("-|world|tick Real\n"))
    if (strncmp(p, "-|world|tick Real\n", strlen("-|world|tick Real\n"))) {
      unit_fail_(__FILE__, __LINE__, "after the script's end, not a tick: %s", p);
      break;
    }
  free(got);
}

/* The console (piped lines): /clock, /advance delivering what falls due in order, /branch; /advance on
 * a real clock is refused. */
static void console_clock_commands(void) {
  proc_result r;
  town_console("dbc", "/clock\n@mayor hello\n/advance 1d\n/clock\n/advance 2x\n/branch 2\n/chats\n", &r);
  const char *want[] = {"clock: virtual, now 2026-03-01T08:00:00.000Z\nnext due: 2026-03-01T09:00:00.000Z\n"
                        "until: 2026-03-03T00:00:00.000Z\n",
                        "mayor: Noted.", "world: Good morning Millbrook. It is 2026-03-01, Sunday 09:00.",
                        "world: @mayor Any news?", "clock: virtual, now 2026-03-02T08:00:00.000Z\n",
                        "-- chat-loaded: ", "(branch)"};
  in_order(r.out, want, sizeof want / sizeof *want, __LINE__);
  CHECK(strstr(r.err, "/advance: bad duration '2x'") != NULL);
  proc_result_free(&r);
  const char *real = tmp_file("realc.json", "{\"name\": \"Realc\"}");
  const char *args2[] = {"console", real, "--db", suite_file(tmp, "dbc", NULL), NULL};
  CHECK_INT(proc_agora(args2, "/advance 1h\n", NULL, &r), 0);
  CHECK(strstr(r.err, "/advance: the clock is real") != NULL);
  proc_result_free(&r);
}

static void load_errors(void) {
  static const struct { const char *fields, *want; } cases[] = {
    {"\"schedule\":[{\"cron\":\"0 25 * * *\",\"from\":\"world\",\"text\":\"x\"}]",
     "t.json: schedule[0].cron: hour field '25': '25' is out of range 0-23"},
    {"\"schedule\":[{\"every\":\"4x\",\"from\":\"world\",\"text\":\"x\"}]", "t.json: schedule[0].every: "},
    {"\"schedule\":[{\"at\":\"2026-03-01\",\"from\":\"world\",\"text\":\"x\"}]", "t.json: schedule[0].at: "},
    {"\"clock\":{\"mode\":\"virtual\",\"start\":\"2026-03-01T00:00:00Z\"},"
     "\"schedule\":[{\"at\":\"2026-02-01T00:00:00Z\",\"from\":\"world\",\"text\":\"x\"}]",
     "t.json: schedule[0].at: before clock.start"},
    {"\"variables\":{\"town\":\"M\"},\"schedule\":[{\"every\":\"1h\",\"from\":\"world\",\"text\":\"{{twn}}\"}]",
     "t.json: schedule[0].text: unknown variable 'twn' (known: town, world, agents, turn_limit, date, time, weekday)"},
    {"\"script\":[{\"from\":\"human\",\"text\":\"hi {{agent}}\"}]", "t.json: script[0].text: unknown variable 'agent'"},
    {"\"agents\":[{\"name\":\"a\",\"system_prompt\":\"{{date}} {{nope}}\"}]",
     "t.json: agents[0].system_prompt: unknown variable 'nope'"},
    {"\"script\":[{\"wait\":\"2h\",\"from\":\"x\"}]", "t.json: script[0]: a wait step takes no other field"},
    {"\"script\":[{\"wait\":\"0s\"}]", "t.json: script[0].wait: "},
    {"\"clock\":{\"mode\":\"fake\"}", "t.json: clock.mode: must be \"real\" or \"virtual\""},
    {"\"clock\":{\"mode\":\"virtual\",\"tick\":1}", "t.json: clock.tick: unknown field"},
    {"\"clock\":{\"start\":\"2026-03-01T00:00:00Z\"}", "t.json: clock.start: only a virtual clock"},
    {"\"clock\":{\"mode\":\"virtual\",\"start\":\"2026-03-02T00:00:00Z\",\"until\":\"2026-03-01T00:00:00Z\"}",
     "t.json: clock.until: must be after clock.start"},
    {"\"variables\":{\"9a\":\"x\"}", "t.json: variables.9a: invalid name"},
    {"\"variables\":{\"a\":1}", "t.json: variables.a: must be a string"},
    {"\"schedule\":[{\"every\":\"1h\",\"cron\":\"* * * * *\",\"from\":\"world\",\"text\":\"x\"}]",
     "t.json: schedule[0]: give exactly one of cron, every, at"},
    {"\"schedule\":[{\"every\":\"1h\",\"from\":\"world\",\"text\":\"x\",\"when_busy\":\"drop\"}]",
     "t.json: schedule[0].when_busy: must be \"queue\" or \"skip\""},
    {"\"schedule\":[{\"every\":\"1h\",\"text\":\"x\"}]", "t.json: schedule[0].from: missing"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char json[1024];
    snprintf(json, sizeof json, "{\"name\":\"t\",%s}", cases[i].fields);
    world_spec spec;
    ag_errmsg em = {""};
    int rc = world_spec_parse(json, strlen(json), "t.json", &spec, &em);
    CHECK_INT(rc, AG_ERR_INVALID);
    if (!rc) world_spec_free(&spec);
    if (strncmp(em.text, cases[i].want, strlen(cases[i].want)))
      unit_fail_(__FILE__, __LINE__, "case %zu: got '%s', want '%s...'", i, em.text, cases[i].want);
  }
}

/* The world-file form written back (storage, snapshots) loads to the same settings. */
static void world_form_round_trip(void) {
  world_spec a, b;
  ag_errmsg em = {""};
  CHECK_INT(world_spec_parse(town, strlen(town), "town.json", &a, &em), 0);
  cJSON *j = world_spec_to_json(&a);
  char *s = cJSON_PrintUnformatted(j);
  CHECK_INT(world_spec_parse(s, strlen(s), "again", &b, &em), 0);
  CHECK_INT(b.clock.is_virtual, 1);
  CHECK(b.clock.start_ms == a.clock.start_ms && b.clock.until_ms == a.clock.until_ms);
  CHECK_INT((long)b.n_sched, 3);
  CHECK_STR(b.sched[0].spec, "0 9 * * *");
  CHECK_INT(b.sched[1].skip_when_busy, 1);
  CHECK(b.sched[2].kind == WORLD_SCHED_AT && b.sched[2].ms == a.sched[2].ms);
  CHECK_STR(b.var_values[0], "Millbrook");
  CHECK_INT((long)a.steps[1].wait_ms, 2 * 3600 * 1000);
  free(s);
  cJSON_Delete(j);
  world_spec_free(&a);
  world_spec_free(&b);
}

/* Ctrl-C during a real clock's `wait` ends the wait and the script at once: the step after it is not
 * published, run exits 130 saying so (it waited out the whole wait and ran on before). */
static int printed_reply(void *path) {
  char *out = unit_read_file(path);
  int done = out && strstr(out, "ann: ok") != NULL;
  free(out);
  return done;
}

typedef struct child {
  pid_t pid;
  int st;
} child;

static int exited(void *arg) {
  child *c = arg;
  return waitpid(c->pid, &c->st, WNOHANG) == c->pid;
}

static void ctrl_c_ends_a_real_wait(void) {
  const char *world = tmp_file("wait.json", "{\"name\": \"Waits\", \"agents\": [{\"name\": \"ann\", \"provider\":"
                                            " \"script\", \"replies\": [\"ok\"]}], \"script\": [{\"from\": \"human\","
                                            " \"text\": \"@ann hi\"}, {\"wait\": \"1h\"}, {\"from\": \"human\", \"text\":"
                                            " \"@ann again\"}]}");
  char out[4200], err[4200];
  snprintf(out, sizeof out, "%s/wait.out", tmp);
  snprintf(err, sizeof err, "%s/wait.err", tmp);
  const char *args[] = {"run", world, "--no-save", NULL};
  pid_t pid = proc_spawn(args, -1, out, err, NULL);
  CHECK(pid > 0);
  if (pid <= 0) return;
  CHECK(wait_until(printed_reply, out, 10000)); /* the first step is done: the wait has begun */
  kill(pid, SIGINT);
  child c = {.pid = pid, .st = -1};
  if (!wait_until(exited, &c, 5000)) { /* still waiting out its hour */
    unit_fail_(__FILE__, __LINE__, "run went on waiting after Ctrl-C");
    kill(pid, SIGKILL);
    waitpid(pid, &c.st, 0);
    return;
  }
  CHECK(WIFEXITED(c.st) && WEXITSTATUS(c.st) == 130);
  char *text = unit_read_file(out), *e = unit_read_file(err);
  CHECK(text && !strstr(text, "again"));
  CHECK(e && strstr(e, "agora: interrupted: cancelled 0 replies, nothing saved (--no-save)"));
  free(text);
  free(e);
}

SUITE_RUN((UNIT(load_errors), UNIT(world_form_round_trip), UNIT(virtual_transcript_exact),
  UNIT(virtual_week_ends_at_until), UNIT(sim_time_stored), UNIT(real_clock_fires_on_timer),
  UNIT(console_clock_commands), UNIT(clock_belongs_to_the_chat), UNIT(ctrl_c_ends_a_real_wait)), .tmp = &tmp)
