/* Trust and routing of a transfer (see net_opts.h). Only the CA bundle's path is chosen here:
 * libcurl loads it once per multi handle and shares the parsed store between connections (its CA
 * cache), which is why CAPATH is cleared: a CA directory turns that cache off. A CA directory
 * (SSL_CERT_DIR) is added to that cached store instead, from the TLS context callback. */
#include "net/net_opts.h"

#include "common/buf.h"

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NET_CA_FILE_MAX (16u << 20)   /* a CA bundle is a few hundred KiB */
#define NET_CA_CACHE_SECONDS 86400L  /* the parsed CA store is reused for a day */

static int dup_opt(char **dst, const char *src) {
  *dst = NULL;
  if (!src) return AG_OK;
  *dst = strdup(src);
  return *dst ? AG_OK : AG_ERR_NOMEM;
}

int net_opts_copy(net_opts *dst, const net_opts *src) {
  *dst = (net_opts){.insecure = src->insecure};
  if (dup_opt(&dst->ca_file, src->ca_file) || dup_opt(&dst->proxy, src->proxy)) {
    net_opts_free(dst);
    return AG_ERR_NOMEM;
  }
  return AG_OK;
}

void net_opts_free(net_opts *o) {
  free(o->ca_file);
  free(o->proxy);
  *o = (net_opts){0};
}

static const char *nonempty_env(const char *name) {
  const char *v = getenv(name);
  return v && v[0] ? v : NULL;
}

const char *net_opts_ca_file(const net_opts *o, const char **from) {
  static const char *const vars[] = {"SSL_CERT_FILE", "CURL_CA_BUNDLE"};
  if (o->ca_file && o->ca_file[0]) {
    if (from) *from = "ca_file";
    return o->ca_file;
  }
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = nonempty_env(vars[i]);
    if (v) {
      if (from) *from = vars[i];
      return v;
    }
  }
  return NULL;
}

int net_opts_check_ca_file(const char *path, char *why, size_t cap) {
  char *text = NULL;
  size_t len = 0;
  ag_errmsg em = {""};
  int rc = ag_file_read(path, NET_CA_FILE_MAX, &text, &len, &em);
  if (rc) {
    snprintf(why, cap, "%s", em.text[0] ? em.text : ag_strerror(rc));
    return AG_ERR_INVALID;
  }
  int pem = memmem(text, len, "-----BEGIN CERTIFICATE-----", 27) != NULL;
  free(text);
  if (!pem) {
    snprintf(why, cap, "'%s' holds no PEM certificate (-----BEGIN CERTIFICATE-----)", path);
    return AG_ERR_INVALID;
  }
  return AG_OK;
}

int net_opts_check(const net_opts *o, ag_errmsg *em) {
  static char checked[4096]; /* the last bundle found good: a world of 1,000 agents reads it once */
  const char *from = NULL;
  const char *ca = net_opts_ca_file(o, &from);
  char why[400];
  if (ca && strcmp(from, "ca_file") != 0 && strcmp(ca, checked) != 0) {
    if (net_opts_check_ca_file(ca, why, sizeof why)) return ag_fail(em, AG_ERR_INVALID, "%s: %s", from, why);
    snprintf(checked, sizeof checked, "%s", ca);
  }
  return AG_OK;
}

/* libcurl reads http_proxy only in lower case (a CGI precaution that does not apply to a CLI); the
 * upper-case spelling is honoured here so that all the usual variables work. */
static const char *upper_http_proxy(const char *url) {
  if (strncasecmp(url, "http://", 7) != 0 || getenv("http_proxy")) return NULL;
  return nonempty_env("HTTP_PROXY");
}

/* Runs before each TLS handshake, after libcurl set the context's store: the cached one, shared by
 * every connection of the multi handle. The directory is added to it as a lazy lookup (OpenSSL's
 * hashed-directory method): a CA is read from it the first time a chain needs it and then kept in
 * the store, so a directory costs one file read per CA per store rather than one per connection.
 * Adding the same directory again is a no-op (OpenSSL keeps one entry per directory). */
static CURLcode net_add_ca_dir(CURL *easy, void *ssl_ctx, void *dir) {
  (void)easy;
  X509_STORE *store = SSL_CTX_get_cert_store(ssl_ctx);
  X509_LOOKUP *lookup = store ? X509_STORE_add_lookup(store, X509_LOOKUP_hash_dir()) : NULL;
  if (!lookup || !X509_LOOKUP_add_dir(lookup, dir, X509_FILETYPE_PEM)) return CURLE_SSL_CACERT_BADFILE;
  return CURLE_OK;
}

/* SSL_CERT_DIR (OpenSSL's convention: a hashed directory, as `openssl rehash` makes) adds its CAs to
 * the bundle's. CAPATH would do it too, but it turns libcurl's CA cache off: with 200 agents on an
 * HTTPS/1.1 endpoint every connection parsed the whole bundle again (5.1 s of CPU, 192 MB). Only when
 * libcurl's TLS library has no context callback (not OpenSSL), or the path is too long to keep, is
 * CAPATH the fallback. The callback gets a copy: the environment's string may be replaced by a later
 * setenv while a handshake is still to come. One copy for the process: SSL_CERT_DIR is one setting. */
static void net_ca_dir(CURL *easy, const char *dir) {
  static char kept[4096];
  if (strlen(dir) < sizeof kept && strcmp(kept, dir) != 0) snprintf(kept, sizeof kept, "%s", dir);
  if (!strcmp(kept, dir) && curl_easy_setopt(easy, CURLOPT_SSL_CTX_FUNCTION, net_add_ca_dir) == CURLE_OK &&
      curl_easy_setopt(easy, CURLOPT_SSL_CTX_DATA, (void *)kept) == CURLE_OK)
    return;
  curl_easy_setopt(easy, CURLOPT_CAPATH, dir);
  curl_easy_setopt(easy, CURLOPT_PROXY_CAPATH, dir);
}

void net_opts_setup(CURL *easy, const net_opts *o, const char *url) {
  static const net_opts defaults;
  const net_opts *cfg = o ? o : &defaults;
  const char *ca = net_opts_ca_file(cfg, NULL);
  if (!ca) {
    /* The system bundle, found by libcurl's built-in path; without a CA directory beside it. */
    char *def = NULL;
    if (curl_easy_getinfo(easy, CURLINFO_CAINFO, &def) == CURLE_OK && def) ca = def;
  }
  if (ca) {
    curl_easy_setopt(easy, CURLOPT_CAINFO, ca);
    curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
    curl_easy_setopt(easy, CURLOPT_PROXY_CAINFO, ca);
    curl_easy_setopt(easy, CURLOPT_PROXY_CAPATH, NULL);
  }
  const char *dir = nonempty_env("SSL_CERT_DIR");
  if (dir) net_ca_dir(easy, dir);
#if LIBCURL_VERSION_NUM >= 0x075700 /* 7.87.0 */
  curl_easy_setopt(easy, CURLOPT_CA_CACHE_TIMEOUT, NET_CA_CACHE_SECONDS);
#endif
  if (cfg->insecure) {
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(easy, CURLOPT_PROXY_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(easy, CURLOPT_PROXY_SSL_VERIFYHOST, 0L);
  }
  /* HTTP/2 over TLS when the server offers it, and a new call waits for a connection it can share
   * rather than opening its own: 200 calls become ~2 connections at 100 streams each. */
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
  curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
  const char *proxy = cfg->proxy ? cfg->proxy : upper_http_proxy(url);
  if (proxy) curl_easy_setopt(easy, CURLOPT_PROXY, proxy); /* "" turns proxies off */
}

static int mentions(const char *s, const char *word) { return s && strstr(s, word) != NULL; }

/* libcurl 7.88 does not say whether a refused connection was to the proxy, but its message names the
 * address it tried ("Failed to connect to HOST port N ..."): not the URL's host and port means the
 * proxy's. */
static int refused_by_proxy(const char *errmsg, const char *url) {
  char host[256], uhost[256] = "";
  long port = 0, uport = 0;
  if (!errmsg || sscanf(errmsg, "Failed to connect to %255s port %ld", host, &port) != 2) return 0;
  const char *p = strstr(url, "://");
  if (!p) return 0;
  p += 3;
  size_t n = strcspn(p, ":/?#");
  if (n >= sizeof uhost) return 0;
  memcpy(uhost, p, n);
  uhost[n] = '\0';
  uport = p[n] == ':' ? strtol(p + n + 1, NULL, 10) : strncasecmp(url, "https:", 6) == 0 ? 443 : 80;
  return strcasecmp(host, uhost) != 0 || port != uport;
}

int net_opts_classify(CURLcode res, long proxy_code, const char *errmsg, const char *url, char *type, size_t cap) {
  const char *t = res == CURLE_OPERATION_TIMEDOUT ? "timeout" : "connection";
  int retry = 0;
  if (proxy_code >= 300 || res == CURLE_COULDNT_RESOLVE_PROXY || res == CURLE_PROXY ||
      (res == CURLE_COULDNT_CONNECT && refused_by_proxy(errmsg, url))) {
    t = "proxy";
  } else if (res == CURLE_PEER_FAILED_VERIFICATION) {
    t = mentions(errmsg, "subject name") || mentions(errmsg, "does not match") ? "tls_name_mismatch"
                                                                               : "tls_certificate";
  } else if (res == CURLE_SSL_CACERT_BADFILE) {
    t = "tls_ca_file";
  } else if (res == CURLE_SSL_CERTPROBLEM || res == CURLE_SSL_CIPHER || res == CURLE_SSL_ISSUER_ERROR ||
             res == CURLE_SSL_PINNEDPUBKEYNOTMATCH || res == CURLE_SSL_INVALIDCERTSTATUS) {
    t = "tls_certificate";
  } else if (res == CURLE_SSL_CONNECT_ERROR) {
    t = "tls_handshake";
    retry = 1; /* a reset in the middle of a handshake is as transient as any other */
  } else {
    switch (res) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: retry = 1; break;
    default: break;
    }
  }
  snprintf(type, cap, "%s", t);
  return retry;
}
