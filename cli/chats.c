/* agora chats list|show|new|delete|export|import and agora worlds list. */
#include "chat/branch.h"
#include "chat/snapshot.h"
#include "cli/cli.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/outfile.h"
#include "cli/db.h"
#include "cli/markdown.h"
#include "cli/output.h"
#include "cli/transcript.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char chats_usage[] =
  "usage: agora chats COMMAND [--db DIR] ...\n"
  "\n"
  "  list [--world ID] [--json]     chats, most recently updated first; * marks a world's current chat\n"
  "  show CHAT_ID [--json] [--state] metadata and transcript; --state adds each agent's saved context\n"
  "  new [--world ID]               new chat (an empty 'New Chat' is reused); prints its id\n"
  "  delete CHAT_ID                 delete; prints the world's current chat afterwards, or 'none'\n"
  "  export CHAT_ID [-o FILE] [--format json|md] [FILE]\n"
  "                                 write the snapshot JSON, or a Markdown document (stdout by default)\n"
  "  import SNAPSHOT.json           import a snapshot as a new chat; prints its id\n"
  "  branch CHAT_ID --at SEQ        new chat with messages 1..SEQ and the agents' state right after SEQ,\n"
  "                                 titled '<title> (branch)'; the source is untouched; prints its id\n"
  "\n"
  "--world is needed only when the database holds several worlds.\n";

static const char worlds_usage[] =
  "usage: agora worlds list [--db DIR] [--json]\n"
  "\n"
  "Lists the worlds in the database with their agents, chats and current chat.\n";

typedef struct opts {
  const char *db, *world, *out, *at, *format;
  int json, state;
  const char *pos[4];
  int n_pos;
} opts;

static int parse(const char *cmd, int argc, char **argv, opts *o) {
  memset(o, 0, sizeof *o);
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--json")) {
      o->json = 1;
    } else if (!strcmp(s, "--state")) {
      o->state = 1;
    } else if (!strcmp(s, "--db") || !strcmp(s, "--world") || !strcmp(s, "-o") || !strcmp(s, "--at") ||
               !strcmp(s, "--format")) {
      if (i + 1 >= argc) return cli_error(AG_ERR_INVALID, "%s: %s needs a value", cmd, s);
      const char **dst = !strcmp(s, "--db") ? &o->db : !strcmp(s, "--world") ? &o->world
                       : !strcmp(s, "--at") ? &o->at : !strcmp(s, "--format") ? &o->format : &o->out;
      *dst = argv[++i];
    } else if (s[0] == '-' && s[1]) {
      return cli_error(AG_ERR_INVALID, "%s: unknown option '%s'", cmd, s);
    } else if (o->n_pos < 4) {
      o->pos[o->n_pos++] = s;
    } else {
      return cli_error(AG_ERR_INVALID, "%s: too many arguments", cmd);
    }
  }
  return 0;
}

/* ---- list ---- */

static int list_chat(const chat_info *c, void *arg) {
  int json = *(const int *)arg;
  char created[40], updated[40];
  ag_time_format(c->created_at_ms, created, sizeof created);
  ag_time_format(c->updated_at_ms, updated, sizeof updated);
  if (json) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "id", c->id);
    cJSON_AddStringToObject(j, "world", c->world_id);
    cJSON_AddStringToObject(j, "title", c->title);
    cJSON_AddNumberToObject(j, "message_count", (double)c->message_count);
    cJSON_AddStringToObject(j, "created_at", created);
    cJSON_AddStringToObject(j, "updated_at", updated);
    cJSON_AddBoolToObject(j, "current", c->current);
    char *s = cJSON_PrintUnformatted(j);
    puts(s);
    free(s);
    cJSON_Delete(j);
  } else {
    printf("%c %-14s %-16s %5llu  %s  %s\n", c->current ? '*' : ' ', c->id, c->world_id,
           (unsigned long long)c->message_count, updated, c->title);
  }
  return 0;
}

/* ---- show ---- */

static int show(store *st, const char *chat_id, int json, int state, output **out, ag_errmsg *em) {
  chat_info c;
  int rc = chat_info_get(st, chat_id, &c, em);
  if (rc) return rc;
  if (json) {
    list_chat(&c, &json);
  } else {
    char updated[40];
    ag_time_format(c.updated_at_ms, updated, sizeof updated);
    printf("chat: %s\nworld: %s\ntitle: %s\nmessages: %llu\nupdated: %s\n\n", c.id, c.world_id, c.title,
           (unsigned long long)c.message_count, updated);
  }
  output_opts oo = {json, 0, 0, 1};
  if ((rc = output_new(stdout, c.world_id, &oo, out))) return rc;
  output_set_chat(*out, c.id);
  if (state && (rc = transcript_print_state(st, chat_id, json, em))) return rc;
  return transcript_print_stored(st, chat_id, *out, 0, em);
}

/* A message number: digits only, at least 1. */
static int cli_parse_seq(const char *s, uint64_t *out) {
  char *end = NULL;
  if (!s || !*s || *s < '0' || *s > '9') return -1;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || v < 1) return -1;
  *out = v;
  return 0;
}


int cli_chats(int argc, char **argv) {
  if (argc < 1 || cli_is_help(argv[0])) {
    fputs(chats_usage, argc < 1 ? stderr : stdout);
    return argc < 1 ? 2 : 0;
  }
  const char *sub = argv[0];
  opts o;
  int status = parse("chats", argc - 1, argv + 1, &o);
  if (status) return status;
  static const char *const subs[] = {"list", "show", "new", "delete", "export", "import", "branch"};
  static const int n_args[] = {0, 1, 0, 1, 1, 1, 1};
  int which = -1;
  for (int i = 0; i < 7; i++)
    if (!strcmp(sub, subs[i])) which = i;
  if (which < 0) return cli_error(AG_ERR_INVALID, "chats: unknown command '%s' (see agora chats --help)", sub);
  if (which == 4 && o.n_pos == 2 && !o.out) o.out = o.pos[--o.n_pos]; /* export CHAT_ID FILE */
  if (o.format && strcmp(o.format, "json") && strcmp(o.format, "md"))
    return cli_error(AG_ERR_INVALID, "chats %s: --format: expected json or md, not '%s'", sub, o.format);
  uint64_t at = 0;
  if (which == 6 && cli_parse_seq(o.at, &at))
    return cli_error(AG_ERR_INVALID, "chats branch: --at needs a message number (1 or more)");
  if (o.n_pos != n_args[which])
    return cli_error(AG_ERR_INVALID, "chats %s: expected %d argument%s (see agora chats --help)", sub,
                     n_args[which], n_args[which] == 1 ? "" : "s");
  ag_errmsg em = {""};
  store *st = NULL;
  /* list, show and export only read: with no database, list prints an empty list. */
  int reads = which == 0 || which == 1 || which == 4;
  int rc = reads ? cli_store_open_read(o.db, &st, &em) : cli_store_open(o.db, &st, &em);
  if (rc == AG_ERR_NOT_FOUND && which == 0) return 0;
  if (rc) return cli_error(rc, "%s", em.text);
  cli_world cw;
  memset(&cw, 0, sizeof cw);
  char wid[CHAT_ID_MAX];
  switch (which) {
  case 0:
    rc = chat_list(st, o.world, list_chat, &o.json, &em);
    break;
  case 1: {
    output *out = NULL;
    rc = show(st, o.pos[0], o.json, o.state, &out, &em);
    output_free(out);
    break;
  }
  case 2:
    if (!(rc = cli_pick_world(st, o.world, wid, &em)) && !(rc = cli_world_open(st, wid, &cw, &em)) &&
        !(rc = chat_session_new(cw.cs, &em)))
      puts(chat_session_current(cw.cs));
    break;
  case 3:
    if (!(rc = cli_chat_world(st, o.pos[0], wid, &em)) && !(rc = cli_world_open(st, wid, &cw, &em)) &&
        !(rc = chat_session_resume(cw.cs, &em)) && !(rc = chat_session_delete(cw.cs, o.pos[0], &em))) {
      const char *cur = chat_session_current(cw.cs);
      puts(cur ? cur : "none");
    }
    break;
  case 4: {
    cJSON *snap = NULL;
    if (!(rc = chat_snapshot_export(st, o.pos[0], &snap, &em))) {
      char *text = o.format && !strcmp(o.format, "md") ? markdown_chat(snap) : cJSON_Print(snap);
      if (!text) rc = AG_ERR_NOMEM;
      else if (o.out) rc = ag_file_write_out(o.out, text, &em);
      else fputs(text, stdout), fputs(o.format && !strcmp(o.format, "md") ? "" : "\n", stdout);
      free(text);
    }
    cJSON_Delete(snap);
    break;
  }
  case 5: {
    cJSON *snap = NULL;
    char id[CHAT_ID_MAX];
    if (!(rc = chat_snapshot_load(o.pos[0], &snap, &em)) &&
        !(rc = chat_snapshot_import(st, snap, o.pos[0], id, &em)))
      puts(id);
    cJSON_Delete(snap);
    break;
  }
  case 6: {
    char id[CHAT_ID_MAX];
    if (!(rc = chat_branch(st, o.pos[0], at, id, &em))) puts(id);
    break;
  }
  }
  cli_world_close(&cw);
  chat_store_close(st);
  if (rc) return cli_error(rc, "chats %s: %s", sub, em.text[0] ? em.text : ag_strerror(rc));
  return 0;
}

/* ---- worlds ---- */

static int world_row(const chat_world_info *w, void *arg) {
  int json = *(const int *)arg;
  const char *cur = w->current_chat[0] ? w->current_chat : NULL;
  if (json) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "id", w->id);
    cJSON_AddStringToObject(j, "name", w->name);
    cJSON_AddNumberToObject(j, "agents", w->agents);
    cJSON_AddNumberToObject(j, "chats", (double)w->chats);
    if (cur) cJSON_AddStringToObject(j, "current_chat", cur);
    else cJSON_AddNullToObject(j, "current_chat");
    char *s = cJSON_PrintUnformatted(j);
    puts(s);
    free(s);
    cJSON_Delete(j);
  } else {
    printf("%-20s %-24s %3d agents %5llu chats  current: %s\n", w->id, w->name, w->agents,
           (unsigned long long)w->chats, cur ? cur : "none");
  }
  return 0;
}

int cli_worlds(int argc, char **argv) {
  if (argc < 1 || cli_is_help(argv[0])) {
    fputs(worlds_usage, argc < 1 ? stderr : stdout);
    return argc < 1 ? 2 : 0;
  }
  if (strcmp(argv[0], "list")) return cli_error(AG_ERR_INVALID, "worlds: unknown command '%s'", argv[0]);
  opts o;
  int status = parse("worlds list", argc - 1, argv + 1, &o);
  if (status) return status;
  if (o.n_pos) return cli_error(AG_ERR_INVALID, "worlds list: unexpected argument '%s'", o.pos[0]);
  ag_errmsg em = {""};
  store *st = NULL;
  int rc = cli_store_open_read(o.db, &st, &em);
  if (rc == AG_ERR_NOT_FOUND) return 0; /* no database: no worlds */
  if (rc) return cli_error(rc, "%s", em.text);
  rc = chat_worlds_each(st, world_row, &o.json, &em);
  chat_store_close(st);
  if (rc) return cli_error(rc, "worlds list: %s", em.text[0] ? em.text : ag_strerror(rc));
  return 0;
}
