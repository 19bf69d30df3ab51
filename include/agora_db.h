/* libagora: what needs no world open (include "agora.h": it includes this file, which is not meant to be
 * included on its own) — a database's worlds and chats (API version 2), the LLM response cache and a
 * snapshot file (API version 4), a program's arguments and documents, a chat's memories (API version 9).
 * The rules of agora.h hold: ownership, threads and error codes as there. */
#ifndef AGORA_DB_H
#define AGORA_DB_H

#include "agora.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- A database without a world (API version 2) ----
 * The chats of every world a database holds, with no world opened: no agent, no loop, nothing started
 * (what `agora chats` does). Chats are named by their id or a unique prefix across all worlds; worlds
 * by id or display name. JSON handed back is the caller's (agora_free). A handle is used by one thread
 * at a time. A process opens one database directory once: not with agora_db_open and agora_world_open
 * at the same time. */

/* agora_db_open flags */
#define AGORA_DB_READ 0x01 /* read only: nothing is created (a read-only directory works); a missing
                              database is AGORA_ERR_NOT_FOUND */

/* Opens the database in db_dir (NULL: the default, docs/cli.md "Where data lives"), created when
 * missing unless AGORA_DB_READ. On success *out is the caller's (agora_db_close); on failure NULL. */
AGORA_EXPORT int agora_db_open(const char *db_dir, unsigned flags, agora_db **out);
/* Closes the database. NULL is fine. */
AGORA_EXPORT void agora_db_close(agora_db *db);
/* The chats of world (NULL: of every world), most recently updated first, as agora_chats. An unknown
 * world is AGORA_ERR_INVALID ("no world 'X'"). */
AGORA_EXPORT int agora_db_chats(agora_db *db, const char *world, char **json);
/* As agora_chat_export, agora_chat_branch. */
AGORA_EXPORT int agora_db_chat_export(agora_db *db, const char *chat, char **json);
AGORA_EXPORT int agora_db_chat_branch(agora_db *db, const char *chat, uint64_t seq, char id[AGORA_ID_MAX]);
/* As agora_chat_import; source names the document in errors ("town.json: messages[3].text: ..."),
 * NULL for "snapshot". A string holding \u0000 is refused (AGORA_ERR_INVALID). */
AGORA_EXPORT int agora_db_chat_import(agora_db *db, const char *snapshot_json, const char *source,
                                      char id[AGORA_ID_MAX]);
/* Deletes a chat without taking its world's current chat (another process may hold it); refused
 * (AGORA_ERR_STATE) while another process holds this one. current (may be NULL) receives its world's
 * current chat afterwards, "" when none. */
AGORA_EXPORT int agora_db_chat_delete(agora_db *db, const char *chat, char current[AGORA_ID_MAX]);
/* Makes a new chat current in world (NULL: the only world the database holds; an empty "New Chat" is
 * reused); its id into id. */
AGORA_EXPORT int agora_db_chat_new(agora_db *db, const char *world, char id[AGORA_ID_MAX]);

/* A chat as `agora chats show` prints it (API version 3), chat named as above (NULL is
 * AGORA_ERR_INVALID): its row as agora_db_chats gives it (one object); its transcript and usage as
 * agora_transcript and agora_usage; and the context each agent saved in it, a JSON array of
 * {"version","updated_at" (or null),"data","agent"} (docs/behaviour.md, save_context), [] when none. */
AGORA_EXPORT int agora_db_chat_info(agora_db *db, const char *chat, char **json);
AGORA_EXPORT int agora_db_transcript(agora_db *db, const char *chat, char **json);
AGORA_EXPORT int agora_db_usage(agora_db *db, const char *chat, char **json);
AGORA_EXPORT int agora_db_chat_state(agora_db *db, const char *chat, char **json);
/* A window of a stored chat's messages (API version 12): agora_messages' twin on a database, for a
 * program that pages through a chat with no world open (agora serve's search) instead of reading the
 * whole transcript. chat named as above (NULL is AGORA_ERR_INVALID; an unknown chat AGORA_ERR_NOT_FOUND):
 * from > 0, the messages from number from on; from 0, the last max. At most max of them (0: no limit), in
 * order, as a JSON array of the objects `agora run --json` prints (each with its "seq"), without the
 * thread's steps; [] past the last. *json is the caller's (agora_free); nothing is handed back on
 * failure. Reads only, so it may be called on agora_loop_db's handle while the loop's worlds write. */
AGORA_EXPORT int agora_db_messages(agora_db *db, const char *chat, uint64_t from, size_t max, char **json);
/* The messages of a stored chat whose text or sender holds text (API version 14; agora serve's GET
 * …/chats/{chat}/search): ASCII letters compared without case, other bytes (UTF-8) as they are; 1 to 255
 * bytes. Those numbered after after, oldest first, at most max (>= 1), found in one pass on the database's
 * side (a chat of 100,000 messages in about 10 ms): {"matches":[...],"more":bool}, each match the object
 * agora_db_messages gives, more true when a match past max exists (ask again with after = the last match's
 * seq). chat named as above (an unknown one AGORA_ERR_NOT_FOUND); an empty or longer text, max 0 or a NULL
 * argument AGORA_ERR_INVALID. Reads only (fine on agora_loop_db's handle). *json the caller's (agora_free),
 * NULL on failure. */
AGORA_EXPORT int agora_db_search(agora_db *db, const char *chat, const char *text, uint64_t after, size_t max,
                                 char **json);

/* The worlds the database holds (API version 4; `agora worlds` is written on these). Worlds are named by
 * id or display name; an unknown one is AGORA_ERR_INVALID ("no world 'X'"). A JSON array of every world,
 * {"id","name","agents","chats","current_chat" (null when none)}, as `agora worlds list --json` prints them: */
AGORA_EXPORT int agora_db_worlds(agora_db *db, char **json);
/* One world with its stored settings (the world file's form, without script or secrets):
 * {"id","name","chats","current_chat","settings":{...}}, as `agora worlds show --json` prints it. */
AGORA_EXPORT int agora_db_world(agora_db *db, const char *world, char **json);
/* Deletes a world with all its chats (not with AGORA_DB_READ: AGORA_ERR_STORAGE). id (may be NULL)
 * receives the world's id, chats (may be NULL) how many chats went with it. */
AGORA_EXPORT int agora_db_world_delete(agora_db *db, const char *world, char id[AGORA_ID_MAX], size_t *chats);

/* ---- The LLM response cache (API version 4; `agora cache` is written on these) ----
 * The cache of --llm-cache (docs/cli.md "The LLM response cache"): in cache_dir, else llm-cache in db_dir
 * (NULL: the default database directory), created when missing; opened for the call only. Its counts as
 * {"entries","bytes","oldest","newest"} (the times ISO 8601, null when it is empty), *json the caller's: */
AGORA_EXPORT int agora_cache_stats(const char *db_dir, const char *cache_dir, char **json);
/* Removes the entries stored before before_ms (ms since the epoch; INT64_MAX: every one); removed (may be
 * NULL) counts them. AGORA_ERR_STORAGE when the cache cannot be written. */
AGORA_EXPORT int agora_cache_clear(const char *db_dir, const char *cache_dir, int64_t before_ms, size_t *removed);

/* ---- A snapshot without a database (API version 4) ---- */
/* The transcript of a snapshot document (JSON text, the one agora_chat_export and `agora chats export`
 * write) as agora_transcript gives a stored chat's, without importing it: nothing is opened or written
 * (what `agora replay SNAPSHOT.json` prints). Its entries name the snapshot's world and chat. source
 * names the document in errors ("town.json: messages[3].text: ..."), NULL for "snapshot". Invalid is
 * AGORA_ERR_INVALID naming the field, a newer format AGORA_ERR_VERSION, past the size cap
 * AGORA_ERR_TOO_BIG. *json is the caller's (agora_free). Any thread. */
AGORA_EXPORT int agora_snapshot_transcript(const char *snapshot_json, const char *source, char **json);

/* ---- A command-line program's arguments and process (API version 9) ---- */
/* The id a display name makes (a world's or an agent's: "Starter 2" is starter-2): lower-cased, runs of
 * white space made '-', into id. AGORA_ERR_INVALID when name makes no id (it must start with a letter or
 * digit, then hold only letters, digits, '_', '-' and spaces, at most 63 of them). Pure; any thread. */
AGORA_EXPORT int agora_name_id(const char *name, char id[AGORA_ID_MAX]);
/* Whether value is one the library takes for agora_options' field ("provider": script, openai,
 * anthropic, gemini, ollama; "llm_cache": off, use, replay), so that a program refuses a bad argument
 * before it opens anything. AGORA_OK, or AGORA_ERR_INVALID with agora_errmsg saying what is expected
 * ("unknown provider 'x' (expected ...)"; an unknown field names itself). Pure; any thread. */
AGORA_EXPORT int agora_option_check(const char *field, const char *value);
/* Names this process (a command's name, "run"; at most 31 bytes kept) in the lock file of every chat it
 * holds, after its pid, so that another process refused the chat says who holds it ("chat X is in use by
 * pid N (run)"). NULL or "": no name (the default). Process-wide: call it once, before any world opens. */
AGORA_EXPORT void agora_process_name(const char *name);

/* The id of chat (its id, or a unique prefix of one; an exact id wins over longer ids it starts) into id:
 * what every call naming a chat resolves, for a program that compares it with a world's current chat.
 * AGORA_ERR_NOT_FOUND when no chat matches, AGORA_ERR_INVALID when several do (agora_errmsg lists them). */
AGORA_EXPORT int agora_db_chat_id(agora_db *db, const char *chat, char id[AGORA_ID_MAX]);

/* ---- Documents without a database (API version 9) ---- */
/* The most bytes of a snapshot document (a file `agora chats export` writes) the library reads. */
#define AGORA_SNAPSHOT_MAX (256u << 20)
/* A snapshot document (agora_db_chat_export's JSON) as the Markdown of `agora chats export --format md`,
 * and a world's settings (the "settings" object agora_db_world gives, world-file form) as that of `agora
 * worlds export --format md`, into *md (the caller's, agora_free; NULL on failure). Malformed JSON is
 * AGORA_ERR_INVALID, past AGORA_SNAPSHOT_MAX AGORA_ERR_TOO_BIG. Pure; any thread. */
AGORA_EXPORT int agora_snapshot_markdown(const char *snapshot_json, char **md);
AGORA_EXPORT int agora_world_markdown(const char *world_json, char **md);

/* ---- A chat's memories without a world (API version 9; `agora memory` is written on it) ---- */
/* What agent remembers in chat (an id or a unique prefix), as agora_memories's object, from the database
 * alone: the chat's stored world is opened for the call, inert (no MCP server, no clock, no turn, no LLM
 * call), and closed. With query and a hosted embedder the query (and the memories not embedded yet) is
 * embedded first, blocking until the embedder answers; the key goes to a stored world's base_url only
 * when allow_key_to (n_allow_key_to URLs, at most 16; may be NULL with 0) holds it, as agora_options'
 * allow_key_to. An embedder that fails is no error: the memories come without relevance and
 * "embedder_failed" says why (`agora memory` exits 1 then). flags: AGORA_NOTES prints the LLM layer's
 * warnings (insecure: true) on stderr while the world opens, as agora_world_open does; 0 prints nothing.
 * Not from a callback of a running loop. */
AGORA_EXPORT int agora_db_memories(agora_db *db, const char *chat, const char *agent, const char *query,
                                   const char *const *allow_key_to, size_t n_allow_key_to, unsigned flags,
                                   char **json);

#ifdef __cplusplus
}
#endif

#endif
