/* state/log.c — see state/log.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "state/log.h"

int wp_log_rank = -1;

static void wp_vlog(const char *fmt, va_list ap)
{
    char line[1024];
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    ssize_t rc = write(STDERR_FILENO, line, (size_t)n);
    (void)rc; /* nothing sensible to do when stderr is gone */
}

void wp_log(const char *fmt, ...)
{
    if (wp_log_rank > 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    wp_vlog(fmt, ap);
    va_end(ap);
}

void wp_log_always(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    wp_vlog(fmt, ap);
    va_end(ap);
}
