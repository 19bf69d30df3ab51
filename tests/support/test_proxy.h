/* A tiny HTTP proxy on 127.0.0.1 for tests: CONNECT tunnels (HTTPS_PROXY) and absolute-URI requests
 * (HTTP_PROXY), to loopback targets only, each connection relayed byte for byte. It counts the
 * connections it carried, and can be told to refuse every request with 403. Runs on its own thread
 * (one poll loop); test_proxy_stop closes everything. */
#ifndef AG_TEST_TEST_PROXY_H
#define AG_TEST_TEST_PROXY_H

#include <stddef.h>

typedef struct test_proxy test_proxy;

/* refuse: answer every request "403 Forbidden". Returns 0 or -1. */
int test_proxy_start(int refuse, test_proxy **out);
void test_proxy_stop(test_proxy *p);
int test_proxy_port(const test_proxy *p);
/* "http://127.0.0.1:PORT", in a static buffer. */
const char *test_proxy_url(const test_proxy *p);
/* Client connections that sent a request (CONNECT or absolute URI) so far. */
size_t test_proxy_requests(test_proxy *p);

#endif
