/* A world of 10,000 agents through every door that stores its settings (issue 22): its settings are
 * over the old 1 MiB record cap (about 3 MB), yet `agora run` and `agora say` with a database, and
 * `agora serve` (the world posted, loaded and answering), hold it as `run --no-save` does. The posted
 * document itself stays under the 1 MiB cap of a request body. Real processes, a fresh database each. */
#include "support/proc.h"
#include "support/serve_client.h"
#include "support/suite.h"
#include "support/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BIG_AGENTS = 10000 };

static char *tmp;

/* The world file: BIG_AGENTS script agents a00000.. each answering "here", and a script step naming
 * a04242 (caller frees). Compact: 44 bytes an agent, 440 KB in all. */
static char *big_world(void) {
  size_t cap = 256 + (size_t)BIG_AGENTS * 48, o = 0;
  char *s = malloc(cap);
  o += (size_t)snprintf(s + o, cap - o, "{\"name\": \"Big\", \"agents\": [");
  for (int i = 0; i < BIG_AGENTS; i++)
    o += (size_t)snprintf(s + o, cap - o, "%s{\"name\": \"a%05d\", \"replies\": [\"here\"]}", i ? "," : "", i);
  snprintf(s + o, cap - o, "], \"script\": [{\"from\": \"human\", \"text\": \"@a04242 roll call\"}]}");
  return s;
}

/* run and say with a database: the world stored (settings over 1 MiB), a04242 answers each time. */
static void run_and_say_store_it(void) {
  char *json = big_world();
  const char *path = suite_file(tmp, "big.json", json);
  char *db = suite_fresh(tmp, "db-run");
  const char *run[] = {"run", path, "--db", db, "--json", NULL};
  proc_result r;
  PROC_OK(run, NULL, NULL, &r);
  CHECK_MESSAGES(r.out, "human|human|@a04242 roll call\na04242|agent|here\n");
  proc_result_free(&r);
  /* the stored world, by its id: its settings read back whole */
  const char *say[] = {"say", "big", "@a09999 and you?", "--db", db, "--json", NULL};
  PROC_OK(say, NULL, NULL, &r);
  CHECK_MESSAGES(r.out, "human|human|@a09999 and you?\na09999|agent|here\n");
  proc_result_free(&r);
  free(db);
  free(json);
}

/* serve: the document posted (under the body cap), stored, loaded, and an agent of it answers. */
static void serve_posts_and_loads_it(void) {
  char *json = big_world();
  CHECK(strlen(json) < (1u << 20));
  char *db = suite_fresh(tmp, "db-serve");
  serve_proc sp;
  if (serve_proc_start_db(tmp, db, &sp)) {
    unit_fail_(__FILE__, __LINE__, "agora serve did not start on %s", db);
    goto done;
  }
  cJSON_Delete(SERVE_EXPECT(&sp, "POST", "/api/worlds", json, 201, "\"id\":\"big\""));
  cJSON_Delete(SERVE_EXPECT(&sp, "POST", "/api/worlds/big/load", NULL, 200, "\"loaded\":true"));
  cJSON *j = SERVE_EXPECT(&sp, "POST", "/api/worlds/big/messages", "{\"text\": \"@a00007 present?\"}", 202, NULL);
  char path[256];
  snprintf(path, sizeof path, "/api/worlds/big/chats/%s/messages",
           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "chat")));
  cJSON_Delete(j);
  j = serve_poll_json(&sp, path, "\"sender\":\"a00007\"", 20000);
  if (!j) unit_fail_(__FILE__, __LINE__, "a00007 never answered in %s", path);
  cJSON_Delete(j);
  CHECK_INT(serve_proc_stop(&sp), 0);
done:
  free(db);
  free(json);
}

SUITE_RUN((UNIT(run_and_say_store_it), UNIT(serve_posts_and_loads_it)), .tmp = &tmp)
