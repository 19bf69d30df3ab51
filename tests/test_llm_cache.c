/* The LLM response cache end to end (issue 25 §3), through the agora binary and the loopback LLM server:
 * a world run with --llm-cache use, then with --llm-cache replay and the server stopped, gives the same
 * transcript and tool steps for every provider, streamed and not, in another process with another chat
 * database; a replay miss is an llm-error of kind cache_miss naming the agent (exit 1); "llm_cache" in the
 * world file; a cached reply costs nothing against a budget; agora cache stats|clear; the key is never
 * stored; seed reaches the providers that take one; two processes fill one cache at once; a branched chat
 * re-run with one step changed calls the server for that step only. */
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char *tmp;
static const char *const env[] = {"AGORA_TEST_KEY=sk-test-0123456789", NULL};

static const char *base_url(llm_server *s, const char *provider) {
  return llm_server_url(s, !strcmp(provider, "openai") ? "/v1" : "");
}

/* A world of one agent that calls load_context once, then answers (the tool loop of every provider). */
static const char *tool_world(const char *name, llm_server *s, const char *provider, int stream, const char *extra) {
  char json[4096];
  snprintf(json, sizeof json,
           "{\"name\": \"cached\", %s \"agents\": [{\"name\": \"ann\", \"provider\": \"%s\", \"base_url\": \"%s\","
           " \"api_key_env\": \"AGORA_TEST_KEY\", \"model\": \"m\", \"stream\": %s, \"monadic\": true,"
           " \"system_prompt\": \"[[mock tool=load_context args={} after_tool=\\\"I remember nothing yet.\\\"]]\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@ann what do you know?\"},"
           " {\"from\": \"human\", \"text\": \"@ann and now?\"}]}",
           extra, provider, base_url(s, provider), stream ? "true" : "false");
  return suite_file(tmp, name, json);
}

static int run(proc_result *r, const char *world, const char *db, const char *mode, const char *cache) {
  const char *args[] = {"run", world, "--json", "--db", db, "--llm-cache", mode, "--cache-db", cache, NULL};
  if (proc_agora(args, NULL, env, r)) return -1;
  return r->status;
}

/* use against a server, then replay with that server stopped, in a new process and a new chat database:
 * the same messages, tool steps and title, every reply marked cached, no cost. */
static void use_then_replay_every_provider(void) {
  const char *providers[] = {"openai", "anthropic", "gemini", "ollama"};
  for (int p = 0; p < 4; p++) {
    for (int stream = 0; stream < 2; stream++) {
      llm_server *s;
      if (llm_server_start(&s)) {
        unit_fail_(__FILE__, __LINE__, "cannot start the loopback server");
        return;
      }
      char cache[64], db1[64], db2[64];
      snprintf(cache, sizeof cache, "cache-%d-%d", p, stream);
      snprintf(db1, sizeof db1, "use-%d-%d", p, stream);
      snprintf(db2, sizeof db2, "replay-%d-%d", p, stream);
      const char *world = tool_world("w.json", s, providers[p], stream, "\"budget\": {\"tokens\": 100000},");
      char cache_dir[4096], db1_dir[4096], db2_dir[4096];
      snprintf(cache_dir, sizeof cache_dir, "%s", suite_file(tmp, cache, NULL));
      snprintf(db1_dir, sizeof db1_dir, "%s", suite_file(tmp, db1, NULL));
      snprintf(db2_dir, sizeof db2_dir, "%s", suite_file(tmp, db2, NULL));
      proc_result a, b;
      CHECK_INT(run(&a, world, db1_dir, "use", cache_dir), 0);
      CHECK_INT((long)llm_server_request_count(s), 4); /* two turns, each a tool round and an answer */
      llm_server_stop(s); /* nothing listens at its port any more */
      CHECK_INT(run(&b, world, db2_dir, "replay", cache_dir), 0);
      if (b.status) fprintf(stderr, "  %s stream=%d: %s\n%s\n", providers[p], stream, b.err, b.out);
      char *ma = proc_messages(a.out), *mb = proc_messages(b.out);
      CHECK_STR(mb, ma);
      CHECK_STR(ma, "human|human|@ann what do you know?\nann|agent|I remember nothing yet.\n"
                    "human|human|@ann and now?\nann|agent|I remember nothing yet.\n");
      free(ma);
      free(mb);
      CHECK_INT((long)unit_count(b.out, "\"event\":\"tool-call\""), 2);
      CHECK_INT((long)unit_count(b.out, "\"event\":\"tool-result\""), 2);
      CHECK(strstr(a.out, "\"title\":\"What do you know?\"") && strstr(b.out, "\"title\":\"What do you know?\""));
      CHECK_INT((long)unit_count(b.out, "\"cached\":true"), 4);
      CHECK_INT((long)unit_count(a.out, "\"cached\":true"), 0);
      proc_result_free(&a);
      proc_result_free(&b);
    }
  }
}

/* A script changed after its first step: replayed, everything before the change is the same (from the
 * cache), and the changed step is a miss. */
static void changed_step_replays_up_to_the_change(void) {
  llm_server *s;
  if (llm_server_start(&s)) return unit_fail_(__FILE__, __LINE__, "cannot start the loopback server");
  char cache[4096], db[4096], json[2048];
  snprintf(cache, sizeof cache, "%s", suite_file(tmp, "change-cache", NULL));
  snprintf(db, sizeof db, "%s", suite_file(tmp, "change-db", NULL));
  const char *w = suite_file(tmp, "change.json", NULL);
  const char *fmt = "{\"name\": \"change\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\", \"base_url\": \"%s\","
                    " \"api_key_env\": \"AGORA_TEST_KEY\", \"model\": \"m\", \"system_prompt\": \"[[mock echo=1]]\"}],"
                    " \"script\": [{\"from\": \"human\", \"text\": \"@ann first\"}, {\"from\": \"human\", \"text\": \"@ann %s\"}]}";
  char url[256];
  snprintf(url, sizeof url, "%s", base_url(s, "openai")); /* part of the key: the same in both runs */
  snprintf(json, sizeof json, fmt, url, "second");
  unit_write_file(w, json);
  proc_result a, b;
  CHECK_INT(run(&a, w, db, "use", cache), 0);
  llm_server_stop(s);
  snprintf(json, sizeof json, fmt, url, "changed");
  unit_write_file(w, json);
  CHECK_INT(run(&b, w, db, "replay", cache), 1);
  char *ma = proc_messages(a.out), *mb = proc_messages(b.out);
  const char *cut = ma ? strstr(ma, "human|human|@ann second") : NULL; /* the change */
  CHECK(cut && mb && cut > ma && !strncmp(ma, mb, (size_t)(cut - ma)) && strstr(ma, "ann|agent|echo: "));
  if (!cut || !mb || strncmp(ma, mb, (size_t)(cut - ma))) fprintf(stderr, "  use:\n%s  replay:\n%s", ma, mb);
  free(ma);
  free(mb);
  const char *miss = strstr(b.out, "\"error_type\":\"cache_miss\"");
  CHECK(miss && strstr(b.out, "\"text\":\"@ann changed\"") && miss > strstr(b.out, "\"text\":\"@ann changed\""));
  CHECK(strstr(b.out, "echo: @ann changed") == NULL);
  proc_result_free(&a);
  proc_result_free(&b);
}

/* replay with nothing cached: an llm-error of kind cache_miss naming the agent, exit 1; the same from the
 * world file's "llm_cache", which --llm-cache overrides. */
static void replay_miss_and_world_file(void) {
  llm_server *s;
  if (llm_server_start(&s)) return unit_fail_(__FILE__, __LINE__, "cannot start the loopback server");
  const char *world = tool_world("m.json", s, "openai", 0, "\"llm_cache\": \"replay\",");
  const char *cache = suite_file(tmp, "miss-cache", NULL);
  char c[4096];
  snprintf(c, sizeof c, "%s", cache);
  const char *args[] = {"run", world, "--json", "--no-save", "--cache-db", c, NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, env, &r), 0);
  CHECK_INT(r.status, 1);
  const char *e = strstr(r.out, "\"event\":\"llm-error\"");
  CHECK(e && strstr(e, "\"agent\":\"ann\"") && strstr(e, "\"error_type\":\"cache_miss\""));
  CHECK_INT((long)llm_server_request_count(s), 0);
  proc_result_free(&r);
  const char *over[] = {"run", world, "--json", "--no-save", "--cache-db", c, "--llm-cache", "off", NULL};
  PROC_OK(over, NULL, env, &r);
  CHECK_INT((long)llm_server_request_count(s), 4);
  proc_result_free(&r);
  /* Without --cache-db the cache lives beside the chats: DB/llm-cache. */
  char db[4096];
  snprintf(db, sizeof db, "%s", suite_file(tmp, "beside-db", NULL));
  const char *beside[] = {"run", world, "--db", db, "--llm-cache", "use", NULL};
  PROC_OK(beside, NULL, env, &r);
  proc_result_free(&r);
  FILE *f = fopen(suite_file(tmp, "beside-db/llm-cache/data.mdb", NULL), "rb");
  CHECK(f != NULL);
  if (f) fclose(f);
  const char *bad_flag[] = {"run", world, "--no-save", "--llm-cache", "sometimes", NULL};
  PROC_REFUSED(bad_flag, env, "--llm-cache: unknown mode 'sometimes' (expected off, use or replay)", NULL);
  const char *bad = tool_world("bad.json", s, "openai", 0, "\"llm_cache\": \"yes\",");
  const char *bad_file[] = {"run", bad, "--no-save", NULL};
  PROC_REFUSED(bad_file, env, "bad.json: llm_cache: must be \"off\", \"use\" or \"replay\"", NULL);
  llm_server_stop(s);
}

/* A cached reply costs nothing: a replay under a 1-token budget runs to the end; agora cache stats and
 * clear; the cache's file never holds the key. */
static void budget_stats_clear_no_key(void) {
  llm_server *s;
  if (llm_server_start(&s)) return unit_fail_(__FILE__, __LINE__, "cannot start the loopback server");
  char cache[4096], db[4096];
  snprintf(cache, sizeof cache, "%s", suite_file(tmp, "stats-cache", NULL));
  snprintf(db, sizeof db, "%s", suite_file(tmp, "stats-db", NULL));
  proc_result r;
  CHECK_INT(run(&r, tool_world("s.json", s, "openai", 1, ""), db, "use", cache), 0);
  proc_result_free(&r);
  CHECK_INT(run(&r, tool_world("s.json", s, "openai", 1, "\"budget\": {\"tokens\": 1},"), db, "replay", cache), 0);
  CHECK(strstr(r.out, "budget-exhausted") == NULL);
  proc_result_free(&r);
  /* The whole file, NULs and all: the key must be nowhere in it (the entries are there, in plain text). */
  FILE *f = fopen(suite_file(tmp, "stats-cache/data.mdb", NULL), "rb");
  char *data = malloc(64u << 20);
  size_t n = f && data ? fread(data, 1, 64u << 20, f) : 0;
  if (f) fclose(f);
  CHECK(n > 0);
  CHECK(data && memmem(data, n, "I remember nothing yet.", 23) != NULL);
  CHECK(data && memmem(data, n, "sk-test-0123456789", 18) == NULL);
  free(data);
  const char *stats[] = {"cache", "stats", "--cache-db", cache, "--json", NULL};
  CHECK_INT(proc_agora(stats, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "\"entries\":4,") != NULL);
  proc_result_free(&r);
  const char *keep[] = {"cache", "clear", "--older-than", "30d", "--cache-db", cache, NULL};
  CHECK_INT(proc_agora(keep, NULL, NULL, &r), 0);
  CHECK_STR(r.out, "removed 0 entries\n");
  proc_result_free(&r);
  const char *all[] = {"cache", "clear", "--cache-db", cache, NULL};
  CHECK_INT(proc_agora(all, NULL, NULL, &r), 0);
  CHECK_STR(r.out, "removed 4 entries\n");
  proc_result_free(&r);
  CHECK_INT(proc_agora(stats, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "\"entries\":0,") != NULL);
  proc_result_free(&r);
  const char *bad[] = {"cache", "clear", "--older-than", "soon", "--cache-db", cache, NULL};
  CHECK_INT(proc_agora(bad, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 2);
  proc_result_free(&r);
  llm_server_stop(s);
}

/* seed goes where each provider takes it, and not to Anthropic, which has none. */
static void seed_where_providers_take_it(void) {
  const char *providers[] = {"openai", "anthropic", "gemini", "ollama"};
  const char *where[] = {"\"seed\":42", NULL, "\"generationConfig\":{\"seed\":42}", "\"options\":{\"seed\":42}"};
  llm_server *s;
  if (llm_server_start(&s)) return unit_fail_(__FILE__, __LINE__, "cannot start the loopback server");
  for (int p = 0; p < 4; p++) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"name\": \"seeded\", \"defaults\": {\"seed\": 42}, \"agents\": [{\"name\": \"ann\", \"provider\": \"%s\","
             " \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\", \"model\": \"m\", \"stream\": false}],"
             " \"script\": [{\"from\": \"human\", \"text\": \"@ann hi\"}]}", providers[p], base_url(s, providers[p]));
    const char *w = suite_file(tmp, "seed.json", NULL);
    unit_write_file(w, json);
    llm_server_reset(s);
    const char *args[] = {"run", w, "--no-save", NULL};
    proc_result r;
    PROC_OK(args, NULL, env, &r);
    proc_result_free(&r);
    llm_server_request req;
    CHECK_INT(llm_server_request_get(s, 0, &req), 0);
    if (llm_server_request_count(s) == 0) continue;
    if (where[p]) CHECK(strstr(req.body, where[p]) != NULL);
    else CHECK(strstr(req.body, "seed") == NULL);
    if (where[p] && !strstr(req.body, where[p])) fprintf(stderr, "  %s: %s\n", providers[p], req.body);
    llm_server_request_free(&req);
  }
  llm_server_stop(s);
}

/* CROWD agents, each with its own prompt (so its own cache entry), answering one world message. */
#define CROWD 12
static const char *crowd_world(llm_server *s) {
  char json[8192];
  size_t n = (size_t)snprintf(json, sizeof json,
                              "{\"name\": \"shared\", \"defaults\": {\"provider\": \"openai\", \"base_url\": \"%s\","
                              " \"api_key_env\": \"AGORA_TEST_KEY\", \"model\": \"m\", \"stream\": false}, \"agents\": [",
                              base_url(s, "openai"));
  for (int i = 0; i < CROWD; i++)
    n += (size_t)snprintf(json + n, sizeof json - n, "%s{\"name\": \"a%d\", \"system_prompt\": \"You are a%d.\"}",
                          i ? ", " : "", i, i);
  snprintf(json + n, sizeof json - n, "], \"script\": [{\"from\": \"world\", \"text\": \"Say something.\"}]}");
  return suite_file(tmp, "shared.json", json);
}

/* Two agora run processes fill one cache at the same time (each reply held a second, so both are answering
 * at once: the server sees more than one process's requests in flight): both finish with every reply, the
 * cache holds one entry per request, and a later run of the same world is answered from it alone. */
static void two_processes_share_one_cache(void) {
  llm_server *s;
  if (llm_server_start(&s)) return unit_fail_(__FILE__, __LINE__, "cannot start the loopback server");
  llm_server_rule(s, NULL, "latency=1000");
  const char *w = crowd_world(s);
  char cache[4096], out[2][4096];
  snprintf(cache, sizeof cache, "%s", suite_file(tmp, "shared-cache", NULL));
  pid_t pid[2];
  for (int i = 0; i < 2; i++) {
    snprintf(out[i], sizeof out[i], "%s/shared-%d.out", tmp, i);
    const char *args[] = {"run", w, "--json", "--no-save", "--llm-cache", "use", "--cache-db", cache, NULL};
    pid[i] = proc_spawn(args, -1, out[i], out[i], env);
    CHECK(pid[i] > 0);
  }
  for (int i = 0; i < 2; i++) {
    int st = -1;
    CHECK(pid[i] > 0 && waitpid(pid[i], &st, 0) == pid[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char *text = unit_read_file(out[i]);
    CHECK_INT((long)unit_count(text ? text : "", "\"kind\":\"agent\""), CROWD);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) fprintf(stderr, "  process %d:\n%s\n", i, text ? text : "");
    free(text);
  }
  CHECK((long)llm_server_peak_concurrency(s) > CROWD); /* both were answering at once */
  size_t served = llm_server_request_count(s);
  CHECK(served >= CROWD && served <= 2 * CROWD);
  proc_result r;
  const char *stats[] = {"cache", "stats", "--cache-db", cache, "--json", NULL};
  CHECK_INT(proc_agora(stats, NULL, NULL, &r), 0);
  CHECK(strstr(r.out, "\"entries\":12,") != NULL);
  proc_result_free(&r);
  const char *again[] = {"run", w, "--json", "--no-save", "--llm-cache", "use", "--cache-db", cache, NULL};
  CHECK_INT(proc_agora(again, NULL, env, &r), 0);
  CHECK_INT(r.status, 0);
  CHECK_INT((long)unit_count(r.out, "\"cached\":true"), CROWD);
  CHECK_INT((long)llm_server_request_count(s), (long)served);
  proc_result_free(&r);
  llm_server_stop(s);
}

/* A reproducible run through a branch: a chat run once with the cache in use, branched after its first
 * exchange, continued with the script's second step as it was and its third changed. The server sees only
 * the changed step's call; the second step's identical call comes from the cache. */
static void branch_reruns_from_the_cache(void) {
  llm_server *s;
  if (llm_server_start(&s)) return unit_fail_(__FILE__, __LINE__, "cannot start the loopback server");
  char cache[4096], db[4096], json[2048], url[256];
  snprintf(cache, sizeof cache, "%s", suite_file(tmp, "branch-cache", NULL));
  snprintf(db, sizeof db, "%s", suite_file(tmp, "branch-db", NULL));
  snprintf(url, sizeof url, "%s", base_url(s, "openai"));
  const char *w = suite_file(tmp, "branch.json", NULL);
  const char *fmt = "{\"name\": \"branched\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\", \"base_url\": \"%s\","
                    " \"api_key_env\": \"AGORA_TEST_KEY\", \"model\": \"m\", \"system_prompt\": \"[[mock echo=1]]\"}],"
                    " \"script\": [%s]}";
  snprintf(json, sizeof json, fmt, url,
           "{\"from\": \"human\", \"text\": \"@ann one\"}, {\"from\": \"human\", \"text\": \"@ann two\"},"
           " {\"from\": \"human\", \"text\": \"@ann three\"}");
  unit_write_file(w, json);
  proc_result r;
  const char *first[] = {"run", w, "--json", "--db", db, "--llm-cache", "use", "--cache-db", cache, NULL};
  CHECK_INT(proc_agora(first, NULL, env, &r), 0);
  CHECK_INT(r.status, 0);
  CHECK_INT((long)llm_server_request_count(s), 3);
  proc_result_free(&r);
  char chat[128] = "", branch[128] = "";
  CHECK_INT(proc_first_chat(db, chat, sizeof chat), 0);
  const char *br[] = {"chats", "branch", chat, "--at", "2", "--db", db, NULL};
  CHECK_INT(proc_agora(br, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 0);
  snprintf(branch, sizeof branch, "%.*s", (int)strcspn(r.out, "\n"), r.out);
  proc_result_free(&r);
  snprintf(json, sizeof json, fmt, url,
           "{\"from\": \"human\", \"text\": \"@ann two\"}, {\"from\": \"human\", \"text\": \"@ann changed\"}");
  unit_write_file(w, json);
  const char *rerun[] = {"run", w, "--json", "--db", db, "--chat", branch, "--llm-cache", "use", "--cache-db", cache, NULL};
  CHECK_INT(proc_agora(rerun, NULL, env, &r), 0);
  CHECK_INT(r.status, 0);
  CHECK_INT((long)llm_server_request_count(s), 4); /* the changed step only */
  CHECK_INT((long)unit_count(r.out, "\"cached\":true"), 1);
  CHECK_MESSAGES(r.out, "human|human|@ann two\nann|agent|echo: human: @ann two\n"
                        "human|human|@ann changed\nann|agent|echo: human: @ann changed\n");
  if (r.status) fprintf(stderr, "  %s\n", r.err);
  proc_result_free(&r);
  llm_server_stop(s);
}

SUITE_RUN((UNIT(use_then_replay_every_provider), UNIT(replay_miss_and_world_file),
  UNIT(changed_step_replays_up_to_the_change), UNIT(budget_stats_clear_no_key), UNIT(seed_where_providers_take_it),
  UNIT(two_processes_share_one_cache), UNIT(branch_reruns_from_the_cache)), .tmp = &tmp)
