/* agora tools WORLD.json [--json] [--db DIR]: starts the world's MCP servers and prints each agent's
 * tools (name, source, approval, description), so a configuration can be checked before a long run. */
#include "cli/cli.h"
#include "runtime/runtime.h"

#include "chat/archive.h"
#include "common/term_text.h"
#include "world/world_mcp.h"

#include <cjson/cJSON.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

static void agent_out(agent *a, cJSON *agents, tool_cols *cols) {
  const agent_settings *s = agent_settings_of(a);
  cJSON *tools = NULL;
  int measuring = cols && cols->measuring;
  if (agents) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", s->name);
    tools = cJSON_AddArrayToObject(o, "tools");
    cJSON_AddItemToArray(agents, o);
  } else if (!measuring) {
    cell_out(s->name, 0);
    putchar('\n');
  }
  for (int t = 0; t < TOOL_COUNT; t++)
    if (s->tools & TOOL_BIT(t))
      tool_out(tools, cols, tool_name((tool_id)t), "built-in", (s->approve & TOOL_BIT(t)) != 0,
               tool_definition((tool_id)t)->description);
  const agent_mcp_set *set = agent_mcp_tools(a);
  for (size_t i = 0; i < set->n; i++) {
    char source[200];
    snprintf(source, sizeof source, "%s.%s", set->tools[i].server, set->tools[i].tool);
    tool_out(tools, cols, set->tools[i].name, source, set->tools[i].approve, set->tools[i].description);
  }
  if (!agents && !measuring && !s->tools && !set->n) printf("  (no tools)\n");
}

/* The column widths over every agent's tools (at least the old fixed 28 and 20). */
static tool_cols tools_measure(world *w) {
  tool_cols cols = {.name = 28, .source = 20, .measuring = 1};
  for (size_t i = 0; i < world_agent_count(w); i++) agent_out(world_agent_at(w, i), NULL, &cols);
  cols.measuring = 0;
  return cols;
}

/* Prints what the servers gave; returns how many failed (each named on stderr). */
static size_t print_tools(world *w, int json) {
  cJSON *doc = json ? cJSON_CreateObject() : NULL;
  cJSON *agents = doc ? cJSON_AddArrayToObject(doc, "agents") : NULL;
  cJSON *servers = doc ? cJSON_AddArrayToObject(doc, "servers") : NULL;
  tool_cols cols = json ? (tool_cols){0} : tools_measure(w);
  for (size_t i = 0; i < world_agent_count(w); i++) agent_out(world_agent_at(w, i), agents, json ? NULL : &cols);
  size_t failed = 0;
  for (size_t i = 0; i < world_mcp_count(w); i++) {
    const char *name, *why;
    int ready;
    mcp_client *c;
    world_mcp_server_at(w, i, &name, &ready, &why, &c);
    if (servers) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "name", name);
      cJSON_AddBoolToObject(o, "ready", ready);
      if (!ready) cJSON_AddStringToObject(o, "error", why);
      cJSON_AddItemToArray(servers, o);
    }
    if (!ready) failed++, fprintf(stderr, "agora: MCP server %s failed: %s\n", name, why);
  }
  if (doc) {
    char *text = cJSON_PrintUnformatted(doc);
    if (text) puts(text);
    cJSON_free(text);
    cJSON_Delete(doc);
  }
  return failed;
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
  ag_errmsg em = {""};
  runtime *rt = NULL;
  int rc = rt_open(&(rt_opts){.cmd = "tools", .world = path, .db = db, .inert = 1, .mcp = 1, .mcp_failures_ok = 1},
                   &rt, &em);
  int status = rc ? cli_error(rc, "%s", em.text) : print_tools(rt_world(rt), json) ? 1 : 0;
  rt_close(rt);
  return status;
}
