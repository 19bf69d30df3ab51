/* libagora as a NATS viewer (API version 7: AGORA_VIEW, what `agora console --nats` does), against a real
 * nats-server: two viewer worlds of one process, each with its own database, driven from one poll loop
 * on their agora_fd as a program's own loop would; what one publishes the other sees, a new chat moves
 * both (a chat-loaded event in the other), and what the other processes would not follow is refused. */
#include "agora.h"
#include "support/nats_proc.h"
#include "support/unit.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char world[] =
  "{\"name\": \"libview\", \"agents\": [{\"name\": \"a0\", \"replies\": [\"@human a0 here\"]}]}";

/* What a viewer's subscriber saw: the messages' text and the chats it was moved to, one per line. */
typedef struct seen {
  char text[8192];
} seen;

static void on_event(const agora_event *ev, void *ctx) {
  seen *s = ctx;
  size_t n = strlen(s->text);
  const char *kind = agora_event_kind(ev), *json = agora_event_json(ev);
  if (!strcmp(kind, "message"))
    snprintf(s->text + n, sizeof s->text - n, "%s: %s\n", agora_event_sender(ev), agora_event_text(ev));
  else if (!strcmp(kind, "chat-loaded") && json)
    snprintf(s->text + n, sizeof s->text - n, "chat-loaded %s\n", json);
}

static long ms_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Runs both worlds' loops from one poll until s holds needle: 1, or 0 after ms. */
static int pump_until(agora_world *a, agora_world *b, const seen *s, const char *needle, long ms) {
  long end = ms_now() + ms;
  struct pollfd p[2] = {{.fd = agora_fd(a), .events = POLLIN}, {.fd = agora_fd(b), .events = POLLIN}};
  while (!strstr(s->text, needle)) {
    if (ms_now() > end) return 0;
    long ta = agora_next_timeout(a), tb = agora_next_timeout(b), t = 50;
    if (ta >= 0 && ta < t) t = ta;
    if (tb >= 0 && tb < t) t = tb;
    poll(p, 2, (int)t);
    agora_step(a);
    agora_step(b);
  }
  return 1;
}

static int open_viewer(const char *url, const char *db, seen *s, agora_world **out) {
  agora_options o = {.flags = AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | AGORA_OPTIONS_5 | AGORA_VIEW, .nats_url = url,
                     .on_event = on_event, .on_event_ctx = s};
  return agora_world_open(world, db, &o, out);
}

static void viewers_follow_the_stream(void) {
  char *dir = unit_tmpdir(), dba[4096], dbb[4096], id[AGORA_ID_MAX] = "", *s = NULL;
  nats_node node;
  seen sa = {""}, sb = {""};
  agora_world *a = NULL, *b = NULL;
  if (nats_start(dir, 1, NULL, &node)) {
    unit_fail_(__FILE__, __LINE__, "nats-server did not start");
    goto done;
  }
  snprintf(dba, sizeof dba, "%s/a.db", dir);
  snprintf(dbb, sizeof dbb, "%s/b.db", dir);
  const char *url = nats_url(&node, 0, 1);
  CHECK_INT(open_viewer(url, dba, &sa, &a), AGORA_OK);
  CHECK_INT(open_viewer(url, dbb, &sb, &b), AGORA_OK);
  if (!a || !b) goto stop;
  CHECK_INT(agora_publish(a, "human", "hello everyone"), AGORA_OK);
  CHECK(pump_until(a, b, &sb, "human: hello everyone\n", 20000));
  /* the stream had no chat: each started one, and the first message made a's the stream's */
  CHECK_STR(agora_chat_current(b) ? agora_chat_current(b) : "", agora_chat_current(a) ? agora_chat_current(a) : "-");
  /* what would hold in this process only, or what the other processes would not follow */
  CHECK_INT(agora_budget_set(a, 100, 0), AGORA_ERR_STATE);
  CHECK_STR(agora_errmsg(), "agora_budget_set: not available on a world joined over NATS: change the world file "
            "and restart its hosts");
  CHECK_INT(agora_agent_forget(a, "a0"), AGORA_ERR_STATE);
  CHECK_INT(agora_clock_advance(a, 1000), AGORA_ERR_STATE);
  CHECK_HAS(agora_errmsg(), "agora_clock_advance: not available on a world joined over NATS");
  CHECK_INT(agora_settings_change(a, "{\"turn_limit\": 3}"), AGORA_ERR_STATE);
  CHECK_INT(agora_chat_branch(a, NULL, 1, id), AGORA_ERR_STATE);
  CHECK_HAS(agora_errmsg(), "agora_chat_branch: not available on a world joined over NATS");
  CHECK_INT(agora_chat_delete(a, agora_chat_current(a)), AGORA_ERR_STATE);
  CHECK_HAS(agora_errmsg(), "the stream's current chat cannot be deleted");
  /* a new chat is every process's: the other viewer is moved to it */
  CHECK_INT(agora_chat_new(a), AGORA_OK);
  snprintf(id, sizeof id, "%s", agora_chat_current(a) ? agora_chat_current(a) : "");
  CHECK_INT(agora_publish(a, "human", "in the new chat"), AGORA_OK);
  char moved[128];
  snprintf(moved, sizeof moved, "\"id\":\"%s\"", id);
  CHECK(pump_until(a, b, &sb, "human: in the new chat\n", 20000));
  CHECK_HAS(sb.text, "chat-loaded {\"type\":\"event\",\"event\":\"chat-loaded\"", moved);
  CHECK_STR(agora_chat_current(b) ? agora_chat_current(b) : "", id);
  CHECK_INT(agora_chat_title(a, "renamed here"), AGORA_OK);
  CHECK_INT(agora_chats(a, &s), AGORA_OK);
  CHECK_HAS(s ? s : "", "\"title\":\"renamed here\"");
  agora_free(s);
  CHECK(!strstr(sa.text, "chat-loaded")); /* its own moves are not announced to it */
stop:
  agora_world_close(a);
  agora_world_close(b);
  nats_node_stop(&node, SIGTERM);
done:
  unit_rmrf(dir);
  free(dir);
}

/* AGORA_VIEW's company: a NATS URL and a database, neither hosting nor a chat of its own. */
static void view_options_checked(void) {
  agora_world *w = NULL;
  unsigned v = AGORA_OPTIONS_3 | AGORA_OPTIONS_4 | AGORA_OPTIONS_5 | AGORA_VIEW;
  CHECK_INT(agora_world_open(world, NULL, &(agora_options){.flags = v}, &w), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "AGORA_VIEW needs nats_url and a database");
  const char *url = "nats://127.0.0.1:1";
  CHECK_INT(agora_world_open(world, NULL, &(agora_options){.flags = v | AGORA_NO_SAVE, .nats_url = url}, &w),
            AGORA_ERR_INVALID);
  CHECK_INT(agora_world_open(world, NULL, &(agora_options){.flags = v, .nats_url = url, .chat = "c"}, &w),
            AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_options.chat: not with AGORA_VIEW");
  CHECK(!w);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(view_options_checked), UNIT(viewers_follow_the_stream)};
  if (!nats_available()) {
    fprintf(stderr, "nats-server is not installed (apt-get install nats-server)\n");
    return 1;
  }
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
