/* Plain and NDJSON transcripts (see output.h). Everything goes through here so that run, replay,
 * chats show and the console print the same way. */
#include "runtime/output.h"

#include "chat/event_json.h"

#include "common/term_text.h"
#include "common/clock.h"
#include "common/jsonnum.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct output {
  FILE *f;
  char *world;
  char *chat;
  output_opts o;
  int color;      /* dim the events */
  int tty;        /* plain text to a terminal: control characters are shown, not obeyed */
};


int output_new(FILE *f, const char *world_id, const output_opts *opts, output **out) {
  output *o = calloc(1, sizeof *o);
  if (!o) return AG_ERR_NOMEM;
  o->f = f;
  o->o = *opts;
  o->world = strdup(world_id ? world_id : "");
  if (!o->world) {
    free(o);
    return AG_ERR_NOMEM;
  }
  const char *nc = getenv("NO_COLOR");
  o->tty = !opts->json && isatty(fileno(f));
  o->color = o->tty && !(nc && nc[0]);
  *out = o;
  return AG_OK;
}

void output_free(output *o) {
  if (!o) return;
  output_done(o);
  free(o->world);
  free(o->chat);
  free(o);
}

void output_set_chat(output *o, const char *chat_id) {
  free(o->chat);
  o->chat = chat_id ? strdup(chat_id) : NULL;
}

void output_done(output *o) { fflush(o->f); }

/* Text that came from outside: shown, not obeyed, on a terminal, its continuation lines indented so
 * that a message or a tool result cannot show a line of its own ("human: ...") at the margin; as it is
 * elsewhere. */
static void put_text(output *o, const char *s) {
  if (o->tty) ag_term_text_write(o->f, s, AG_TERM_INDENT);
  else fputs(s, o->f);
}

static void print_json(output *o, cJSON *j) {
  char *s = output_json_text(j);
  if (s) {
    fputs(s, o->f);
    fputc('\n', o->f);
    free(s);
  }
  if (!o->o.batch) fflush(o->f); /* NDJSON is flushed as it happens */
}

static void add_common_ids(cJSON *j, const char *world, const char *chat) {
  cJSON_AddStringToObject(j, "world", world ? world : "");
  if (chat) cJSON_AddStringToObject(j, "chat", chat);
  else cJSON_AddNullToObject(j, "chat");
}

cJSON *output_message_json(const char *world, const char *chat, const ag_msg *m) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "type", "message");
  add_common_ids(j, world, chat);
  cJSON_AddNumberToObject(j, "seq", (double)m->seq);
  cJSON_AddStringToObject(j, "sender", m->sender);
  cJSON_AddStringToObject(j, "kind", ag_kind_name(m->kind));
  cJSON_AddStringToObject(j, "text", m->text);
  char ts[40];
  ag_time_format(m->ts_ms, ts, sizeof ts);
  cJSON_AddStringToObject(j, "ts", ts);
  if (m->has_sim) {
    ag_time_format(m->sim_ms, ts, sizeof ts);
    cJSON_AddStringToObject(j, "sim_time", ts);
  }
  return j;
}

cJSON *output_step_json(const char *world, const char *chat, ev_kind kind, const cJSON *fields) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "type", "event");
  cJSON_AddStringToObject(j, "event", ev_kind_name(kind));
  add_common_ids(j, world, chat);
  for (const cJSON *c = fields ? fields->child : NULL; c; c = c->next)
    if (strcmp(c->string, "world") && strcmp(c->string, "chat"))
      cJSON_AddItemToObject(j, c->string, cJSON_Duplicate(c, 1));
  return j;
}

cJSON *output_chat_json(const chat_info *c) {
  char created[40], updated[40];
  ag_time_format(c->created_at_ms, created, sizeof created);
  ag_time_format(c->updated_at_ms, updated, sizeof updated);
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "id", c->id);
  cJSON_AddStringToObject(j, "world", c->world_id);
  cJSON_AddStringToObject(j, "title", c->title);
  cJSON_AddNumberToObject(j, "message_count", (double)c->message_count);
  cJSON_AddStringToObject(j, "created_at", created);
  cJSON_AddStringToObject(j, "updated_at", updated);
  cJSON_AddBoolToObject(j, "current", c->current);
  return j;
}

char *output_json_text(const cJSON *j) { return ag_json_print_line(j); }

void output_message(output *o, const ag_msg *m) {
  if (o->o.json) {
    cJSON *j = output_message_json(o->world, o->chat, m);
    if (!j) return;
    print_json(o, j);
    cJSON_Delete(j);
  } else {
    if (o->o.seqs && m->seq) fprintf(o->f, "#%llu ", (unsigned long long)m->seq);
    if (m->has_sim) { /* a virtual clock's time: the run's own time would say nothing */
      char t[AG_TIME_LEN];
      ag_time_format(m->sim_ms, t, sizeof t);
      fprintf(o->f, "[%.10s %.5s] ", t, t + 11);
    }
    put_text(o, m->sender);
    fputs(": ", o->f);
    put_text(o, m->text);
    fputs("\n\n", o->f);
    if (!o->o.batch) fflush(o->f);
  }
}

/* Events that would only be noise in a plain transcript (they are all in --json). */
static int plain_hidden(ev_kind k) {
  return k == EV_LLM_START || k == EV_LLM_DONE || k == EV_STATE_SAVED || k == EV_CONTEXT_SHRUNK ||
         k == EV_SUMMARY || k == EV_MEMORY_RETRIEVED || k == EV_REFLECTION || k == EV_MEMORY_RATED;
}

static int shown(const output *o, ev_kind k) {
  if (k == EV_LLM_CHUNK && !o->o.stream) return 0;
  if (k == EV_TURN_QUEUED || k == EV_TURN_END) return 0; /* the thread's bookkeeping (docs/time.md) */
  return o->o.json || !plain_hidden(k);
}

void output_thread_step(output *o, ev_kind kind, const cJSON *fields) {
  if (!shown(o, kind)) return;
  const char *type = ev_kind_name(kind);
  if (o->o.json) {
    cJSON *j = output_step_json(o->world, o->chat, kind, fields);
    if (!j) return;
    print_json(o, j);
    cJSON_Delete(j);
  } else if (kind == EV_TURNS_RESUMED) { /* a sentence: the person should not miss it */
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(fields, "replies");
    const char *who = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fields, "agents"));
    int replies = cJSON_IsNumber(n) ? n->valueint : 0;
    fprintf(o->f, "%s-- resumed %d repl%s in flight at the crash (", o->color ? "\033[2m" : "", replies,
            replies == 1 ? "y" : "ies");
    put_text(o, who ? who : "");
    fprintf(o->f, ")%s\n\n", o->color ? "\033[0m" : "");
    fflush(o->f);
  } else {
    /* "-- type: k=v k=v", strings unquoted, so a person can read it at a glance. */
    fprintf(o->f, "%s-- %s:", o->color ? "\033[2m" : "", type);
    for (const cJSON *c = fields ? fields->child : NULL; c; c = c->next) {
      if (cJSON_IsString(c)) {
        fprintf(o->f, " %s=", c->string);
        put_text(o, c->valuestring);
      } else {
        char *v = cJSON_PrintUnformatted(c);
        if (v) fprintf(o->f, " %s=%s", c->string, v);
        free(v);
      }
    }
    /* Chunks (--stream) come many per reply: one line each, no blank line between. */
    fprintf(o->f, "%s\n%s", o->color ? "\033[0m" : "", strcmp(type, "llm-chunk") ? "\n" : "");
    fflush(o->f);
  }
}

/* A live event becomes JSON only here, and only when it is shown. */
void output_event(output *o, const world_event *e) {
  if (!shown(o, e->kind)) return;
  cJSON *fields = chat_event_fields(e);
  if (!fields) return;
  output_thread_step(o, e->kind, fields);
  cJSON_Delete(fields);
}

void output_on_bus(void *ud, bus_topic topic, void *payload) {
  output *o = ud;
  if (topic == BUS_MESSAGE) {
    output_message(o, payload);
  } else {
    output_event(o, &((const bus_event *)payload)->ev);
  }
}
