/* Writing a file the person named on the command line (`chats export -o PATH`, the console's /export):
 * a regular file is replaced whole, atomically; what is not a regular file is never replaced. */
#ifndef AG_OUTFILE_H
#define AG_OUTFILE_H

struct ag_errmsg;

/* Writes text (and a final newline if it has none) to path, borrowed:
 * - absent or a regular file: through a temporary file and a rename (ag_file_write_atomic), mode 0600;
 * - a FIFO or a character device (/dev/null, a terminal): opened and written in place, as `>` would;
 * - a symbolic link, a directory, a block device or a socket: refused with AG_ERR_INVALID, untouched
 *   (replacing a link would silently cut it; following it would write somewhere the name does not say).
 * Errors name the path in em. */
int ag_file_write_out(const char *path, const char *text, struct ag_errmsg *em);

#endif
