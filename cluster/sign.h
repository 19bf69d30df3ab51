/* Signed records (docs/distributed.md "Who may publish"): with a key shared by the world's processes,
 * every record published to the world's stream carries an HMAC-SHA256 of its subject, its
 * de-duplication id and its bytes, and a record without one, or with a wrong one, is refused. The key
 * comes from the environment (AGORA_NATS_SIGNING_KEY) like every other secret: never from the command
 * line, never stored, never logged; its copy here is wiped when freed. */
#ifndef AG_CLUSTER_SIGN_H
#define AG_CLUSTER_SIGN_H

#include <stddef.h>

#include "common/error.h"

/* The header a record's signature travels in, and its length as hex (with the NUL). */
#define SIGN_HEADER "Agora-Sig"
#define SIGN_HEX 65
/* The shortest key accepted, in bytes. */
#define SIGN_KEY_MIN 16

typedef struct sign_key sign_key;

/* The key of AGORA_NATS_SIGNING_KEY: *out NULL when it is not set (records go unsigned and are not
 * checked). AG_ERR_INVALID when it is shorter than SIGN_KEY_MIN bytes (em names the variable, never
 * the value). */
int sign_key_from_env(sign_key **out, ag_errmsg *em);
/* hex receives the signature of the record (subject, id and data[0..len) borrowed). */
void sign_record(const sign_key *k, const char *subject, const char *id, const char *data, size_t len,
                 char hex[SIGN_HEX]);
/* 1 when hex (may be NULL: unsigned) is the record's signature, compared in constant time. */
int sign_check(const sign_key *k, const char *subject, const char *id, const char *data, size_t len,
               const char *hex);
/* Wipes and frees k (NULL: nothing). */
void sign_key_free(sign_key *k);

#endif
