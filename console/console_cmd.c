/* The console's commands (/help, /chats, /load, ...) and the handling of each line typed or read: an
 * answer, a command, or a message from the human. Each command is a call into libagora (include/agora.h). */
#include "console/console_int.h"
#include "common/outfile.h"
#include "common/term_text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Says which chat is current now (a chat-resumed or chat-loaded event, unless event is 0: the world's
 * own was printed) and, on a terminal, shows its last messages so the person knows where the
 * conversation stands. */
void con_chat_announce(console *c, const char *kind, int event) {
  cJSON *row = con_current_chat(c);
  if (!row) return;
  double n = con_num(row, "message_count", 0);
  cJSON *e = event ? con_event_new(c, kind) : NULL;
  if (e) {
    cJSON_AddStringToObject(e, "id", con_str(row, "id"));
    cJSON_AddStringToObject(e, "title", con_str(row, "title") ? con_str(row, "title") : "");
    cJSON_AddNumberToObject(e, "messages", n);
  }
  con_event(c, e);
  cJSON_Delete(e);
  cJSON_Delete(row);
  if (!c->tty || n < 1) return;
  char *s = NULL;
  ag_errmsg em = {""};
  int rc = agora_messages(c->w, NULL, 0, RECENT, &s);
  cJSON *list = con_json_take(rc, s, &em);
  con_entries(c, list, 0);
  cJSON_Delete(list);
}

/* ---- commands ---- */

char *con_trim(char *s) {
  s += strspn(s, " \t");
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) s[--n] = '\0';
  return s;
}

char *con_next_word(char **p) {
  char *s = *p + strspn(*p, " \t");
  char *e = s + strcspn(s, " \t");
  *p = *e ? e + 1 : e;
  *e = '\0';
  return s;
}

/* One argument: the whole of args, which must be one word. */
static int one_arg(char *args, const char *usage, char **out, ag_errmsg *em) {
  if (!args[0] || strpbrk(args, " \t")) return ag_fail(em, AG_ERR_INVALID, "usage: %s", usage);
  *out = args;
  return AG_OK;
}

typedef struct command {
  const char *name;
  const char *args;
  const char *help;
  int (*run)(console *c, char *args, ag_errmsg *em);
} command;

static int cmd_help(console *c, char *args, ag_errmsg *em);

typedef struct chats_ctx {
  console *c;
  size_t n;
  int ids_only; /* collect the ids as completion candidates instead of printing */
} chats_ctx;

static void chats_row(chats_ctx *cc, const cJSON *ch) {
  const char *id = con_str(ch, "id"), *updated = con_str(ch, "updated_at");
  cc->n++;
  if (cc->ids_only) {
    con_cands_add(cc->c, "", id ? id : "");
    return;
  }
  char *title = ag_term_text_dup(con_str(ch, "title"), AG_TERM_ONE_LINE); /* shown, not obeyed */
  con_print(cc->c, "%c %s  %5llu messages  %s  %s\n", cJSON_IsTrue(cJSON_GetObjectItem(ch, "current")) ? '*' : ' ',
            id ? id : "?", (unsigned long long)con_num(ch, "message_count", 0), updated ? updated : "?",
            title ? title : "?");
  free(title);
}

static int chats_each(chats_ctx *cc, ag_errmsg *em) {
  char *s = NULL;
  int rc = agora_chats(cc->c->w, &s);
  cJSON *list = con_json_take(rc, s, em), *ch;
  if (!list) return rc ? rc : AG_ERR_NOMEM;
  cJSON_ArrayForEach(ch, list) chats_row(cc, ch);
  cJSON_Delete(list);
  return AG_OK;
}

static int cmd_chats(console *c, char *args, ag_errmsg *em) {
  (void)args;
  chats_ctx cc = {.c = c};
  int rc = chats_each(&cc, em);
  if (!rc && !cc.n) con_print(c, "no chats yet (/new starts one)\n");
  return rc;
}

void con_chat_ids(console *c) {
  chats_ctx cc = {.c = c, .ids_only = 1};
  ag_errmsg em = {""};
  chats_each(&cc, &em);
}

static int cmd_new(console *c, char *args, ag_errmsg *em) {
  if (args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /new");
  int rc = agora_chat_new(c->w);
  return rc ? con_lib_fail(rc, em) : AG_OK;
}

/* A chat the library does not find is named as the console always named it: in this world. */
static int chat_fail(console *c, int rc, const char *arg, ag_errmsg *em) {
  if (rc == AG_ERR_NOT_FOUND) return ag_fail(em, rc, "no chat '%s' in world '%s'", arg, agora_world_id(c->w));
  return con_lib_fail(rc, em);
}

static int cmd_load(console *c, char *args, ag_errmsg *em) {
  char *arg = NULL;
  int rc = one_arg(args, "/load ID", &arg, em);
  if (rc) return rc;
  const char *cur = agora_chat_current(c->w);
  if (c->view && !(cur && !strncmp(cur, arg, strlen(arg)))) /* refused whether or not the chat exists */
    return ag_fail(em, AG_ERR_STATE, "on a world joined over NATS only the stream's chat can be current (a new "
                   "chat starts with /new)");
  if ((rc = agora_chat_load(c->w, arg))) return chat_fail(c, rc, arg, em);
  con_chat_announce(c, "chat-loaded", 1);
  return AG_OK;
}

static int cmd_delete(console *c, char *args, ag_errmsg *em) {
  char *arg = NULL;
  int rc = one_arg(args, "/delete ID", &arg, em);
  if (!rc && (rc = agora_chat_delete(c->w, arg))) chat_fail(c, rc, arg, em);
  return rc;
}

/* "/export FILE" writes the current chat; "/export ID FILE" another (an id or a unique prefix), indented
 * for a person to read. */
static int cmd_export(console *c, char *args, ag_errmsg *em) {
  char *first = con_next_word(&args);
  char *file = con_trim(args), *s = NULL, *text = NULL;
  if (!first[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /export [ID] FILE (the current chat without ID)");
  if (!file[0] && !agora_chat_current(c->w)) return ag_fail(em, AG_ERR_STATE, "no current chat: /export ID FILE");
  if (!file[0]) file = first;
  int rc = agora_chat_export(c->w, file == first ? NULL : first, &s);
  if (rc) return con_lib_fail(rc, em);
  cJSON *snap = con_json_take(rc, s, em);
  if (!snap) return AG_ERR_NOMEM;
  const char *id = con_str(cJSON_GetObjectItem(snap, "chat"), "id");
  if (!(text = cJSON_Print(snap))) rc = AG_ERR_NOMEM;
  if (!rc) rc = ag_file_write_out(file, text, em);
  if (!rc) con_print(c, "exported chat %s to %s\n", id ? id : "?", file);
  free(text);
  cJSON_Delete(snap);
  return rc;
}

/* "/show [N]": the current chat's last N messages (RECENT without N), numbered for /edit and /branch. */
static int cmd_show(console *c, char *args, ag_errmsg *em) {
  char *end = NULL, *s = NULL;
  unsigned long long n = args[0] ? strtoull(args, &end, 10) : RECENT;
  if (args[0] && (args[0] < '0' || args[0] > '9' || *end || !n))
    return ag_fail(em, AG_ERR_INVALID, "usage: /show [N] (N: how many of the last messages, 1 or more)");
  if (!agora_chat_current(c->w)) return ag_fail(em, AG_ERR_STATE, "no current chat");
  int rc = agora_messages(c->w, NULL, 0, (size_t)n, &s);
  cJSON *list = con_json_take(rc, s, em);
  if (!list) return rc ? rc : AG_ERR_NOMEM;
  if (!cJSON_GetArraySize(list)) con_print(c, "no messages yet\n");
  else con_entries(c, list, 1);
  cJSON_Delete(list);
  return AG_OK;
}

static int cmd_title(console *c, char *args, ag_errmsg *em) {
  if (!args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /title TEXT");
  int rc = agora_chat_title(c->w, args);
  return rc ? con_lib_fail(rc, em) : AG_OK;
}

static int cmd_turnlimit(console *c, char *args, ag_errmsg *em) {
  if (!args[0]) {
    con_print(c, "turn limit: %d\n", con_turn_limit(c));
    return AG_OK;
  }
  char *end, change[64];
  errno = 0;
  long n = strtol(args, &end, 10);
  if (errno || *end || end == args || n < 1 || n > 1000000)
    return ag_fail(em, AG_ERR_INVALID, "the limit must be a whole number from 1 to 1000000, not '%s'", args);
  snprintf(change, sizeof change, "{\"turn_limit\": %ld}", n);
  int rc = agora_settings_change(c->w, change);
  if (rc) return con_lib_fail(rc, em);
  con_print(c, "turn limit: %d\n", con_turn_limit(c));
  return AG_OK;
}

static int cmd_quit(console *c, char *args, ag_errmsg *em) {
  (void)args;
  (void)em;
  c->quit = 1;
  return AG_OK;
}

static const command commands[] = {
  {"/help", "", "this list", cmd_help},
  {"/agents", "", "the agents, their providers and turn counts", con_cmd_agents},
  {"/add", "NAME [provider]", "add an agent (provider settings from a like agent)", con_cmd_add},
  {"/add", "NAME --like OTHER", "add an agent with OTHER's settings (prompt, model, ...)", NULL},
  {"/agent", "NAME", "an agent's provider, model, base_url, prompt and turns", con_cmd_agent},
  {"/set", "NAME model|prompt|temperature VALUE", "change an agent's setting", con_cmd_set},
  {"/clear", "NAME", "forget an agent's memory of this chat", con_cmd_clear},
  {"/remove", "NAME", "remove an agent (not the world's main_agent)", con_cmd_remove},
  {"/chats", "", "this world's chats (* marks the current one)", cmd_chats},
  {"/new", "", "start a new chat (an empty one is reused)", cmd_new},
  {"/load", "ID", "continue a saved chat (ID or a unique prefix of it, as in /chats)", cmd_load},
  {"/delete", "ID", "delete a chat (the latest other one becomes current)", cmd_delete},
  {"/export", "[ID] FILE", "write a chat's snapshot JSON to FILE (the current chat without ID)", cmd_export},
  {"/show", "[N]", "the last N messages of this chat (10 without N) with their numbers", cmd_show},
  {"/title", "TEXT", "rename the current chat", cmd_title},
  {"/turnlimit", "N", "LLM calls an agent may make between human turns", cmd_turnlimit},
  {"/budget", "[tokens N] [usd X]", "the chat's LLM spend and the world's budget; raise it (0: no limit)", con_cmd_budget},
  {"/clock", "", "the world's clock: mode, now, next due item, until", con_cmd_clock},
  {"/advance", "DURATION", "move a virtual clock on (3h, 1d), delivering what falls due", con_cmd_advance},
  {"/branch", "SEQ", "continue in a new chat holding this one's messages 1..SEQ", con_cmd_branch},
  {"/edit", "[SEQ] TEXT", "replace human message SEQ (default: the last) and send it again", con_cmd_edit},
  {"/retry", "", "cut the chat before the last human message and send it again", con_cmd_retry},
  {"/quit", "", "save and leave (also Ctrl-D)", cmd_quit},
};
static const size_t n_commands = sizeof commands / sizeof *commands;

/* A second line of help for the same command (run NULL) is no second completion. */
const char *con_command_name(size_t i) {
  for (size_t k = 0; k < n_commands; k++)
    if (commands[k].run && i-- == 0) return commands[k].name;
  return NULL;
}

static int cmd_help(console *c, char *args, ag_errmsg *em) {
  (void)args;
  (void)em;
  con_print(c, "Type a message to send it as the human (start it with @name to address an agent).\n");
  for (size_t i = 0; i < n_commands; i++) {
    char head[64];
    snprintf(head, sizeof head, "%s %s", commands[i].name, commands[i].args);
    if (strlen(head) > 22) con_print(c, "  %s\n  %-22s %s\n", head, "", commands[i].help);
    else con_print(c, "  %-22s %s\n", head, commands[i].help);
  }
  con_print(c, "Start a line with // to send a message that begins with '/'. Tab completes commands, chat ids\n"
               "and @names. Ctrl-C cancels the replies in flight; Ctrl-D quits.\n");
  return AG_OK;
}

/* --nats: changes to the agents or the clock would hold in this process only, so they are refused before
 * their arguments are read (the library refuses the chat operations the other processes would not
 * follow, and says why). */
static const char *nats_refuses(const console *c, const char *cmd, const char *args) {
  static const char *const local[] = {"/add", "/remove", "/set", "/clear", "/turnlimit", "/advance", "/budget"};
  if (!c->view) return NULL;
  for (size_t i = 0; i < sizeof local / sizeof *local; i++)
    if (!strcmp(cmd, local[i]) && ((strcmp(cmd, "/turnlimit") && strcmp(cmd, "/budget")) || args[0]))
      return "not available on a world joined over NATS: change the world file and restart its hosts";
  return NULL;
}

/* Whether cmd changes the world's stored settings: the agents or the turn limit. */
static int changes_settings(const char *cmd, const char *args) {
  static const char *const changes[] = {"/add", "/remove", "/set", "/turnlimit"};
  for (size_t i = 0; i < sizeof changes / sizeof *changes; i++)
    if (!strcmp(cmd, changes[i])) return strcmp(cmd, "/turnlimit") || args[0];
  return 0;
}

/* A change is stored with the world, but a world opened from its file takes the file's settings again
 * the next time it is opened from it (docs/decisions.md "Console changes and the world file", issue 23
 * item 3): said once, at the first change, with the way to keep it. */
static void note_file_wins(console *c, const char *cmd) {
  if (!c->file || c->file_noted) return;
  c->file_noted = 1;
  const char *id = agora_world_id(c->w);
  char text[1024];
  snprintf(text, sizeof text, "%s is stored with world '%s' (agora console %s and agora say %s use it), but opening "
           "%s again replaces the world's settings with the file's: put the change in the file to keep it there",
           cmd, id, id, id, c->file);
  con_note(c, text);
}

static void run_command(console *c, char *line) {
  char *args = line;
  char *name = con_next_word(&args);
  const command *cmd = NULL;
  for (size_t i = 0; i < n_commands && !cmd; i++)
    if (!strcmp(commands[i].name, name) && commands[i].run) cmd = &commands[i];
  if (!cmd) {
    con_error(c, "unknown command '%s' (try /help)", name);
    return;
  }
  ag_errmsg em = {""};
  unsigned long before = c->printed;
  args = con_trim(args);
  const char *refused = nats_refuses(c, cmd->name, args);
  if (refused) {
    con_error(c, "%s: %s", cmd->name, refused);
    return;
  }
  int change = changes_settings(cmd->name, args);
  int rc = cmd->run(c, args, &em);
  if (rc) con_error(c, "%s: %s", cmd->name, em.text[0] ? em.text : ag_strerror(rc));
  else if (c->printed != before) con_print(c, "\n"); /* a paragraph, like the transcript's */
  if (!rc && change) note_file_wins(c, cmd->name);
  if (c->tty) con_title_refresh(c);
  con_live_prune(c);
}

/* A line typed or read: a command, or a message from the human. "//text" sends "/text". */
void con_handle_line(console *c, char *line) {
  if (c->n_asks) {
    con_ask_answer(c, line);
    con_tty_resume(c);
    return;
  }
  char *s = con_trim(line);
  int is_cmd = s[0] == '/' && s[1] != '/';
  con_screen_hide(c);
  if (c->tty && is_cmd) printf("%s%s\n", c->prompt, s); /* the command stays in view above its output */
  con_tty_resume(c);
  if (!s[0]) return;
  if (is_cmd) {
    run_command(c, s);
    return;
  }
  int rc = agora_publish(c->w, "human", s[0] == '/' ? s + 1 : s);
  if (rc) con_error(c, "cannot send the message: %s", agora_strerror(rc));
}
