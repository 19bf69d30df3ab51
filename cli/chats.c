/* agora chats list|show|new|delete|export|import|branch and agora worlds list|show|export|delete, written on
 * libagora (include/agora.h, agora_db_*). */
#include "agora.h"
#include "cli/cli.h"
#include "common/error.h"
#include "cli/event_print.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/jsonnum.h"
#include "common/outfile.h"
#include "common/term_text.h"
#include "cli/transcript.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char chats_usage[] =
  "usage: agora chats COMMAND [--db DIR] ...\n"
  "\n"
  "  list [--world W] [--json]      chats, most recently updated first; * marks a world's current chat\n"
  "  show CHAT_ID [--json] [--state] metadata and transcript; --state adds each agent's saved context\n"
  "  new [--world W]                new chat (an empty 'New Chat' is reused); prints its id\n"
  "  delete CHAT_ID                 delete; prints the world's current chat afterwards, or 'none'\n"
  "  export CHAT_ID [-o FILE] [--format json|md] [FILE]\n"
  "                                 write the snapshot JSON, or a Markdown document (stdout by default)\n"
  "  import SNAPSHOT.json           import a snapshot as a new chat; prints its id\n"
  "  branch CHAT_ID --at SEQ        new chat with messages 1..SEQ and the agents' state right after SEQ,\n"
  "                                 titled '<title> (branch)'; the source is untouched; prints its id\n"
  "\n"
  "--world W names a world by id or display name; needed only when the database holds several worlds.\n";

static const char worlds_usage[] =
  "usage: agora worlds COMMAND [--db DIR] ...\n"
  "\n"
  "  list [--json]                  the worlds with their agents, chats and current chat\n"
  "  show WORLD [--json]            settings, agents (provider, model, base_url), chats\n"
  "  export WORLD [-o FILE] [--format json|md] [FILE]\n"
  "                                 the stored world file JSON (no secrets; agora run loads it), or a\n"
  "                                 Markdown document of its settings and agents\n"
  "  delete WORLD --yes             delete the world and all its chats (refused while another\n"
  "                                 agora process uses one of them)\n"
  "\n"
  "WORLD is a world's id or display name.\n";

typedef struct opts {
  const char *db, *world, *out, *at, *format;
  int json, state, yes;
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
    } else if (!strcmp(s, "--yes")) {
      o->yes = 1;
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

/* ---- the library's calls (include/agora.h): list, new, delete, export, import, branch ---- */

/* An agora_* call's failure, its detail kept for the command's error line. */
static int api(int rc, ag_errmsg *em) {
  if (rc < 0) snprintf(em->text, sizeof em->text, "%s", agora_errmsg());
  return rc;
}

static void print_json_line(const cJSON *j) {
  char *s = j ? cJSON_PrintUnformatted(j) : NULL;
  if (s) puts(s);
  free(s);
}

static const char *field(const cJSON *o, const char *key) {
  const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
  return v ? v : "";
}

/* The library's rows ({"id","world","title","message_count","created_at","updated_at","current"}) as
 * a table, or one JSON object per line. */
static int list_chats(agora_db *db, const char *world, int json, ag_errmsg *em) {
  char *text = NULL;
  int rc = api(agora_db_chats(db, world, &text), em);
  cJSON *rows = rc ? NULL : cJSON_Parse(text);
  agora_free(text);
  if (!rc && !rows) rc = ag_fail(em, AG_ERR_NOMEM, "out of memory");
  const cJSON *c;
  size_t n = 0;
  cJSON_ArrayForEach(c, rows) {
    if (json) {
      print_json_line(c);
      continue;
    }
    if (n++ == 0) printf("  %-14s %-16s %8s  %-24s  %s\n", "CHAT", "WORLD", "MESSAGES", "UPDATED", "TITLE");
    printf("%c %-14s %-16s %8llu  %s  ", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "current")) ? '*' : ' ',
           field(c, "id"), field(c, "world"),
           (unsigned long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "message_count")),
           field(c, "updated_at"));
    ag_term_fputs(stdout, field(c, "title"), AG_TERM_ONE_LINE); /* a title is the first human words, or imported */
    putchar('\n');
  }
  cJSON_Delete(rows);
  return rc;
}

/* chats export: the snapshot (or Markdown) to stdout or -o FILE. */
static int export_chat(agora_db *db, const opts *o, ag_errmsg *em) {
  char *json = NULL;
  int md = o->format && !strcmp(o->format, "md");
  int rc = api(agora_db_chat_export(db, o->pos[0], &json), em);
  cJSON *snap = rc || md ? NULL : cJSON_Parse(json);
  char *text = NULL;
  if (!rc && md) rc = api(agora_snapshot_markdown(json, &text), em);
  else if (!rc && (!snap || ag_json_exact_ints(snap) || !(text = cJSON_Print(snap)))) rc = AG_ERR_NOMEM;
  agora_free(json);
  if (!rc && o->out) rc = ag_file_write_out(o->out, text, em);
  else if (!rc) ag_term_fputs(stdout, text, 0), fputs(md ? "" : "\n", stdout); /* titles, messages: shown, not obeyed */
  md ? agora_free(text) : free(text);
  cJSON_Delete(snap);
  return rc;
}

static int import_chat(agora_db *db, const char *path, ag_errmsg *em) {
  char *text = NULL, id[AGORA_ID_MAX];
  int rc = cli_snapshot_read(path, &text, em);
  if (!rc && !(rc = api(agora_db_chat_import(db, text, path, id), em))) puts(id);
  free(text);
  return rc;
}

/* Every subcommand but show, through the library. */
static int chats_api(int which, const opts *o, uint64_t at, const char *sub) {
  ag_errmsg em = {""};
  agora_db *db = NULL;
  char id[AGORA_ID_MAX];
  /* list and export only read: with no database, list prints an empty list. */
  int rc = agora_db_open(o->db, which == 0 || which == 4 ? AGORA_DB_READ : 0, &db);
  if (rc == AGORA_ERR_NOT_FOUND && which == 0) return 0;
  if (rc) return cli_error(rc, "%s", agora_errmsg());
  switch (which) {
  case 0: rc = list_chats(db, o->world, o->json, &em); break;
  case 2: if (!(rc = api(agora_db_chat_new(db, o->world, id), &em))) puts(id); break;
  case 3: if (!(rc = api(agora_db_chat_delete(db, o->pos[0], id), &em))) puts(id[0] ? id : "none"); break;
  case 4: rc = export_chat(db, o, &em); break;
  case 5: rc = import_chat(db, o->pos[0], &em); break;
  default: if (!(rc = api(agora_db_chat_branch(db, o->pos[0], at, id), &em))) puts(id); break;
  }
  agora_db_close(db);
  if (rc) return cli_error(rc, "chats %s: %s", sub, em.text[0] ? em.text : ag_strerror(rc));
  return 0;
}

/* ---- show: through the library too (API version 3) ---- */

/* A JSON array the library handed back, parsed (text released); NULL when out of memory. */
static cJSON *take_array(char *text, ag_errmsg *em) {
  cJSON *a = cJSON_Parse(text);
  agora_free(text);
  if (!a) ag_fail(em, AG_ERR_NOMEM, "out of memory");
  return a;
}

/* --state: each agent's saved context, {"version","updated_at","data","type":"state","agent"} with json. */
static void show_state(const cJSON *states, int json) {
  cJSON *j;
  cJSON_ArrayForEach(j, states) {
    if (json) {
      cJSON *agent = cJSON_DetachItemFromObjectCaseSensitive(j, "agent"); /* type goes before it */
      cJSON_AddStringToObject(j, "type", "state");
      if (agent) cJSON_AddItemToObject(j, "agent", agent);
      print_json_line(j);
      continue;
    }
    char *data = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(j, "data"));
    const char *u = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "updated_at"));
    printf("state of %s: version %.0f, updated %s\n  %s\n", field(j, "agent"),
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "version")), u ? u : "never", data ? data : "{}");
    free(data);
  }
  if (!json && !cJSON_GetArraySize(states)) printf("(no agent has saved a context in this chat)\n");
  if (!json) printf("\n");
}

/* The token totals per agent: "tokens of AGENT: N in, M out (K calls)", or {"type":"usage",...} lines. */
static void show_usage(const cJSON *rows, int json) {
  const cJSON *r;
  cJSON_ArrayForEach(r, rows) {
    double in = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "input_tokens"));
    double out = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "output_tokens"));
    size_t calls = (size_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "calls"));
    if (json)
      printf("{\"type\":\"usage\",\"agent\":\"%s\",\"calls\":%zu,\"input_tokens\":%.0f,\"output_tokens\":%.0f}\n",
             field(r, "agent"), calls, in, out);
    else
      printf("tokens of %s: %.0f in, %.0f out (%zu call%s)\n", field(r, "agent"), in, out, calls, calls == 1 ? "" : "s");
  }
}

/* The chat's row, with --state the agents' contexts, its transcript numbered (for /edit, branch --at),
 * then its usage. */
static int show(agora_db *db, const char *chat, int json, int state, ag_errmsg *em) {
  char *text = NULL;
  cJSON *c = NULL, *part = NULL;
  int rc = api(agora_db_chat_info(db, chat, &text), em);
  if (!rc && !(c = take_array(text, em))) rc = AG_ERR_NOMEM;
  if (rc) goto done;
  if (json) {
    print_json_line(c);
  } else {
    printf("chat: %s\nworld: %s\ntitle: ", field(c, "id"), field(c, "world"));
    ag_term_fputs(stdout, field(c, "title"), AG_TERM_ONE_LINE);
    printf("\nmessages: %.0f\nupdated: %s\n\n", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "message_count")),
           field(c, "updated_at"));
  }
  if (state && !(rc = api(agora_db_chat_state(db, field(c, "id"), &text), em))) {
    if (!(part = take_array(text, em))) rc = AG_ERR_NOMEM;
    else show_state(part, json);
    cJSON_Delete(part);
    part = NULL;
  }
  if (!rc && !(rc = api(agora_db_transcript(db, field(c, "id"), &text), em)) && !(part = take_array(text, em)))
    rc = AG_ERR_NOMEM;
  cli_event_print p = cli_event_print_make(stdout, json, 0);
  p.seqs = p.batch = 1;
  cli_transcript_print(&p, part, 0);
  cJSON_Delete(part);
  part = NULL;
  if (!rc && !(rc = api(agora_db_usage(db, field(c, "id"), &text), em)) && !(part = take_array(text, em)))
    rc = AG_ERR_NOMEM;
  show_usage(part, json);
done:
  cJSON_Delete(part);
  cJSON_Delete(c);
  return rc;
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
  if (which != 1) return chats_api(which, &o, at, sub);
  ag_errmsg em = {""};
  agora_db *db = NULL;
  int rc = agora_db_open(o.db, AGORA_DB_READ, &db);
  if (rc) return cli_error(rc, "%s", agora_errmsg());
  rc = show(db, o.pos[0], o.json, o.state, &em);
  agora_db_close(db);
  if (rc) return cli_error(rc, "chats %s: %s", sub, em.text[0] ? em.text : ag_strerror(rc));
  return 0;
}

/* ---- worlds: on the library too (agora_db_worlds, agora_db_world, agora_db_world_delete) ---- */

static const char *member_str(const cJSON *j, const char *key) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, key));
}

static double member_num(const cJSON *j, const char *key) {
  return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, key));
}

/* One row of `worlds list`. */
static void world_row(const cJSON *w, int json) {
  if (json) {
    print_json_line(w);
    return;
  }
  const char *name = member_str(w, "name"), *cur = member_str(w, "current_chat");
  int agents = (int)member_num(w, "agents");
  unsigned long long chats = (unsigned long long)member_num(w, "chats");
  name = name ? name : "";
  printf("%-20s ", member_str(w, "id"));
  ag_term_fputs(stdout, name, AG_TERM_ONE_LINE); /* a world's display name may come from a snapshot */
  printf("%*s %3d %-6s %5llu %-5s  current: %s\n", (int)(strlen(name) < 24 ? 24 - strlen(name) : 0), "", agents,
         agents == 1 ? "agent" : "agents", chats, chats == 1 ? "chat" : "chats", cur ? cur : "none");
}

static const char *agent_str(const cJSON *a, const char *key) {
  const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(a, key));
  return v && v[0] ? v : "-";
}

static void show_plain(const cJSON *w) {
  const cJSON *settings = cJSON_GetObjectItemCaseSensitive(w, "settings");
  const char *cur = member_str(w, "current_chat"), *name = member_str(w, "name");
  printf("world: %s\nname: ", member_str(w, "id"));
  ag_term_fputs(stdout, name ? name : "", AG_TERM_ONE_LINE);
  printf("\nchats: %llu\ncurrent chat: %s\n", (unsigned long long)member_num(w, "chats"), cur ? cur : "none");
  const cJSON *it;
  cJSON_ArrayForEach(it, settings) {
    if (!strcmp(it->string, "name") || !strcmp(it->string, "agents")) continue;
    char *v = cJSON_PrintUnformatted(it);
    printf("%s: %s\n", it->string, v ? v : "?");
    free(v);
  }
  const cJSON *agents = cJSON_GetObjectItem(settings, "agents");
  int n = cJSON_GetArraySize(agents);
  printf("agents: %d\n", n);
  cJSON_ArrayForEach(it, agents) {
    printf("  %-16s provider=%s model=%s base_url=%s\n", agent_str(it, "name"), agent_str(it, "provider"),
           agent_str(it, "model"), agent_str(it, "base_url"));
  }
}

/* The world's settings as the world file's JSON (pretty) or Markdown, to stdout or -o FILE. */
static int world_export(const cJSON *w, const opts *o, ag_errmsg *em) {
  const cJSON *settings = cJSON_GetObjectItemCaseSensitive(w, "settings");
  const char *out = o->out;
  int md = o->format && !strcmp(o->format, "md"), rc = AG_OK;
  char *pretty = NULL, *doc = md ? cJSON_PrintUnformatted(settings) : NULL;
  if (md && doc) rc = api(agora_world_markdown(doc, &pretty), em);
  else if (!md) pretty = cJSON_Print(settings);
  free(doc);
  if (rc) return rc;
  if (!pretty) return ag_fail(em, AG_ERR_NOMEM, "out of memory");
  if (md) {
    rc = out ? ag_file_write_out(out, pretty, em) : (fputs(pretty, stdout), AG_OK);
  } else if (out) {
    size_t n = strlen(pretty);
    char *t = realloc(pretty, n + 2);
    if (!t) {
      free(pretty);
      return AG_ERR_NOMEM;
    }
    pretty = t;
    memcpy(pretty + n, "\n", 2);
    rc = ag_file_write_out(out, pretty, em);
  } else {
    puts(pretty);
  }
  md ? agora_free(pretty) : free(pretty);
  return rc;
}

/* list, show, export (which 0..2) from the library's JSON. */
static int worlds_read(agora_db *db, int which, const opts *o, ag_errmsg *em) {
  char *text = NULL;
  int rc = api(which == 0 ? agora_db_worlds(db, &text) : agora_db_world(db, o->pos[0], &text), em);
  cJSON *j = rc ? NULL : take_array(text, em);
  if (!rc && !j) rc = AG_ERR_NOMEM;
  const cJSON *w;
  if (!rc && which == 0) cJSON_ArrayForEach(w, j) world_row(w, o->json);
  else if (!rc && which == 1 && o->json) print_json_line(j);
  else if (!rc && which == 1) show_plain(j);
  else if (!rc) rc = world_export(j, o, em);
  cJSON_Delete(j);
  return rc;
}

static int worlds_run(int which, const opts *o) {
  static const char *const names[] = {"list", "show", "export", "delete"};
  const char *cmd = names[which];
  if (which == 3 && !o->yes)
    return cli_error(AG_ERR_INVALID, "worlds delete: this deletes world '%s' with all its chats; add --yes", o->pos[0]);
  ag_errmsg em = {""};
  agora_db *db = NULL;
  char id[AGORA_ID_MAX];
  size_t n = 0;
  int rc = api(agora_db_open(o->db, which == 3 ? 0 : AGORA_DB_READ, &db), &em);
  if (rc == AGORA_ERR_NOT_FOUND && which == 0) return 0; /* no database: no worlds */
  if (rc == AGORA_ERR_NOT_FOUND) rc = ag_fail(&em, AG_ERR_INVALID, "no world '%s' (there is no database)", o->pos[0]);
  if (rc) return cli_error(rc, "worlds %s: %s", cmd, em.text);
  if (which < 3) rc = worlds_read(db, which, o, &em);
  else if (!(rc = api(agora_db_world_delete(db, o->pos[0], id, &n), &em)))
    printf("deleted world %s and %zu chat%s\n", id, n, n == 1 ? "" : "s");
  agora_db_close(db);
  if (rc) return cli_error(rc, "worlds %s: %s", cmd, em.text[0] ? em.text : ag_strerror(rc));
  return 0;
}

int cli_worlds(int argc, char **argv) {
  if (argc < 1 || cli_is_help(argv[0])) {
    fputs(worlds_usage, argc < 1 ? stderr : stdout);
    return argc < 1 ? 2 : 0;
  }
  static const char *const subs[] = {"list", "show", "export", "delete"};
  int which = -1;
  for (int i = 0; i < 4; i++)
    if (!strcmp(argv[0], subs[i])) which = i;
  if (which < 0) return cli_error(AG_ERR_INVALID, "worlds: unknown command '%s' (see agora worlds --help)", argv[0]);
  char label[32];
  snprintf(label, sizeof label, "worlds %s", argv[0]);
  opts o;
  int status = parse(label, argc - 1, argv + 1, &o);
  if (status) return status;
  if (which == 0 && o.n_pos) return cli_error(AG_ERR_INVALID, "worlds list: unexpected argument '%s'", o.pos[0]);
  if (which == 2 && o.n_pos == 2 && !o.out) o.out = o.pos[--o.n_pos]; /* export WORLD FILE */
  if (o.format && which != 2) return cli_error(AG_ERR_INVALID, "worlds %s: --format goes with export", argv[0]);
  if (o.format && strcmp(o.format, "json") && strcmp(o.format, "md"))
    return cli_error(AG_ERR_INVALID, "worlds export: --format: expected json or md, not '%s'", o.format);
  if (which > 0 && o.n_pos != 1)
    return cli_error(AG_ERR_INVALID, "worlds %s: expected one WORLD (see agora worlds --help)", argv[0]);
  return worlds_run(which, &o);
}
