/* agora console (see console.h): a person talks to a stored world. Everything runs on the world's one
 * libevent loop: the terminal is an event on fd 0 fed to libedit's callback interface, bus messages and
 * events are printed as they are delivered, and streamed replies live on transient lines above the input. */
#include "cli/console.h"

#include "chat/snapshot.h"
#include "cli/cli.h"
#include "common/buf.h"
#include "common/outfile.h"
#include "cli/db.h"
#include "cli/key_env.h"
#include "cli/output.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <poll.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#ifdef AGORA_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

#define LINE_CAP (STORE_TEXT_LEN + 1) /* bytes of one input line with its newline; longer lines are skipped */
#define LIVE_MAX 8                    /* agents streaming at once that get a live line */
#define LIVE_TAIL 512                 /* bytes of a stream kept for its live line (only the end shows) */
#define TITLE_COLS 40                 /* columns of the chat title in the prompt */
#define RECENT 10                     /* messages shown when a chat is resumed or loaded on a terminal */
#define HISTORY_MAX 1000              /* lines kept in console_history */
#define COMPLETE_MAX 256              /* completion candidates */

static const char console_usage[] =
  "usage: agora console [WORLD.json] [--db DIR] [--allow-env NAME]\n"
  "\n"
  "Talk to a world. With WORLD.json the world is loaded (or updated) in the database and its current\n"
  "chat continues (a new chat when it has none); without it, the only world in the database opens.\n"
  "Plain lines are sent as the human; commands start with '/' (type /help). On a terminal, replies\n"
  "stream in while you type, Ctrl-C cancels the replies in flight and Ctrl-D quits. With stdin not a\n"
  "terminal, lines are handled one by one, each waiting until the world is quiet, until EOF.\n"
  "\n"
  "  --db DIR    the database directory (default: $AGORA_HOME, $XDG_DATA_HOME/agora,\n"
  "              ~/.local/share/agora)\n"
  "  --allow-env NAME  let api_key_env name NAME although it does not end in _API_KEY, _TOKEN or _KEY\n";

/* Where the input line is on the screen, so that it can be erased before printing above it. */
typedef enum input_state {
  INPUT_NONE,    /* not shown: the cursor is at the start of a clean row */
  INPUT_PROMPT,  /* the prompt and the line being typed; the cursor is in it */
  INPUT_ENTERED  /* a line just entered: the cursor is on the row below it */
} input_state;

/* One agent's reply while it streams: the end of its text, for the live line. */
typedef struct live_stream {
  char agent[STORE_ID_MAX];
  char tail[LIVE_TAIL]; /* NUL-terminated; control characters made spaces */
  size_t len;
} live_stream;

typedef struct console {
  store *st;
  cli_world cw; /* event base, world and session */
  output *out;
  struct event *ev_in;
  struct event *ev_sig[5];
  int tty;   /* a person at a terminal: libedit and live lines */
  int color; /* dim the console's own notes */
  int quit;
  int resumed;           /* the chat at start continues a saved one (else it is new) */
  unsigned long printed; /* lines of output so far (a command that printed ends with a blank line) */
  /* terminal mode */
  int rl_on; /* libedit's line handler is installed */
  int busy;  /* handling an entered line: the screen is redrawn once at its end */
  input_state input;
  int entered_rows;
  int live_shown; /* live rows on the screen above the input */
  int ctrl_c;     /* Ctrl-C presses in a row at an empty, idle prompt */
  live_stream live[LIVE_MAX];
  size_t n_live;
  char prompt[320];
  char history[4096];
  char *cands[COMPLETE_MAX];
  size_t n_cands;
  /* lines mode */
  char *in;
  size_t in_len, in_cap;
  int in_eof, in_direct, in_skip;
} console;

/* libedit's callbacks carry no user pointer: the one console of the process. */
static console *the_console;

/* ---- text on the screen ---- */

static int term_size(int want_rows) {
  struct winsize ws;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0)
    return want_rows ? ws.ws_row : ws.ws_col;
  return want_rows ? 24 : 80;
}

/* Columns of the UTF-8 character at s (n bytes left); its length goes to *used. A byte that does not
 * start a valid character counts as one column, so the result is never short. */
static int char_cols(const char *s, size_t n, size_t *used) {
  mbstate_t st;
  memset(&st, 0, sizeof st);
  wchar_t wc;
  size_t k = mbrtowc(&wc, s, n, &st);
  if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
    *used = 1;
    return 1;
  }
  *used = k;
  int w = wcwidth(wc);
  return w < 0 ? 1 : w;
}

static int text_cols(const char *s, size_t n) {
  int cols = 0;
  for (size_t i = 0, used; i < n; i += used) cols += char_cols(s + i, n - i, &used);
  return cols;
}

#ifdef AGORA_HAVE_LIBEDIT
/* Copies src into dst (cap bytes) cut to max_cols columns, ending with "…" when cut. */
static void text_fit(const char *src, int max_cols, char *dst, size_t cap) {
  size_t n = strlen(src), i = 0, used;
  int cols = 0;
  if (text_cols(src, n) <= max_cols) {
    snprintf(dst, cap, "%s", src);
    return;
  }
  while (i < n) {
    int w = char_cols(src + i, n - i, &used);
    if (cols + w > max_cols - 1) break;
    cols += w;
    i += used;
  }
  snprintf(dst, cap, "%.*s…", (int)i, src);
}

static void prompt_update(console *c) {
  const char *title = chat_session_title(c->cw.cs);
  char t[4 * TITLE_COLS + 4];
  text_fit(title ? title : "no chat", TITLE_COLS, t, sizeof t);
  for (char *p = t; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' '; /* a title never drives the terminal */
  snprintf(c->prompt, sizeof c->prompt, "%s · %s> ", world_id(c->cw.w), t);
  if (c->rl_on) rl_set_prompt(c->prompt);
}
#endif

/* Rows from the start of the prompt down to the cursor. libedit keeps rl_point and rl_line_buffer up
 * to date after each key (rl_end is fixed up by tty_on_stdin when it leaves them stale). */
static int input_cursor_row(const console *c) {
  int cols = text_cols(c->prompt, strlen(c->prompt));
#ifdef AGORA_HAVE_LIBEDIT
  if (rl_line_buffer && rl_point > 0 && rl_end > 0)
    cols += text_cols(rl_line_buffer, (size_t)(rl_point < rl_end ? rl_point : rl_end));
#endif
  return cols / term_size(0);
}

/* Erases the live lines and the input line; the cursor ends at the start of the first erased row. */
static void screen_hide(console *c) {
  if (!c->tty) return;
  int up = c->live_shown;
  if (c->input == INPUT_PROMPT) up += input_cursor_row(c);
  else if (c->input == INPUT_ENTERED) up += c->entered_rows;
  if (up > 0) printf("\033[%dA", up);
  fputs("\r\033[J", stdout);
  fflush(stdout);
  c->live_shown = 0;
  c->input = INPUT_NONE;
}

/* One live line, cut to the terminal's width so it takes exactly one row: the agent, then the end of
 * what it has said so far. */
static void live_draw(const console *c, const live_stream *s, int cols) {
  int room = cols - 1 - text_cols(s->agent, strlen(s->agent)) - 2;
  const char *t = s->len ? s->tail : "…";
  int total = text_cols(t, strlen(t)), cut = 0;
  if (room < 4) room = 4;
  while (*t && total > (cut ? room - 1 : room)) {
    size_t used;
    total -= char_cols(t, strlen(t), &used);
    t += used;
    cut = 1;
  }
  printf("%s%s: %s%s%s\n", c->color ? "\033[2m" : "", s->agent, cut ? "…" : "", t, c->color ? "\033[0m" : "");
}

/* Draws the live lines, then the prompt with the line being typed (libedit redraws it). */
static void screen_show(console *c) {
  if (!c->tty || c->busy || c->input != INPUT_NONE) return;
  int cols = term_size(0), max = term_size(1) - 2;
  for (size_t i = 0; i < c->n_live && c->live_shown < max; i++) {
    live_draw(c, &c->live[i], cols);
    c->live_shown++;
  }
#ifdef AGORA_HAVE_LIBEDIT
  if (c->rl_on) {
    prompt_update(c);
    rl_forced_update_display();
    c->input = INPUT_PROMPT;
  }
#endif
  fflush(stdout);
}

/* ---- printing: everything goes above the live lines and the input line ---- */

static void con_vprint(console *c, FILE *f, const char *fmt, va_list ap) {
  c->printed++;
  screen_hide(c);
  fflush(stdout); /* the erasing reaches the terminal before the text, if that goes to stderr */
  vfprintf(f, fmt, ap);
  fflush(f);
  screen_show(c);
}

static void con_print(console *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void con_print(console *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  con_vprint(c, stdout, fmt, ap);
  va_end(ap);
}

static void con_eprint(console *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void con_eprint(console *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  con_vprint(c, stderr, fmt, ap);
  va_end(ap);
}

/* A command's error: one line on stderr. */
static void con_error(console *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void con_error(console *c, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  con_eprint(c, "error: %s\n", msg);
}

/* A note from the console itself, shaped like an event line ("-- text"). */
static void con_note(console *c, const char *text) {
  con_print(c, "%s-- %s%s\n\n", c->color ? "\033[2m" : "", text, c->color ? "\033[0m" : "");
}

/* An event of the console's own (not on the bus), printed like the bus events. Takes fields. */
static void con_event(console *c, const char *type, cJSON *fields) {
  screen_hide(c);
  output_event(c->out, type, fields);
  screen_show(c);
  cJSON_Delete(fields);
}

/* ---- live lines ---- */

static live_stream *live_find(console *c, const char *agent) {
  for (size_t i = 0; i < c->n_live; i++)
    if (strcmp(c->live[i].agent, agent) == 0) return &c->live[i];
  return NULL;
}

/* The agent's live line, made when missing (NULL when LIVE_MAX agents already have one). */
static live_stream *live_get(console *c, const char *agent) {
  live_stream *s = live_find(c, agent);
  if (s || c->n_live == LIVE_MAX) return s;
  s = &c->live[c->n_live++];
  snprintf(s->agent, sizeof s->agent, "%s", agent);
  s->tail[0] = '\0';
  s->len = 0;
  return s;
}

static void live_remove(console *c, const char *agent) {
  live_stream *s = live_find(c, agent);
  if (!s) return;
  size_t i = (size_t)(s - c->live);
  memmove(&c->live[i], &c->live[i + 1], (c->n_live - i - 1) * sizeof *c->live);
  c->n_live--;
}

/* Drops the live lines of agents that stopped thinking without a word (their call was cancelled or the
 * agent removed). */
static void live_prune(console *c) {
  for (size_t i = c->n_live; i-- > 0;) {
    agent *a = world_agent_find(c->cw.w, c->live[i].agent);
    if (!a || !agent_is_thinking(a)) live_remove(c, c->live[i].agent);
  }
}

/* Keeps the end of the stream: when the buffer is full the older half goes, cut at a character start. */
static void live_append(live_stream *s, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (s->len + 1 >= LIVE_TAIL) {
      size_t drop = LIVE_TAIL / 2;
      while (drop < s->len && ((unsigned char)s->tail[drop] & 0xC0) == 0x80) drop++;
      memmove(s->tail, s->tail + drop, s->len - drop);
      s->len -= drop;
    }
    s->tail[s->len++] = (char)(*p < 0x20 || *p == 0x7f ? ' ' : *p);
  }
  s->tail[s->len] = '\0';
}

/* llm-start, llm-chunk and llm-done only change the live lines: returns 1 when e was one of them. An
 * llm-error or agent-removed ends the agent's live line and is printed as usual (returns 0). */
static int live_event(console *c, const bus_event *e) {
  const char *agent = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e->fields, "agent"));
  int start = !strcmp(e->type, "llm-start"), chunk = !strcmp(e->type, "llm-chunk");
  int done = !strcmp(e->type, "llm-done");
  if (!start && !chunk && !done) {
    if (agent && (!strcmp(e->type, "llm-error") || !strcmp(e->type, "agent-removed"))) live_remove(c, agent);
    return 0;
  }
  if (!c->tty || !agent) return 1;
  screen_hide(c);
  if (done) {
    live_remove(c, agent);
  } else {
    live_stream *s = live_get(c, agent);
    const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e->fields, "text"));
    if (s && start) s->len = 0, s->tail[0] = '\0';
    if (s && chunk && text) live_append(s, text);
  }
  screen_show(c);
  return 1;
}

/* The transcript: every bus message and event at the output phase, printed as `run` prints them. */
static void on_bus(void *ud, bus_topic topic, void *payload) {
  console *c = ud;
  if (topic == BUS_EVENT && live_event(c, payload)) return;
  screen_hide(c);
  output_on_bus(c->out, topic, payload);
  if (topic == BUS_MESSAGE) live_remove(c, ((const ag_msg *)payload)->sender);
  screen_show(c);
  if (topic == BUS_EVENT && !strcmp(((const bus_event *)payload)->type, "chat-deleted") &&
      !chat_session_current(c->cw.cs))
    con_note(c, "no current chat: messages are not saved until /new");
}

/* ---- the store, as the commands need it ---- */

typedef struct chat_info_ctx {
  const char *id;
  char title[STORE_TITLE_LEN + 1];
  uint64_t count;
  console *c;
  int show; /* print the last RECENT messages */
} chat_info_ctx;

static int recent_msg(const store_message *m, void *arg) {
  chat_info_ctx *ci = arg;
  ag_msg msg;
  memset(&msg, 0, sizeof msg);
  msg.refs = 1;
  msg.seq = m->seq;
  msg.sender = (char *)m->sender;
  msg.text = (char *)m->text;
  msg.kind = (ag_kind)m->kind;
  msg.ts_ms = m->ts_ms;
  output_message(ci->c->out, &msg);
  return 0;
}

static int chat_info_txn(store_txn *t, void *arg) {
  chat_info_ctx *ci = arg;
  store_chat ch;
  int rc = store_chat_get(t, ci->id, &ch);
  if (rc) return rc;
  snprintf(ci->title, sizeof ci->title, "%s", ch.title);
  ci->count = ch.message_count;
  store_chat_free(&ch);
  if (!ci->show) return AG_OK;
  return store_message_scan(t, ci->id, ci->count > RECENT ? ci->count - RECENT + 1 : 1, recent_msg, ci);
}

/* Says which chat is current now (event `type`: chat-resumed, chat-loaded) and, on a terminal, shows
 * its last messages so the person knows where the conversation stands. */
static void chat_announce(console *c, const char *type) {
  const char *id = chat_session_current(c->cw.cs);
  if (!id) return;
  chat_info_ctx ci = {id, "", 0, c, 0};
  ag_errmsg em = {""};
  if (store_read(c->st, chat_info_txn, &ci, &em)) return;
  cJSON *f = cJSON_CreateObject();
  cJSON_AddStringToObject(f, "id", id);
  cJSON_AddStringToObject(f, "title", ci.title);
  cJSON_AddNumberToObject(f, "messages", (double)ci.count);
  con_event(c, type, f);
  if (!c->tty || !ci.count) return;
  ci.show = 1;
  screen_hide(c);
  store_read(c->st, chat_info_txn, &ci, &em);
  screen_show(c);
}

/* Stores the world's settings after /add, /remove or /turnlimit, so that opening the world again
 * without its file (and chats export) sees the agents it has now. */
static int world_record_save(console *c, ag_errmsg *em) { return chat_session_save_world(c->cw.cs, em); }

/* ---- commands ---- */

static char *trim(char *s) {
  s += strspn(s, " \t");
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) s[--n] = '\0';
  return s;
}

/* Splits the first word off *p (which moves past it); "" when none. */
static char *next_word(char **p) {
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
    char name[STORE_TITLE_LEN + 8] = "";
    if (strcmp(agent_name(a), agent_id(a))) snprintf(name, sizeof name, " (%s)", agent_name(a));
    con_print(c, "  %s%s  %s%s%s  turns %d/%d%s\n", agent_id(a), name, llm_provider_name(l->provider),
              l->model ? "/" : "", l->model ? l->model : "", agent_turn_state(a).count,
              world_turn_limit(c->cw.w), agent_is_thinking(a) ? "  thinking" : "");
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
    from.replies = NULL;
    from.n_replies = 0;
    from.agent_name = NULL;
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
  /* "/add carol", "/add carol openai", "/add Madame Pedagogue openai": after the first word, the last
   * one is the provider (checked, so that a typo is not taken for part of a name). */
  char *provider = strrchr(args, ' ');
  if (provider) *provider++ = '\0';
  char *name = trim(args);
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
  store_txn *t;
  int ids_only; /* collect the ids as completion candidates instead of printing */
} chats_ctx;

static void cands_add(console *c, const char *prefix, const char *word);

static int chats_row(const store_chat *ch, void *arg) {
  chats_ctx *cc = arg;
  cc->n++;
  if (cc->ids_only) {
    cands_add(cc->c, "", ch->id);
    return 0;
  }
  char updated[40];
  output_time(ch->updated_at_ms, updated, sizeof updated);
  con_print(cc->c, "%c %s  %5llu messages  %s  %s\n", cc->current && !strcmp(cc->current, ch->id) ? '*' : ' ',
            ch->id, (unsigned long long)ch->message_count, updated, ch->title);
  return 0;
}

static int chats_txn(store_txn *t, void *arg) {
  chats_ctx *cc = arg;
  cc->n = 0;
  cc->t = t;
  return store_chat_list(t, world_id(cc->c->cw.w), chats_row, cc);
}

static int cmd_chats(console *c, char *args, ag_errmsg *em) {
  (void)args;
  chats_ctx cc = {c, chat_session_current(c->cw.cs), 0, NULL, 0};
  int rc = store_read(c->st, chats_txn, &cc, em);
  if (!rc && !cc.n) con_print(c, "no chats yet (/new starts one)\n");
  return rc;
}

static int cmd_new(console *c, char *args, ag_errmsg *em) {
  if (args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /new");
  return chat_session_new(c->cw.cs, em);
}

static int cmd_load(console *c, char *args, ag_errmsg *em) {
  char *id = NULL;
  int rc = one_arg(args, "/load ID", &id, em);
  if (!rc) rc = chat_session_load(c->cw.cs, id, em);
  if (!rc) chat_announce(c, "chat-loaded");
  return rc;
}

static int cmd_delete(console *c, char *args, ag_errmsg *em) {
  char *id = NULL;
  int rc = one_arg(args, "/delete ID", &id, em);
  if (!rc) rc = chat_session_delete(c->cw.cs, id, em);
  return rc;
}


static int cmd_export(console *c, char *args, ag_errmsg *em) {
  char *id = next_word(&args);
  char *file = trim(args);
  if (!id[0] || !file[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /export ID FILE");
  cJSON *snap = NULL;
  char *text = NULL;
  int rc = chat_snapshot_export(c->st, id, &snap, em);
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
  {"/remove", "NAME", "remove an agent", cmd_remove},
  {"/chats", "", "this world's chats (* marks the current one)", cmd_chats},
  {"/new", "", "start a new chat (an empty one is reused)", cmd_new},
  {"/load", "ID", "continue a saved chat", cmd_load},
  {"/delete", "ID", "delete a chat (the latest other one becomes current)", cmd_delete},
  {"/export", "ID FILE", "write a chat's snapshot JSON to FILE", cmd_export},
  {"/title", "TEXT", "rename the current chat", cmd_title},
  {"/turnlimit", "N", "LLM calls an agent may make between human turns", cmd_turnlimit},
  {"/quit", "", "save and leave (also Ctrl-D)", cmd_quit},
};
static const size_t n_commands = sizeof commands / sizeof *commands;

static int cmd_help(console *c, char *args, ag_errmsg *em) {
  (void)args;
  (void)em;
  con_print(c, "Type a message to send it as the human (start it with @name to address an agent).\n");
  for (size_t i = 0; i < n_commands; i++) {
    char head[64];
    snprintf(head, sizeof head, "%s %s", commands[i].name, commands[i].args);
    con_print(c, "  %-22s %s\n", head, commands[i].help);
  }
  con_print(c, "Start a line with // to send a message that begins with '/'. Tab completes commands, chat ids\n"
               "and @names. Ctrl-C cancels the replies in flight; Ctrl-D quits.\n");
  return AG_OK;
}

static void run_command(console *c, char *line) {
  char *args = line;
  char *name = next_word(&args);
  const command *cmd = NULL;
  for (size_t i = 0; i < n_commands && !cmd; i++)
    if (!strcmp(commands[i].name, name)) cmd = &commands[i];
  if (!cmd) {
    con_error(c, "unknown command '%s' (try /help)", name);
    return;
  }
  ag_errmsg em = {""};
  unsigned long before = c->printed;
  int rc = cmd->run(c, trim(args), &em);
  if (rc) con_error(c, "%s: %s", cmd->name, em.text[0] ? em.text : ag_strerror(rc));
  else if (c->printed != before) con_print(c, "\n"); /* a paragraph, like the transcript's */
  output_set_chat(c->out, chat_session_current(c->cw.cs));
  live_prune(c);
}

static void tty_resume(console *c);

/* A line typed or read: a command, or a message from the human. "//text" sends "/text". */
static void handle_line(console *c, char *line) {
  char *s = trim(line);
  int is_cmd = s[0] == '/' && s[1] != '/';
  screen_hide(c);
  if (c->tty && is_cmd) printf("%s%s\n", c->prompt, s); /* the command stays in view above its output */
  tty_resume(c);
  if (!s[0]) return;
  if (is_cmd) {
    run_command(c, s);
    return;
  }
  int rc = world_publish(c->cw.w, "human", s[0] == '/' ? s + 1 : s, NULL);
  if (rc) con_error(c, "cannot send the message: %s", ag_strerror(rc));
}

/* ---- Ctrl-C and other signals (evsignal: the work happens on the loop, not in a signal handler) ---- */

static void cancel_replies(console *c) {
  char names[512] = "";
  size_t len = 0;
  for (size_t i = 0; i < world_agent_count(c->cw.w); i++) {
    agent *a = world_agent_at(c->cw.w, i);
    if (agent_is_thinking(a) && len + strlen(agent_id(a)) + 3 < sizeof names)
      len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", agent_id(a));
  }
  world_cancel_all(c->cw.w);
  live_prune(c);
  cJSON *f = cJSON_CreateObject();
  if (len) cJSON_AddStringToObject(f, "agents", names);
  con_event(c, "cancelled", f);
}

#ifdef AGORA_HAVE_LIBEDIT
static void tty_clear_input(console *c);
#endif

static void on_interrupt(console *c) {
  if (!world_is_quiet(c->cw.w)) {
    cancel_replies(c);
    c->ctrl_c = 0;
    return;
  }
  if (!c->tty) {
    c->quit = 1; /* reading a script: an idle Ctrl-C ends it like EOF */
    return;
  }
#ifdef AGORA_HAVE_LIBEDIT
  if (rl_end > 0) {
    tty_clear_input(c);
    c->ctrl_c = 0;
    return;
  }
#endif
  if (++c->ctrl_c >= 2) c->quit = 1;
  else con_note(c, "press Ctrl-C again or Ctrl-D to quit");
}

static void on_signal(evutil_socket_t sig, short what, void *arg) {
  (void)what;
  console *c = arg;
  if (sig == SIGINT) {
    on_interrupt(c);
#ifdef AGORA_HAVE_LIBEDIT
  } else if (sig == SIGWINCH && c->tty) {
    screen_hide(c);
    rl_resize_terminal();
    screen_show(c);
  } else if (sig == SIGCONT && c->tty) {
    tty_clear_input(c); /* back from Ctrl-Z: the terminal may have left raw mode */
#endif
  } else if (sig == SIGTERM || sig == SIGHUP) {
    c->quit = 1;
    world_interrupt(c->cw.w);
  }
}

/* ---- terminal mode (libedit) ---- */

#ifdef AGORA_HAVE_LIBEDIT

static void tty_on_line(char *line);

/* Live lines, then a fresh prompt with an empty line. */
static void prompt_start(console *c) {
  screen_show(c);
  prompt_update(c);
  rl_callback_handler_install(c->prompt, tty_on_line);
  rl_point = rl_end = 0; /* the new line is empty; libedit says so only after the next key */
  c->rl_on = 1;
  c->input = INPUT_PROMPT;
  fflush(stdout);
}

static void tty_clear_input(console *c) {
  screen_hide(c);
  rl_callback_handler_remove();
  c->rl_on = 0;
  prompt_start(c);
}

static void history_add(console *c, const char *line) {
  if (!line[strspn(line, " \t")]) return;
  add_history(line);
  write_history(c->history);
}

/* Libedit left raw mode to hand over the entered line; the next prompt goes up (raw again) before the
 * line is handled, so that keys typed meanwhile stay keys: a Ctrl-D typed to a cooked terminal would be
 * taken by it as end of file and lost. */
static void tty_resume(console *c) {
  if (c->tty && !c->rl_on && !c->quit) prompt_start(c);
}

/* libedit's line handler: line is the entered text (ours to free), or NULL for Ctrl-D. The screen is
 * redrawn once at the end. */
static void tty_on_line(char *line) {
  console *c = the_console;
  c->rl_on = 0;
  c->input = INPUT_ENTERED;
  c->entered_rows = 0; /* Ctrl-D: libedit echoed ^D on the prompt's row */
  if (!line) {
    c->quit = 1;
    screen_hide(c);
    return;
  }
  c->entered_rows = (text_cols(c->prompt, strlen(c->prompt)) + text_cols(line, strlen(line))) / term_size(0) + 1;
  history_add(c, line);
  c->busy = 1;
  handle_line(c, line);
  free(line);
  c->busy = 0;
  screen_hide(c);
  screen_show(c);
}

static void tty_on_stdin(evutil_socket_t fd, short what, void *arg) {
  (void)what;
  console *c = arg;
  int avail = 0;
  if (ioctl(fd, FIONREAD, &avail) == 0 && avail == 0) {
    c->quit = 1; /* readable with nothing to read: the terminal hung up */
    return;
  }
  c->ctrl_c = 0;
  /* libedit leaves rl_end stale when a key empties the line; the sentinel shows it did not update. */
  rl_end = -1;
  rl_callback_read_char();
  if (rl_end < 0) rl_end = rl_point = 0;
}

static void cands_clear(console *c) {
  for (size_t i = 0; i < c->n_cands; i++) free(c->cands[i]);
  c->n_cands = 0;
}

static void cands_add(console *c, const char *prefix, const char *word) {
  if (c->n_cands == COMPLETE_MAX) return;
  size_t n = strlen(prefix) + strlen(word) + 1;
  char *s = malloc(n);
  if (!s) return;
  snprintf(s, n, "%s%s", prefix, word);
  c->cands[c->n_cands++] = s;
}

static void cands_agents(console *c, const char *prefix) {
  for (size_t i = 0; i < world_agent_count(c->cw.w); i++) cands_add(c, prefix, agent_id(world_agent_at(c->cw.w, i)));
}

/* What the word at start of line may become: commands first on the line, chat ids after /load,
 * /delete and /export, agent ids after /remove and '@', providers after /add NAME. */
static void cands_collect(console *c, const char *line, size_t start, const char *text) {
  cands_clear(c);
  if (text[0] == '@') {
    cands_agents(c, "@");
    return;
  }
  size_t lead = strspn(line, " \t"), len = strlen(line);
  if (line[lead] != '/') return;
  if (start <= lead) {
    for (size_t i = 0; i < n_commands; i++) cands_add(c, "", commands[i].name);
    return;
  }
  char cmd[16];
  snprintf(cmd, sizeof cmd, "%.*s", (int)strcspn(line + lead, " \t"), line + lead);
  int word = 0; /* index of the word being completed */
  for (size_t i = lead; i < start && i < len; i++)
    if ((line[i] == ' ' || line[i] == '\t') && line[i + 1] != ' ' && line[i + 1] != '\t') word++;
  if (word == 1 && (!strcmp(cmd, "/load") || !strcmp(cmd, "/delete") || !strcmp(cmd, "/export"))) {
    chats_ctx cc = {c, NULL, 0, NULL, 1};
    store_read(c->st, chats_txn, &cc, NULL);
  } else if (word == 1 && !strcmp(cmd, "/remove")) {
    cands_agents(c, "");
  } else if (word == 2 && !strcmp(cmd, "/add")) {
    for (int k = LLM_SCRIPT; k <= LLM_OLLAMA; k++) cands_add(c, "", llm_provider_name((llm_provider_kind)k));
  }
}

static char *complete_next(const char *text, int state) {
  static size_t i;
  console *c = the_console;
  size_t n = strlen(text);
  if (state == 0) i = 0;
  while (i < c->n_cands) {
    const char *s = c->cands[i++];
    if (strncmp(s, text, n) == 0) return strdup(s);
  }
  return NULL;
}

static char **tty_complete(const char *text, int start, int end) {
  (void)end;
  console *c = the_console;
  rl_attempted_completion_over = 1; /* never fall back to file names */
  cands_collect(c, rl_line_buffer ? rl_line_buffer : "", start > 0 ? (size_t)start : 0, text);
  return c->n_cands ? rl_completion_matches(text, complete_next) : NULL;
}

/* libedit draws wide characters (the prompt's '·', titles) only in a UTF-8 locale; terminals are. */
static void tty_locale(void) {
  setlocale(LC_CTYPE, "");
  if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0) setlocale(LC_CTYPE, "C.UTF-8");
}

static void tty_setup(console *c) {
  tty_locale();
  rl_readline_name = "agora";
  rl_catch_signals = 0; /* SIGINT and friends are libevent's */
  rl_catch_sigwinch = 0;
  rl_basic_word_break_characters = " \t\n"; /* '@' belongs to the word, so @al completes */
  rl_attempted_completion_function = tty_complete;
  rl_initialize();
  snprintf(c->history, sizeof c->history, "%s/console_history", store_dir(c->st));
  int fd = open(c->history, O_WRONLY | O_CREAT | O_APPEND, 0600); /* private, like the database */
  if (fd >= 0) close(fd);
  stifle_history(HISTORY_MAX);
  read_history(c->history);
}

static int tty_run(console *c) {
  if (!(c->ev_in = event_new(c->cw.base, STDIN_FILENO, EV_READ | EV_PERSIST, tty_on_stdin, c)) ||
      event_add(c->ev_in, NULL))
    return cli_error(AG_ERR_NOMEM, "console: cannot watch the terminal");
  tty_setup(c);
  con_note(c, "agora console: type a message, /help for commands, Ctrl-D to quit");
  if (c->resumed) chat_announce(c, "chat-resumed");
  prompt_start(c);
  while (!c->quit && event_base_loop(c->cw.base, EVLOOP_ONCE) >= 0) {
  }
  screen_hide(c);
  rl_callback_handler_remove(); /* leaves raw mode */
  c->rl_on = 0;
  c->n_live = 0; /* replies still streaming are cancelled on the way out: their lines must not come back */
  return 0;
}

#else

static void tty_resume(console *c) { (void)c; }
static void cands_add(console *c, const char *prefix, const char *word) {
  (void)c;
  (void)prefix;
  (void)word;
}
static int tty_run(console *c) {
  (void)c;
  return 0;
}

#endif

/* ---- lines mode ---- */

static void lines_read(console *c) {
  if (c->in_len == c->in_cap && c->in_cap < LINE_CAP) {
    size_t cap = c->in_cap ? c->in_cap * 2 : 65536;
    if (cap > LINE_CAP) cap = LINE_CAP;
    char *p = realloc(c->in, cap);
    if (!p) {
      c->in_eof = 1;
      return;
    }
    c->in = p;
    c->in_cap = cap;
  }
  if (c->in_len == c->in_cap) return;
  ssize_t n = read(STDIN_FILENO, c->in + c->in_len, c->in_cap - c->in_len);
  if (n > 0) c->in_len += (size_t)n;
  else if (n == 0 || (errno != EINTR && errno != EAGAIN)) c->in_eof = 1;
}

static void lines_on_stdin(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  lines_read(arg);
}

/* The next whole line of input (caller frees), or NULL when none is complete yet. A line past LINE_CAP
 * is skipped with one error. */
static char *lines_next(console *c) {
  for (;;) {
    char *nl = c->in_len ? memchr(c->in, '\n', c->in_len) : NULL;
    int overlong = !nl && c->in_len >= LINE_CAP;
    if (!nl && !overlong && !(c->in_eof && c->in_len)) return NULL;
    size_t n = nl ? (size_t)(nl - c->in) : c->in_len;
    char *line = c->in_skip || overlong ? NULL : strndup(c->in, n);
    size_t drop = nl ? n + 1 : n;
    memmove(c->in, c->in + drop, c->in_len - drop);
    c->in_len -= drop;
    if (overlong) {
      if (!c->in_skip) con_error(c, "a line longer than %u bytes was skipped", (unsigned)LINE_CAP - 1);
      c->in_skip = 1;
    } else if (c->in_skip) {
      c->in_skip = 0; /* that was the end of the long line */
    } else if (line) {
      return line;
    }
  }
}

/* Reads the person's answer to an approval question: one line, blocking. At a terminal libedit's
 * handler is taken down for it (the terminal is back in cooked mode, so the answer is echoed and
 * edited as usual); piped input answers with its next line. NULL at end of input. */
static char *approve_read_line(console *c) {
  if (!c->tty) {
    char *line;
    while (!(line = lines_next(c)) && !c->in_eof) {
      struct pollfd p = {STDIN_FILENO, POLLIN, 0};
      if (poll(&p, 1, -1) < 0 && errno != EINTR) return NULL;
      lines_read(c);
    }
    return line ? line : lines_next(c);
  }
  char buf[256];
  size_t n = 0;
  for (;;) {
    char ch;
    ssize_t r = read(STDIN_FILENO, &ch, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || ch == '\n' || ch == 4) break;
    if (n + 1 < sizeof buf) buf[n++] = ch;
  }
  buf[n] = '\0';
  return strdup(buf);
}

/* A tool declared "approve": true asks the person. The world waits for the answer: the question
 * blocks the loop (streams pause meanwhile), because a tool call must neither go ahead nor be refused
 * behind the person's back. Anything but y/yes is a no. */
static int console_approve(void *ud, const char *agent_id, const char *tool, const char *args_json) {
  console *c = ud;
#ifdef AGORA_HAVE_LIBEDIT
  int had_rl = c->tty && c->rl_on;
  if (had_rl) {
    screen_hide(c);
    rl_callback_handler_remove();
    c->rl_on = 0;
  }
#endif
  printf("approve: %s wants to call %s %s [y/N] ", agent_id, tool, args_json && args_json[0] ? args_json : "{}");
  fflush(stdout);
  char *line = approve_read_line(c);
  const char *a = line ? line + strspn(line, " \t") : "";
  int yes = (a[0] == 'y' || a[0] == 'Y') && (!a[1] || !strcasecmp(a, "yes") || a[1] == ' ' || a[1] == '\r');
  if (!c->tty) printf("%s\n", yes ? "y" : "n");
  free(line);
  cJSON *f = cJSON_CreateObject();
  cJSON_AddStringToObject(f, "agent", agent_id);
  cJSON_AddStringToObject(f, "tool", tool);
  cJSON_AddBoolToObject(f, "approved", yes);
  con_event(c, "approval", f);
#ifdef AGORA_HAVE_LIBEDIT
  if (had_rl) prompt_start(c);
#endif
  return yes;
}

static int lines_run(console *c) {
  /* Regular files and /dev/null cannot be watched by epoll, and reading them never blocks. */
  struct stat sb;
  c->in_direct = fstat(STDIN_FILENO, &sb) || !(S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode) || isatty(STDIN_FILENO));
  if (!(c->ev_in = event_new(c->cw.base, STDIN_FILENO, EV_READ, lines_on_stdin, c)))
    return cli_error(AG_ERR_NOMEM, "console: cannot watch stdin");
  if (c->resumed) chat_announce(c, "chat-resumed");
  while (!c->quit) {
    char *line = lines_next(c);
    if (line) {
      handle_line(c, line);
      free(line);
      int rc = world_run_until_quiet(c->cw.w);
      if (rc && rc != AG_ERR_CANCELLED) con_error(c, "the world did not settle: %s", ag_strerror(rc));
    } else if (c->in_eof) {
      break;
    } else if (c->in_direct) {
      lines_read(c);
    } else if (event_add(c->ev_in, NULL) || event_base_loop(c->cw.base, EVLOOP_ONCE) < 0) {
      c->in_direct = 1;
    }
  }
  return 0;
}

/* ---- opening and closing ---- */

typedef struct console_args {
  const char *world_path;
  const char *db;
  cli_allow_env allow;
} console_args;

static int parse_args(int argc, char **argv, console_args *a) {
  memset(a, 0, sizeof *a);
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--db")) {
      if (i + 1 >= argc) return cli_error(AG_ERR_INVALID, "console: --db needs a value");
      a->db = argv[++i];
    } else if (!strcmp(s, "--allow-env")) {
      int st = cli_allow_env_arg(&a->allow, "console", argc, argv, &i);
      if (st) return st;
    } else if (s[0] == '-' && s[1]) {
      return cli_error(AG_ERR_INVALID, "console: unknown option '%s' (see agora console --help)", s);
    } else if (!a->world_path) {
      a->world_path = s;
    } else {
      return cli_error(AG_ERR_INVALID, "console: unexpected argument '%s'", s);
    }
  }
  return 0;
}

static int open_file_world(console *c, const char *path, const cli_allow_env *allow, ag_errmsg *em) {
  world_spec spec;
  int rc = world_spec_load(path, &spec, em);
  if (rc) return rc;
  cli_world *cw = &c->cw;
  if (!(cw->base = event_base_new())) {
    rc = ag_fail(em, AG_ERR_NOMEM, "cannot create the event loop");
  } else if ((rc = world_new(cw->base, &spec, &cw->w, em))) {
    ag_errmsg detail = *em;
    rc = ag_fail(em, rc == AG_ERR_NOMEM ? rc : AG_ERR_INVALID, "%s: %s", path, detail.text);
  } else if (!(rc = cli_key_env_check(cw->w, path, allow, em))) { /* before anything is stored */
    rc = chat_session_open(c->st, cw->w, &cw->cs, em);
  }
  world_spec_free(&spec);
  return rc;
}

typedef struct only_world_ctx {
  size_t n;
  char id[STORE_ID_MAX];
} only_world_ctx;

static int only_world_row(const store_world *w, void *arg) {
  only_world_ctx *ow = arg;
  if (ow->n++ == 0) snprintf(ow->id, sizeof ow->id, "%s", w->id);
  return 0;
}

static int only_world_txn(store_txn *t, void *arg) { return store_world_list(t, only_world_row, arg); }

static int open_stored_world(console *c, const cli_allow_env *allow, ag_errmsg *em) {
  only_world_ctx ow = {0, ""};
  int rc = store_read(c->st, only_world_txn, &ow, em);
  if (rc) return rc;
  if (ow.n == 0)
    return ag_fail(em, AG_ERR_INVALID, "the database in %s holds no world yet: pass a world file "
                   "(agora console WORLD.json)", store_dir(c->st));
  if (ow.n > 1)
    return ag_fail(em, AG_ERR_INVALID, "the database in %s holds %zu worlds: pass the world file of the "
                   "one to open (agora console WORLD.json)", store_dir(c->st), ow.n);
  rc = cli_world_open(c->st, ow.id, &c->cw, em);
  /* A stored world may come from an imported snapshot: as untrusted as a file. */
  return rc ? rc : cli_key_env_check(c->cw.w, "the stored world", allow, em);
}

static int console_signals(console *c) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGCONT};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
    if (!(c->ev_sig[i] = evsignal_new(c->cw.base, sigs[i], on_signal, c)) || event_add(c->ev_sig[i], NULL))
      return AG_ERR_NOMEM;
  }
  return AG_OK;
}

/* Store, world, session, transcript printer and signals; then the chat: the current one continues, or
 * a new one starts when the world has none. Returns an exit status. */
static int console_open(console *c, const console_args *a) {
  ag_errmsg em = {""};
  int rc = cli_store_open(a->db, &c->st, &em);
  if (rc) return cli_error(rc, "%s", em.text);
  rc = a->world_path ? open_file_world(c, a->world_path, &a->allow, &em) : open_stored_world(c, &a->allow, &em);
  if (rc) return cli_error(rc, "%s%s", a->world_path ? "" : "console: ", em.text[0] ? em.text : ag_strerror(rc));
  const char *nc = getenv("NO_COLOR");
  c->tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
#ifndef AGORA_HAVE_LIBEDIT
  c->tty = 0;
#endif
  c->color = isatty(STDOUT_FILENO) && !(nc && nc[0]);
  output_opts oo;
  memset(&oo, 0, sizeof oo); /* plain, live, no progress line: the console is the display */
  if ((rc = output_new(stdout, world_id(c->cw.w), &oo, &c->out)) ||
      (rc = bus_subscribe(world_bus(c->cw.w), BUS_MESSAGE | BUS_EVENT, BUS_PHASE_OUTPUT, on_bus, c, NULL)) ||
      (rc = console_signals(c)))
    return cli_error(rc, "console: %s", ag_strerror(rc));
  world_set_emit_chunks(c->cw.w, c->tty);
  world_set_approver(c->cw.w, console_approve, c);
  int resumed = chat_session_current(c->cw.cs) != NULL;
  rc = resumed ? chat_session_resume(c->cw.cs, &em) : chat_session_new(c->cw.cs, &em);
  if (rc) return cli_error(rc, "console: %s", em.text[0] ? em.text : ag_strerror(rc));
  output_set_chat(c->out, chat_session_current(c->cw.cs));
  c->resumed = resumed;
  return 0;
}

/* Replies still in flight are cancelled; what was published is delivered, and so saved. */
static void console_finish(console *c) {
  for (int i = 0; i < 100000 && !world_is_quiet(c->cw.w); i++) {
    world_cancel_all(c->cw.w);
    event_base_loop(c->cw.base, EVLOOP_NONBLOCK);
  }
}

static void console_close(console *c) {
  if (c->ev_in) event_free(c->ev_in);
  for (size_t i = 0; i < sizeof c->ev_sig / sizeof *c->ev_sig; i++)
    if (c->ev_sig[i]) event_free(c->ev_sig[i]);
#ifdef AGORA_HAVE_LIBEDIT
  cands_clear(c);
#endif
  cli_world_close(&c->cw);
  output_free(c->out);
  store_close(c->st);
  free(c->in);
}

int cli_console(int argc, char **argv) {
  if (argc > 0 && cli_is_help(argv[0])) {
    fputs(console_usage, stdout);
    return 0;
  }
  console_args a;
  int status = parse_args(argc, argv, &a);
  if (status) return status;
  console c;
  memset(&c, 0, sizeof c);
  the_console = &c;
  status = console_open(&c, &a);
  if (!status) {
    status = c.tty ? tty_run(&c) : lines_run(&c);
    console_finish(&c);
    if (chat_session_failures(c.cw.cs)) {
      fprintf(stderr, "agora: %zu message(s) could not be saved (see the storage-error events)\n",
              chat_session_failures(c.cw.cs));
      status = 1;
    }
  }
  console_close(&c);
  the_console = NULL;
  return status;
}
