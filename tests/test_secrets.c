/* Keeping secrets: the redaction of server error text (llm/redact.h) as a table, and end to end through
 * the built binary against the loopback server: an echoed, partly masked key never reaches stdout,
 * stderr, the database files or an export. */
#include "llm/redact.h"
#include "support/llm_server.h"
#include "support/proc.h"
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

/* ---- end to end ---- */

static const char *world_file(const char *name, const char *json) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  unit_write_file(path, json);
  return path;
}

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
  char chat[64] = "";
  char *id = strstr(r.out, "\"id\":\"");
  if (id) snprintf(chat, sizeof chat, "%.*s", (int)strcspn(id + 6, "\""), id + 6);
  proc_result_free(&r);
  const char *exp[] = {"chats", "export", chat, "--db", db, "-o", snap, NULL};
  CHECK_INT(proc_agora(exp, NULL, NULL, &r), 0);
  CHECK_INT(r.status, 0);
  proc_result_free(&r);
  const char *show[] = {"chats", "show", chat, "--db", db, NULL};
  CHECK_INT(proc_agora(show, NULL, NULL, &r), 0);
  CHECK(!strstr(r.out, "sk-CAN") && !strstr(r.out, "4f60"));
  proc_result_free(&r);
  CHECK(found_in_files(snap, "[redacted]"));
  CHECK(!found_in_files(db, "sk-CAN") && !found_in_files(db, "4f60"));
  CHECK(!found_in_files(snap, "sk-CAN") && !found_in_files(snap, "4f60"));
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {
    UNIT(redact_table),
    UNIT(masked_key_echo_scrubbed),
  };
  tmp = unit_tmpdir();
  if (llm_server_start(&srv)) {
    fprintf(stderr, "cannot start the loopback server\n");
    return 1;
  }
  int rc = unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
  llm_server_stop(srv);
  unit_rmrf(tmp);
  free(tmp);
  return rc;
}
