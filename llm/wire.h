/* What each HTTP provider's wire format supplies to the shared call engine (llm/remote.c): how to
 * build the request, how to read a streamed event or a whole reply, and where its key goes. One
 * llm_wire per provider (openai.c, anthropic.c, gemini.c, ollama.c); the JSON helpers they share are
 * here too. Parsing is pure, so every format is tested on strings without a server. */
#ifndef AG_LLM_WIRE_H
#define AG_LLM_WIRE_H

#include <stddef.h>

#include "common/buf.h"
#include "llm/llm.h"
#include "net/net_stream.h"

struct cJSON;

/* A tool call being read from a reply. Streamed calls arrive in pieces keyed by the provider's index
 * (OpenAI's tool_calls[].index, Anthropic's content block index); whole ones arrive at once. */
typedef struct llm_wire_call {
  long index;
  char *id, *name;  /* NULL until seen */
  ag_buf args;      /* argument text as it came, pieces concatenated; never validated here */
  int provisional;  /* args hold a whole value from a block's start, replaced by the first piece */
  char *signature;  /* Gemini's thoughtSignature of the call, or NULL */
} llm_wire_call;

/* The tool calls of one reply, in the order they first appeared. */
typedef struct llm_wire_calls {
  llm_wire_call *v;
  size_t n;
  size_t bytes, cap; /* ids, names and arguments so far; their cap */
} llm_wire_calls;

#define LLM_WIRE_MAX_CALLS 128 /* tool calls in one reply */

void llm_wire_calls_init(llm_wire_calls *c, size_t cap);
void llm_wire_calls_free(llm_wire_calls *c);

/* Where parsing puts what it finds; filled by the engine, written by the wire functions. */
typedef struct llm_wire_out {
  /* Appends reply text (the engine delivers it as a chunk when streaming); a non-zero return
   * (cancelled, too big) must be passed back up unchanged. */
  int (*text)(void *ctx, const char *s, size_t n);
  void *ctx;
  llm_wire_calls *calls;            /* where tool calls go; NULL: they are read and dropped */
  long input_tokens, output_tokens; /* usage, when the provider reports it */
  int done;                         /* the reply's end was seen ([DONE], message_stop, done:true) */
  llm_error_info *err;              /* type and message of an error object or malformed input */
} llm_wire_out;

/* The wire functions return AG_OK; AG_ERR_LLM for an error object in the reply (err->type and
 * err->message filled); AG_ERR_INVALID for malformed input (err filled); or what text() returned. */
typedef struct llm_wire {
  llm_provider_kind kind;
  const char *default_base_url;
  const char *default_model;
  int needs_key;              /* no key: the call fails before any request */
  const char *key_header;     /* prefix of the header line the key is appended to */
  const char *extra_header;   /* one fixed header line, or NULL */
  net_stream_kind framing;    /* of streamed replies */
  int eof_is_done;            /* a stream that simply ends is complete (Gemini has no end marker) */
  /* Appends the URL to url and returns the JSON body in *body (malloc'd). req is borrowed. */
  int (*build)(const llm_config *cfg, const llm_request *req, ag_buf *url, char **body);
  /* One streamed event (event is "" for NDJSON and unnamed SSE events). */
  int (*stream_event)(const char *event, const char *data, size_t len, llm_wire_out *out);
  /* The whole body of a non-streamed 2xx reply. */
  int (*parse_body)(const char *body, size_t len, llm_wire_out *out);
} llm_wire;

extern const llm_wire llm_openai_wire;
extern const llm_wire llm_anthropic_wire;
extern const llm_wire llm_gemini_wire;
extern const llm_wire llm_ollama_wire;

/* The wire of an HTTP provider; NULL for the script provider. */
const llm_wire *llm_wire_for(llm_provider_kind kind);

/* --- Helpers shared by the wire formats. --- */

/* Keys (issue 15): the variable cfg's key comes from (NULL: no key is sent) and, in *required, whether a
 * call must fail without it. "api_key_env": "" means none at all; a named variable is required; otherwise
 * the provider's default variable is sent when set, and required only for the hosted default URL (a local
 * server at an explicit base_url usually needs no key). A key the runtime withheld (issue 28 item 2a) is
 * like "". Chat calls (llm/remote.c) and embedders (llm/embed.c) share it. */
const char *llm_wire_key_env(const llm_config *cfg, const llm_wire *w, int *required);

/* Appends cfg->base_url (or dflt) without trailing slashes, then the printf-formatted rest. */
int llm_wire_url(ag_buf *url, const llm_config *cfg, const char *dflt, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Parses JSON; malformed → AG_ERR_INVALID with err filled ("malformed"). *out is the caller's. */
int llm_wire_json(const char *data, size_t len, struct cJSON **out, llm_error_info *err);
/* When root carries an error object ({"error":{...}}, {"error":"..."}, {"type":"error",...}, or an
 * array holding one), fills err and returns 1. */
int llm_wire_error_object(const struct cJSON *root, llm_error_info *err);
/* Fills type and message from a non-2xx reply's body, whatever its shape (JSON of any of the four
 * providers, or text such as a proxy's HTML page). */
void llm_wire_error_body(const char *body, size_t len, llm_error_info *err);
/* A tool call's index (a JSON number or NULL); dflt when it is missing or not a whole number ≥ 0. */
long llm_wire_index(const struct cJSON *ix, long dflt);
/* The string member key of obj, or NULL. */
const char *llm_wire_str(const struct cJSON *obj, const char *key);
/* Serialises root (consumed) into *body (malloc'd). */
int llm_wire_body(struct cJSON *root, char **body);
/* Reads the token counts in_key and out_key of obj (numbers; missing ones leave out untouched) into
 * out->input_tokens and out->output_tokens. obj may be NULL; a count that is not a whole number in range is
 * left unreported. */
void llm_wire_usage(const struct cJSON *obj, const char *in_key, const char *out_key, llm_wire_out *out);

/* --- Tool calling (llm/wire_tools.c). --- */

/* Adds a piece of the streamed call with this index (made on first sight): id and name when not
 * yet known (NULL: none in this piece), and args_len bytes of argument text. AG_ERR_TOO_BIG (err
 * filled) past the caps. */
int llm_wire_call_piece(llm_wire_out *out, long index, const char *id, const char *name, const char *args,
                        size_t args_len);
/* Adds argument text to the streamed call with this index when there is one (else drops it: Anthropic
 * streams input only for blocks it started). */
int llm_wire_call_append(llm_wire_out *out, long index, const char *args, size_t args_len);
/* Marks the streamed call with this index as made with whole arguments (a JSON value, may be NULL)
 * that its first argument piece replaces: Anthropic's content_block_start carries an input. */
int llm_wire_call_start(llm_wire_out *out, long index, const char *id, const char *name,
                        const struct cJSON *args);
/* Adds a whole call (always a new one). args: a string is taken as the argument text itself (the
 * model's text, valid JSON or not), any other value is serialised; NULL means none. */
int llm_wire_call_whole(llm_wire_out *out, const char *id, const char *name, const struct cJSON *args);

/* Gives the most recent call a signature to send back with it (Gemini's thoughtSignature). */
int llm_wire_call_sign(llm_wire_out *out, const char *signature);

/* A tool's parameters_json as an object, for the request (an empty object schema when NULL).
 * AG_ERR_INVALID when it is not a JSON object. */
int llm_wire_schema(const char *parameters_json, struct cJSON **out);
/* A call's arguments as an object, for formats that send objects: {} when args_json is not one (a
 * model's malformed arguments cannot be sent back as they were). NULL only without memory. */
struct cJSON *llm_wire_args_object(const char *args_json);
/* A tool result as an object, for Gemini: content parsed when it is an object, else wrapped as
 * {"result": value} (value: the parsed JSON, or the text itself as a string). */
struct cJSON *llm_wire_result_object(const char *content);
/* Appends one declaration per tool of req to the array decls: {"name", "description" (when set),
 * schema_key: the parameters schema}, wrapped as {"type":"function","function":{...}} when
 * as_function (the OpenAI shape). AG_ERR_INVALID for a schema that is not an object. */
int llm_wire_tool_list(struct cJSON *decls, const llm_request *req, const char *schema_key, int as_function);
/* Adds "tools" in the OpenAI shape (also Ollama's): [{"type":"function","function":{name,
 * description, parameters}}]; nothing when the request has no tools. */
int llm_wire_function_tools(struct cJSON *root, const llm_request *req);

#endif
