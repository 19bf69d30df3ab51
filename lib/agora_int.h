/* libagora's inside (lib/): the public handles of include/agora.h over the one runtime. agora_world.c
 * opens, runs and closes; agora_event.c delivers events, subscriptions and requests; agora_loop.c
 * embeds the loop in a foreign one; agora_chats.c manages chats. Nothing outside lib/ includes this. */
#ifndef AG_LIB_AGORA_INT_H
#define AG_LIB_AGORA_INT_H

#include "agora.h"

#include "common/buf.h"
#include "runtime/runtime.h"
#include "runtime/stats.h"

/* One subscription: fn 0 marks a slot ended (removed after the dispatch that ended it). */
typedef struct agora_sub {
  int id;
  agora_event_fn fn;
  void *ctx;
  unsigned flags;          /* API 10: AGORA_SUB_IDLE */
  char chat[AGORA_ID_MAX]; /* API 10: only this chat's events ("": every chat's) */
} agora_sub;

typedef struct agora_loop agora_loop;

struct agora_world {
  runtime *rt;
  world *w; /* borrowed from rt */
  unsigned flags;
  agora_sub *subs;
  size_t n_subs, cap_subs;
  int next_sub;
  int dispatching;    /* subscriptions ended inside a callback are compacted afterwards */
  ag_buf events;      /* agora_events_buffer's lines */
  size_t events_cap;  /* 0: no buffer */
  int events_dropped; /* lines lost to the cap since the last take */
  size_t asked;       /* requests delivered and not yet answered or withdrawn */
  int interrupted;    /* agora_interrupt: the run function returns AGORA_ERR_CANCELLED */
  int running;        /* inside a run function (agora_cancel interrupts it) */
  int epfd;           /* agora_fd: a stable epoll set holding inner, -1 until asked for */
  int inner;          /* the loop's descriptors, rebuilt after each run of the loop */
  int stepping;       /* inside agora_script_*: interrupts go to the world's own loop too */
  const char *program; /* agora_options.program, during agora_world_open only */
  struct event *tick; /* agora_tick's timer, and what it calls */
  agora_tick_fn tick_fn;
  void *tick_ctx;
  char current[AGORA_ID_MAX];
  /* What the program allowed at the open (agora_options' base_url, allow_env, allow_key_to), copied:
   * the rules a change of the world's agents is held to (agora_edit.c). */
  char *base_url;
  rt_allow_env allow;
  /* API 8: on a loop the program gave (agora_loops.c), NULL on the world's own; the database it shares
   * with the loop's other worlds (NULL: none). */
  agora_loop *loop;
  store *shared_st;
  /* API 10: agora_world_close_later under way (agora_close.c), else NULL. */
  struct agora_closing *closing;
  /* API 10: the chat the last event was in, and its last message delivered (agora_event_position). */
  char pos_chat[AGORA_ID_MAX];
  uint64_t position;
  size_t idle_subs; /* subscriptions with AGORA_SUB_IDLE */
  rt_stats stats;   /* API 10: what it did since the open (agora_world_counts) */
};

/* A database without a world (agora_db.c, agora_worlds.c). */
struct agora_db {
  store *st;
  agora_loop *loop; /* agora_loop_db: st is the loop's shared handle, released rather than closed */
  char *dir;        /* the db_dir given to agora_db_open (NULL: the default); where the LLM cache is */
};

/* rt_open with the library's hooks set (agora_world.c); with notes the LLM layer's warnings (insecure:
 * true) go to stderr while it opens, as the agora command prints them (AGORA_NOTES). */
int agora__rt_open(const rt_opts *ro, int notes, runtime **rt, ag_errmsg *em);
/* The failure's detail for agora_errmsg (thread-local); returns rc. */
int agora__fail(int rc, const ag_errmsg *em);
/* agora_publish's checks and publish, fn naming the call in errors; *out (out may be NULL) the queued
 * message, borrowed (NULL on a world joined over NATS) (agora_world.c; agora_publish_seq, API 13). */
int agora__publish(agora_world *w, const char *fn, const char *sender, const char *text, ag_msg **out);
/* The bus handler and the approver the runtime is opened with (agora_event.c). */
void agora__on_bus(void *ud, bus_topic topic, void *payload);
/* The bus's idle hook at the output slot: AGORA_EVENT_IDLE to the subscriptions that asked (API 10). */
void agora__on_idle(void *ud);
extern const world_approver agora__approver;
/* Frees the subscriptions and the buffer. */
void agora__events_free(agora_world *w);
/* Appends m's JSON line (without the newline) to b, as runtime/output.c's output_message_json prints
 * it; AG_ERR_INVALID (b unchanged) when a string is not valid UTF-8: use that slow path then. */
int agora__message_line(ag_buf *b, const char *world, const char *chat, const ag_msg *m);
/* The same for an event (output_step_json's line); AG_ERR_INVALID also for the rare fields it renames. */
int agora__event_line(ag_buf *b, const char *world, const char *chat, const world_event *e);
/* Shared by a world's chat calls (agora_chats.c) and the database handle's (agora_db.c), on the store
 * they work on; each returns an ag_err with em filled. */
/* j as text into *json (j consumed; UTF-8 repaired as the output layer does). */
int agora__hand_out(cJSON *j, char **json, ag_errmsg *em);
/* The chats of world_id (NULL: every world), most recently updated first, as a JSON array. */
int agora__chats_json(store *st, const char *world_id, char **json, ag_errmsg *em);
/* Chat id's snapshot document. */
int agora__export_json(store *st, const char *id, char **json, ag_errmsg *em);
/* JSON text from a program parsed into *out (the caller's): at most max bytes (AG_ERR_TOO_BIG) and no
 * \u0000 (which cJSON would cut a string at); fn and arg name a NULL text, source the document in errors. */
int agora__json_parse(const char *text, size_t max, const char *fn, const char *arg, const char *source, cJSON **out,
                      ag_errmsg *em);
/* Snapshot text parsed into *snap (the caller's), under SNAPSHOT_MAX and with no \u0000; fn names the
 * call when text is NULL, source the document in errors. */
int agora__snapshot_parse(const char *text, const char *source, const char *fn, cJSON **snap, ag_errmsg *em);
/* Imports snapshot text as a new chat; source names it in errors ("snapshot", a file's path). */
int agora__import_text(store *st, const char *text, const char *source, char id[AGORA_ID_MAX], ag_errmsg *em);
/* Chat id (resolved) as JSON into *json: the shape of the chat calls on a world and on a database. */
typedef int (*agora__chat_json_fn)(store *st, const char *id, char **json, ag_errmsg *em);
/* Chat id's transcript (agora_transcript's array), its usage (agora_usage's) (agora_chats.c). */
int agora__transcript_json(store *st, const char *id, char **json, ag_errmsg *em);
int agora__usage_json(store *st, const char *id, char **json, ag_errmsg *em);
/* A window of chat id's messages, agora_messages' array (from > 0: from seq from on; 0: the last max; at
 * most max, 0: no limit), for agora_messages and agora_db_messages (agora_chats.c). */
int agora__messages_json(store *st, const char *id, uint64_t from, size_t max, char **json, ag_errmsg *em);
/* ms as ISO 8601 into o under key, or null when !has (agora_clock.c; the cache's counts use it too). */
void agora__add_time(cJSON *o, const char *key, int has, int64_t ms);
/* Keeps copies of what the program allowed at the open (agora_edit.c); agora__allow_free releases them. */
int agora__allow_keep(agora_world *w, const char *base_url, const rt_allow_env *allow);
void agora__allow_free(agora_world *w);
/* An event of the library's own, not on the bus (the stream's chat), to the subscribers (agora_event.c). */
void agora__dispatch_own(agora_world *w, const world_event *e);
/* AGORA_VIEW (agora_view.c): on a world joined as a viewer, AG_ERR_STATE (em naming fn) for what would hold
 * in this process only, and for chat operation op ("load", "delete", "branch") on chat that the other
 * processes would not follow; AG_OK otherwise and on any other world. */
int agora__local_only(agora_world *w, const char *fn, ag_errmsg *em);
int agora__view_refuses(agora_world *w, const char *fn, const char *op, const char *chat, ag_errmsg *em);
/* After a chat operation succeeded: with record, chat's title (NULL: its deletion) is recorded for every
 * process; then the next message goes to the current chat. AG_OK on a world not joined. */
int agora__view_done(agora_world *w, const char *chat, const char *title, int record, ag_errmsg *em);
/* The runtime's on_stream_chat: a chat-loaded event for the chat the stream moved to (ud is the handle). */
void agora__stream_chat(void *ud, const char *chat);
/* Brings agora_fd's epoll set up to date with the loop's descriptors (agora_loop.c). */
void agora__loop_sync(agora_world *w);
void agora__loop_free(agora_world *w);
/* A shared loop (agora_loops.c). join: w is one of base's worlds, from the calling thread only (the
 * thread of its first world); with wants_db, *st is the database in db_dir the loop's worlds share
 * (borrowed until agora__loop_leave), switched to background syncs watched on base with background
 * (API 10). AG_ERR_STATE from another thread. */
int agora__loop_join(agora_world *w, struct event_base *base, const char *db_dir, int wants_db, int background,
                     store **st, ag_errmsg *em);
void agora__loop_leave(agora_world *w);
/* AG_ERR_EXISTS when another world of w's loop has w's id (once built). */
int agora__loop_unique(agora_world *w, ag_errmsg *em);
/* Around a run function: refuses (agora__fail, fn naming it) when the loop runs already or belongs to
 * another thread; else marks it running until agora__loop_exit. */
int agora__loop_enter(agora_world *w, const char *fn);
void agora__loop_exit(agora_world *w);
/* Releases an agora_loop_db handle's share of its loop's database. */
void agora__loop_db_close(agora_db *db);
/* Frees what agora_world_open made of w beside the runtime (after rt_close): agora_world_close's end,
 * and agora_world_close_later's. */
void agora__world_free(agora_world *w);
/* AGORA_UNTRUSTED (agora_create.c): json checked as a world file and stored as a new world, in st (a
 * loop's shared database) or else the database in db_dir; its id into id. */
int agora__world_create(const char *json, const char *db_dir, store *st, char id[AGORA_ID_MAX], ag_errmsg *em);
/* A world closing later: its id (name 0) or display name (name 1), kept after its runtime closed; NULL for
 * a world not closing. */
const char *agora__closing_id(const agora_world *w, int name);
/* The id w holds on its loop (open, or closing until freed); NULL while it is still opening. */
const char *agora__loop_id(const agora_world *w);
/* 1 when a world of id is open on lp. */
int agora__loop_has_world(const agora_loop *lp, const char *id);

#endif
