/* runtime/config.c — see runtime/config.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/config.h"

static const char *const wp_known[] = {
    "WAITPROF_HZ", "WAITPROF_CLOCK", "WAITPROF_DEPTH", "WAITPROF_RUNTIME_THREADS",
    "WAITPROF_QUIET", "WAITPROF_OUT", "WAITPROF_THRESHOLD", "WAITPROF_LIB", "WAITPROF_MATRIX", NULL};

static void wp_bad(wp_report_t report, const char *var, const char *val, const char *accepts,
                   const char *fallback)
{
    char line[512];
    if (val[0] == '\0')
        snprintf(line, sizeof line, "waitprof: %s is empty; give %s; using %s", var, accepts, fallback);
    else
        snprintf(line, sizeof line, "waitprof: %s=\"%.64s\" is not accepted; give %s; using %s", var,
                 val, accepts, fallback);
    report(line);
}

/* A whole number in [lo, hi] with nothing around it, or the fallback. */
static int wp_int(wp_getenv_t get, wp_report_t report, const char *var, int lo, int hi, int dflt,
                  const char *accepts)
{
    const char *v = get(var);
    if (v == NULL)
        return dflt;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (v[0] != '\0' && (v[0] == '-' || v[0] == '+' || (v[0] >= '0' && v[0] <= '9')) && *end == '\0' &&
        errno == 0 && x >= lo && x <= hi)
        return (int)x;
    char fb[32];
    snprintf(fb, sizeof fb, "%d", dflt);
    wp_bad(report, var, v, accepts, fb);
    return dflt;
}

/* One of the words in words[] (its index), or the fallback index. */
static int wp_word(wp_getenv_t get, wp_report_t report, const char *var, const char *const *words,
                   int dflt, const char *accepts)
{
    const char *v = get(var);
    if (v == NULL)
        return dflt;
    for (int i = 0; words[i]; i++)
        if (strcmp(v, words[i]) == 0)
            return i;
    wp_bad(report, var, v, accepts, words[dflt]);
    return dflt;
}

/* A decimal number in [lo, hi] with nothing around it, or the fallback. */
static double wp_real(wp_getenv_t get, wp_report_t report, const char *var, double lo, double hi, double dflt,
                      const char *accepts)
{
    const char *v = get(var);
    if (v == NULL)
        return dflt;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    /* Plain decimals only: no hex, exponents, infinities or spaces. */
    if (v[0] != '\0' && strspn(v, "0123456789.") == strlen(v) && *end == '\0' && errno == 0 && x >= lo &&
        x <= hi)
        return x;
    char fb[32];
    snprintf(fb, sizeof fb, "%g", dflt);
    wp_bad(report, var, v, accepts, fb);
    return dflt;
}

void wp_config_load(struct wp_config *c, wp_getenv_t get, wp_report_t report)
{
    static const char *const clocks[] = {"wall", "cpu", NULL};
    static const char *const bools[] = {"0", "1", NULL};
    memset(c, 0, sizeof *c);
    c->hz = wp_int(get, report, "WAITPROF_HZ", 1, WP_HZ_MAX, WP_HZ_DEFAULT,
                   "samples per second per thread, a whole number from 1 to 10000");
    c->cpu_clock = wp_word(get, report, "WAITPROF_CLOCK", clocks, 0, "wall or cpu");
    c->depth = wp_int(get, report, "WAITPROF_DEPTH", 1, WP_DEPTH_DEFAULT, WP_DEPTH_DEFAULT,
                      "frames kept per sample, a whole number from 1 to 128");
    c->runtime_threads = wp_word(get, report, "WAITPROF_RUNTIME_THREADS", bools, 0, "0 or 1");
    c->quiet = wp_word(get, report, "WAITPROF_QUIET", bools, 0, "0 or 1");
    c->threshold = wp_real(get, report, "WAITPROF_THRESHOLD", 0, 100, 0.5,
                           "a percentage of the run time from 0 to 100, e.g. 0.5");
    c->matrix = wp_word(get, report, "WAITPROF_MATRIX", bools, 0, "0 or 1");
    const char *out = get("WAITPROF_OUT");
    /* The limit is the one the message states; it leaves room in the 4096-byte
     * path buffers for the ".N" suffix and the file names added later. */
    if (out != NULL && (out[0] == '\0' || strlen(out) >= 4000))
        wp_bad(report, "WAITPROF_OUT", out, "a directory path shorter than 4000 bytes",
               "./waitprof.<job id or time>");
    else if (out != NULL)
        snprintf(c->out, sizeof c->out, "%s", out);
}

void wp_config_check_unknown(char **env, wp_report_t report)
{
    for (char **e = env; e && *e; e++) {
        if (strncmp(*e, "WAITPROF_", 9) != 0)
            continue;
        size_t n = strcspn(*e, "=");
        int known = 0;
        for (int i = 0; wp_known[i]; i++)
            if (strlen(wp_known[i]) == n && strncmp(*e, wp_known[i], n) == 0)
                known = 1;
        if (!known) {
            char line[512];
            snprintf(line, sizeof line,
                     "waitprof: unknown variable %.*s ignored; known: WAITPROF_HZ, WAITPROF_CLOCK, "
                     "WAITPROF_OUT, WAITPROF_DEPTH, WAITPROF_RUNTIME_THREADS, WAITPROF_QUIET, WAITPROF_THRESHOLD, "
                     "WAITPROF_MATRIX",
                     (int)(n > 64 ? 64 : n), *e);
            report(line);
        }
    }
}
