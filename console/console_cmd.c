/* The console's commands (/help, /agents, /add, /chats, ...) and the handling of each line typed or
 * read: an answer, a command, or a message from the human. */
#include "console/console_int.h"
#include "common/term_text.h"
#include "common/outfile.h"
#include "common/clock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "chat/id_prefix.h"
#include "chat/snapshot.h"
#include "chat/transcript.h"
#include "common/buf.h"

static int recent_msg(const chat_entry *e, void *arg) {
  output_message(((console *)arg)->out, e->msg);
  return 0;
}

/* Says which chat is current now (EV_CHAT_RESUMED, EV_CHAT_LOADED) and, on a terminal, shows its last
 * messages so the person knows where the conversation stands. */
void con_chat_announce(console *c, ev_kind kind) {
  const char *id = chat_session_current(c->cw.cs);
  if (!id) return;
  chat_info ci;
  ag_errmsg em = {""};
  if (chat_info_get(c->st, id, &ci, &em)) return;
  con_event(c, &(world_event){kind, .u.chat_open = {id, ci.title, ci.message_count}});
  if (!c->tty || !ci.message_count) return;
  uint64_t from = ci.message_count > RECENT ? ci.message_count - RECENT + 1 : 1;
  con_screen_hide(c);
  chat_messages_each(c->st, id, from, recent_msg, c, &em);
  con_screen_show(c);
}

void con_stream_chat(void *ud, const char *chat) {
  console *c = ud;
  output_set_chat(c->out, chat);
  con_chat_announce(c, EV_CHAT_LOADED);
}

/* Stores the world's settings after /add, /remove or /turnlimit, so that opening the world again
 * without its file (and chats export) sees the agents it has now. */
static int world_record_save(console *c, ag_errmsg *em) { return chat_session_save_world(c->cw.cs, em); }

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

static int cmd_agents(console *c, char *args, ag_errmsg *em) {
  (void)args;
  (void)em;
  size_t n = world_agent_count(c->cw.w);
  if (!n) con_print(c, "no agents (add one with /add NAME)\n");
  for (size_t i = 0; i < n; i++) {
    agent *a = world_agent_at(c->cw.w, i);
    const llm_config *l = &agent_settings_of(a)->llm;
    char name[CHAT_TITLE_MAX + 8] = "";
    if (strcmp(agent_name(a), agent_id(a))) snprintf(name, sizeof name, " (%s)", agent_name(a));
    llm_usage u = agent_usage(a);
    char tokens[64] = "";
    if (u.input_tokens || u.output_tokens)
      snprintf(tokens, sizeof tokens, "  tokens %ld in, %ld out", u.input_tokens, u.output_tokens);
    con_print(c, "  %s%s  %s%s%s  turns %d/%d%s%s\n", agent_id(a), name, llm_provider_name(l->provider),
              l->model ? "/" : "", l->model ? l->model : "", agent_turn_state(a).count,
              world_turn_limit(c->cw.w), tokens, agent_is_thinking(a) ? "  thinking" : "");
  }
  return AG_OK;
}

/* The settings a new agent starts from: the first agent on the same provider (or the first agent when
 * no provider is named) lends its model, endpoint and key variable, never its replies or prompt. */
static int add_settings(console *c, const char *name, const char *provider, agent_settings *s, ag_errmsg *em) {
  llm_provider_kind kind = LLM_SCRIPT;
  agent_settings_init(s);
  if (provider && llm_provider_parse(provider, &kind))
    return ag_fail(em, AG_ERR_INVALID, "unknown provider '%s' (script, openai, anthropic, gemini or ollama; "
                   "a name with spaces needs its provider after it)", provider);
  const agent_settings *tpl = NULL;
  for (size_t i = 0; i < world_agent_count(c->cw.w) && !tpl; i++) {
    const agent_settings *o = agent_settings_of(world_agent_at(c->cw.w, i));
    if (!provider || o->llm.provider == kind) tpl = o;
  }
  if (tpl) {
    llm_config from = tpl->llm;
    from.script = (llm_script_options){0};
    if (llm_config_copy(&s->llm, &from)) return AG_ERR_NOMEM;
  }
  s->llm.provider = tpl ? tpl->llm.provider : kind;
  s->name = strdup(name);
  size_t n = strlen(name) + 16;
  s->system_prompt = malloc(n);
  if (!s->name || !s->system_prompt) return AG_ERR_NOMEM;
  snprintf(s->system_prompt, n, "You are %s.", name);
  return AG_OK;
}

static int cmd_add(console *c, char *args, ag_errmsg *em) {
  char *like = strstr(args, " --like ");
  if (like) { /* "/add dave --like alice" */
    *like = '\0';
    return con_add_like(c, con_trim(args), con_trim(like + 8), em);
  }
  /* "/add carol", "/add carol openai", "/add Madame Pedagogue openai": after the first word, the last
   * one is the provider (checked, so that a typo is not taken for part of a name). */
  char *provider = strrchr(args, ' ');
  if (provider) *provider++ = '\0';
  char *name = con_trim(args);
  if (!name[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /add NAME [provider]");
  agent_settings s;
  int rc = add_settings(c, name, provider, &s, em);
  if (!rc) rc = world_add_agent(c->cw.w, &s, em);
  if (!rc) rc = world_record_save(c, em);
  agent_settings_free(&s);
  return rc;
}

static int cmd_remove(console *c, char *args, ag_errmsg *em) {
  char *name = args[0] == '@' ? args + 1 : args;
  if (!name[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /remove NAME");
  if (world_remove_agent(c->cw.w, name))
    return ag_fail(em, AG_ERR_NOT_FOUND, "no agent '%s' in this world (see /agents)", name);
  return world_record_save(c, em);
}

typedef struct chats_ctx {
  console *c;
  const char *current;
  size_t n;
  int ids_only; /* collect the ids as completion candidates instead of printing */
} chats_ctx;

static int chats_row(const chat_info *ch, void *arg) {
  chats_ctx *cc = arg;
  cc->n++;
  if (cc->ids_only) {
    con_cands_add(cc->c, "", ch->id);
    return 0;
  }
  char updated[40];
  ag_time_format(ch->updated_at_ms, updated, sizeof updated);
  char *title = ag_term_text_dup(ch->title, AG_TERM_ONE_LINE); /* shown, not obeyed */
  con_print(cc->c, "%c %s  %5llu messages  %s  %s\n", cc->current && !strcmp(cc->current, ch->id) ? '*' : ' ',
            ch->id, (unsigned long long)ch->message_count, updated, title ? title : "?");
  free(title);
  return 0;
}

static int cmd_chats(console *c, char *args, ag_errmsg *em) {
  (void)args;
  chats_ctx cc = {c, chat_session_current(c->cw.cs), 0, 0};
  int rc = chat_list(c->st, world_id(c->cw.w), chats_row, &cc, em);
  if (!rc && !cc.n) con_print(c, "no chats yet (/new starts one)\n");
  return rc;
}

void con_chat_ids(console *c) {
  chats_ctx cc = {c, NULL, 0, 1};
  ag_errmsg em = {""};
  chat_list(c->st, world_id(c->cw.w), chats_row, &cc, &em);
}

static int cmd_new(console *c, char *args, ag_errmsg *em) {
  if (args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /new");
  return chat_session_new(c->cw.cs, em);
}

/* A chat named by its id or a unique prefix, into id. No match: arg as it is, so that the session's
 * own lookup says why ("no chat 'x' in world 'w'"). */
static int chat_arg(console *c, const char *arg, char id[CHAT_ID_MAX], ag_errmsg *em) {
  int rc = chat_id_resolve(c->st, arg, id, em);
  if (rc == AG_ERR_NOT_FOUND) snprintf(id, CHAT_ID_MAX, "%s", arg);
  return rc == AG_ERR_NOT_FOUND ? AG_OK : rc;
}

static int cmd_load(console *c, char *args, ag_errmsg *em) {
  char *arg = NULL, id[CHAT_ID_MAX];
  int rc = one_arg(args, "/load ID", &arg, em);
  if (!rc) rc = chat_arg(c, arg, id, em);
  if (!rc) rc = chat_session_load(c->cw.cs, id, em);
  if (!rc) con_chat_announce(c, EV_CHAT_LOADED);
  return rc;
}

static int cmd_delete(console *c, char *args, ag_errmsg *em) {
  char *arg = NULL, id[CHAT_ID_MAX];
  int rc = one_arg(args, "/delete ID", &arg, em);
  if (!rc) rc = chat_arg(c, arg, id, em);
  if (!rc) rc = chat_session_delete(c->cw.cs, id, em);
  if (!rc) snprintf(c->deleted, sizeof c->deleted, "%s", id); /* for the NATS chat record */
  return rc;
}


/* "/export FILE" writes the current chat; "/export ID FILE" another (an id or a unique prefix). */
static int cmd_export(console *c, char *args, ag_errmsg *em) {
  char *first = con_next_word(&args);
  char *file = con_trim(args), id[CHAT_ID_MAX];
  const char *current = chat_session_current(c->cw.cs);
  if (!first[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /export [ID] FILE (the current chat without ID)");
  if (!file[0] && !current) return ag_fail(em, AG_ERR_STATE, "no current chat: /export ID FILE");
  if (!file[0]) file = first;
  cJSON *snap = NULL;
  char *text = NULL;
  int rc = AG_OK;
  if (file == first) snprintf(id, sizeof id, "%s", current);
  else rc = chat_id_resolve(c->st, first, id, em);
  if (!rc) rc = chat_snapshot_export(c->st, id, &snap, em);
  if (rc) goto done;
  if (!(text = cJSON_Print(snap))) {
    rc = AG_ERR_NOMEM;
    goto done;
  }
  if ((rc = ag_file_write_out(file, text, em))) goto done;
  con_print(c, "exported chat %s to %s\n", id, file);
done:
  free(text);
  cJSON_Delete(snap);
  return rc;
}

static int show_msg(const chat_entry *e, void *arg) {
  output_message(arg, e->msg);
  return 0;
}

/* "/show [N]": the current chat's last N messages (RECENT without N), numbered for /edit and /branch. */
static int cmd_show(console *c, char *args, ag_errmsg *em) {
  char *end = NULL;
  unsigned long long n = args[0] ? strtoull(args, &end, 10) : RECENT;
  if (args[0] && (args[0] < '0' || args[0] > '9' || *end || !n))
    return ag_fail(em, AG_ERR_INVALID, "usage: /show [N] (N: how many of the last messages, 1 or more)");
  const char *id = chat_session_current(c->cw.cs);
  chat_info ci;
  int rc = id ? chat_info_get(c->st, id, &ci, em) : ag_fail(em, AG_ERR_STATE, "no current chat");
  if (rc) return rc;
  if (!ci.message_count) {
    con_print(c, "no messages yet\n");
    return AG_OK;
  }
  output *o = NULL;
  if ((rc = output_new(stdout, world_id(c->cw.w), &(output_opts){.seqs = 1}, &o))) return rc;
  output_set_chat(o, id);
  con_screen_hide(c);
  rc = chat_messages_each(c->st, id, ci.message_count > n ? ci.message_count - n + 1 : 1, show_msg, o, em);
  con_screen_show(c);
  output_free(o);
  return rc;
}

static int cmd_title(console *c, char *args, ag_errmsg *em) {
  if (!args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /title TEXT");
  return chat_session_set_title(c->cw.cs, args, em);
}

static int cmd_turnlimit(console *c, char *args, ag_errmsg *em) {
  if (!args[0]) {
    con_print(c, "turn limit: %d\n", world_turn_limit(c->cw.w));
    return AG_OK;
  }
  char *end;
  errno = 0;
  long n = strtol(args, &end, 10);
  if (errno || *end || end == args || n < 1 || n > 1000000)
    return ag_fail(em, AG_ERR_INVALID, "the limit must be a whole number from 1 to 1000000, not '%s'", args);
  world_set_turn_limit(c->cw.w, (int)n);
  con_print(c, "turn limit: %d\n", world_turn_limit(c->cw.w));
  return world_record_save(c, em);
}

static int cmd_quit(console *c, char *args, ag_errmsg *em) {
  (void)args;
  (void)em;
  c->quit = 1;
  return AG_OK;
}

static const command commands[] = {
  {"/help", "", "this list", cmd_help},
  {"/agents", "", "the agents, their providers and turn counts", cmd_agents},
  {"/add", "NAME [provider]", "add an agent (provider settings from a like agent)", cmd_add},
  {"/add", "NAME --like OTHER", "add an agent with OTHER's settings (prompt, model, ...)", NULL},
  {"/agent", "NAME", "an agent's provider, model, base_url, prompt and turns", con_cmd_agent},
  {"/set", "NAME model|prompt|temperature VALUE", "change an agent's setting", con_cmd_set},
  {"/clear", "NAME", "forget an agent's memory of this chat", con_cmd_clear},
  {"/remove", "NAME", "remove an agent", cmd_remove},
  {"/chats", "", "this world's chats (* marks the current one)", cmd_chats},
  {"/new", "", "start a new chat (an empty one is reused)", cmd_new},
  {"/load", "ID", "continue a saved chat (ID or a unique prefix of it, as in /chats)", cmd_load},
  {"/delete", "ID", "delete a chat (the latest other one becomes current)", cmd_delete},
  {"/export", "[ID] FILE", "write a chat's snapshot JSON to FILE (the current chat without ID)", cmd_export},
  {"/show", "[N]", "the last N messages of this chat (10 without N) with their numbers", cmd_show},
  {"/title", "TEXT", "rename the current chat", cmd_title},
  {"/turnlimit", "N", "LLM calls an agent may make between human turns", cmd_turnlimit},
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

/* --nats: why cmd cannot run on a world joined over NATS (NULL: it can). Changes to the agents or the
 * clock would hold in this process only; chat operations follow rt_nats_refuses. */
static const char *nats_refuses(const console *c, const char *cmd, const char *args) {
  static const char *const local[] = {"/add", "/remove", "/set", "/clear", "/turnlimit", "/advance"};
  static const char *const ops[][2] = {{"/load", "load"}, {"/delete", "delete"}, {"/branch", "branch"},
                                       {"/edit", "truncate"}, {"/retry", "truncate"}};
  if (!c->nats) return NULL;
  for (size_t i = 0; i < sizeof local / sizeof *local; i++)
    if (!strcmp(cmd, local[i]) && (strcmp(cmd, "/turnlimit") || args[0]))
      return "not available on a world joined over NATS: change the world file and restart its hosts";
  char id[CHAT_ID_MAX];
  size_t n = strcspn(args, " \t");
  snprintf(id, sizeof id, "%.*s", (int)(n < sizeof id ? n : sizeof id - 1), args);
  int by_id = !strcmp(cmd, "/load") || !strcmp(cmd, "/delete");
  if (by_id && !id[0]) return NULL; /* the command's own usage error */
  if (by_id) chat_id_resolve(c->st, id, id, NULL); /* a prefix: its chat's id (else the command says why) */
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (!strcmp(cmd, ops[i][0])) return rt_nats_refuses(c->nats, ops[i][1], by_id ? id : NULL);
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
  const char *id = world_id(c->cw.w);
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
  c->deleted[0] = '\0';
  int change = changes_settings(cmd->name, args);
  int rc = cmd->run(c, args, &em);
  if (!rc) rc = rt_nats_join_sync(c->nats, &em); /* a new chat (/new, a delete's fallback) is published into */
  /* what a person did to a chat is every process's (the world's chat records) */
  if (!rc && !strcmp(cmd->name, "/title")) rt_nats_join_record(c->nats, chat_session_current(c->cw.cs), chat_session_title(c->cw.cs));
  if (!rc && !strcmp(cmd->name, "/delete")) rt_nats_join_record(c->nats, c->deleted, NULL);
  if (rc) con_error(c, "%s: %s", cmd->name, em.text[0] ? em.text : ag_strerror(rc));
  else if (c->printed != before) con_print(c, "\n"); /* a paragraph, like the transcript's */
  if (!rc && change) note_file_wins(c, cmd->name);
  output_set_chat(c->out, chat_session_current(c->cw.cs));
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
  int rc = world_publish(c->cw.w, "human", s[0] == '/' ? s + 1 : s, NULL);
  if (rc) con_error(c, "cannot send the message: %s", ag_strerror(rc));
}
