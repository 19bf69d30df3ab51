/* nats-server processes for tests: one node or a three-node JetStream cluster on loopback, config
 * generated in a temp dir, ports chosen free, stopped by PID. Also agora processes that run in the
 * background (`agora host`), with their output in files. */
#ifndef AG_TEST_NATS_PROC_H
#define AG_TEST_NATS_PROC_H

#include <sys/types.h>

typedef struct nats_node {
  pid_t pid;
  int port, cport;
  char conf[4096];
  char log[4096];
} nats_node;

/* 1 when a nats-server binary is on PATH. */
int nats_available(void);
/* Writes the config of n nodes (1: a single server; 3: a cluster with routes between them) under dir,
 * extra (may be NULL) added to each node's config (e.g. an authorization block), and starts them.
 * Returns 0 when every node accepts connections and JetStream answers. */
int nats_start(const char *dir, int n, const char *extra, nats_node *nodes);
/* Starts a stopped node again with its config. */
int nats_node_start(nats_node *nd);
/* Sends sig and waits for the process. */
void nats_node_stop(nats_node *nd, int sig);
/* "nats://127.0.0.1:P1,nats://127.0.0.1:P2,..." of nodes [from, from + n) (static buffer). */
const char *nats_url(const nats_node *nodes, int from, int n);

/* `agora ARGS...` in the background (NULL-terminated args without argv[0]), stdout and stderr to
 * out_path and err_path; extra_env "NAME=value" entries (may be NULL). Returns the pid or -1. */
pid_t agora_spawn(const char *const *args, const char *out_path, const char *err_path, const char *const *extra_env);
/* The same with stdin a pipe: *in_fd receives its write end (close it to give EOF). */
pid_t agora_spawn_piped(const char *const *args, const char *out_path, const char *err_path,
                        const char *const *extra_env, int *in_fd);
/* Waits up to wait_budget_ms(ms) for the file at path to contain needle; 1 when it does. */
int file_wait_for(const char *path, const char *needle, long ms);
/* Sends sig, waits; returns the exit status (128 + signal when killed). */
int agora_stop(pid_t pid, int sig);
/* Waits up to wait_budget_ms(ms) for pid to end; returns its exit status, or -1 (still running). */
int agora_wait(pid_t pid, long ms);

#endif
