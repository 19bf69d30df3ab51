/* The process-wide libraries, one owner each (docs/architecture.md "The runtime"): libcurl's global
 * state and the NATS library are opened once and closed once, at the process's exit — never inside a
 * world's free, so that several worlds of one process (serve A.json B.json --nats) share them. The
 * SIGCHLD watcher of MCP children is mcp/child.c's own (armed while a child lives). */
#ifndef AG_RT_PROCESS_H
#define AG_RT_PROCESS_H

/* At the start of main (nothing to start yet: libcurl starts with the first HTTP client, the NATS
 * library with the first world that joins NATS). */
int rt_process_begin(void);
/* At the end of main, after every runtime was closed: closes the NATS library once (saying on stderr
 * when its threads did not stop within 60 s). */
void rt_process_end(void);

#endif
