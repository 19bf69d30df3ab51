/* How a door reports a failure to the person: one "agora: …" line on stderr and the exit status. */
#ifndef AG_RT_REPORT_H
#define AG_RT_REPORT_H

#include <stdarg.h>

/* "agora: <message>" on stderr; returns the exit status for err (ag_exit_code: 2 bad input, 1 else). */
int rt_report(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int rt_vreport(int err, const char *fmt, va_list ap);

#endif
