/* JSON-RPC 2.0 for MCP without any I/O: the newline-delimited framing of the stdio transport (a line
 * reader with a size cap that reports garbage instead of failing), a parsed message's kind and parts,
 * and the few messages a client writes. Pure, so the fuzzer (fuzz/fuzz_mcp_rpc.c) drives it directly. */
#ifndef AG_MCP_RPC_H
#define AG_MCP_RPC_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/buf.h"

#define MCP_LINE_CAP (4u << 20) /* one JSON-RPC message on a line, at most */

/* One complete line (no newline, a trailing \r removed, never empty or only blanks; borrowed for the
 * call, NUL-terminated), or too_long = 1 (line NULL) for a line past the cap, which is skipped up to
 * its newline. A non-zero return stops mcp_lines_feed and is passed back. */
typedef int (*mcp_line_fn)(void *ud, const char *line, size_t len, int too_long);

typedef struct mcp_lines {
  ag_buf line;
  int skipping; /* inside a line past the cap */
  mcp_line_fn fn;
  void *ud;
} mcp_lines;

void mcp_lines_init(mcp_lines *l, size_t cap, mcp_line_fn fn, void *ud);
/* Feeds bytes as they came (any split); 0, AG_ERR_NOMEM, or the callback's non-zero return. */
int mcp_lines_feed(mcp_lines *l, const char *data, size_t len);
void mcp_lines_free(mcp_lines *l);

typedef enum mcp_msg_kind {
  MCP_MSG_REQUEST,      /* method + id: the peer asks, an answer is due */
  MCP_MSG_NOTIFICATION, /* method, no id */
  MCP_MSG_RESULT,       /* id + result */
  MCP_MSG_ERROR         /* id (may be null) + error {code, message} */
} mcp_msg_kind;

/* A parsed message. Pointers are borrowed from root, which the message owns (mcp_msg_free). */
typedef struct mcp_msg {
  mcp_msg_kind kind;
  cJSON *root;
  const cJSON *id;         /* REQUEST, RESULT, ERROR (NULL for an error with a null id) */
  long long num_id;        /* id as a whole number when has_num_id (the ids this client sends) */
  int has_num_id;
  const char *method;      /* REQUEST, NOTIFICATION */
  const cJSON *params;     /* REQUEST, NOTIFICATION; may be NULL */
  const cJSON *result;     /* RESULT */
  long long error_code;    /* ERROR */
  const char *error_text;  /* ERROR: the message ("" when none) */
} mcp_msg;

/* Parses one JSON-RPC message (not a batch). AG_ERR_INVALID with why (a short static text) for
 * anything that is not one: not JSON, not an object, no jsonrpc "2.0", neither method nor result/error,
 * an id that is not null and fails mcp_rpc_id_ok. why is mcp_rpc_bad_request_id (the same pointer) for
 * a message with a method and such an id, which deserves an Invalid Request answer (mcp_rpc_invalid). */
extern const char mcp_rpc_bad_request_id[];
int mcp_msg_parse(const char *json, size_t len, mcp_msg *out, const char **why);
void mcp_msg_free(mcp_msg *m);

/* Calls fn with each message of text: the text itself, or each element of a JSON-RPC batch array
 * (printed anew). AG_ERR_INVALID for text that is not JSON or an empty batch; else fn's first non-zero. */
typedef int (*mcp_split_fn)(void *ud, const char *json, size_t len);
int mcp_rpc_split(const char *json, size_t len, mcp_split_fn fn, void *ud);

/* An id an answer can echo exactly: a string, or a whole number within +-(2^53 - 1) (MCP's "string or
 * integer"; past that two ids may read as one, and -1e999 is -Infinity, which cJSON prints as null). */
int mcp_rpc_id_ok(const cJSON *id);
/* A new item holding id as it must be echoed: a string, an exact integer (common/jsonnum.h), or null
 * for NULL or any id mcp_rpc_id_ok refuses. Caller owns; NULL when out of memory. */
cJSON *mcp_rpc_id_copy(const cJSON *id);

/* Messages a client writes, as new compact JSON text (caller frees; NULL without memory). params and
 * result are consumed (may be NULL). */
char *mcp_rpc_request(long long id, const char *method, cJSON *params);
char *mcp_rpc_notification(const char *method, cJSON *params);
char *mcp_rpc_result(const cJSON *id, cJSON *result);
char *mcp_rpc_error(const cJSON *id, int code, const char *message);
/* The answer to a message that is not a valid request: id null, code -32600, "Invalid Request: why". */
char *mcp_rpc_invalid(const char *why);

#endif
