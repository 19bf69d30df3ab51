/* Wall-clock time as Agora stores and prints it: milliseconds since the Unix epoch, and RFC 3339 UTC
 * with milliseconds ("2026-11-22T10:00:00.123Z") in transcripts, snapshots and listings. */
#ifndef AG_CLOCK_H
#define AG_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#define AG_TIME_LEN 32 /* a buffer for ag_time_format */

int64_t ag_now_ms(void);
/* Writes ms as RFC 3339 UTC with milliseconds into out (cap ≥ AG_TIME_LEN). */
void ag_time_format(int64_t ms, char *out, size_t cap);
/* Parses "YYYY-MM-DDTHH:MM:SS[.fff]Z"; -1 when s is not such a time. */
int64_t ag_time_parse(const char *s);

#endif
