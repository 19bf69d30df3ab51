/* Trust and routing for the HTTP providers: which CA bundle verifies servers (ca_file, then
 * SSL_CERT_FILE, then CURL_CA_BUNDLE, then the system's), which proxy carries a call, the TLS and
 * HTTP/2 options of one transfer, and what a TLS or proxy failure is called in an llm-error.
 * Only llm/ and the world-file loader include this. */
#ifndef AG_LLM_NET_H
#define AG_LLM_NET_H

#include <curl/curl.h>
#include <stddef.h>

#include "llm/llm.h"

/* The CA bundle a config uses: cfg->ca_file, else $SSL_CERT_FILE, else $CURL_CA_BUNDLE (non-empty),
 * else NULL (the system's). *from (may be NULL) names where it came from: "ca_file", the variable. */
const char *llm_net_ca_file(const llm_config *cfg, const char **from);

/* Checks that path is a readable PEM bundle holding at least one certificate; on failure writes why
 * ("cannot read '...': No such file or directory") into why. Returns AG_OK or AG_ERR_INVALID. */
int llm_net_check_ca_file(const char *path, char *why, size_t cap);

/* What llm_endpoint_new checks for an HTTP provider: the CA bundle from the environment (ca_file is
 * checked by the world-file loader, with its JSON path) must load; insecure: true warns once. */
int llm_net_check(const llm_config *cfg, ag_errmsg *em);

/* Sets the TLS, HTTP/2 and proxy options of a transfer to url (borrowed; the strings are copied by
 * libcurl). */
void llm_net_setup(CURL *easy, const llm_config *cfg, const char *url);

/* How a failed transfer to url is reported: fills type (an llm-error error_type, cap bytes) and
 * returns 1 when it is worth a retry. proxy_code is the proxy's answer to CONNECT (0: none); errmsg
 * is libcurl's message. */
int llm_net_classify(CURLcode res, long proxy_code, const char *errmsg, const char *url, char *type, size_t cap);

#endif
