/* nghttpx as a TLS + HTTP/2 front for tests (see tls_front.h). The certificates are made with the
 * openssl command line; connections are counted by client port in nghttpx's access log, which it
 * writes after each response. */
#include "support/tls_front.h"
#include "support/ports.h"

#include "support/unit.h"
#include "support/wait.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct tls_front {
  char *dir;
  pid_t pid;
  int port;
  long log_offset; /* stats count from here */
};

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int make_certs(const char *dir) {
  char cmd[4096];
  const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  snprintf(cmd, sizeof cmd,
           "cd '%s' && openssl req -x509 %s -keyout ca.key -out ca.pem -days 2 -subj /CN=agora-test-ca &&"
           " openssl req -x509 %s -keyout other.key -out other.pem -days 2 -subj /CN=agora-other-ca &&"
           " openssl req %s -keyout server.key -out server.csr -subj /CN=agora-test-server &&"
           " printf 'subjectAltName=IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\nkeyUsage=digitalSignature\\n"
           "extendedKeyUsage=serverAuth\\n' > ext.cnf &&"
           " openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2"
           " -extfile ext.cnf",
           dir, ec, ec, ec);
  char full[4200];
  snprintf(full, sizeof full, "( %s ) >'%s/openssl.log' 2>&1", cmd, dir);
  if (system(full) != 0) {
    fprintf(stderr, "tls_front: openssl failed (see %s/openssl.log)\n", dir);
    return -1;
  }
  return 0;
}

static pid_t start_nghttpx(const char *dir, int port, int backend_port, int http1_only) {
  char front[64], back[64], log[4200], err[4200], key[4200], cert[4200];
  snprintf(front, sizeof front, "--frontend=127.0.0.1,%d", port);
  snprintf(back, sizeof back, "--backend=127.0.0.1,%d", backend_port);
  snprintf(log, sizeof log, "--accesslog-file=%s/access.log", dir);
  snprintf(err, sizeof err, "--errorlog-file=%s/error.log", dir);
  snprintf(key, sizeof key, "%s/server.key", dir);
  snprintf(cert, sizeof cert, "%s/server.pem", dir);
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM); /* a test that crashes (or is cut off) leaves no server behind */
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) { /* its start-up notice, before the error log is open */
      dup2(null, 1);
      dup2(null, 2);
    }
    execlp("nghttpx", "nghttpx", "--conf=/dev/null", front, back, "--workers=1", "--single-process", "--no-ocsp",
           "--frontend-http2-max-concurrent-streams=100", "--backend-connections-per-frontend=0",
           "--rlimit-nofile=65536", http1_only ? "--npn-list=http/1.1" : "--npn-list=h2,http/1.1", log, err,
           "--accesslog-format=$remote_port $tls_session_reused $alpn $status",
           key, cert, (char *)NULL);
    _exit(127);
  }
  return pid;
}

int tls_front_start(int backend_port, int http1_only, tls_front **out) {
  tls_front *f = calloc(1, sizeof *f);
  if (!f) return -1;
  f->dir = unit_tmpdir();
  f->pid = -1;
  if (!f->dir || make_certs(f->dir)) goto fail;
  for (int tries = 0; tries < 5 && f->pid < 0; tries++) {
    f->port = ports_free();
    pid_t pid = start_nghttpx(f->dir, f->port, backend_port, http1_only);
    if (pid < 0) goto fail;
    for (long long end = now_ms() + wait_budget_ms(5000); !ports_open(f->port) && now_ms() < end;) {
      if (waitpid(pid, NULL, WNOHANG) == pid) {
        pid = -1; /* exited: the port was taken, or nghttpx is missing */
        break;
      }
      sleep_ms(20);
    }
    if (pid > 0 && ports_open(f->port)) f->pid = pid;
    else if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, NULL, 0);
    }
  }
  if (f->pid < 0) {
    fprintf(stderr, "tls_front: nghttpx did not start (is nghttp2-proxy installed? see %s/error.log)\n", f->dir);
    goto fail;
  }
  *out = f;
  return 0;
fail:
  tls_front_stop(f);
  return -1;
}

void tls_front_stop(tls_front *f) {
  if (!f) return;
  if (f->pid > 0) {
    kill(f->pid, SIGTERM);
    waitpid(f->pid, NULL, 0);
  }
  if (f->dir) unit_rmrf(f->dir);
  free(f->dir);
  free(f);
}

int tls_front_port(const tls_front *f) { return f->port; }

const char *tls_front_url(const tls_front *f, const char *suffix) {
  static char url[256];
  snprintf(url, sizeof url, "https://127.0.0.1:%d%s", f->port, suffix ? suffix : "");
  return url;
}

static const char *dir_file(const tls_front *f, const char *name) {
  static char path[2][4200];
  static int which;
  which ^= 1;
  snprintf(path[which], sizeof path[which], "%s/%s", f->dir, name);
  return path[which];
}

const char *tls_front_ca(const tls_front *f) { return dir_file(f, "ca.pem"); }
const char *tls_front_other_ca(const tls_front *f) { return dir_file(f, "other.pem"); }
const char *tls_front_dir(const tls_front *f) { return f->dir; }

/* Parses the log from the saved offset: "PORT r|. ALPN STATUS" lines. */
static int parse_log(tls_front *f, tls_front_stats *out) {
  memset(out, 0, sizeof *out);
  FILE *fp = fopen(dir_file(f, "access.log"), "r");
  if (!fp) return 0; /* nothing logged yet */
  if (fseek(fp, f->log_offset, SEEK_SET) != 0) {
    fclose(fp);
    return -1;
  }
  static unsigned char seen[65536]; /* by client port */
  memset(seen, 0, sizeof seen);
  char line[256];
  while (fgets(line, sizeof line, fp)) {
    int port = 0;
    char reused = '.';
    char alpn[32] = "";
    if (sscanf(line, "%d %c %31s", &port, &reused, alpn) < 3 || port <= 0 || port > 65535) continue;
    out->requests++;
    if (strcmp(alpn, "h2") == 0) out->h2++;
    if (seen[port]) continue;
    seen[port] = 1;
    out->connections++;
    if (reused == 'r') out->resumed++;
  }
  fclose(fp);
  return 0;
}

int tls_front_read_stats(tls_front *f, size_t min_requests, tls_front_stats *out) {
  for (int i = 0; i < 100; i++) {
    if (parse_log(f, out)) return -1;
    if (out->requests >= min_requests) break;
    sleep_ms(20);
  }
  return 0;
}

void tls_front_reset_stats(tls_front *f) {
  FILE *fp = fopen(dir_file(f, "access.log"), "r");
  if (!fp) return;
  if (fseek(fp, 0, SEEK_END) == 0) f->log_offset = ftell(fp);
  fclose(fp);
}

double tls_front_cpu_seconds(const tls_front *f) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)f->pid);
  FILE *fp = fopen(path, "r");
  if (!fp) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  fclose(fp);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
  unsigned long ut = 0, st = 0;
  /* After ")": state, then fields 4..13, then utime (14) and stime (15). */
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) return -1;
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}
