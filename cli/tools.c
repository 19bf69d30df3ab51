/* agora tools WORLD.json [--json] [--db DIR]: starts the world's MCP servers and prints each agent's
 * tools (name, source, approval, description), so a configuration can be checked before a long run. */
#include "agora.h"
#include "cli/cli.h"

#include "common/error.h"
#include "common/term_text.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

static const char tools_usage[] =
  "usage: agora tools WORLD.json [--json] [--db DIR]\n"
  "\n"
  "Starts the world's MCP servers (mcp_servers), as run would, and prints each agent's tools: its name\n"
  "as the model sees it, where it comes from (built-in or the server), whether a call asks for approval\n"
  "first, and its description. The servers' stderr goes to DIR/logs/mcp-*.log.\n"
  "\n"
  "  --json    one JSON document: {\"agents\": [{\"name\", \"tools\": [...]}], \"servers\": [...]}\n"
  "  --db DIR  the data directory for the log (default: $AGORA_HOME, $XDG_DATA_HOME/agora,\n"
  "            ~/.local/share/agora)\n"
  "\n"
  "Exit status: 0 when every server started, 1 naming each one that failed and why, 2 bad usage or input.\n";


/* The widths of the name and source columns: the longest of every agent's, so that long names
 * (everything.trigger-long-running-operation) do not push the rest of their row out of line. */
typedef struct tool_cols {
  int name, source;
  int measuring; /* a first pass that only widens the columns */
} tool_cols;

/* Characters, not bytes: a name in UTF-8 takes one column per character (wide scripts aside). */
static int text_cols(const char *s) {
  int n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

/* A cell from outside (a server's tool name or description): shown, not obeyed, on a terminal;
 * padded to width (0: none). */
static void cell_out(const char *s, int width) {
  ag_term_fputs(stdout, s, AG_TERM_ONE_LINE);
  for (int n = text_cols(s); n < width; n++) putchar(' ');
}

/* One tool as a row (cols set) or a JSON object (arr set), or only measured (both NULL). */
static void tool_out(cJSON *arr, tool_cols *cols, const char *name, const char *source, int approve, const char *desc) {
  if (arr) {
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "name", name);
    cJSON_AddStringToObject(t, "source", source);
    cJSON_AddBoolToObject(t, "approve", approve);
    cJSON_AddStringToObject(t, "description", desc);
    cJSON_AddItemToArray(arr, t);
    return;
  }
  if (!cols) return;
  if (cols->measuring) {
    if (text_cols(name) > cols->name) cols->name = text_cols(name);
    if (text_cols(source) > cols->source) cols->source = text_cols(source);
    return;
  }
  char first[400];
  int cut = (int)strcspn(desc, "\n"); /* the first line: a table row stays one line */
  snprintf(first, sizeof first, "%.*s%s", cut > 100 ? 100 : cut, desc, cut > 100 ? "…" : "");
  fputs("  ", stdout);
  cell_out(name, cols->name);
  putchar(' ');
  cell_out(source, cols->source);
  printf(" %-11s ", approve ? "asks first" : "runs");
  cell_out(first, 0);
  putchar('\n');
}

/* The string field key of j, "" when missing (the library always fills them). */
static const char *str_of(const cJSON *j, const char *key) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, key));
  return s ? s : "";
}

/* One agent of agora_world_tools' document (a), as rows, or into agents with --json, or only measured. */
static void agent_out(const cJSON *a, cJSON *agents, tool_cols *cols) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(a, "tools"), *t;
  cJSON *tools = NULL;
  int measuring = cols && cols->measuring;
  if (agents) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", str_of(a, "name"));
    tools = cJSON_AddArrayToObject(o, "tools");
    cJSON_AddItemToArray(agents, o);
  } else if (!measuring) {
    cell_out(str_of(a, "name"), 0);
    putchar('\n');
  }
  cJSON_ArrayForEach(t, list)
    tool_out(tools, cols, str_of(t, "name"), str_of(t, "source"),
             cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "approve")), str_of(t, "description"));
  if (!agents && !measuring && !cJSON_GetArraySize(list)) printf("  (no tools)\n");
}

/* The column widths over every agent's tools (at least the old fixed 28 and 20). */
static tool_cols tools_measure(const cJSON *agents) {
  tool_cols cols = {.name = 28, .source = 20, .measuring = 1};
  const cJSON *a;
  cJSON_ArrayForEach(a, agents) agent_out(a, NULL, &cols);
  cols.measuring = 0;
  return cols;
}

/* Prints what the servers gave (doc: agora_world_tools' document); returns how many failed (each named
 * on stderr). */
static size_t print_tools(const cJSON *doc, int json) {
  const cJSON *in_agents = cJSON_GetObjectItemCaseSensitive(doc, "agents");
  const cJSON *in_servers = cJSON_GetObjectItemCaseSensitive(doc, "servers"), *a, *s;
  cJSON *out = json ? cJSON_CreateObject() : NULL;
  cJSON *agents = out ? cJSON_AddArrayToObject(out, "agents") : NULL;
  cJSON *servers = out ? cJSON_AddArrayToObject(out, "servers") : NULL;
  tool_cols cols = json ? (tool_cols){0} : tools_measure(in_agents);
  cJSON_ArrayForEach(a, in_agents) agent_out(a, agents, json ? NULL : &cols);
  size_t failed = 0;
  cJSON_ArrayForEach(s, in_servers) {
    int ready = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "ready"));
    if (servers) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "name", str_of(s, "name"));
      cJSON_AddBoolToObject(o, "ready", ready);
      if (!ready) cJSON_AddStringToObject(o, "error", str_of(s, "error"));
      cJSON_AddItemToArray(servers, o);
    }
    if (!ready) failed++, fprintf(stderr, "agora: MCP server %s failed: %s\n", str_of(s, "name"), str_of(s, "error"));
  }
  if (out) {
    char *text = cJSON_PrintUnformatted(out);
    if (text) puts(text);
    cJSON_free(text);
    cJSON_Delete(out);
  }
  return failed;
}

/* The world opened on libagora to look at its tools (AGORA_TOOLS): its MCP servers started, no
 * database, no agent run; the library's document of them printed. */
static int tools_show(const char *path, const char *db, int json) {
  agora_options o = {.flags = AGORA_NOTES | AGORA_OPTIONS_3 | AGORA_OPTIONS_5 | AGORA_TOOLS, .program = "tools"};
  agora_world *w = NULL;
  char *text = NULL;
  cJSON *doc = NULL;
  int status;
  int rc = agora_world_open(path, db, &o, &w);
  if (!rc) rc = agora_world_tools(w, &text);
  if (rc) {
    status = cli_error(rc, "%s", agora_errmsg());
    goto done;
  }
  if (!(doc = cJSON_Parse(text))) {
    status = cli_error(AG_ERR_NOMEM, "tools: %s", agora_strerror(AG_ERR_NOMEM));
    goto done;
  }
  status = print_tools(doc, json) ? 1 : 0;
done:
  cJSON_Delete(doc);
  agora_free(text);
  agora_world_close(w);
  return status;
}

int cli_tools(int argc, char **argv) {
  const char *path = NULL, *db = NULL;
  int json = 0;
  for (int i = 0; i < argc; i++) {
    if (cli_is_help(argv[i])) return fputs(tools_usage, stdout), 0;
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--db") && i + 1 < argc) db = argv[++i];
    else if (argv[i][0] == '-') return cli_error(AG_ERR_INVALID, "tools: unknown option '%s' (see agora tools --help)", argv[i]);
    else if (!path) path = argv[i];
    else return cli_error(AG_ERR_INVALID, "tools: unexpected argument '%s'", argv[i]);
  }
  if (!path) return cli_error(AG_ERR_INVALID, "tools: missing WORLD.json (see agora tools --help)");
  return tools_show(path, db, json);
}
