/* state/config.c — see state/config.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/config.h"

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

/* A byte count with an optional binary suffix: 512K, 16M, 1G (KiB, MiB,
 * GiB; "KiB"/"MiB"/"GiB" spelled out are accepted too). */
static int wp_bytes_parse(const char *v, uint64_t *out)
{
    char *end;
    if (v[0] < '0' || v[0] > '9')
        return -1;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno)
        return -1;
    int shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift) {
        end++;
        if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)
            end += strlen(end);
    }
    if (*end != '\0' || x > (1ull << 40))
        return -1;
    *out = (uint64_t)x << shift;
    return 0;
}

/* WAITPROF_RANKS, _START, _STOP, _WINDOW and _MEMORY. */
static void wp_config_select(struct wp_config *c, wp_getenv_t get, wp_report_t report)
{
    char why[160], acc[256];
    const char *v = get(wp_var_name(WP_VAR_RANKS));
    snprintf(c->ranks_spec, sizeof c->ranks_spec, "all");
    wp_ranks_parse(NULL, &c->ranks, why, sizeof why);
    if (v != NULL) {
        if (strlen(v) < sizeof c->ranks_spec && wp_ranks_parse(v, &c->ranks, why, sizeof why) == 0) {
            snprintf(c->ranks_spec, sizeof c->ranks_spec, "%s", v);
        } else {
            if (strlen(v) >= sizeof c->ranks_spec)
                snprintf(why, sizeof why, "longer than %zu characters", sizeof c->ranks_spec - 1);
            snprintf(acc, sizeof acc, "all, none, random:N[:SEED] or a list like 0-15,1024,2048-4095:64 (%s)", why);
            wp_bad(report, wp_var_name(WP_VAR_RANKS), v, acc, "all");
            wp_ranks_parse(NULL, &c->ranks, why, sizeof why);
        }
    }
    c->start_s = wp_real(get, report, wp_var_name(WP_VAR_START), 0, 1e9, 0,
                         "seconds since MPI_Init, a decimal number >= 0");
    c->stop_s = wp_real(get, report, wp_var_name(WP_VAR_STOP), 0, 1e9, 0,
                        "seconds since MPI_Init, a decimal number > 0 (0: until the end)");
    if (c->stop_s > 0 && c->stop_s <= c->start_s) {
        char line[512];
        snprintf(line, sizeof line,
                 "waitprof: WAITPROF_STOP=%g is not after WAITPROF_START=%g; give a stop later than the start; "
                 "sampling from %g s to the end",
                 c->stop_s, c->start_s, c->start_s);
        report(line);
        c->stop_s = 0;
    }
    v = get(wp_var_name(WP_VAR_WINDOW));
    if (v != NULL && wp_window_parse(v, &c->every_s, &c->for_s, why, sizeof why) != 0) {
        snprintf(acc, sizeof acc, "every:SECONDS,for:SECONDS with 0 < for <= every, e.g. every:300,for:30 (%s)",
                 why);
        wp_bad(report, wp_var_name(WP_VAR_WINDOW), v, acc, "no periodic window");
        c->every_s = c->for_s = 0;
    }
    c->memory = WP_MEMORY_DEFAULT;
    v = get(wp_var_name(WP_VAR_MEMORY));
    uint64_t m = 0;
    if (v != NULL) {
        if (wp_bytes_parse(v, &m) == 0 && m >= WP_MEMORY_MIN && m <= WP_MEMORY_MAX)
            c->memory = m;
        else
            wp_bad(report, wp_var_name(WP_VAR_MEMORY), v, "bytes per rank from 1M to 4G, e.g. 16M (suffixes K, M, G)",
                   "16M");
    }
}

/* Letters, digits and - _ : . / : what an event name may hold (a perf
 * name like task-clock, a PAPI name like PAPI_TOT_CYC, a PMU's
 * cpu/event=0x3c/ form). */
static int wp_event_name_ok(const char *p, size_t len)
{
    int ok = len > 0 && len < 64;
    for (size_t i = 0; ok && i < len; i++)
        ok = (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9') ||
             strchr("-_:./", p[i]) != NULL;
    return ok;
}

/* WAITPROF_TIMER: tick, free, or overflow:EVENT@PERIOD.  The period is
 * after the last '@', so that an event name never has to avoid one; it is
 * a plain whole number (no sign, no suffix), as the event's unit counts.
 * A bad value falls back to the default timer, tick, with one line: the
 * run is still profiled, by the wall clock. */
static void wp_config_timer(struct wp_config *c, wp_getenv_t get, wp_report_t report)
{
    static const char *const accepts =
        "tick or free, or overflow:EVENT@PERIOD (a perf event name and a whole number of its units from 1, "
        "e.g. overflow:task-clock@10000000 for a sample per 10 ms of the thread's CPU time)";
    const char *var = wp_var_name(WP_VAR_TIMER), *v = get(var);
    c->free_timer = 0;
    c->overflow_event[0] = '\0';
    c->overflow_period = 0;
    if (v == NULL || strcmp(v, "tick") == 0)
        return;
    if (strcmp(v, "free") == 0) {
        c->free_timer = 1;
        return;
    }
    if (strncmp(v, "overflow:", 9) == 0) {
        const char *ev = v + 9, *at = strrchr(ev, '@');
        if (at != NULL && wp_event_name_ok(ev, (size_t)(at - ev)) && at[1] >= '0' && at[1] <= '9' &&
            strspn(at + 1, "0123456789") == strlen(at + 1)) {
            errno = 0;
            unsigned long long p = strtoull(at + 1, NULL, 10);
            if (errno == 0 && p >= 1 && p <= WP_OVERFLOW_PERIOD_MAX) {
                memcpy(c->overflow_event, ev, (size_t)(at - ev));
                c->overflow_event[at - ev] = '\0';
                c->overflow_period = (uint64_t)p;
                return;
            }
        }
    }
    wp_bad(report, var, v, accepts, "tick");
}

/* WAITPROF_COUNTERS: a comma-separated list of event names.  A bad name
 * is left out with one line, the others are kept: losing one counter is
 * better than losing all of them to a typo. */
static void wp_config_counters(struct wp_config *c, wp_getenv_t get, wp_report_t report)
{
    const char *var = wp_var_name(WP_VAR_COUNTERS);
    const char *v = get(var);
    char line[512];
    c->ncounters = 0;
    if (v == NULL)
        return;
    if (v[0] == '\0') {
        wp_bad(report, var, v, "event names separated by commas, e.g. task-clock,context-switches", "none");
        return;
    }
    int extra = 0;
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",");
        if (!wp_event_name_ok(p, len)) {
            snprintf(line, sizeof line,
                     "waitprof: WAITPROF_COUNTERS: \"%.*s\" is not an event name (letters, digits and - _ : . / "
                     "only, 1 to 63 of them); it is left out",
                     (int)(len > 64 ? 64 : len), p);
            report(line);
        } else {
            int dup = 0;
            for (int i = 0; i < c->ncounters; i++)
                dup |= strlen(c->counters[i]) == len && strncmp(c->counters[i], p, len) == 0;
            if (dup) {
                snprintf(line, sizeof line, "waitprof: WAITPROF_COUNTERS: \"%.*s\" is given twice; counted once",
                         (int)len, p);
                report(line);
            } else if (c->ncounters < WP_COUNTERS_MAX) {
                memcpy(c->counters[c->ncounters], p, len);
                c->counters[c->ncounters][len] = '\0';
                c->ncounters++;
            } else {
                extra++;
            }
        }
        p += len;
        if (*p == ',')
            p++;
    }
    if (extra) {
        snprintf(line, sizeof line,
                 "waitprof: WAITPROF_COUNTERS names more than %d events; the first %d are counted, %d left out",
                 WP_COUNTERS_MAX, WP_COUNTERS_MAX, extra);
        report(line);
    }
}

void wp_config_load(struct wp_config *c, wp_getenv_t get, wp_report_t report)
{
    static const char *const clocks[] = {"wall", "cpu", NULL};
    static const char *const bools[] = {"0", "1", NULL};
    memset(c, 0, sizeof *c);
    c->hz = wp_int(get, report, wp_var_name(WP_VAR_HZ), 1, WP_HZ_MAX, WP_HZ_DEFAULT,
                   "samples per second per thread, a whole number from 1 to 10000");
    c->cpu_clock = wp_word(get, report, wp_var_name(WP_VAR_CLOCK), clocks, 0, "wall or cpu");
    wp_config_timer(c, get, report);
    c->depth = wp_int(get, report, wp_var_name(WP_VAR_DEPTH), 1, WP_DEPTH_DEFAULT, WP_DEPTH_DEFAULT,
                      "frames kept per sample, a whole number from 1 to 128");
    c->runtime_threads = wp_word(get, report, wp_var_name(WP_VAR_RUNTIME_THREADS), bools, 0, "0 or 1");
    c->quiet = wp_word(get, report, wp_var_name(WP_VAR_QUIET), bools, 0, "0 or 1");
    c->threshold = wp_real(get, report, wp_var_name(WP_VAR_THRESHOLD), 0, 100, 0.5,
                           "a percentage of the run time from 0 to 100, e.g. 0.5");
    /* Indices match WP_SOURCE_* (mpit/source.h) plus one: auto is -1. */
    static const char *const sources[] = {"auto", "wrappers", "mpit", "peruse", NULL};
    c->source = wp_word(get, report, wp_var_name(WP_VAR_SOURCE), sources, 0, "auto, peruse, mpit or wrappers") - 1;
    c->estimate = wp_word(get, report, wp_var_name(WP_VAR_ESTIMATE), bools, 1, "0 or 1");
    c->callpath_depth = wp_int(get, report, wp_var_name(WP_VAR_CALLPATH_DEPTH), 1, 16, 1,
                               "frames per wait-state call site, a whole number from 1 to 16");
    c->match = wp_int(get, report, wp_var_name(WP_VAR_MATCH), 0, 65536, 16,
                      "one instance in N matched, a whole number from 0 (off) to 65536");
    /* 1 to 15 would thin the first 16, which are always chosen. */
    static const char dense_accepts[] = "how many instances of each channel are matched at the full rate, 0 (all) "
                                        "or a whole number from 16 to 1073741824";
    c->match_dense = wp_int(get, report, wp_var_name(WP_VAR_MATCH_DENSE), 0, 1 << 30, 16384, dense_accepts);
    if (c->match_dense > 0 && c->match_dense < 16) {
        wp_bad(report, wp_var_name(WP_VAR_MATCH_DENSE), get(wp_var_name(WP_VAR_MATCH_DENSE)), dense_accepts, "16384");
        c->match_dense = 16384;
    }
    c->test_clock_rank = -1;
    const char *tc = get(wp_var_name(WP_VAR_TEST_CLOCK));
    if (tc != NULL) {
        int r = -1, used = 0;
        double off = 0, ppm = 0;
        if (sscanf(tc, "%d:%lf:%lf%n", &r, &off, &ppm, &used) == 3 && tc[used] == '\0' && r >= 0 && off > -1e4 &&
            off < 1e4 && ppm > -1e5 && ppm < 1e5) {
            c->test_clock_rank = r;
            c->test_clock_offset_s = off;
            c->test_clock_drift_ppm = ppm;
        } else {
            wp_bad(report, wp_var_name(WP_VAR_TEST_CLOCK), tc, "RANK:OFFSET_S:DRIFT_PPM, e.g. 1:0.05:100", "none");
        }
    }
    c->test_gather = wp_int(get, report, wp_var_name(WP_VAR_TEST_GATHER), 0, 1 << 24, WP_GATHER_DEFAULT,
                            "a whole number of elements from 0 to 16777216");
    c->matrix = wp_word(get, report, wp_var_name(WP_VAR_MATRIX), bools, 0, "0 or 1");
    c->lean = wp_word(get, report, wp_var_name(WP_VAR_LEAN), bools, 0, "0 or 1");
    if (c->lean && (c->matrix || (get(wp_var_name(WP_VAR_ESTIMATE)) && c->estimate))) {
        /* Lean wrappers keep no per-call figure (wrap/wrap.h); the request
         * for one cannot be met. */
        report(c->matrix ? "waitprof: WAITPROF_LEAN=1 keeps no per-call figures, so WAITPROF_MATRIX=1 is ignored; "
                           "unset one of them"
                         : "waitprof: WAITPROF_LEAN=1 keeps no per-call figures, so WAITPROF_ESTIMATE=1 is ignored; "
                           "unset one of them");
    }
    if (c->lean)
        c->estimate = c->matrix = 0;
    const char *out = get(wp_var_name(WP_VAR_OUT));
    /* The limit is the one the message states; it leaves room in the 4096-byte
     * path buffers for the ".N" suffix and the file names added later. */
    if (out != NULL && (out[0] == '\0' || strlen(out) >= 4000))
        wp_bad(report, wp_var_name(WP_VAR_OUT), out, "a directory path shorter than 4000 bytes",
               "./waitprof.<job id or time>");
    else if (out != NULL)
        snprintf(c->out, sizeof c->out, "%s", out);
    wp_config_select(c, get, report);
    wp_config_counters(c, get, report);
    c->counters_split = wp_word(get, report, wp_var_name(WP_VAR_COUNTERS_SPLIT), bools, 0, "0 or 1");
    if (c->counters_split && c->ncounters == 0) {
        report("waitprof: WAITPROF_COUNTERS_SPLIT=1 without WAITPROF_COUNTERS has nothing to split; ignored; "
               "name the events in WAITPROF_COUNTERS");
        c->counters_split = 0;
    } else if (c->counters_split && c->lean) {
        report("waitprof: WAITPROF_LEAN=1 wrappers read no counters at MPI entry and exit, so "
               "WAITPROF_COUNTERS_SPLIT=1 is ignored; unset one of them");
        c->counters_split = 0;
    }
}

void wp_config_check_unknown(char **env, wp_report_t report)
{
    for (char **e = env; e && *e; e++) {
        if (strncmp(*e, "WAITPROF_", 9) != 0)
            continue;
        size_t n = strcspn(*e, "=");
        int known = 0;
        for (int v = 0; v < WP_VAR_COUNT; v++) {
            const char *name = wp_var_name((enum wp_var)v);
            if (strlen(name) == n && strncmp(*e, name, n) == 0)
                known = 1;
        }
        if (!known) {
            char line[640];
            int k = snprintf(line, sizeof line, "waitprof: unknown variable %.*s ignored; known:",
                             (int)(n > 64 ? 64 : n), *e);
            for (int v = 0; v < WP_VAR_COUNT && k > 0 && (size_t)k < sizeof line; v++)
                k += snprintf(line + k, sizeof line - (size_t)k, "%s %s", v ? "," : "",
                              wp_var_name((enum wp_var)v));
            report(line);
        }
    }
}
