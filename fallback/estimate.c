/* fallback/estimate.c — see fallback/estimate.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "fallback/estimate.h"
#include "fallback/stats.h"
#include "fallback/wsreduce.h"
#include "match/match.h"
#include "state/log.h"
#include "state/mpiwait.h"
#include "sampler/store.h"
#include "symbols/symbolize.h"
#include "state/clock.h"
#include "state/functions.h"
#include "state/prefault.h"
#include "state/thread.h"

#define WP_ROLES 3

/* "No minimum" in the arrays that are reduced across ranks.  Not UINT64_MAX:
 * MPICH 4.0.2's MPI_MIN on MPI_UINT64_T compares as signed, so UINT64_MAX
 * (-1) would win over every real minimum (measured here).  INT64_MAX is the
 * largest value under either reading. */
#define WP_NO_MIN ((uint64_t)INT64_MAX)
/* Completion calls carry the kind of their requests in the role byte
 * (values above the three roles, fallback/stats.h) and never a size (size
 * class 0), so their kind takes the size class's place in the index. */
#define WP_MIN_INDEX(fn, s, r)                                                                                  \
    ((r) < WP_ROLES ? (((size_t)(fn) * WP_SIZE_CLASSES + (size_t)(s)) * WP_ROLES + (size_t)(r))               \
                    : (((size_t)(fn) * WP_SIZE_CLASSES + (size_t)(r)) * WP_ROLES))
#define WP_MIN_COUNT ((size_t)WP_FN_COUNT * WP_SIZE_CLASSES * WP_ROLES)


/* One row of a rank's result, also the unit sent to rank 0. */
struct wp_row {
    char site[512];
    int fn, pattern, sclass, role;
    uint64_t calls, time_ns, min_ns, max_ns, max2_ns, wait_ns;
    uint64_t early_calls;   /* complete on entry: zero wait, not in the minimum */
    uint64_t plain_wait_ns; /* the paper's estimate, without that remedy */
    uint64_t matched;       /* instances matched with their partners' (match/):
                             * then wait_ns is measured, not estimated */
    uint64_t ci_ns;         /* the measured wait's 95 % interval, half-width */
    uint64_t by_source;     /* not matched, but every call seen by the runtime
                             * stall source: its calls, whose waits it gave */
};

static int wp_row_cmp(const void *a, const void *b)
{
    const struct wp_row *x = a, *y = b;
    return x->wait_ns < y->wait_ns ? 1 : x->wait_ns > y->wait_ns ? -1 : strcmp(x->site, y->site);
}

static void wp_write_table(FILE *f, struct wp_agg *agg, size_t n, int size, double run_total, double threshold)
{
    fprintf(f, "waitprof wait states (measured from matched instances, or given by the runtime stall\n"
               "source, where 'how' says so; else the minimum-duration estimate)\n");
    fprintf(f, "%d ranks, %.3f s of run time summed over ranks; call sites with wait >= %.1f%% of it\n\n", size,
            run_total, threshold * 100);
    fprintf(f, "%-40s %-16s %-15s %9s %11s %11s %7s  %s\n", "call site", "function", "pattern", "calls",
            "time s", "wait s", "wait %", "wait per rank s: min (rank) / avg / max (rank)    how");
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        double wait = agg[i].wait_ns * 1e-9;
        if (run_total <= 0 || wait < threshold * run_total)
            continue;
        /* Ranks without a row for this site waited zero there. */
        double wmin = agg[i].nranks < (uint64_t)size ? 0 : agg[i].wmin;
        int rmin = agg[i].nranks < (uint64_t)size ? -1 : (int)agg[i].rmin;
        char rmins[16];
        if (rmin < 0)
            snprintf(rmins, sizeof rmins, "others");
        else
            snprintf(rmins, sizeof rmins, "%d", rmin);
        char how[48];
        if (agg[i].matched)
            snprintf(how, sizeof how, "measured %llu/%llu", (unsigned long long)agg[i].matched,
                     (unsigned long long)agg[i].calls);
        else if (agg[i].by_source)
            snprintf(how, sizeof how, "source %llu/%llu", (unsigned long long)agg[i].by_source,
                     (unsigned long long)agg[i].calls);
        else
            snprintf(how, sizeof how, "estimated");
        fprintf(f, "%-40s %-16s %-15s %9llu %11.3f %11.3f %6.2f%%  %.3f (%s) / %.3f / %.3f (%d)    %s\n",
                agg[i].site, wp_fn_table[agg[i].fn].name, wp_pattern_name(agg[i].pattern),
                (unsigned long long)agg[i].calls, agg[i].time_ns * 1e-9, wait, 100.0 * wait / run_total, wmin, rmins,
                wait / size, agg[i].wmax, (int)agg[i].rmax, how);
        shown++;
    }
    if (shown == 0)
        fprintf(f, "(no call site above the threshold)\n");
}

/* The same figures for scripts: every call site, no threshold. */
static void wp_write_tsv(FILE *f, const struct wp_agg *agg, size_t n, int size, double run_total)
{
    fprintf(f, "# " WP_FORMAT_WAITSTATES "\n");
    fprintf(f, "site\tfunction\tpattern\tcalls\ttime_s\twait_s\twait_ratio\twait_min_s\twait_min_rank"
               "\twait_avg_s\twait_max_s\twait_max_rank\tmethod\tmatched\n");
    for (size_t i = 0; i < n; i++) {
        double wait = agg[i].wait_ns * 1e-9;
        int all = agg[i].nranks == (uint64_t)size;
        fprintf(f, "%s\t%s\t%s\t%llu\t%.9f\t%.9f\t%.6f\t%.9f\t%d\t%.9f\t%.9f\t%d\t%s\t%llu\n", agg[i].site,
                wp_fn_table[agg[i].fn].name, wp_pattern_name(agg[i].pattern), (unsigned long long)agg[i].calls,
                agg[i].time_ns * 1e-9, wait, run_total > 0 ? wait / run_total : 0, all ? agg[i].wmin : 0,
                all ? (int)agg[i].rmin : -1, wait / size, agg[i].wmax, (int)agg[i].rmax,
                agg[i].matched ? "measured" : agg[i].by_source ? "source" : "estimated",
                (unsigned long long)agg[i].matched);
    }
}

static int wp_agg_cmp(const void *a, const void *b)
{
    const struct wp_agg *x = a, *y = b;
    return x->wait_ns < y->wait_ns ? 1 : x->wait_ns > y->wait_ns ? -1 : wp_agg_key_cmp(x, y);
}

/* A completion call whose requests were nonblocking collectives (its
 * pattern takes the global minimum): the Waitall remedy is not applied. */
static int wp_coll_completion(const struct wp_cat *c)
{
    int global = 0;
    wp_pattern_of(c->fn, c->sclass, c->role, &global);
    return global && wp_fn_table[c->fn].wclass == WP_CLASS_WAIT;
}

/* A call site's name: its return address as "func (file:line)", or with
 * WAITPROF_CALLPATH_DEPTH > 1 its call path, innermost first, the frames
 * joined by " < " (read "called from"): "helper (a.c:9) < caller (a.c:20)".
 * A name longer than the buffer ends in "...". */
static void wp_site_name(struct wp_symbolizer *sy, uintptr_t site, char *buf, size_t cap)
{
    uintptr_t pcs[WP_CALLPATH_MAX];
    int n = wp_callpath_depth > 1 ? wp_callpath_get(site, pcs, WP_CALLPATH_MAX) : 0;
    if (n == 0) {
        wp_symbolizer_site(sy, site, buf, cap);
        return;
    }
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len + 1 < cap; i++) {
        char one[512];
        wp_symbolizer_site(sy, pcs[i], one, sizeof one);
        int w = snprintf(buf + len, cap - len, "%s%s", i ? " < " : "", one);
        if (w < 0 || (size_t)w >= cap - len) {
            if (cap >= 4)
                memcpy(buf + cap - 4, "...", 4);
            return;
        }
        len += (size_t)w;
    }
}

/* rank.R.causes: per measured category and partner that caused its waits,
 * the partner's rank, what it computed (a hash its rank.R.paths names), the
 * matched instances and their waits scaled as the category's (the figure of
 * all its calls), and whether the partner caused them directly or through
 * ranks that waited for it (kind, a column added at the end). */
static void wp_write_causes(const char *dir, int rank)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rank.%d.%s", dir, rank, wp_file_suffix(WP_FILE_CAUSES));
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        wp_log_always("waitprof: rank %d: cannot write %s (%s)", rank, path, strerror(errno));
        return;
    }
    struct wp_symbolizer *sy = wp_symbolizer_new();
    fprintf(f, "# %s %d\n", wp_file_format(WP_FILE_CAUSES), wp_file_version(WP_FILE_CAUSES));
    fprintf(f, "site\tfunction\tpattern\tdelayer\tcause\tinstances\twait_ns\tkind\n");
    for (size_t i = 0; i < wp_match_cause_count(); i++) {
        const struct wp_cause *c = wp_match_cause_at(i);
        char site[512];
        if (sy)
            wp_site_name(sy, c->cat.site, site, sizeof site);
        else
            snprintf(site, sizeof site, "0x%llx", (unsigned long long)c->cat.site);
        fprintf(f, "%s\t%s\t%s\t%d\t%016llx\t%llu\t%.0f\t%s\n", site, wp_fn_table[c->cat.fn].name,
                wp_pattern_name(c->pattern), c->delayer, (unsigned long long)c->cause, (unsigned long long)c->n,
                (double)c->wait_ns * wp_match_scale(&c->cat), c->propagated ? "propagated" : "direct");
    }
    wp_symbolizer_free(sy);
    if (fclose(f) != 0)
        wp_log_always("waitprof: rank %d: cannot write %s (%s)", rank, path, strerror(errno));
}

/* Reduce the lists of all ranks to rank 0 along a binomial tree: in step k
 * (mask 2^k) a rank with bit k set sends its list to rank - 2^k and is done;
 * the others receive from rank + 2^k and merge.  ceil(log2 P) steps; each
 * list holds one record per distinct (site, function, pattern), so rank 0
 * receives at most log2 P lists of that length, never per-rank data.
 * Every rank takes part even with nothing to send (an empty message), so a
 * rank out of memory cannot leave its parent waiting; what it could not keep
 * is reported on that rank.  Returns the merged list at rank 0 (*n set),
 * NULL elsewhere or on failure. */
#define WP_TAG_WAITS 7706
static struct wp_agg *wp_agg_tree(MPI_Comm comm, int rank, int size, struct wp_agg *mine, size_t *n)
{
    struct wp_agg *cur = mine;
    size_t ncur = *n;
    for (int mask = 1; mask < size; mask <<= 1) {
        if (rank & mask) {
            size_t bytes = ncur * sizeof *cur;
            if (bytes > (size_t)INT32_MAX) {
                wp_log_always("waitprof: rank %d: wait-state list too large to send; its figures are left out", rank);
                bytes = 0;
            }
            /* Waited for with sched_yield, as the probe below: a parent
             * or child still symbolizing needs the core (state/mpiwait.h). */
            MPI_Request req;
            if (PMPI_Isend(cur, (int)bytes, MPI_BYTE, rank - mask, WP_TAG_WAITS, comm, &req) == MPI_SUCCESS)
                wp_wait_yield(&req);
            free(cur);
            *n = 0;
            return NULL;
        }
        if (rank + mask >= size)
            continue;
        MPI_Status st;
        int bytes = 0, here = 0;
        while (PMPI_Iprobe(rank + mask, WP_TAG_WAITS, comm, &here, &st) == MPI_SUCCESS && !here)
            wp_poll_yield();
        if (!here)
            PMPI_Probe(rank + mask, WP_TAG_WAITS, comm, &st);
        PMPI_Get_count(&st, MPI_BYTE, &bytes);
        size_t nin = (size_t)bytes / sizeof *cur;
        struct wp_agg *in = malloc(bytes > 0 ? (size_t)bytes : 1);
        struct wp_agg *out = in ? malloc((ncur + nin + 1) * sizeof *out) : NULL;
        /* The child's message must be received whatever happens, or the
         * child would wait forever.  Without room for it, it is received
         * into one record and so truncated: waitprof's communicator returns
         * errors instead of aborting (runtime/lifecycle.c), and a truncated
         * message is still consumed. */
        if (in == NULL) {
            struct wp_agg one;
            PMPI_Recv(&one, (int)sizeof one, MPI_BYTE, rank + mask, WP_TAG_WAITS, comm, MPI_STATUS_IGNORE);
            wp_log_always("waitprof: rank %d: no memory to merge the wait states of ranks %d..%d; left out", rank,
                          rank + mask, rank + 2 * mask - 1);
            continue;
        }
        PMPI_Recv(in, bytes, MPI_BYTE, rank + mask, WP_TAG_WAITS, comm, MPI_STATUS_IGNORE);
        if (out == NULL) {
            wp_log_always("waitprof: rank %d: no memory to merge the wait states of ranks %d..%d; left out", rank,
                          rank + mask, rank + 2 * mask - 1);
            free(in);
            continue;
        }
        ncur = wp_agg_merge(cur, ncur, in, nin, out);
        free(cur);
        free(in);
        cur = out;
    }
    *n = ncur;
    return cur;
}

/* Steps 1 and 2 of the estimate, kept for step 3 and for the held samples
 * of collective calls (wp_estimate_held_min_ns): set once, by
 * wp_estimate_minima(), on the thread that finalizes. */
static struct {
    int done, ok;
    uint64_t overflow;
    struct wp_stats *all;
    double run_total; /* the ranks' run times, summed */
} wp_mins;
/* The minima per (function, size class, role), in ns: fixed arrays, so that
 * no allocation failure can make a rank skip the reduction and leave the
 * others waiting in it.  pmin: the plain method's minimum, over all calls,
 * for the plain_wait_ns column: only completion calls have early calls; the
 * paper's minimum for them is local and over all their calls whatever they
 * completed, so it is kept per function (kind 0). */
static uint64_t lmin[WP_MIN_COUNT], gmin[WP_MIN_COUNT], pmin[WP_MIN_COUNT];

/* The reductions wp_estimate_minima_start started, until
 * wp_estimate_minima completes them. */
static MPI_Request wp_min_req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
static int wp_min_rc, wp_min_started;
static double wp_min_run_seconds;

void wp_estimate_minima_start(MPI_Comm comm, int rank, double run_seconds)
{
    if (wp_min_started)
        return;
    wp_min_started = 1;
    /* 1. One table for the rank, with room for every thread's categories
     *    (at most three quarters of a table's slots are used). */
    int ntables = wp_table_count(&wp_stats_list);
    uint64_t overflow = 0, used = 0;
    for (int t = 0; t < ntables; t++) {
        const struct wp_stats *st = wp_table_at(&wp_stats_list, t);
        if (st) {
            used += wp_stats_count(st);
            overflow += st->overflow;
        }
    }
    uint32_t slots = 64;
    while (slots < 2 * used && slots < (1u << 20))
        slots <<= 1;
    struct wp_stats *all = wp_stats_create(slots);
    /* 140 KiB each, first written here (gmin by the reduction): present
     * in one call each rather than a fault per page (state/prefault.h). */
    wp_prefault(lmin, sizeof lmin);
    wp_prefault(gmin, sizeof gmin);
    wp_prefault(pmin, sizeof pmin);
    for (size_t i = 0; i < WP_MIN_COUNT; i++)
        lmin[i] = pmin[i] = WP_NO_MIN;
    int ok = all != NULL;
    if (ok) {
        struct wp_stats_iter it = {0};
        for (const struct wp_cat *c; (c = wp_stats_next(&it)) != NULL;) {
            if (wp_cat_calls(c) == 0)
                continue;
            struct wp_cat *d = wp_stats_slot(all, c->site, c->fn, c->sclass, c->role);
            if (d)
                wp_cat_merge(d, c);
            else
                overflow += wp_cat_calls(c);
        }
        /* 2. Minima in nanoseconds (ranks on different nodes may count
         *    different ticks). */
        for (uint32_t u = 0; u < all->used; u++) {
            const struct wp_cat *c = wp_stats_used(all, u);
            size_t k = WP_MIN_INDEX(c->fn, c->sclass, c->role);
            uint64_t m = c->min == UINT64_MAX ? WP_NO_MIN : wp_ticks_duration_ns(c->min);
            uint64_t e = c->early_count ? wp_ticks_duration_ns(c->early_min) : WP_NO_MIN;
            /* Completions of nonblocking collectives take the method's
             * global minimum over all calls, early ones included: where one
             * rank's wait-free completions were all complete on entry, a
             * minimum over the rest would come from waiting calls only
             * (measured: Ibcast at 2 ranks, 0.03 s estimated for 0.39 s). */
            if (wp_coll_completion(c) && e < m)
                m = e;
            if (m < lmin[k])
                lmin[k] = m;
            uint64_t p = m < e ? m : e;
            /* The paper knows no request kinds: its minimum for a
             * completion call is over all of the function's calls. */
            size_t pk = wp_fn_table[c->fn].wclass == WP_CLASS_WAIT ? WP_MIN_INDEX(c->fn, 0, 0) : k;
            if (p < pmin[pk])
                pmin[pk] = p;
        }
    } else {
        wp_log_always("waitprof: rank %d: no memory for the wait-state estimate; its figures are left out", rank);
    }
    /* Every rank takes part, with "no minimum" everywhere if it has no data.
     * The run's time summed over the ranks (for waitstates.txt's shares)
     * travels at the same time: both reductions are started, then waited
     * for together, with sched_yield (state/mpiwait.h), so their latencies
     * overlap and a waiting rank leaves its core to those still coming. */
    MPI_Request *req = wp_min_req;
    wp_mins.run_total = 0;
    wp_min_run_seconds = run_seconds;
    wp_min_rc = PMPI_Iallreduce(lmin, gmin, (int)WP_MIN_COUNT, MPI_UINT64_T, MPI_MIN, comm, &req[0]);
    if (wp_min_rc != MPI_SUCCESS)
        req[0] = MPI_REQUEST_NULL;
    if (PMPI_Iallreduce(&wp_min_run_seconds, &wp_mins.run_total, 1, MPI_DOUBLE, MPI_SUM, comm, &req[1]) !=
        MPI_SUCCESS) {
        req[1] = MPI_REQUEST_NULL;
        wp_mins.run_total = 0;
    }
    wp_mins.ok = ok;
    wp_mins.overflow = overflow;
    wp_mins.all = all;
}

int wp_estimate_minima(MPI_Comm comm, int rank, double run_seconds)
{
    if (wp_mins.done)
        return wp_mins.ok ? 0 : -1;
    wp_mins.done = 1;
    wp_estimate_minima_start(comm, rank, run_seconds);
    if (wp_waitall_yield(2, wp_min_req) != MPI_SUCCESS || wp_min_rc != MPI_SUCCESS)
        /* Without the global minima, the own ones. */
        memcpy(gmin, lmin, sizeof gmin);
    return wp_mins.ok ? 0 : -1;
}

/* A category's row without its matched instances: its figures, scaled to
 * all its calls where some were untimed (fallback/stats.h), and its wait
 * by the minimum-duration rule with the remedy (early calls wait zero, the
 * others their excess over the minimum of the non-early calls) and
 * without it (plain_wait_ns), or, for a receive category whose every call
 * the runtime source saw, the source's waits (by_source).  Needs the
 * minima (wp_estimate_minima).  wp_estimate_finalize then puts the matched
 * instances' waits in their place; wp_estimate_held_prepare sums these
 * for the categories without them. */
static void wp_row_estimate(const struct wp_cat *c, struct wp_row *r)
{
    int global;
    r->pattern = wp_pattern_of(c->fn, c->sclass, c->role, &global);
    r->fn = c->fn;
    r->sclass = c->sclass;
    r->role = c->role;
    r->calls = wp_cat_calls(c);
    uint64_t timed_ns = wp_ticks_duration_ns(c->sum);
    r->time_ns = wp_cat_scaled(c, timed_ns);
    r->early_calls = c->early_count;
    uint64_t own_min = c->min < (c->early_count ? c->early_min : UINT64_MAX) ? c->min : c->early_min;
    r->min_ns = wp_ticks_duration_ns(own_min);
    r->max_ns = wp_ticks_duration_ns(c->max);
    r->max2_ns = wp_ticks_duration_ns(c->max2);
    size_t k = WP_MIN_INDEX(c->fn, c->sclass, c->role);
    uint64_t m = (global ? gmin : lmin)[k];
    uint64_t pm = wp_fn_table[c->fn].wclass == WP_CLASS_WAIT ? pmin[WP_MIN_INDEX(c->fn, 0, 0)]
                  : global                                 ? m
                                                           : pmin[k];
    m = m >= WP_NO_MIN ? UINT64_MAX : m; /* wp_estimate_wait's "unknown" */
    pm = pm >= WP_NO_MIN ? UINT64_MAX : pm;
    uint64_t wait = 0, plain = 0;
    if (r->pattern != WP_PAT_NONE) {
        if (wp_coll_completion(c))
            wait = wp_estimate_wait(timed_ns, c->count, 0, 0, m);
        else
            wait = wp_estimate_wait(timed_ns, c->count, wp_ticks_duration_ns(c->early_sum), c->early_count, m);
        plain = wp_estimate_wait(timed_ns, c->count, 0, 0, pm);
        wait = wp_cat_scaled(c, wait);
        plain = wp_cat_scaled(c, plain);
    }
    r->by_source = 0;
    if (r->pattern == WP_PAT_LATE_SENDER && c->src_count && c->src_count == c->count && !c->untimed) {
        /* Not matched (WAITPROF_MATCH=0, a communicator not numbered),
         * but the runtime source saw every call and dated the end of each
         * one's stall: its waits, exact per call, replace the estimate.
         * Only receives: what a source sees of a collective is its
         * internal messages' waits, not the collective's pattern. */
        uint64_t w = wp_ticks_duration_ns(c->src_sum);
        wait = w < r->time_ns ? w : r->time_ns;
        r->by_source = c->count;
    }
    r->wait_ns = wait;
    r->plain_wait_ns = plain;
}

int wp_estimate_finalize(MPI_Comm comm, int rank, int size, const char *dir, int have_dir, int write_rank,
                         double run_seconds, double threshold)
{
    wp_estimate_minima(comm, rank, run_seconds);
    int ok = wp_mins.ok;
    uint64_t overflow = wp_mins.overflow;
    struct wp_stats *all = wp_mins.all;
    double run_total = wp_mins.run_total;

    /* 3. Rows: one per category, wait from the right minimum. */
    struct wp_row *rows = NULL;
    size_t nrows = 0;
    struct wp_symbolizer *sy = ok ? wp_symbolizer_new() : NULL;
    if (ok && all->used && (rows = calloc(all->used, sizeof *rows)) != NULL) {
        for (uint32_t u = 0; u < all->used; u++) {
            const struct wp_cat *c = wp_stats_used(all, u);
            struct wp_row *r = &rows[nrows++];
            wp_row_estimate(c, r);
            /* Where instances of the category were matched, their waits
             * replace the estimate (match/match.h). */
            struct wp_mcat mc = {c->site, c->fn, c->sclass, c->role};
            int64_t measured = r->pattern != WP_PAT_NONE ? wp_match_wait(&mc, wp_cat_calls(c), &r->ci_ns, &r->matched) : -1;
            if (measured >= 0) {
                r->wait_ns = (uint64_t)measured < r->time_ns ? (uint64_t)measured : r->time_ns;
                r->by_source = 0;
            }
            if (sy)
                wp_site_name(sy, c->site, r->site, sizeof r->site);
            else
                snprintf(r->site, sizeof r->site, "0x%llx", (unsigned long long)c->site);
        }
        qsort(rows, nrows, sizeof *rows, wp_row_cmp);
    }
    wp_symbolizer_free(sy);

    /* 4. This rank's file, when the rank is selected (WAITPROF_RANKS). */
    if (have_dir && write_rank) {
        char path[4200];
        snprintf(path, sizeof path, "%s/rank.%d.%s", dir, rank, wp_file_suffix(WP_FILE_WAITS));
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "# %s %d\n", wp_file_format(WP_FILE_WAITS), wp_file_version(WP_FILE_WAITS));
            fprintf(f, "site\tfunction\tpattern\tsize_class\trole\tcalls\ttime_ns\tmin_ns\tmax_ns\tmax2_ns\twait_ns"
                       "\tearly_calls\tplain_wait_ns\tcompletes\tmethod\tmatched\tci_ns\n");
            for (size_t i = 0; i < nrows; i++) {
                const struct wp_row *r = &rows[i];
                /* role keeps its three values; what a completion call
                 * completed (its request kind) is the last column. */
                int kinds = wp_fn_table[r->fn].wclass == WP_CLASS_WAIT;
                fprintf(f, "%s\t%s\t%s\t%d\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%s\t%s\t%llu\t%llu\n",
                        r->site,
                        wp_fn_table[r->fn].name, wp_pattern_name(r->pattern), r->sclass,
                        wp_role_name(r->role < WP_ROLES ? r->role : WP_ROLE_ANY),
                        (unsigned long long)r->calls, (unsigned long long)r->time_ns,
                        (unsigned long long)r->min_ns, (unsigned long long)r->max_ns,
                        (unsigned long long)r->max2_ns, (unsigned long long)r->wait_ns,
                        (unsigned long long)r->early_calls, (unsigned long long)r->plain_wait_ns,
                        !kinds ? "-" : r->role == WP_ROLE_ANY ? "unknown" : wp_role_name(r->role),
                        r->pattern == WP_PAT_NONE ? "-"
                        : r->matched              ? "measured"
                        : r->by_source            ? "source"
                                                  : "estimated",
                        (unsigned long long)r->matched, (unsigned long long)r->ci_ns);
            }
            if (overflow)
                fprintf(f, "# calls not recorded (tables full): %llu\n", (unsigned long long)overflow);
            if (fclose(f) != 0)
                wp_log_always("waitprof: rank %d: cannot write %s (%s)", rank, path, strerror(errno));
        } else {
            wp_log_always("waitprof: rank %d: cannot write %s (%s)", rank, path, strerror(errno));
        }
    }

    /* 4b. Who caused this rank's measured waits (match/match.h). */
    if (have_dir && write_rank && wp_match_on)
        wp_write_causes(dir, rank);

    /* 5. Rank 0's table: this rank's rows with a pattern, one record per
     *    (site, function, pattern), reduced over all ranks (selected or
     *    not: the estimate is cheap and covers the whole job). */
    size_t nagg = 0;
    struct wp_agg *agg = calloc(nrows ? nrows : 1, sizeof *agg);
    for (size_t i = 0; agg && i < nrows; i++) {
        if (rows[i].pattern == WP_PAT_NONE)
            continue;
        struct wp_agg *a = &agg[nagg++];
        snprintf(a->site, sizeof a->site, "%s", rows[i].site);
        a->fn = rows[i].fn;
        a->pattern = rows[i].pattern;
        a->calls = rows[i].calls;
        a->time_ns = rows[i].time_ns;
        a->wait_ns = rows[i].wait_ns;
        a->matched = rows[i].matched;
        a->by_source = rows[i].by_source;
        a->nranks = 1;
        a->wmin = a->wmax = rows[i].wait_ns * 1e-9;
        a->rmin = a->rmax = rank;
    }
    if (agg == NULL && nrows)
        wp_log_always("waitprof: rank %d: no memory for its wait-state rows; they are left out of waitstates.txt",
                      rank);
    nagg = wp_agg_normalize(agg, nagg);
    agg = wp_agg_tree(comm, rank, size, agg, &nagg);
    if (rank == 0 && have_dir) {
        if (agg)
            qsort(agg, nagg, sizeof *agg, wp_agg_cmp);
        char path[4200], tmp[4300];
        snprintf(path, sizeof path, "%s/waitstates.txt", dir);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        char tsv[4200];
        snprintf(tsv, sizeof tsv, "%s/waitstates.tsv", dir);
        FILE *t = agg ? fopen(tsv, "w") : NULL;
        if (t) {
            wp_write_tsv(t, agg, nagg, size, run_total);
            if (fclose(t) != 0)
                wp_log("waitprof: cannot write %s (%s)", tsv, strerror(errno));
        }
        FILE *f = fopen(tmp, "w");
        if (f && agg) {
            wp_write_table(f, agg, nagg, size, run_total, threshold);
            if (fclose(f) == 0 && rename(tmp, path) == 0)
                f = NULL;
            else
                wp_log("waitprof: cannot write %s (%s)", path, strerror(errno));
        } else {
            if (f)
                fclose(f);
            wp_log("waitprof: cannot write %s (%s)", path, strerror(errno));
        }
    }
    free(agg);
    free(rows);
    wp_stats_destroy(all);
    wp_mins.all = NULL;
    return ok ? 0 : -1;
}

/* For the writers: the process-local minima, per category key in lmin's
 * layout (xmin) and per function (fnmin), in ns, from one pass over the
 * threads' tables, made on first use.  A lookup per held entry would scan
 * every table again: entries x threads x 2048 slots in a termination
 * handler.  Static memory (untouched pages until used), no allocation, so a
 * termination handler may fill them; not lmin, which step 3 still needs. */
static uint64_t xmin[WP_MIN_COUNT], fnmin[WP_FN_COUNT];
static int wp_local_done;

static void wp_local_minima(void)
{
    if (wp_local_done)
        return;
    for (size_t i = 0; i < WP_MIN_COUNT; i++)
        xmin[i] = WP_NO_MIN;
    for (size_t i = 0; i < WP_FN_COUNT; i++)
        fnmin[i] = WP_NO_MIN;
    struct wp_stats_iter it = {0};
    for (const struct wp_cat *c; (c = wp_stats_next(&it)) != NULL;) {
        if (c->count == 0 || c->fn <= 0 || c->fn >= WP_FN_COUNT)
            continue;
        uint64_t m = c->min;
        if (c->early_count && c->early_min < m)
            m = c->early_min;
        m = m == UINT64_MAX ? WP_NO_MIN : wp_ticks_duration_ns(m);
        size_t k = WP_MIN_INDEX(c->fn, c->sclass, c->role);
        if (m < xmin[k])
            xmin[k] = m;
        if (m < fnmin[c->fn])
            fnmin[c->fn] = m;
    }
    wp_local_done = 1;
}

/* --- held samples ---------------------------------------------------------
 *
 * A category knows the share of its time spent waiting: its matched
 * calls' (match/measured.h, wp_match_wait_share) where instances were
 * matched, else the estimator's own, the wait of its rows (the minimum
 * rule's, or the runtime source's where it saw every call: wp_row_estimate)
 * over their time.  Its held samples are split by that share: those with
 * the longest time to their call's end are MPI-Stall, as many as the share
 * of the category's held weight, the rest MPI-Work.  The time to the end
 * orders the samples (an early sample in a long wait first); the share,
 * measured on the calls themselves, sets how many wait, so the samples say
 * what the wait-state table says.  Why not a threshold on that time (the
 * minimum rule applied to each sample): a sampled call goes on for the
 * signal's return and the handler's cache misses (the return alone
 * 0.8-3.9 us on this project's virtual machine, doc/design.md), and
 * against calls of a microsecond any threshold on its rest counted nearly
 * every sample of a receive whose message was there as waiting
 * (tests/mpi/ws_source arrived: 94 % against a truth of 0 with matched
 * instances; 90 % against the table's 37 % without them).
 *
 * wp_estimate_held_prepare() finds, per category, the bucket of time to
 * the end (sampler/store.h) above which samples wait: one pass over the
 * rank's stores collects the held weight per (category, bucket), sorted,
 * then each category's buckets are walked from the longest time down.
 * The samples in the dividing bucket are split in the part that makes the
 * share exact (wp_estimate_entry_stall), each entry's rounded: buckets
 * are 1/16 of an octave wide, and a microsecond call's samples fill few
 * of them, so a whole bucket could move its category's share by several
 * points.  A table of its own, static: categories beyond it, and those
 * without a pattern, keep the minimum rule below. */
#define WP_HSPLIT_SLOTS 1024
static struct wp_hsplit {
    uint32_t key;  /* WP_MIN_INDEX + 1; 0 free */
    uint16_t fn;   /* the category */
    uint8_t sclass, role;
    uint16_t div;  /* samples in buckets above it wait, */
    double frac;   /* and this part of those in it */
    double target; /* the share, then the held weight that waits */
    double wait, time; /* the estimator's sums (ns) while the share is found */
} wp_hs[WP_HSPLIT_SLOTS];
static int wp_hs_ready;

static struct wp_hsplit *wp_hs_find(uint32_t key, int create)
{
    uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) % WP_HSPLIT_SLOTS;
    for (uint32_t p = 0; p < WP_HSPLIT_SLOTS / 2; p++) {
        struct wp_hsplit *x = &wp_hs[(h + p) % WP_HSPLIT_SLOTS];
        if (x->key == key)
            return x;
        if (x->key == 0) {
            if (!create)
                return NULL;
            x->key = key;
            return x;
        }
    }
    return NULL;
}

static int wp_hs_valid(const struct wp_stack_entry *e)
{
    return e->held && e->fn > 0 && e->fn < WP_FN_COUNT && e->sclass < WP_SIZE_CLASSES && e->role <= WP_RK_LAST;
}

static uint32_t wp_hs_key(const struct wp_stack_entry *e)
{
    return (uint32_t)WP_MIN_INDEX(e->fn, e->sclass, e->role) + 1;
}

/* One held entry's weight under its category's slot and its bucket. */
struct wp_hw {
    uint32_t slot;
    uint16_t bucket;
    uint64_t n;
};

/* By slot, then the longest time to the end first. */
static int wp_hw_cmp(const void *a, const void *b)
{
    const struct wp_hw *x = a, *y = b;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    return x->bucket > y->bucket ? -1 : x->bucket < y->bucket;
}

/* Each category's share of time waited, in its slot's target: the matched
 * calls' where there are some, else the estimator's rows'.  -1 (none):
 * the minimum rule decides. */
static void wp_hs_shares(void)
{
    const struct wp_stats *all = wp_mins.all;
    for (uint32_t u = 0; all && u < all->used; u++) {
        const struct wp_cat *c = wp_stats_used(all, u);
        if (c->fn <= 0 || c->fn >= WP_FN_COUNT || c->sclass >= WP_SIZE_CLASSES || c->role > WP_RK_LAST)
            continue;
        struct wp_row r = {0};
        wp_row_estimate(c, &r);
        struct wp_hsplit *x;
        if (r.pattern == WP_PAT_NONE ||
            (x = wp_hs_find((uint32_t)WP_MIN_INDEX(c->fn, c->sclass, c->role) + 1, 1)) == NULL)
            continue;
        x->fn = c->fn;
        x->sclass = c->sclass;
        x->role = c->role;
        x->wait += (double)r.wait_ns;
        x->time += (double)r.time_ns;
    }
    for (size_t k = 0; k < WP_HSPLIT_SLOTS; k++) {
        struct wp_hsplit *x = &wp_hs[k];
        if (x->key == 0)
            continue;
        double share = wp_match_wait_share(x->fn, x->sclass, x->role);
        if (share < 0 && x->time > 0)
            share = x->wait < x->time ? x->wait / x->time : 1;
        x->target = share;
    }
}

void wp_estimate_held_prepare(void)
{
    memset(wp_hs, 0, sizeof wp_hs);
    wp_hs_ready = 0;
    wp_hs_shares();
    /* The held weight per (category, bucket), in one pass over the
     * entries; an allocation of normal context, at MPI_Finalize. */
    size_t n = 0, cap = 0;
    struct wp_hw *w = NULL;
    struct wp_entries it;
    wp_entries_start(&it);
    for (const struct wp_stack_entry *e; (e = wp_entries_next(&it)) != NULL;) {
        const struct wp_hsplit *x;
        if (!wp_hs_valid(e) || (x = wp_hs_find(wp_hs_key(e), 0)) == NULL || x->target < 0)
            continue;
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 1024;
            struct wp_hw *g = realloc(w, nc * sizeof *w);
            if (g == NULL) {
                /* Without memory the minimum rule decides them all. */
                free(w);
                return;
            }
            w = g, cap = nc;
        }
        w[n++] = (struct wp_hw){(uint32_t)(x - wp_hs), e->held, e->count};
    }
    if (n > 1)
        qsort(w, n, sizeof *w, wp_hw_cmp);
    /* Per category, from the longest time to the end down: the bucket at
     * which the weight above it and in it first exceeds the weight that
     * waits divides them, in the part of it that is still missing. */
    for (size_t i = 0; i < n;) {
        struct wp_hsplit *x = &wp_hs[w[i].slot];
        size_t j = i;
        double all = 0;
        for (; j < n && w[j].slot == w[i].slot; j++)
            all += (double)w[j].n;
        double target = x->target * all, above = 0;
        x->div = 0; /* all of them wait unless a bucket divides */
        x->frac = 0;
        for (size_t k = i; k < j;) {
            uint16_t b = w[k].bucket;
            double at = 0;
            for (; k < j && w[k].bucket == b; k++)
                at += (double)w[k].n;
            if (above + at > target) {
                x->div = b;
                x->frac = (target - above) / at;
                break;
            }
            above += at;
        }
        i = j;
    }
    free(w);
    wp_hs_ready = 1;
}

uint64_t wp_estimate_held_min_ns(int fn, int sclass, int role)
{
    if (fn <= 0 || fn >= WP_FN_COUNT || sclass < 0 || sclass >= WP_SIZE_CLASSES || role < 0 || role > WP_RK_LAST)
        return UINT64_MAX;
    int global = 0;
    wp_pattern_of(fn, sclass, role, &global);
    /* Point-to-point categories take the process-local minimum, as the
     * estimate does. */
    const uint64_t *m = global ? gmin : lmin;
    if (!wp_mins.done) {
        /* Before the reduction (a run ending without MPI_Finalize). */
        wp_local_minima();
        m = xmin;
    }
    uint64_t v = m[WP_MIN_INDEX(fn, sclass, role)];
    return v == WP_NO_MIN ? UINT64_MAX : v;
}

/* The split of a held entry's category (above), NULL when it has none. */
static const struct wp_hsplit *wp_hs_of(const struct wp_stack_entry *e)
{
    const struct wp_hsplit *x;
    if (wp_hs_ready && wp_hs_valid(e) && (x = wp_hs_find(wp_hs_key(e), 0)) != NULL && x->target >= 0)
        return x;
    return NULL;
}

int wp_estimate_entry_state(const struct wp_stack_entry *e)
{
    /* A held sample of a category with a share: split by it (above); in
     * the dividing bucket, the state of most of the entry. */
    const struct wp_hsplit *x = wp_hs_of(e);
    if (x != NULL)
        return e->held > x->div || (e->held == x->div && x->frac >= 0.5) ? WAITPROF_STATE_STALL : WAITPROF_STATE_WORK;
    return wp_entry_state(e, e->held ? wp_estimate_held_min_ns(e->fn, e->sclass, e->role) : 0);
}

uint64_t wp_estimate_entry_stall(const struct wp_stack_entry *e, uint64_t weight)
{
    const struct wp_hsplit *x = wp_hs_of(e);
    if (x != NULL && e->held == x->div)
        return (uint64_t)((double)weight * x->frac + 0.5);
    return wp_estimate_entry_state(e) == WAITPROF_STATE_STALL ? weight : 0;
}

uint64_t wp_estimate_pending_min_ns(const struct wp_pending *p)
{
    if (p == NULL || p->n == 0 || p->fn == 0 || p->fn >= WP_FN_COUNT)
        return UINT64_MAX;
    wp_local_minima();
    return fnmin[p->fn] == WP_NO_MIN ? UINT64_MAX : fnmin[p->fn];
}

uint64_t wp_estimate_pending_split(const struct wp_pending *p, uint64_t now, uint64_t *stall)
{
    *stall = 0;
    if (p == NULL || p->n == 0)
        return 0;
    return wp_pending_split(p, now, wp_estimate_pending_min_ns(p), stall);
}

uint64_t wp_estimate_pending_split_ctr(const struct wp_pending *p, uint64_t now, uint32_t nctr, int c,
                                       uint64_t *stall)
{
    *stall = 0;
    if (p == NULL || p->n == 0)
        return 0;
    return wp_pending_split_ctr(p, now, wp_estimate_pending_min_ns(p), nctr, c, stall);
}
