/* libagora: a world changed while it runs (API version 6: agora_settings, agora_agents,
 * agora_settings_change, agora_agent_add/_change/_remove, agora_budget_set, agora_chat_edit/_retry/_cut,
 * agora_agent_forget, agora_chat_title, agora_clock*): the console's /set, /add, /remove, /turnlimit,
 * /budget, /edit, /retry, /clear, /title, /clock and /advance and
 * serve's PATCH and message routes on one code path: checked by the world file's readers, refused while
 * replies are in flight, held to the untrusted-input rules, stored with the world. Linked against
 * libagora.so as a program is. */
#include "agora.h"
#include "support/lib_say.h"
#include "support/llm_server.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char town[] =
  "{\"name\": \"Town\", \"agents\": [{\"name\": \"ann\", \"replies\": [\"@human ann here\"]}]}";

/* The world's settings as agora_settings hands them out (the caller frees), "" on failure. */
static char *settings(agora_world *w) {
  char *json = NULL;
  CHECK_INT(agora_settings(w, &json), AGORA_OK);
  return json ? json : strdup("");
}

/* A turn limit changed, a bad change refused naming its field (nothing changed), and the change stored:
 * the stored world opened again has it. */
static void settings_changed_checked_and_stored(void) {
  char *db = unit_tmpdir(), *s = NULL;
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(town, db, NULL, &w), AGORA_OK);
  if (!w) return;
  CHECK_INT(agora_settings_change(w, "{\"turn_limit\": 7, \"variables\": {\"place\": \"the square\"}}"), AGORA_OK);
  CHECK_HAS(s = settings(w), "\"turn_limit\":7", "\"place\":\"the square\"");
  free(s);
  CHECK_INT(agora_settings_change(w, "{\"turn_limt\": 3}"), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_settings_change: turn_limt: unknown field (did you mean 'turn_limit'?)");
  CHECK_INT(agora_settings_change(w, "{\"turn_limit\": 3, \"agents\": []}"), AGORA_ERR_INVALID); /* not a setting */
  CHECK_INT(agora_settings_change(w, "{\"turn_limit\": -3}"), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_settings_change: turn_limit");
  CHECK_INT(agora_settings_change(w, "{\"main_agent\": \"nobody\"}"), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "main_agent", "nobody");
  CHECK_INT(agora_settings_change(w, "{}"), AGORA_ERR_INVALID);
  CHECK_INT(agora_settings_change(w, "[1]"), AGORA_ERR_INVALID);
  CHECK_INT(agora_settings_change(w, "{\"turn_limit\""), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_settings_change: malformed JSON");
  CHECK_INT(agora_settings_change(w, NULL), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_settings_change: json is NULL");
  CHECK_INT(agora_settings_change(w, "{\"variables\": {\"a\": \"x\\u0000y\"}}"), AGORA_ERR_INVALID);
  CHECK_HAS(s = settings(w), "\"turn_limit\":7"); /* nothing of the refused changes */
  free(s);
  agora_world_close(w);
  w = NULL;
  CHECK_INT(agora_world_open("town", db, &(agora_options){.flags = AGORA_FROM_STORE}, &w), AGORA_OK);
  if (w) CHECK_HAS(s = settings(w), "\"turn_limit\":7", "\"place\":\"the square\"");
  free(s);
  agora_world_close(w);
  unit_rmrf(db);
  free(db);
}

/* An agent added answers, a changed one has its new prompt, a removed one is gone; the errors name what
 * is wrong. */
static void agents_added_changed_removed(void) {
  char *s = NULL, *a = NULL;
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(town, NULL, &(agora_options){.flags = AGORA_NO_SAVE}, &w), AGORA_OK);
  if (!w) return;
  CHECK_INT(agora_agent_add(w, "{\"name\": \"Bob\", \"replies\": [\"@human bob here\"]}", &a), AGORA_OK);
  CHECK_HAS(a ? a : "", "\"name\":\"Bob\"");
  agora_free(a);
  CHECK_HAS(s = lib_say(w, "@bob hello"), "bob here");
  free(s);
  CHECK_INT(agora_agents(w, &s), AGORA_OK); /* the live state: bob answered once */
  CHECK_HAS(s ? s : "", "{\"id\":\"ann\",\"name\":\"ann\",\"provider\":\"script\"", "\"id\":\"bob\",\"name\":\"Bob\"",
            "\"turns\":1,\"thinking\":false,\"phase\":\"idle\"", "\"input_tokens\":");
  agora_free(s);
  CHECK_INT(agora_agents(w, NULL), AGORA_ERR_INVALID);
  CHECK_INT(agora_agent_add(w, "{\"name\": \"bob\"}", NULL), AGORA_ERR_EXISTS);
  CHECK_HAS(agora_errmsg(), "agent 'bob' already", "agora_agent_change");
  CHECK_INT(agora_agent_add(w, "{\"name\": \"carl\", \"provider\": \"nope\"}", NULL), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_agent_add: agents[2].provider");
  CHECK_INT(agora_agent_change(w, "bob", "{\"system_prompt\": \"You are Bob.\"}", &a), AGORA_OK);
  CHECK_HAS(a ? a : "", "\"system_prompt\":\"You are Bob.\"");
  agora_free(a);
  CHECK_INT(agora_agent_change(w, "bob", "{\"base_url\": \"http://elsewhere\"}", NULL), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "base_url: unknown field");
  CHECK_INT(agora_agent_change(w, "bob", "{\"temperature\": 9}", NULL), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "temperature");
  CHECK_INT(agora_agent_change(w, "nobody", "{\"model\": \"m\"}", NULL), AGORA_ERR_NOT_FOUND);
  CHECK_INT(agora_agent_change(w, NULL, "{\"model\": \"m\"}", NULL), AGORA_ERR_INVALID);
  CHECK_STR(agora_errmsg(), "agora_agent_change: agent is NULL");
  CHECK_INT(agora_settings_change(w, "{\"main_agent\": \"ann\"}"), AGORA_OK);
  CHECK_INT(agora_agent_remove(w, "ann"), AGORA_ERR_STATE); /* the main agent */
  CHECK_INT(agora_agent_remove(w, "Bob"), AGORA_OK);
  CHECK_INT(agora_agent_remove(w, "bob"), AGORA_ERR_NOT_FOUND);
  s = settings(w);
  CHECK(strstr(s, "\"ann\"") && !strstr(s, "Bob"));
  free(s);
  agora_world_close(w);
}

/* A change waits for the replies in flight: refused (saying how to cancel them) while an agent thinks
 * (a reply 300 ms away on the loopback server); a message only published is no reply yet. */
static void busy_world_refuses(void) {
  llm_server *srv = NULL;
  CHECK_INT(llm_server_start(&srv), 0);
  if (!srv) return;
  llm_server_rule(srv, NULL, "reply=\"@human later\" latency=300");
  char json[512];
  snprintf(json, sizeof json, "{\"name\": \"Loop\", \"agents\": [{\"name\": \"ann\", \"provider\": \"openai\","
           " \"model\": \"m\", \"base_url\": \"%s\"}, {\"name\": \"bob\"}]}", llm_server_url(srv, "/v1"));
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(json, NULL, &(agora_options){.flags = AGORA_NO_SAVE}, &w), AGORA_OK);
  if (!w) return llm_server_stop(srv);
  CHECK_INT(agora_publish(w, "human", "@ann hello"), AGORA_OK);
  CHECK_INT(agora_settings_change(w, "{\"turn_limit\": 3}"), AGORA_OK); /* queued, not asked yet */
  for (int i = 0; i < 1000 && !agora_thinking(w); i++) CHECK(agora_step(w) >= 0);
  CHECK_INT((int)agora_thinking(w), 1);
  CHECK_INT(agora_settings_change(w, "{\"turn_limit\": 2}"), AGORA_ERR_STATE);
  CHECK_HAS(agora_errmsg(), "replies in flight", "agora_cancel");
  CHECK_INT(agora_agent_remove(w, "bob"), AGORA_ERR_STATE);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(agora_settings_change(w, "{\"turn_limit\": 2}"), AGORA_OK);
  CHECK_INT(agora_agent_remove(w, "bob"), AGORA_OK);
  agora_world_close(w);
  llm_server_stop(srv);
}

/* A new agent is untrusted input: its API key goes to a base_url only when the program allowed it
 * (allow_key_to), and its key variable must be plainly an LLM key or allowed. */
static void new_agent_key_rules(void) {
  llm_server *srv = NULL;
  CHECK_INT(llm_server_start(&srv), 0);
  if (!srv) return;
  llm_server_rule(srv, NULL, "reply=\"@human from the server\"");
  setenv("AGORA_TEST_KEY", "k", 1);
  char carol[512], url[256];
  snprintf(url, sizeof url, "%s", llm_server_url(srv, "/v1"));
  snprintf(carol, sizeof carol, "{\"name\": \"carol\", \"provider\": \"openai\", \"model\": \"m\","
           " \"base_url\": \"%s\", \"api_key_env\": \"AGORA_TEST_KEY\"}", url);
  const char *const to[] = {url};
  for (int allowed = 0; allowed < 2; allowed++) {
    agora_options o = {.flags = AGORA_NO_SAVE | AGORA_OPTIONS_3, .allow_key_to = to, .n_allow_key_to = (size_t)allowed};
    agora_world *w = NULL;
    char *s = NULL;
    CHECK_INT(agora_world_open(town, NULL, &o, &w), AGORA_OK);
    if (!w) break;
    CHECK_INT(agora_agent_add(w, carol, NULL), AGORA_OK);
    CHECK_HAS(s = lib_say(w, "@carol hello"), "from the server");
    free(s);
    CHECK_INT((int)llm_server_requests_with(srv, NULL, "Bearer k"), allowed);
    CHECK_INT(agora_agent_add(w, "{\"name\": \"dan\", \"provider\": \"openai\", \"api_key_env\": \"HOME\"}", NULL),
              AGORA_ERR_INVALID);
    CHECK_HAS(agora_errmsg(), "agents[2].api_key_env", "HOME");
    agora_world_close(w);
  }
  llm_server_stop(srv);
}

/* The budget: a negative limit refused, a limit set and shown with the settings, 0 for none. */
static void budget_set(void) {
  agora_world *w = NULL;
  char *s = NULL;
  CHECK_INT(agora_world_open(town, NULL, &(agora_options){.flags = AGORA_NO_SAVE}, &w), AGORA_OK);
  if (!w) return;
  CHECK_INT(agora_budget_set(w, -1, 0), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "budget");
  CHECK_INT(agora_budget_set(w, 5000, 0), AGORA_OK);
  CHECK_HAS(s = settings(w), "\"budget\":{\"tokens\":5000}");
  free(s);
  CHECK_INT(agora_budget_set(w, 0, 0), AGORA_OK);
  s = settings(w);
  CHECK(!strstr(s, "\"budget\""));
  free(s);
  agora_world_close(w);
}

/* The current chat's past edited: a human message replaced and sent again, the last one retried, the chat
 * cut, an agent's memory of it forgotten; what is not a human message or not there is refused. */
static void chat_past_edited(void) {
  char *db = unit_tmpdir(), *s = NULL;
  uint64_t kept = 99;
  agora_world *w = NULL, *nosave = NULL;
  CHECK_INT(agora_world_open(town, db, NULL, &w), AGORA_OK);
  if (!w) return;
  free(lib_say(w, "@ann first"));
  free(lib_say(w, "@ann second"));
  CHECK_INT(agora_chat_edit(w, 1, "@ann again", &kept), AGORA_OK);
  CHECK_INT((int)kept, 0);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(agora_transcript(w, NULL, &s), AGORA_OK);
  CHECK_HAS(s ? s : "", "\"seq\":1,\"sender\":\"human\",\"kind\":\"human\",\"text\":\"@ann again\"", "\"seq\":2");
  CHECK(s && !strstr(s, "second") && !strstr(s, "\"seq\":3"));
  agora_free(s);
  CHECK_INT(agora_chat_edit(w, 2, "not ann's", NULL), AGORA_ERR_INVALID);
  CHECK_INT(agora_chat_edit(w, 99, "x", NULL), AGORA_ERR_NOT_FOUND);
  CHECK_INT(agora_chat_edit(w, 0, "", NULL), AGORA_ERR_INVALID);
  CHECK_INT(agora_chat_retry(w, &kept), AGORA_OK);
  CHECK_INT((int)kept, 0);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(agora_chat_cut(w, 2), AGORA_OK);
  CHECK_INT(agora_transcript(w, NULL, &s), AGORA_OK);
  CHECK(s && strstr(s, "\"seq\":1,") && !strstr(s, "\"seq\":2"));
  agora_free(s);
  CHECK_INT(agora_chat_cut(w, 0), AGORA_ERR_INVALID);
  CHECK_INT(agora_chat_title(w, "Renamed"), AGORA_OK);
  CHECK_INT(agora_chats(w, &s), AGORA_OK);
  CHECK_HAS(s ? s : "", "\"title\":\"Renamed\"");
  agora_free(s);
  CHECK_INT(agora_chat_title(w, NULL), AGORA_ERR_INVALID);
  CHECK_INT(agora_agent_forget(w, "ann"), AGORA_OK);
  CHECK_INT(agora_agent_forget(w, "nobody"), AGORA_ERR_NOT_FOUND);
  CHECK_INT(agora_agent_forget(w, NULL), AGORA_ERR_INVALID);
  agora_world_close(w);
  CHECK_INT(agora_world_open(town, NULL, &(agora_options){.flags = AGORA_NO_SAVE}, &nosave), AGORA_OK);
  if (nosave) CHECK_INT(agora_chat_retry(nosave, NULL), AGORA_ERR_STATE);
  if (nosave) CHECK_HAS(agora_errmsg(), "agora_chat_retry", "AGORA_NO_SAVE");
  agora_world_close(nosave);
  unit_rmrf(db);
  free(db);
}

/* A virtual clock moved on without blocking: the call returns at once, the loop delivers what falls due
 * (9:00, not 11:00) and sets the clock to 10:00; a real clock does not advance. */
static void clock_advanced_on_the_loop(void) {
  static const char timed[] =
    "{\"name\": \"Timed\", \"clock\": {\"mode\": \"virtual\", \"start\": \"2026-03-01T08:00:00Z\","
    " \"until\": \"2026-03-01T12:00:00Z\"}, \"agents\": [{\"name\": \"ann\", \"replies\": [\"@human a1\"]}],"
    " \"schedule\": [{\"at\": \"2026-03-01T09:00:00Z\", \"from\": \"world\", \"text\": \"@ann nine\"},"
    "              {\"at\": \"2026-03-01T11:00:00Z\", \"from\": \"world\", \"text\": \"@ann eleven\"}]}";
  agora_world *w = NULL, *real = NULL;
  char *s = NULL;
  size_t len = 0;
  CHECK_INT(agora_world_open(timed, NULL, &(agora_options){.flags = AGORA_NO_SAVE}, &w), AGORA_OK);
  if (!w) return;
  CHECK_INT(agora_events_buffer(w, 1 << 20), AGORA_OK);
  CHECK_INT(agora_clock(w, &s), AGORA_OK);
  CHECK_HAS(s ? s : "", "\"mode\":\"virtual\",\"now\":\"2026-03-01T08:00:00.000Z\"",
            "\"next_due\":\"2026-03-01T09:00:00.000Z\",\"until\":\"2026-03-01T12:00:00.000Z\",\"advancing\":false");
  agora_free(s);
  CHECK_INT(agora_clock_advance(w, 0), AGORA_ERR_INVALID);
  CHECK_INT(agora_clock_advance(w, 2 * 3600 * 1000), AGORA_OK);
  CHECK_INT(agora_clock_advancing(w), 1);
  CHECK_INT(agora_clock_advance(w, 1000), AGORA_ERR_STATE);
  CHECK_HAS(agora_errmsg(), "already advancing");
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK); /* the advance ended with it */
  CHECK_INT(agora_clock_advancing(w), 0);
  CHECK_INT(agora_events_take(w, &s, &len), AGORA_OK);
  CHECK_HAS(s ? s : "", "@ann nine", "a1");
  CHECK(s && !strstr(s, "eleven"));
  agora_free(s);
  CHECK_INT(agora_clock(w, &s), AGORA_OK);
  CHECK_HAS(s ? s : "", "\"now\":\"2026-03-01T10:00:00.000Z\",\"next_due\":\"2026-03-01T11:00:00.000Z\"");
  agora_free(s);
  agora_world_close(w);
  CHECK_INT(agora_world_open(town, NULL, &(agora_options){.flags = AGORA_NO_SAVE}, &real), AGORA_OK);
  if (real) CHECK_INT(agora_clock_advance(real, 1000), AGORA_ERR_STATE);
  if (real) CHECK_HAS(agora_errmsg(), "the clock is real");
  agora_world_close(real);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(settings_changed_checked_and_stored), UNIT(agents_added_changed_removed),
                                    UNIT(busy_world_refuses), UNIT(new_agent_key_rules), UNIT(budget_set),
                                    UNIT(chat_past_edited), UNIT(clock_advanced_on_the_loop)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
