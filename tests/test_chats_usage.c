/* The chat commands as a person types them (issue 23): chat ids by a unique prefix in every command and
 * an ambiguous one refused with the candidates, the list's header row, message numbers in chats show,
 * the simulated time of virtual-clock worlds in plain transcripts, a world file given to chats import. */
#include "support/fixture.h"
#include "support/proc.h"
#include "support/suite.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs agora with args (NULL-terminated); the result's status, or -1 when it could not run. */
static int ag(proc_result *r, const char *const *args) {
  if (proc_agora(args, NULL, NULL, r)) {
    unit_fail_(__FILE__, __LINE__, "cannot run agora");
    return -1;
  }
  return r->status;
}

/* The longest prefix fx->chat shares with another chat of the database; *other (may be NULL) gets that chat. */
static size_t common_with_others(const fixture *fx, char other[64]) {
  const char *args[] = {"chats", "list", "--db", fx->db, "--json", NULL};
  proc_result r;
  size_t most = 0;
  if (other) other[0] = '\0';
  if (ag(&r, args) == 0) {
    for (const char *p = r.out; (p = strstr(p, "\"id\":\"")); p++) {
      char id[64];
      fixture_find_id(p, "id", id, sizeof id);
      size_t n = 0;
      while (fx->chat[n] && fx->chat[n] == id[n]) n++;
      if (strcmp(id, fx->chat) && (n >= most || (other && !other[0]))) {
        most = n;
        if (other) snprintf(other, 64, "%s", id);
      }
    }
  }
  proc_result_free(&r);
  return most;
}

/* The shortest unique prefix of fx->chat among the chats there are now (ids are ordered by time, so a chat
 * made later, as `chats branch` makes one, may share more of it). */
static void unique_prefix(const fixture *fx, char pre[16]) {
  snprintf(pre, 16, "%.*s", (int)common_with_others(fx, NULL) + 1, fx->chat);
}

/* Every command that names a chat takes a unique prefix of its id; the shortest shared prefix of two
 * ids is ambiguous and the error lists both. */
static void prefix_in_every_command(void) {
  fixture fx;
  if (fixture_open(&fx, 2)) return;
  char other[64], pre[16], shared[16];
  size_t common = common_with_others(&fx, other);
  unique_prefix(&fx, pre);
  snprintf(shared, sizeof shared, "%.*s", (int)(common ? common : 1), fx.chat);
  char head[128];
  snprintf(head, sizeof head, "chat: %s\n", fx.chat);
  proc_result r;
  const char *show[] = {"chats", "show", pre, "--db", fx.db, NULL};
  CHECK_INT(ag(&r, show), 0);
  CHECK(strncmp(r.out, head, strlen(head)) == 0);
  proc_result_free(&r);
  const char *replay[] = {"replay", pre, "--db", fx.db, NULL};
  CHECK_INT(ag(&r, replay), 0);
  CHECK(strstr(r.out, "human: @a count with me") != NULL);
  proc_result_free(&r);
  const char *export[] = {"chats", "export", pre, "--db", fx.db, NULL};
  CHECK_INT(ag(&r, export), 0);
  CHECK(strstr(r.out, fx.chat) != NULL);
  proc_result_free(&r);
  const char *branch[] = {"chats", "branch", pre, "--at", "1", "--db", fx.db, NULL};
  CHECK_INT(ag(&r, branch), 0);
  proc_result_free(&r);
  unique_prefix(&fx, pre); /* the branch is a third chat */
  const char *run[] = {"run", fx.world, "--chat", pre, "--db", fx.db, "--json", NULL};
  CHECK_INT(ag(&r, run), 0);
  CHECK(strstr(r.out, fx.chat) != NULL);
  proc_result_free(&r);
  if (common < 12) { /* ids that differ only in their last character have no shared prefix to try */
    const char *amb[] = {"chats", "show", shared, "--db", fx.db, NULL};
    CHECK_INT(ag(&r, amb), 2);
    CHECK(strstr(r.err, "is ambiguous: ") && strstr(r.err, fx.chat) && strstr(r.err, other));
    proc_result_free(&r);
  }
  const char *none[] = {"chats", "show", "zzzz", "--db", fx.db, NULL};
  CHECK_INT(ag(&r, none), 2);
  CHECK(strstr(r.err, "no chat 'zzzz'") != NULL);
  proc_result_free(&r);
  const char *del[] = {"chats", "delete", pre, "--db", fx.db, NULL};
  CHECK_INT(ag(&r, del), 0);
  proc_result_free(&r);
  const char *gone[] = {"chats", "show", fx.chat, "--db", fx.db, NULL};
  CHECK_INT(ag(&r, gone), 2);
  proc_result_free(&r);
  fixture_close(&fx);
}

/* chats list starts with a header row naming its columns; chats show numbers each message. */
static void list_header_show_numbers(void) {
  fixture fx;
  if (fixture_open(&fx, 1)) return;
  proc_result r;
  const char *list[] = {"chats", "list", "--db", fx.db, NULL};
  CHECK_INT(ag(&r, list), 0);
  CHECK(strncmp(r.out, "  CHAT ", 7) == 0 && strstr(r.out, "MESSAGES") && strstr(r.out, "TITLE\n"));
  proc_result_free(&r);
  const char *show[] = {"chats", "show", fx.chat, "--db", fx.db, NULL};
  CHECK_INT(ag(&r, show), 0);
  CHECK(strstr(r.out, "\n#1 human: @a count with me\n\n#2 a: ") != NULL);
  proc_result_free(&r);
  fixture_close(&fx);
}

/* A world file given to chats import says what it is and what to do with it. */
static void import_world_file(void) {
  fixture fx;
  if (fixture_open(&fx, 1)) return;
  proc_result r;
  const char *imp[] = {"chats", "import", fx.world, "--db", fx.db, NULL};
  CHECK_INT(ag(&r, imp), 2);
  CHECK(strstr(r.err, "this is a world file, not a chat snapshot") && strstr(r.err, "agora run"));
  CHECK(strstr(r.err, "unknown field") == NULL);
  proc_result_free(&r);
  fixture_close(&fx);
}

static const char town[] =
  "{\"name\": \"Town\", \"clock\": {\"mode\": \"virtual\", \"start\": \"2026-03-01T08:00:00Z\"},\n"
  " \"agents\": [{\"name\": \"Mayor\", \"provider\": \"script\", \"replies\": [\"Noted.\", \"Again.\"]}],\n"
  " \"script\": [{\"from\": \"human\", \"text\": \"@mayor Hello\"}, {\"wait\": \"2h\"},\n"
  "            {\"from\": \"human\", \"text\": \"@mayor Later\"}]}\n";

/* Plain transcripts of a virtual-clock world show each message's simulated time: run, chats show (with
 * the numbers), replay, say. */
static void virtual_time_shown(void) {
  char *dir = unit_tmpdir(), world[4200], db[4200], id[64] = "";
  snprintf(world, sizeof world, "%s/town.json", dir);
  snprintf(db, sizeof db, "%s/db", dir);
  CHECK_INT(unit_write_file(world, town), 0);
  proc_result r;
  const char *run[] = {"run", world, "--db", db, NULL};
  CHECK_INT(ag(&r, run), 0);
  CHECK(strstr(r.out, "[2026-03-01 08:00] human: @mayor Hello\n\n[2026-03-01 08:00] mayor: Noted.\n\n") != NULL);
  CHECK(strstr(r.out, "[2026-03-01 10:00] human: @mayor Later\n\n") != NULL);
  proc_result_free(&r);
  const char *list[] = {"chats", "list", "--db", db, "--json", NULL};
  CHECK_INT(ag(&r, list), 0);
  fixture_find_id(r.out, "id", id, sizeof id);
  proc_result_free(&r);
  const char *show[] = {"chats", "show", id, "--db", db, NULL};
  CHECK_INT(ag(&r, show), 0);
  CHECK(strstr(r.out, "\n#1 [2026-03-01 08:00] human: @mayor Hello\n\n#2 [2026-03-01 08:00] mayor: Noted.\n\n") != NULL);
  proc_result_free(&r);
  const char *replay[] = {"replay", id, "--db", db, NULL};
  CHECK_INT(ag(&r, replay), 0);
  CHECK(strstr(r.out, "[2026-03-01 10:00] mayor: Again.\n\n") != NULL);
  proc_result_free(&r);
  const char *say[] = {"say", world, "@mayor One more", "--no-save", NULL};
  CHECK_INT(ag(&r, say), 0);
  CHECK(strstr(r.out, "[2026-03-01 08:00] mayor: Noted.\n\n") != NULL); /* say prints the replies */
  proc_result_free(&r);
  unit_rmrf(dir);
  free(dir);
}

SUITE_RUN((UNIT(prefix_in_every_command), UNIT(list_header_show_numbers), UNIT(import_world_file),
  UNIT(virtual_time_shown)))
