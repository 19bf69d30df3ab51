/* A TLS + HTTP/2 front for the loopback LLM server, for tests and benchmarks: generates a CA (and a
 * second, unrelated one) and a certificate for IP 127.0.0.1 with openssl in a temp dir, starts
 * nghttpx (Debian nghttp2-proxy) on 127.0.0.1 in front of a backend port, 100 streams a connection,
 * and reads its access log to tell how many connections clients opened and how many of them resumed
 * a TLS session. Stopped by PID. */
#ifndef AG_TEST_TLS_FRONT_H
#define AG_TEST_TLS_FRONT_H

#include <stddef.h>

typedef struct tls_front tls_front;

/* http1_only: offer only http/1.1 in ALPN (an HTTPS server without HTTP/2). Returns 0, or -1 (with
 * the reason on stderr) when openssl or nghttpx is missing or fails. */
int tls_front_start(int backend_port, int http1_only, tls_front **out);
/* Stops nghttpx (SIGTERM, then waits for it) and removes the temp dir. */
void tls_front_stop(tls_front *f);
int tls_front_port(const tls_front *f);
/* "https://127.0.0.1:PORT" followed by suffix, in a static buffer. */
const char *tls_front_url(const tls_front *f, const char *suffix);
/* The CA that signed the server's certificate, and one that did not (PEM paths). */
const char *tls_front_ca(const tls_front *f);
const char *tls_front_other_ca(const tls_front *f);
/* The temp dir (tests may put files there). */
const char *tls_front_dir(const tls_front *f);

typedef struct tls_front_stats {
  size_t requests;    /* requests logged */
  size_t connections; /* distinct client connections they came on */
  size_t resumed;     /* of those, connections whose TLS session was resumed */
  size_t h2;          /* requests served over HTTP/2 */
} tls_front_stats;

/* Reads the access log, waiting up to 2 s for at least min_requests lines (nghttpx logs after each
 * response). Returns 0, or -1 when the log cannot be read. */
int tls_front_read_stats(tls_front *f, size_t min_requests, tls_front_stats *out);
/* CPU seconds (user + system) nghttpx has used so far, from /proc; -1 when unknown. */
double tls_front_cpu_seconds(const tls_front *f);
/* Forgets the log so far (the next stats count from here). */
void tls_front_reset_stats(tls_front *f);

#endif
