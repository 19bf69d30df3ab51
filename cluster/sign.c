/* Signed records (see sign.h), with OpenSSL's HMAC-SHA256. The signed text is "agora-record-v1", the
 * subject, the de-duplication id and the bytes, each after a NUL, so that no field can be moved into
 * another: a signed record cannot be replayed on another chat's subject or under a new id. */
#include "cluster/sign.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sign_key {
  size_t len;
  unsigned char bytes[];
};

int sign_key_from_env(sign_key **out, ag_errmsg *em) {
  const char *v = getenv("AGORA_NATS_SIGNING_KEY");
  *out = NULL;
  if (!v || !v[0]) return AG_OK;
  size_t n = strlen(v);
  if (n < SIGN_KEY_MIN)
    return ag_fail(em, AG_ERR_INVALID, "AGORA_NATS_SIGNING_KEY: at least %d bytes are needed (it has %zu)",
                   SIGN_KEY_MIN, n);
  sign_key *k = malloc(sizeof *k + n);
  if (!k) return AG_ERR_NOMEM;
  k->len = n;
  memcpy(k->bytes, v, n);
  *out = k;
  return AG_OK;
}

/* The key's MAC of the record, fetched once per call: records are few (messages, not chunks). */
static void sign_mac(const sign_key *k, const char *subject, const char *id, const char *data, size_t len,
                     unsigned char mac[32]) {
  static const char tag[] = "agora-record-v1";
  char digest[] = "SHA256";
  size_t n = 0;
  EVP_MAC *m = EVP_MAC_fetch(NULL, "HMAC", NULL);
  EVP_MAC_CTX *h = m ? EVP_MAC_CTX_new(m) : NULL;
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  memset(mac, 0, 32);
  /* Each field with its NUL: "a" "bc" and "ab" "c" sign differently. */
  if (h && EVP_MAC_init(h, k->bytes, k->len, params) &&
      EVP_MAC_update(h, (const unsigned char *)tag, sizeof tag) &&
      EVP_MAC_update(h, (const unsigned char *)subject, strlen(subject) + 1) &&
      EVP_MAC_update(h, (const unsigned char *)id, strlen(id) + 1) &&
      EVP_MAC_update(h, (const unsigned char *)data, len))
    EVP_MAC_final(h, mac, &n, 32);
  EVP_MAC_CTX_free(h);
  EVP_MAC_free(m);
}

void sign_record(const sign_key *k, const char *subject, const char *id, const char *data, size_t len,
                 char hex[SIGN_HEX]) {
  unsigned char mac[32];
  sign_mac(k, subject, id, data, len, mac);
  for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", mac[i]);
}

int sign_check(const sign_key *k, const char *subject, const char *id, const char *data, size_t len,
               const char *hex) {
  char want[SIGN_HEX];
  if (!hex || !subject || !id || strlen(hex) != SIGN_HEX - 1) return 0;
  sign_record(k, subject, id, data, len, want);
  return CRYPTO_memcmp(want, hex, SIGN_HEX - 1) == 0;
}

void sign_key_free(sign_key *k) {
  if (!k) return;
  OPENSSL_cleanse(k->bytes, k->len);
  free(k);
}
