/* state/config.h — waitprof's configuration from WAITPROF_* variables.
 *
 * Contract: wp_config_load() reads every variable through the getter it is
 * given (getenv in the library, a table in the unit tests), never fails, and
 * for each value it cannot accept calls report() once with one line naming
 * the variable, what it accepts and the value used instead.  An empty value
 * is a bad value (it is more likely a broken script than a wish for the
 * default).  wp_config_check_unknown() reports WAITPROF_* names it does not
 * know, which catches typos.
 */
#ifndef WP_STATE_CONFIG_H
#define WP_STATE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "format/select.h"

/* Every WAITPROF_* variable, declared once: X(NAME) for WAITPROF_NAME.
 * The parser reads each by wp_var_name(WP_VAR_NAME); the unknown-variable
 * warning lists them from here; tests/unit/test_config.c checks that
 * README.md and doc/waitprof.1 document each one and no other.
 * WAITPROF_LIB is read by the launcher (bin/waitprof), not here. */
#define WP_VARIABLES(X)                                                                                     \
    X(HZ) X(CLOCK) X(TIMER) X(DEPTH) X(RUNTIME_THREADS) X(QUIET) X(OUT) X(THRESHOLD) X(SOURCE) X(ESTIMATE) \
    X(CALLPATH_DEPTH) X(MATCH) X(MATCH_DENSE) X(TEST_CLOCK) X(TEST_GATHER) X(MATRIX) X(LEAN) X(RANKS) X(START) X(STOP) X(WINDOW) X(MEMORY) X(LIB) \
    X(COUNTERS) X(COUNTERS_SPLIT)

enum wp_var {
#define WP_X_(id) WP_VAR_##id,
    WP_VARIABLES(WP_X_)
#undef WP_X_
    WP_VAR_COUNT
};

static inline const char *wp_var_name(enum wp_var v)
{
    switch (v) {
#define WP_X_(id) \
    case WP_VAR_##id: return "WAITPROF_" #id;
        WP_VARIABLES(WP_X_)
#undef WP_X_
    default: return "";
    }
}

#define WP_HZ_DEFAULT 100
#define WP_HZ_MAX 10000
#define WP_DEPTH_DEFAULT 128
/* WAITPROF_TEST_GATHER's default: match/exchange.c says why. */
#define WP_GATHER_DEFAULT 16384
#define WP_MEMORY_DEFAULT (16ull << 20)
#define WP_MEMORY_MIN (1ull << 20)
#define WP_MEMORY_MAX (4ull << 30)
#define WP_COUNTERS_MAX 8
/* The kernel refuses a sample period with its top bit set. */
#define WP_OVERFLOW_PERIOD_MAX ((1ull << 63) - 1)

struct wp_config {
    int hz;              /* WAITPROF_HZ: 1..10000, default 100 */
    int cpu_clock;       /* WAITPROF_CLOCK: wall (0, default) or cpu (1) */
    int free_timer;      /* WAITPROF_TIMER: tick (0, default) or free (1) */
    /* WAITPROF_TIMER=overflow:EVENT@PERIOD: a sample every PERIOD of the
     * thread's own count of EVENT (sampler/overflow.c), checked here for
     * syntax only (an event name as WAITPROF_COUNTERS takes them, a whole
     * PERIOD from 1 to WP_OVERFLOW_PERIOD_MAX); whether the event is known
     * and can overflow is the sampler's to say.  overflow_event "" when
     * the timer is tick or free; free_timer is then 0. */
    char overflow_event[64];
    uint64_t overflow_period;
    int depth;           /* WAITPROF_DEPTH: frames per sample, 1..128 */
    int runtime_threads; /* WAITPROF_RUNTIME_THREADS: 0 (default) or 1 */
    int quiet;           /* WAITPROF_QUIET: 0 (default) or 1: no summary line */
    double threshold;    /* WAITPROF_THRESHOLD: percent of the run's time below
                          * which wait-state call sites are not listed; 0..100,
                          * default 0.5 */
    int source;          /* WAITPROF_SOURCE: auto (-1, default), wrappers (0),
                          * mpit (1), peruse (2); see mpit/source.h */
    int estimate;        /* WAITPROF_ESTIMATE: 1 (default) the wrappers record
                          * per-call statistics for the wait-state estimate;
                          * 0 they do not (no wait states; for measuring
                          * what the recording costs) */
    int callpath_depth;  /* WAITPROF_CALLPATH_DEPTH: user frames per wait-state
                          * call site, 1..16, default 1 */
    int match;           /* WAITPROF_MATCH: one message or collective instance
                          * in N is matched with its partner's (match/match.h),
                          * besides the first 16 of each channel; 0..65536,
                          * default 16, 0 off; rounded down to a power of two */
    int match_dense;     /* WAITPROF_MATCH_DENSE: the first N numbers of every
                          * channel and communicator are chosen at that rate,
                          * then it halves each time the number doubles
                          * (match/types.h, wp_match_thin); 0 or 16..2^30,
                          * default 16384, 0 never; rounded down to a power
                          * of two */
    /* WAITPROF_TEST_CLOCK=RANK:OFFSET_S:DRIFT_PPM, for testing the clock
     * alignment of matched instances on one machine (match/clock.c): rank
     * RANK's matching clock runs OFFSET_S ahead and DRIFT_PPM fast.  Rank
     * -1: none (the default). */
    int test_clock_rank;
    double test_clock_offset_s, test_clock_drift_ppm;
    /* WAITPROF_TEST_GATHER=N, for testing both ways of following waits
     * back through ranks at MPI_Finalize (match/exchange.c): gathered on
     * every rank when every rank's blocks take at most N elements, else in
     * rounds of messages; 0 always in rounds.  Default WP_GATHER_DEFAULT. */
    int test_gather;
    int matrix;          /* WAITPROF_MATRIX: 0 (default) or 1: transfer matrices */
    int lean;            /* WAITPROF_LEAN: 0 (default) or 1: wrappers that read no
                          * clock and keep no per-call figures (wrap/wrap.h);
                          * forces estimate and matrix to 0 */
    char out[4096];      /* WAITPROF_OUT, "" when unset */
    /* Selection and budget.  The rank list is checked for syntax
     * here; it is fitted to the job size at MPI_Init (format/select.h). */
    char ranks_spec[256];  /* WAITPROF_RANKS as accepted, "all" by default */
    struct wp_ranks ranks;
    double start_s, stop_s; /* WAITPROF_START / WAITPROF_STOP, seconds since
                             * MPI_Init; stop 0 = until the end */
    double every_s, for_s;  /* WAITPROF_WINDOW every:P,for:D; 0 = none */
    uint64_t memory;        /* WAITPROF_MEMORY: sample store bytes per rank */
    /* WAITPROF_COUNTERS=ev1,ev2,...: the events every sample reads
     * (sampler/counters.h), up to WP_COUNTERS_MAX, checked here for
     * syntax only (names of letters, digits and - _ : . /, no empty
     * name, no repeat); whether an event is known and can be counted
     * is the sampler's to say.  ncounters 0: none (the default). */
    char counters[WP_COUNTERS_MAX][64];
    int ncounters;
    /* WAITPROF_COUNTERS_SPLIT: 0 (default) or 1: also read the counters at
     * every MPI entry and exit (sampler/ctr_split.h); 0 when there are no
     * counters or the wrappers are lean, each said in one line. */
    int counters_split;
};

typedef const char *(*wp_getenv_t)(const char *name);
typedef void (*wp_report_t)(const char *line);

void wp_config_load(struct wp_config *c, wp_getenv_t get, wp_report_t report);
void wp_config_check_unknown(char **env, wp_report_t report);

/* Are matched instances on (match/match.h)?  They measure the estimator's
 * categories, so they need its recording, and so full wrappers.  Then they
 * also decide the samples of recorded calls (doc/design.md, "Samples"),
 * which is why auto needs no polling stall source (mpit/source.h). */
static inline int wp_config_matched(const struct wp_config *c)
{
    return c->estimate && !c->lean && c->match > 0;
}

#endif
