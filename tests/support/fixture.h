/* Scaffolding shared by the end-to-end tests: a database with saved chats made by the real binary, and
 * a test main that runs the cases around a loopback LLM server and a scratch directory. */
#ifndef AG_TEST_FIXTURE_H
#define AG_TEST_FIXTURE_H

#include <stddef.h>

#include "support/llm_server.h"
#include "support/unit.h"

/* A scratch directory dir holding world (w.json: one script agent "a" answering "@a count with me")
 * and a database db in which `agora run` saved chats; chat is the last one's id. */
typedef struct fixture {
  char *dir;
  char world[4096], db[4096], chat[64];
} fixture;

/* Runs the world runs times into db (failing the running test if a run fails); 0 when all went well. */
int fixture_open(fixture *fx, int runs);
void fixture_close(fixture *fx);

/* The value of the first "chat":"..." (NDJSON output) or "id":"..." (key given) in text, into out. */
void fixture_find_id(const char *text, const char *key, char *out, size_t cap);

/* unit_main with *srv a started loopback LLM server and *tmp a scratch directory around the cases: suite_main
 * (support/suite.h) with .srv and .tmp, which new tests call themselves. */
int fixture_main_with_server(int argc, char **argv, const unit_test *tests, size_t n, llm_server **srv, char **tmp);

#endif
