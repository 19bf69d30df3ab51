/* Keeping secrets: the redaction of server error text (llm/redact.h) as a table, and end to end through
 * the built binary against the loopback server: an echoed, partly masked key never reaches stdout,
 * stderr, the database files or an export. */
#include "llm/redact.h"
#include "common/error.h"
#include "mcp/redact.h"
#include "support/fixture.h"
#include "support/llm_server.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *tmp;
static llm_server *srv;

/* ---- the pure rule ---- */

typedef struct redact_case {
  const char *key, *in, *want;
} redact_case;

static void redact_table(void) {
  static const redact_case cases[] = {
    /* Short keys are redacted only as a whole token: "mock" stays "mock" with the key "k". */
    {"k", "OPENAI_API_KEY=k rejected by mock server", "OPENAI_API_KEY=[redacted] rejected by mock server"},
    {"mock", "the mock key mock. was refused", "the [redacted] key [redacted]. was refused"},
    {"abc", "abcdef is not abc", "abcdef is not [redacted]"},
    /* Keys of 8+ characters: any token holding 8 consecutive characters of them. */
    {"sk-live-0123456789abcdef", "Incorrect API key provided: sk-live-0123456789abcdef.",
     "Incorrect API key provided: [redacted]."},
    {"sk-live-0123456789abcdef", "key ...456789abcd... revoked", "key [redacted]... revoked"},
    {"sk-live-0123456789abcdef", "key 456789a is short", "key 456789a is short"},
    /* Fragments echoed around a mask, with or without the key at hand. */
    {"sk-CANvW3pZkq8RhN4f60", "Incorrect API key provided: sk-CAN**********4f60. You can find your key",
     "Incorrect API key provided: [redacted]. You can find your key"},
    {NULL, "key \"sk-CAN**********4f60\" invalid", "key \"[redacted]\" invalid"},
    {NULL, "key AKIA\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2 invalid", "key [redacted] invalid"},
    {NULL, "5*3*2 = 30 and a**b and ***", "5*3*2 = 30 and a**b and ***"},
    /* Bearer tokens and key-shaped words. */
    {NULL, "Authorization: Bearer eyJhbGciOi.eyJzdWIi.sig rejected", "Authorization: Bearer [redacted] rejected"},
    {"", "bad key sk-proj-AbCdEfGhIjKlMnOpQrSt, try again", "bad key [redacted], try again"},
    {NULL, "key AIzaSyA1234567890abcdefghij is invalid", "key [redacted] is invalid"},
    {NULL, "see https://platform.openai.com/account/api-keys for sk-", "see https://platform.openai.com/account/api-keys for sk-"},
    {NULL, "", ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", cases[i].in);
    llm_redact(buf, sizeof buf, cases[i].key);
    if (strcmp(buf, cases[i].want))
      unit_fail_(__FILE__, __LINE__, "case %zu: \"%s\" -> \"%s\", expected \"%s\"", i, cases[i].in, buf, cases[i].want);
  }
  /* Growth past the capacity is cut, still terminated. */
  char small[12] = "k k k k";
  llm_redact(small, sizeof small, "k");
  CHECK_STR(small, "[redacted] ");
}

/* An MCP server's ${VAR} values (env and headers) are scrubbed from its answers wherever they appear,
 * the longest first; short values and unset variables are left alone. */
static void mcp_secrets_scrubbed(void) {
  setenv("AGORA_T_WEB_MCP_TOKEN", "mcpTOKEN-0123456789", 1);
  setenv("AGORA_T_SHORT", "ab", 1);
  setenv("AGORA_T_PART", "mcpTOKEN", 1);
  unsetenv("AGORA_T_UNSET");
  mcp_secrets s = {0};
  CHECK_INT(mcp_secrets_add_vars(&s, "Bearer ${AGORA_T_PART}"), AG_OK);
  CHECK_INT(mcp_secrets_add_vars(&s, "Bearer ${AGORA_T_WEB_MCP_TOKEN} ${AGORA_T_SHORT} ${AGORA_T_UNSET} ${"), AG_OK);
  CHECK_INT(s.n, 2);
  char *out = mcp_secrets_redact(&s, "denied for header Bearer mcpTOKEN-0123456789 (ab); again:mcpTOKEN-0123456789"
                                     " and mcpTOKEN alone");
  CHECK_STR(out, "denied for header Bearer [redacted] (ab); again:[redacted] and [redacted] alone");
  free(out);
  mcp_secrets_clear(&s);
  CHECK_INT(s.n, 0);
  out = mcp_secrets_redact(&s, "mcpTOKEN-0123456789");
  CHECK_STR(out, "mcpTOKEN-0123456789"); /* nothing registered: nothing changes */
  free(out);
}

/* ---- end to end ---- */

static const char *world_file(const char *name, const char *json) { return suite_file(tmp, name, json); }

static int found_in_files(const char *path, const char *needle) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "grep -rqaF -- '%s' '%s'", needle, path);
  return system(cmd) == 0;
}

/* A 401 whose body echoes the key masked in the middle, as OpenAI does. */
static void masked_key_echo_scrubbed(void) {
  llm_server_reset(srv);
  /* A server rule, so that the echo is nowhere in the world file (which is stored and exported). */
  CHECK_INT(llm_server_rule(srv, "hello", "status=401 error_message=\"Incorrect API key provided: "
                                          "sk-CAN**********4f60. You can find your API key at https://x.invalid/keys.\""),
            0);
  char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"masked\", \"agents\": ["
           " {\"name\": \"denied\", \"provider\": \"openai\", \"base_url\": \"%s\", \"api_key_env\": \"MASK_API_KEY\","
           "  \"max_retries\": 0}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@denied hello\"}]}",
           llm_server_url(srv, "/v1"));
  char db[4096], snap[4200];
  snprintf(db, sizeof db, "%s/db-masked", tmp);
  snprintf(snap, sizeof snap, "%s/masked-export.json", tmp);
  const char *args[] = {"run", world_file("masked.json", json), "--json", "--db", db, NULL};
  const char *env[] = {"MASK_API_KEY=sk-CANvW3pZkq8RhN4f60", NULL};
  proc_result r;
  CHECK_INT(proc_agora(args, NULL, env, &r), 0);
  CHECK_INT(r.status, 1);
  CHECK(strstr(r.out, "Incorrect API key provided: [redacted].") != NULL);
  CHECK(!strstr(r.out, "sk-CAN") && !strstr(r.err, "sk-CAN"));
  CHECK(!strstr(r.out, "4f60") && !strstr(r.err, "4f60"));
  proc_result_free(&r);
  const char *list[] = {"chats", "list", "--db", db, "--json", NULL};
  CHECK_INT(proc_agora(list, NULL, NULL, &r), 0);
  char chat[64];
  fixture_find_id(r.out, "id", chat, sizeof chat);
  proc_result_free(&r);
  const char *exp[] = {"chats", "export", chat, "--db", db, "-o", snap, NULL};
  PROC_OK(exp, NULL, NULL, &r);
  proc_result_free(&r);
  const char *show[] = {"chats", "show", chat, "--db", db, NULL};
  CHECK_INT(proc_agora(show, NULL, NULL, &r), 0);
  CHECK(!strstr(r.out, "sk-CAN") && !strstr(r.out, "4f60"));
  proc_result_free(&r);
  CHECK(found_in_files(snap, "[redacted]"));
  CHECK(!found_in_files(db, "sk-CAN") && !found_in_files(db, "4f60"));
  CHECK(!found_in_files(snap, "sk-CAN") && !found_in_files(snap, "4f60"));
}

/* Runs agora with args and extra env; returns the exit status, stderr into err (cap bytes). */
static int run_env(const char *const *args, const char *const *env, char *err, size_t cap) {
  proc_result r;
  if (proc_agora(args, "", env, &r)) return -1;
  snprintf(err, cap, "%s", r.err);
  int status = r.status;
  proc_result_free(&r);
  return status;
}

static const char *key_world(const char *var) {
  char json[1024], name[64];
  snprintf(json, sizeof json,
           "{\"name\": \"keys\", \"agents\": [{\"name\": \"a\", \"provider\": \"openai\", \"base_url\": \"%s\","
           " \"api_key_env\": \"%s\", \"system_prompt\": \"[[mock reply=fine]]\"}],"
           " \"script\": [{\"from\": \"human\", \"text\": \"@a hi\"}]}",
           llm_server_url(srv, "/v1"), var);
  snprintf(name, sizeof name, "keys-%s.json", var);
  return world_file(name, json);
}

/* api_key_env names only key-like variables unless --allow-env names it; the refused variable is
 * never sent. */
static void key_env_allow_list(void) {
  static const char *const env[] = {"MY_CREDS=creds-value-1", "GOOD_API_KEY=good-key-1", "SERVICE_TOKEN=tok-1",
                                    "AWS_SECRET_ACCESS_KEY=aws-secret-1", NULL};
  char err[4096], db[4096];
  snprintf(db, sizeof db, "%s/db-keys", tmp);
  const char *refused[] = {"HOME", "MY_CREDS", "AWS_SECRET_ACCESS_KEY"};
  for (int i = 0; i < 3; i++) {
    llm_server_reset(srv);
    char want[128];
    snprintf(want, sizeof want, "--allow-env %s", refused[i]);
    const char *world = key_world(refused[i]);
    const char *run[] = {"run", world, "--no-save", NULL};
    CHECK_INT(run_env(run, env, err, sizeof err), 2);
    CHECK(strstr(err, "agents[0].api_key_env") && strstr(err, want));
    const char *con[] = {"console", world, "--db", db, NULL};
    CHECK_INT(run_env(con, env, err, sizeof err), 2);
    CHECK(strstr(err, "agents[0].api_key_env") && strstr(err, want));
    CHECK_INT(llm_server_request_count(srv), 0);
  }
  /* Key-like names pass; --allow-env lets another one through, and its value is what is sent. */
  const char *ok[] = {"GOOD_API_KEY", "SERVICE_TOKEN"};
  for (int i = 0; i < 2; i++) {
    const char *run[] = {"run", key_world(ok[i]), "--no-save", NULL};
    CHECK_INT(run_env(run, env, err, sizeof err), 0);
  }
  llm_server_reset(srv);
  const char *run[] = {"run", key_world("MY_CREDS"), "--db", db, "--allow-env", "MY_CREDS", NULL};
  CHECK_INT(run_env(run, env, err, sizeof err), 0);
  llm_server_request q;
  CHECK(llm_server_request_get(srv, 0, &q) == 0 && strstr(q.headers, "Bearer creds-value-1"));
  llm_server_request_free(&q);
  /* The world is stored now; the console opening it from the database asks again. */
  const char *con[] = {"console", "--db", db, NULL};
  CHECK_INT(run_env(con, env, err, sizeof err), 2);
  CHECK(strstr(err, "--allow-env MY_CREDS") != NULL);
  const char *con_ok[] = {"console", "--db", db, "--allow-env", "MY_CREDS", NULL};
  CHECK_INT(run_env(con_ok, env, err, sizeof err), 0);
}

SUITE_RUN((UNIT(redact_table), UNIT(mcp_secrets_scrubbed), UNIT(masked_key_echo_scrubbed),
  UNIT(key_env_allow_list)), .tmp = &tmp, .srv = &srv)
