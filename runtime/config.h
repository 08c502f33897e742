/* runtime/config.h — waitprof's configuration from WAITPROF_* variables.
 *
 * Contract: wp_config_load() reads every variable through the getter it is
 * given (getenv in the library, a table in the unit tests), never fails, and
 * for each value it cannot accept calls report() once with one line naming
 * the variable, what it accepts and the value used instead.  An empty value
 * is a bad value (it is more likely a broken script than a wish for the
 * default).  wp_config_check_unknown() reports WAITPROF_* names it does not
 * know, which catches typos.
 */
#ifndef WP_RUNTIME_CONFIG_H
#define WP_RUNTIME_CONFIG_H

#include <stddef.h>

#define WP_HZ_DEFAULT 100
#define WP_HZ_MAX 10000
#define WP_DEPTH_DEFAULT 128

struct wp_config {
    int hz;              /* WAITPROF_HZ: 1..10000, default 100 */
    int cpu_clock;       /* WAITPROF_CLOCK: wall (0, default) or cpu (1) */
    int depth;           /* WAITPROF_DEPTH: frames per sample, 1..128 */
    int runtime_threads; /* WAITPROF_RUNTIME_THREADS: 0 (default) or 1 */
    int quiet;           /* WAITPROF_QUIET: 0 (default) or 1: no summary line */
    double threshold;    /* WAITPROF_THRESHOLD: percent of the run's time below
                          * which wait-state call sites are not listed; 0..100,
                          * default 0.5 */
    int matrix;          /* WAITPROF_MATRIX: 0 (default) or 1: transfer matrices */
    char out[4096];      /* WAITPROF_OUT, "" when unset */
};

typedef const char *(*wp_getenv_t)(const char *name);
typedef void (*wp_report_t)(const char *line);

void wp_config_load(struct wp_config *c, wp_getenv_t get, wp_report_t report);
void wp_config_check_unknown(char **env, wp_report_t report);

#endif
