/* The process-wide set-up of the core's own copy, linked into agora for the two commands that still run
 * on it rather than on libagora (serve: docs/library.md "The agora binary and the library").
 * The library sets up its own copy itself (agora_process_name names the process in its lock files). This
 * pair goes when serve moves to agora.h, and the binary links libagora.so.0 alone. */
#ifndef AG_CLI_CORE_PROCESS_H
#define AG_CLI_CORE_PROCESS_H

/* 1 when command cmd ("serve") runs on the core's copy. */
int cli_core_command(const char *cmd);
/* Before the command: the core's LLM warnings ("insecure: true") printed as "agora: warning: ...", and
 * cmd named in the lock file of every chat the command holds ("in use by pid N (serve)"). 0, or 1 after
 * saying on stderr what could not start. */
int cli_core_begin(const char *cmd);
/* After the command, once every world is closed: the core's NATS client closed (saying on stderr when
 * its threads did not stop within 60 s). */
void cli_core_end(void);

#endif
