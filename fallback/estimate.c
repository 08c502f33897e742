/* fallback/estimate.c — see fallback/estimate.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fallback/estimate.h"
#include "fallback/stats.h"
#include "runtime/log.h"
#include "sampler/symbolize.h"
#include "state/clock.h"
#include "state/functions.h"

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
};

static int wp_row_cmp(const void *a, const void *b)
{
    const struct wp_row *x = a, *y = b;
    return x->wait_ns < y->wait_ns ? 1 : x->wait_ns > y->wait_ns ? -1 : strcmp(x->site, y->site);
}

/* Rank 0's table: one line per (site, function, pattern) over all ranks. */
struct wp_agg {
    char site[512];
    int fn, pattern;
    uint64_t calls, time_ns, wait_ns;
    double wmin, wmax;
    int rmin, rmax, nranks, last_rank;
};

static void wp_write_table(FILE *f, struct wp_agg *agg, size_t n, int size, double run_total, double threshold)
{
    fprintf(f, "waitprof wait states (minimum-duration estimate, PMPI wrappers)\n");
    fprintf(f, "%d ranks, %.3f s of run time summed over ranks; call sites with wait >= %.1f%% of it\n\n", size,
            run_total, threshold * 100);
    fprintf(f, "%-40s %-16s %-15s %9s %11s %11s %7s  %s\n", "call site", "function", "pattern", "calls",
            "time s", "wait s", "wait %", "wait per rank s: min (rank) / avg / max (rank)");
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        double wait = agg[i].wait_ns * 1e-9;
        if (run_total <= 0 || wait < threshold * run_total)
            continue;
        /* Ranks without a row for this site waited zero there. */
        double wmin = agg[i].nranks < size ? 0 : agg[i].wmin;
        int rmin = agg[i].nranks < size ? -1 : agg[i].rmin;
        char rmins[16];
        if (rmin < 0)
            snprintf(rmins, sizeof rmins, "others");
        else
            snprintf(rmins, sizeof rmins, "%d", rmin);
        fprintf(f, "%-40s %-16s %-15s %9llu %11.3f %11.3f %6.2f%%  %.3f (%s) / %.3f / %.3f (%d)\n", agg[i].site,
                wp_fn_table[agg[i].fn].name, wp_pattern_names[agg[i].pattern], (unsigned long long)agg[i].calls,
                agg[i].time_ns * 1e-9, wait, 100.0 * wait / run_total, wmin, rmins, wait / size, agg[i].wmax,
                agg[i].rmax);
        shown++;
    }
    if (shown == 0)
        fprintf(f, "(no call site above the threshold)\n");
}

/* The same figures for scripts: every call site, no threshold. */
static void wp_write_tsv(FILE *f, const struct wp_agg *agg, size_t n, int size, double run_total)
{
    fprintf(f, "# waitprof-waitstates 1\n");
    fprintf(f, "site\tfunction\tpattern\tcalls\ttime_s\twait_s\twait_ratio\twait_min_s\twait_min_rank"
               "\twait_avg_s\twait_max_s\twait_max_rank\n");
    for (size_t i = 0; i < n; i++) {
        double wait = agg[i].wait_ns * 1e-9;
        int all = agg[i].nranks == size;
        fprintf(f, "%s\t%s\t%s\t%llu\t%.9f\t%.9f\t%.6f\t%.9f\t%d\t%.9f\t%.9f\t%d\n", agg[i].site,
                wp_fn_table[agg[i].fn].name, wp_pattern_names[agg[i].pattern], (unsigned long long)agg[i].calls,
                agg[i].time_ns * 1e-9, wait, run_total > 0 ? wait / run_total : 0, all ? agg[i].wmin : 0,
                all ? agg[i].rmin : -1, wait / size, agg[i].wmax, agg[i].rmax);
    }
}

static int wp_agg_cmp(const void *a, const void *b)
{
    const struct wp_agg *x = a, *y = b;
    return x->wait_ns < y->wait_ns ? 1 : x->wait_ns > y->wait_ns ? -1 : strcmp(x->site, y->site);
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

int wp_estimate_finalize(MPI_Comm comm, int rank, int size, const char *dir, int have_dir, double run_seconds,
                         double threshold)
{
    /* 1. One table for the rank. */
    uint32_t slots = 4096;
    int ntables = __atomic_load_n(&wp_stats_ntables, __ATOMIC_ACQUIRE);
    if (ntables > WP_MAX_STATS_TABLES)
        ntables = WP_MAX_STATS_TABLES;
    uint64_t overflow = 0;
    for (int t = 0; t < ntables; t++)
        if (wp_stats_tables[t]) {
            while (slots < 2 * wp_stats_tables[t]->used * (uint32_t)ntables && slots < (1u << 20))
                slots <<= 1;
            overflow += wp_stats_tables[t]->overflow;
        }
    struct wp_stats *all = wp_stats_create(slots);
    /* The minima per (function, size class, role): fixed arrays, so that no
     * allocation failure can make a rank skip the reduction below and leave
     * the others waiting in it.  Finalize runs once, on one thread. */
    static uint64_t lmin[WP_MIN_COUNT], gmin[WP_MIN_COUNT];
    /* The plain method's minimum, over all calls, for the plain_wait_ns
     * column: only completion calls have early calls; the paper's minimum
     * for them is local and over all their calls whatever they completed,
     * so it is kept per function (kind 0). */
    static uint64_t pmin[WP_MIN_COUNT];
    for (size_t i = 0; i < WP_MIN_COUNT; i++)
        lmin[i] = pmin[i] = WP_NO_MIN;
    int ok = all != NULL;
    if (ok) {
        for (int t = 0; t < ntables; t++) {
            struct wp_stats *st = wp_stats_tables[t];
            for (uint32_t i = 0; st && i < st->nslots; i++) {
                const struct wp_cat *c = &st->cats[i];
                if (c->site == 0 || c->count == 0)
                    continue;
                struct wp_cat *d = wp_stats_slot(all, c->site, c->fn, c->sclass, c->role);
                if (d)
                    wp_cat_merge(d, c);
                else
                    overflow += c->count;
            }
        }
        /* 2. Minima in nanoseconds (ranks on different nodes may count
         *    different ticks). */
        for (uint32_t i = 0; i < all->nslots; i++) {
            const struct wp_cat *c = &all->cats[i];
            if (c->site == 0)
                continue;
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
    /* Every rank takes part, with "no minimum" everywhere if it has no data. */
    PMPI_Allreduce(lmin, gmin, (int)WP_MIN_COUNT, MPI_UINT64_T, MPI_MIN, comm);
    double run_total = 0;
    PMPI_Allreduce(&run_seconds, &run_total, 1, MPI_DOUBLE, MPI_SUM, comm);

    /* 3. Rows: one per category, wait from the right minimum. */
    struct wp_row *rows = NULL;
    size_t nrows = 0;
    struct wp_symbolizer *sy = ok ? wp_symbolizer_new() : NULL;
    if (ok && all->used && (rows = calloc(all->used, sizeof *rows)) != NULL) {
        for (uint32_t i = 0; i < all->nslots; i++) {
            const struct wp_cat *c = &all->cats[i];
            if (c->site == 0)
                continue;
            struct wp_row *r = &rows[nrows++];
            int global;
            r->pattern = wp_pattern_of(c->fn, c->sclass, c->role, &global);
            r->fn = c->fn;
            r->sclass = c->sclass;
            r->role = c->role;
            r->calls = c->count;
            r->time_ns = wp_ticks_duration_ns(c->sum);
            r->early_calls = c->early_count;
            uint64_t own_min = c->min < (c->early_count ? c->early_min : UINT64_MAX) ? c->min : c->early_min;
            r->min_ns = wp_ticks_duration_ns(own_min);
            r->max_ns = wp_ticks_duration_ns(c->max);
            r->max2_ns = wp_ticks_duration_ns(c->max2);
            size_t k = WP_MIN_INDEX(c->fn, c->sclass, c->role);
            /* With the remedy: early calls wait zero, the others wait
             * their excess over the minimum of the non-early calls. */
            uint64_t m = (global ? gmin : lmin)[k];
            uint64_t pm = wp_fn_table[c->fn].wclass == WP_CLASS_WAIT ? pmin[WP_MIN_INDEX(c->fn, 0, 0)]
                          : global                                 ? m
                                                                   : pmin[k];
            m = m >= WP_NO_MIN ? UINT64_MAX : m; /* wp_estimate_wait's "unknown" */
            pm = pm >= WP_NO_MIN ? UINT64_MAX : pm;
            uint64_t wait = 0, plain = 0;
            if (r->pattern != WP_PAT_NONE) {
                if (wp_coll_completion(c))
                    wait = wp_estimate_wait(r->time_ns, c->count, 0, 0, m);
                else
                    wait = wp_estimate_wait(r->time_ns, c->count, wp_ticks_duration_ns(c->early_sum),
                                            c->early_count, m);
                plain = wp_estimate_wait(r->time_ns, c->count, 0, 0, pm);
            }
            r->wait_ns = wait;
            r->plain_wait_ns = plain;
            if (sy)
                wp_site_name(sy, c->site, r->site, sizeof r->site);
            else
                snprintf(r->site, sizeof r->site, "0x%llx", (unsigned long long)c->site);
        }
        qsort(rows, nrows, sizeof *rows, wp_row_cmp);
    }
    wp_symbolizer_free(sy);

    /* 4. This rank's file. */
    if (have_dir) {
        char path[4200];
        snprintf(path, sizeof path, "%s/rank.%d.waits", dir, rank);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "# waitprof-waits 1\n");
            fprintf(f, "site\tfunction\tpattern\tsize_class\trole\tcalls\ttime_ns\tmin_ns\tmax_ns\tmax2_ns\twait_ns"
                       "\tearly_calls\tplain_wait_ns\tcompletes\n");
            for (size_t i = 0; i < nrows; i++) {
                const struct wp_row *r = &rows[i];
                /* role keeps its three values; what a completion call
                 * completed (its request kind) is the last column. */
                int kinds = wp_fn_table[r->fn].wclass == WP_CLASS_WAIT;
                fprintf(f, "%s\t%s\t%s\t%d\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%s\n", r->site,
                        wp_fn_table[r->fn].name, wp_pattern_names[r->pattern], r->sclass,
                        wp_role_name(r->role < WP_ROLES ? r->role : WP_ROLE_ANY),
                        (unsigned long long)r->calls, (unsigned long long)r->time_ns,
                        (unsigned long long)r->min_ns, (unsigned long long)r->max_ns,
                        (unsigned long long)r->max2_ns, (unsigned long long)r->wait_ns,
                        (unsigned long long)r->early_calls, (unsigned long long)r->plain_wait_ns,
                        !kinds ? "-" : r->role == WP_ROLE_ANY ? "unknown" : wp_role_name(r->role));
            }
            if (overflow)
                fprintf(f, "# calls not recorded (tables full): %llu\n", (unsigned long long)overflow);
            if (fclose(f) != 0)
                wp_log_always("waitprof: rank %d: cannot write %s (%s)", rank, path, strerror(errno));
        } else {
            wp_log_always("waitprof: rank %d: cannot write %s (%s)", rank, path, strerror(errno));
        }
    }

    /* 5. Rank 0's table: gather (site, function, pattern) sums.  Rows with no
     *    pattern or no wait carry nothing to the table. */
    int mine = 0;
    for (size_t i = 0; i < nrows; i++)
        mine += rows[i].pattern != WP_PAT_NONE;
    int *counts = rank == 0 ? calloc((size_t)size, sizeof *counts) : NULL;
    int *displs = rank == 0 ? calloc((size_t)size, sizeof *displs) : NULL;
    PMPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
    struct wp_row *sendbuf = calloc(mine ? (size_t)mine : 1, sizeof *sendbuf);
    int k = 0;
    for (size_t i = 0; sendbuf && i < nrows; i++)
        if (rows[i].pattern != WP_PAT_NONE)
            sendbuf[k++] = rows[i];
    long long total = 0;
    struct wp_row *allrows = NULL;
    if (rank == 0 && counts && displs) {
        for (int r = 0; r < size; r++) {
            displs[r] = (int)(total * (long long)sizeof(struct wp_row));
            total += counts[r];
        }
        allrows = total ? calloc((size_t)total, sizeof *allrows) : NULL;
        for (int r = 0; r < size; r++)
            counts[r] = allrows ? counts[r] * (int)sizeof(struct wp_row) : 0;
    }
    int ok0 = rank != 0 || (allrows != NULL || total == 0);
    PMPI_Bcast(&ok0, 1, MPI_INT, 0, comm);
    PMPI_Gatherv(sendbuf, (ok0 && sendbuf) ? k * (int)sizeof(struct wp_row) : 0, MPI_BYTE, allrows, counts,
                 displs, MPI_BYTE, 0, comm);
    if (rank == 0 && have_dir) {
        struct wp_agg *agg = calloc(total ? (size_t)total : 1, sizeof *agg);
        size_t nagg = 0;
        long long idx = 0;
        for (int r = 0; agg && allrows && r < size; r++) {
            long long end = idx + counts[r] / (long long)sizeof(struct wp_row);
            for (; idx < end; idx++) {
                const struct wp_row *w = &allrows[idx];
                size_t j = 0;
                while (j < nagg && !(agg[j].fn == w->fn && agg[j].pattern == w->pattern &&
                                     strcmp(agg[j].site, w->site) == 0))
                    j++;
                if (j == nagg) {
                    memset(&agg[j], 0, sizeof agg[j]);
                    snprintf(agg[j].site, sizeof agg[j].site, "%s", w->site);
                    agg[j].fn = w->fn;
                    agg[j].pattern = w->pattern;
                    agg[j].last_rank = -1;
                    nagg++;
                }
                struct wp_agg *a = &agg[j];
                a->calls += w->calls;
                a->time_ns += w->time_ns;
                a->wait_ns += w->wait_ns;
                if (a->last_rank != r) { /* a rank's rows are contiguous */
                    a->nranks++;
                    a->last_rank = r;
                }
            }
        }
        /* Min and max over ranks of each rank's wait at the site (a rank may
         * have several rows for it: size classes, roles). */
        for (size_t j = 0; agg && j < nagg; j++) {
            agg[j].wmin = 1e300;
            agg[j].wmax = -1;
            for (int r = 0, base = 0; r < size; r++) {
                int n = counts[r] / (int)sizeof(struct wp_row);
                double w = 0;
                int seen = 0;
                for (int q = base; q < base + n; q++)
                    if (allrows[q].fn == agg[j].fn && allrows[q].pattern == agg[j].pattern &&
                        strcmp(allrows[q].site, agg[j].site) == 0) {
                        w += allrows[q].wait_ns * 1e-9;
                        seen = 1;
                    }
                base += n;
                if (!seen)
                    continue;
                if (w < agg[j].wmin)
                    agg[j].wmin = w, agg[j].rmin = r;
                if (w > agg[j].wmax)
                    agg[j].wmax = w, agg[j].rmax = r;
            }
        }
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
        free(agg);
    }
    free(allrows);
    free(sendbuf);
    free(counts);
    free(displs);
    free(rows);
    wp_stats_destroy(all);
    return ok ? 0 : -1;
}
