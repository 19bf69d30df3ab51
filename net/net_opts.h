/* Trust and routing of a transfer: which CA bundle verifies servers (ca_file, then SSL_CERT_FILE, then
 * CURL_CA_BUNDLE, then the system's; SSL_CERT_DIR beside it), which proxy carries it, whether
 * certificates are checked at all, the TLS and HTTP/2 options set on a transfer, and what a TLS or proxy
 * failure is called (an llm-error's error_type). The LLM providers fill a net_opts from an agent's
 * settings, the MCP HTTP transport from its server's. */
#ifndef AG_NET_OPTS_H
#define AG_NET_OPTS_H

#include <curl/curl.h>
#include <stddef.h>

#include "common/error.h"

/* The strings are borrowed from the caller, except in a copy made by net_opts_copy, which owns them.
 * {0} is the default: the environment's bundle and proxies, certificates verified. */
typedef struct net_opts {
  char *ca_file; /* PEM bundle that verifies servers (and HTTPS proxies); NULL or "": the environment's */
  char *proxy;   /* proxy URL overriding HTTPS_PROXY/HTTP_PROXY/ALL_PROXY; NULL: those; "": none */
  int insecure;  /* 1: certificates and host names are NOT verified (local testing only) */
} net_opts;

/* A deep copy into dst (on failure dst is left empty), and its free (the record may be copied again). */
int net_opts_copy(net_opts *dst, const net_opts *src);
void net_opts_free(net_opts *o);

/* The CA bundle o uses: o->ca_file, else $SSL_CERT_FILE, else $CURL_CA_BUNDLE (non-empty), else NULL
 * (the system's). *from (may be NULL) names where it came from: "ca_file", the variable. */
const char *net_opts_ca_file(const net_opts *o, const char **from);

/* Checks that path is a readable PEM bundle holding at least one certificate; on failure writes why
 * ("cannot read '...': No such file or directory") into why. Returns AG_OK or AG_ERR_INVALID. */
int net_opts_check_ca_file(const char *path, char *why, size_t cap);

/* Checks that the CA bundle named by the environment loads (o->ca_file is checked where it is read, with
 * its path in the file); em names the variable. A bundle found good is not read again. */
int net_opts_check(const net_opts *o, ag_errmsg *em);

/* Sets the TLS, HTTP/2 and proxy options of a transfer to url (borrowed; the strings are copied by
 * libcurl). o NULL: the defaults. */
void net_opts_setup(CURL *easy, const net_opts *o, const char *url);

/* How a failed transfer to url is reported: fills type (an llm-error error_type, cap bytes) and
 * returns 1 when it is worth a retry. proxy_code is the proxy's answer to CONNECT (0: none); errmsg
 * is libcurl's message. */
int net_opts_classify(CURLcode res, long proxy_code, const char *errmsg, const char *url, char *type, size_t cap);

#endif
