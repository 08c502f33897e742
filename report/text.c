/* report/text.c — report.txt ("waitprof-report 1" on its first line) and
 * the short first screen, printed by rank 0 at the end of a run and by
 * `waitprof report` (report/report.h, doc/report.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/model.h"

/* The run in two lines: ranks, duration, stall source, rate (or the
 * overflow trigger, which has no rate in time); samples. */
static void write_run(FILE *f, const struct run *R)
{
    struct ranges sampled = {0};
    for (size_t i = 0; i < R->nr; i++)
        if (R->r[i].has_meta || R->r[i].has_folded)
            wp_rep_ranges_add(&sampled, R->r[i].rank);
    fprintf(f, "run: %d rank%s, %zu sampled (", R->size, R->size == 1 ? "" : "s", R->nr);
    wp_rep_ranges_print(f, &sampled);
    fprintf(f, "), %.3f s, stall source %s%s, ", R->duration_max * 1e-9, R->source[0] ? R->source : "unknown",
            R->mixed_source ? " (differs between ranks)" : "");
    if (R->overflow_event[0])
        fprintf(f, "a sample per %llu %s (overflow trigger)\n", (unsigned long long)R->overflow_period,
                R->overflow_event);
    else
        fprintf(f, "%llu Hz %s clock\n", (unsigned long long)R->hz, R->clock[0] ? R->clock : "wall");
    fprintf(f, "samples: %llu, dropped %llu", (unsigned long long)R->samples, (unsigned long long)R->dropped);
    if (R->nmeta_partial)
        fprintf(f, "; %d rank%s wrote a partial profile", R->nmeta_partial, R->nmeta_partial == 1 ? "" : "s");
    fputc('\n', f);
    free(sampled.lo);
    free(sampled.hi);
}

/* The settings and counters of the meta files, for whoever checks how the
 * run was measured: last in report.txt, never on the first screen. */
static void write_meta(FILE *f, const struct run *R)
{
    if (R->mpi[0])
        fprintf(f, "mpi: %s\n", R->mpi);
    for (size_t i = 0; i < R->nextra; i++)
        fprintf(f, "%s\n", R->extra[i]);
}

/* Seconds and shares per state: seconds summed over the ranks and per
 * rank on average (each rank's duration times its share of samples, an
 * estimate from sampling), then the share of samples overall and its
 * spread over the ranks. */
static void write_states(FILE *f, const struct run *R)
{
    uint64_t all = wp_rep_total_samples(R, 0) + wp_rep_total_samples(R, 1) + wp_rep_total_samples(R, 2);
    size_t nr = R->nr ? R->nr : 1;
    fprintf(f, "%-11s %9s %8s %8s   %-16s %7s   %s\n", "state", "sum s", "s/rank", "overall", "min (rank)", "avg",
            "max (rank)");
    for (int s = 0; s < WP_STATE_COUNT; s++) {
        struct mm m;
        wp_rep_state_mm(R, s, &m);
        char a[32], b[32];
        snprintf(a, sizeof a, "%.1f%% (%d)", m.min, m.rmin);
        snprintf(b, sizeof b, "%.1f%% (%d)", m.max, m.rmax);
        double secs = wp_rep_state_s(R, s);
        fprintf(f, "%-11s %9.3f %8.3f %7.1f%%   %-16s %6.1f%%   %s\n", wp_state_name(s), secs,
                secs / (double)nr, wp_rep_pct(wp_rep_total_samples(R, s), all), a, m.n ? m.sum / (double)m.n : 0,
                b);
    }
}

/* The last frame of a call path (root first, ';'-joined). */
static const char *leaf(const char *path)
{
    const char *l = strrchr(path, ';');
    return l ? l + 1 : path;
}

/* The largest measured cause, in one sentence (match/match.h). */
static void write_cause(FILE *f, const struct run *R)
{
    if (R->ncauses == 0)
        return;
    const struct cause *c = &R->causes[0];
    const struct cwait *w = &c->w[0];
    fprintf(f, "largest cause: rank %d waited %.3f s in %s (%s) because rank %d computed longer in %s: %.3f s of "
               "waits directly",
            w->rank, w->wait_s, w->fn, w->site, c->delayer, c->path ? leaf(c->path) : "(path not written)",
            c->short_s);
    if (c->long_s > 0) {
        /* The ranks where the propagated waits were, largest first (the
         * waits are sorted so), each named once. */
        fprintf(f, ", %.3f s through ranks that waited for it (waits on rank", c->long_s);
        int named = 0;
        for (size_t i = 0; i < c->nw && named < 4; i++) {
            int seen = !c->w[i].propagated;
            for (size_t j = 0; j < i && !seen; j++)
                seen = c->w[j].propagated && c->w[j].rank == c->w[i].rank;
            if (!seen)
                fprintf(f, "%s %d", named++ ? "," : "", c->w[i].rank);
        }
        fprintf(f, ")");
    }
    if (c->nw > 1)
        fprintf(f, " on %zu (rank, call site) pairs", c->nw);
    fprintf(f, "\n");
}

static void write_main(FILE *f, const struct run *R)
{
    uint64_t all = wp_rep_total_samples(R, 0) + wp_rep_total_samples(R, 1) + wp_rep_total_samples(R, 2);
    if (R->main == NULL) {
        fprintf(f, "main waiting call path: none (no MPI-Stall samples)\n");
        return;
    }
    fprintf(f, "main waiting call path (%.1f%% of all samples stalled here):\n  ",
            wp_rep_pct(R->main->c[WP_STATE_STALL], all));
    wp_rep_put_path(f, R->main->path, 150);
    fputc('\n', f);
    /* Measured causes replace the guess below. */
    if (R->ncauses)
        return;
    for (size_t i = 0; i < R->nr; i++) {
        const struct rinfo *ri = &R->r[i];
        if (ri->rank != R->cause_rank)
            continue;
        uint64_t a = ri->st[0] + ri->st[1] + ri->st[2];
        fprintf(f, "caused by rank %d: it stalls least there (%.1f%% of its samples) and computes most "
                   "(%.1f%% Not-in-MPI); the others wait for it\n",
                ri->rank, wp_rep_pct(ri->main_stall, a), wp_rep_pct(ri->st[WP_STATE_NOT_IN_MPI], a));
    }
}

static void write_top_paths(FILE *f, const struct run *R, int top)
{
    size_t n;
    const struct path **v = wp_rep_top_stall(R, &n);
    uint64_t all = wp_rep_total_samples(R, 0) + wp_rep_total_samples(R, 1) + wp_rep_total_samples(R, 2);
    fprintf(f, "%8s %7s %8s  %s\n", "stall", "% all", "stall/in", "call path (root first)");
    for (size_t i = 0; i < n && i < (size_t)top; i++) {
        uint64_t here = v[i]->c[0] + v[i]->c[1] + v[i]->c[2];
        uint64_t st = v[i]->c[WP_STATE_STALL];
        fprintf(f, "%8llu %6.1f%% %7.1f%%  ", (unsigned long long)st, wp_rep_pct(st, all), wp_rep_pct(st, here));
        wp_rep_put_path(f, v[i]->path, 110);
        fputc('\n', f);
    }
    if (n == 0)
        fprintf(f, "(no MPI-Stall samples)\n");
    free(v);
}

/* Two lines per call site, so that a row stays within 100 columns: the
 * site, its function and pattern, calls and wait; then how the wait was had
 * (as waitstates.txt's "how": "measured M/N" from M matched instances of N
 * calls, "source S/N" where the runtime stall source gave the waits of S
 * calls, "estimated" for the minimum-duration estimate; "partly" before
 * the first two where other ranks' rows of the site were had otherwise)
 * and its spread over the ranks. */
static void write_waits(FILE *f, const struct run *R, int top)
{
    double tot = wp_rep_run_total_s(R);
    size_t nr = R->nr ? R->nr : 1;
    fprintf(f, "%-36s %-14s %-14s %8s %9s %7s\n", "call site", "function", "pattern", "calls", "wait s",
            "wait %");
    fprintf(f, "  how; wait per rank s: min (rank) / avg / max (rank)\n");
    size_t shown = 0;
    for (size_t i = 0; i < R->nsites && shown < (size_t)top; i++) {
        const struct site *s = &R->sites[i];
        if (strcmp(s->pattern, "none") == 0 || s->wait_ns == 0)
            continue;
        int all = s->nranks >= R->nr;
        char mn[32], how[64];
        if (all)
            snprintf(mn, sizeof mn, "%.3f (%d)", s->wmin * 1e-9, s->wmin_r);
        else
            snprintf(mn, sizeof mn, "0 (others)");
        if (s->matched)
            snprintf(how, sizeof how, "%smeasured %llu/%llu", s->src_calls + s->est_calls ? "partly " : "",
                     (unsigned long long)s->matched, (unsigned long long)s->calls);
        else if (s->src_calls)
            snprintf(how, sizeof how, "%ssource %llu/%llu", s->est_calls ? "partly " : "",
                     (unsigned long long)s->src_calls, (unsigned long long)s->calls);
        else
            snprintf(how, sizeof how, "estimated");
        /* The first line takes 93 columns when the function name fits
         * its 14; a name longer than 20 shortens the site's column by the
         * excess, so the line stays within 100.  A site too long for its
         * column keeps its file:line and gives up part of its function
         * name (wp_rep_site_fit). */
        size_t fl = strlen(s->fn);
        int sw = fl > 20 ? 36 - (int)(fl - 20 < 20 ? fl - 20 : 20) : 36;
        char site[64];
        wp_rep_site_fit(site, sizeof site, s->site, (size_t)sw);
        fprintf(f, "%-*s %-14s %-14s %8llu %9.3f %6.2f%%\n", sw, site, s->fn, s->pattern,
                (unsigned long long)s->calls, s->wait_ns * 1e-9, tot > 0 ? 100.0 * s->wait_ns * 1e-9 / tot : 0);
        fprintf(f, "  %s; wait per rank s: %s / %.3f / %.3f (%d)\n", how, mn, s->wait_ns * 1e-9 / (double)nr,
                s->wmax * 1e-9, s->wmax_r);
        shown++;
    }
    if (shown == 0 && R->lean)
        fprintf(f, "(not estimated: the run used lean wrappers, WAITPROF_LEAN=1, which time no call)\n");
    else if (shown == 0)
        fprintf(f, "(no estimated wait: no rank.R.waits files, or no waiting calls)\n");
}

static void write_imbalance(FILE *f, const struct run *R, int top)
{
    size_t nr = R->nr ? R->nr : 1;
    fprintf(f, "%-36s %-14s %12s %12s %12s  %s\n", "call site", "function", "max s", "avg s", "max-avg s",
            "rank at max");
    size_t shown = 0;
    for (size_t i = 0; i < R->nisites && shown < (size_t)top; i++) {
        const struct site *s = &R->isites[i];
        double avg = s->time_ns * 1e-9 / (double)nr;
        char site[64];
        wp_rep_site_fit(site, sizeof site, s->site, 36);
        fprintf(f, "%-36s %-14s %12.3f %12.3f %12.3f  %d\n", site, s->fn, s->tmax * 1e-9, avg,
                s->tmax * 1e-9 - avg, s->tmax_r);
        shown++;
    }
    if (shown == 0)
        fprintf(f, "(no call sites: no rank.R.waits files)\n");
}

static void put_secs(FILE *f, uint64_t ns)
{
    fprintf(f, "%.6f s", ns * 1e-9);
}

static void write_functions(FILE *f, const struct run *R)
{
    if (R->nfns == 0)
        fprintf(f, "(no rank.R.calls files)\n");
    for (size_t i = 0; i < R->nfns; i++) {
        const struct fnagg *a = &R->fns[i];
        if (a->nranks == 0 && a->req_sent + a->req_recv == 0)
            continue;
        fprintf(f, "*** %s\n", a->name);
        if (a->nranks) {
            fprintf(f, "ranks: ");
            wp_rep_ranges_print(f, &a->ranks);
            fputc('\n', f);
        } else {
            /* Started operations (MPI_Isend): their time is in the wait. */
            fprintf(f, "ranks: none record its calls' times (an operation that only starts)\n");
        }
        if (a->nranks) {
            fprintf(f, "events per rank: %llu max (rank %d), %llu min (rank %d), %.1f avg (%llu ranks)\n",
                    (unsigned long long)a->ev_max, a->ev_max_r, (unsigned long long)a->ev_min, a->ev_min_r,
                    (double)a->events / (double)a->nranks, (unsigned long long)a->nranks);
            fprintf(f, "longest event: "), put_secs(f, a->longest);
            fprintf(f, ", rank %d, event %llu\n", a->longest_r, (unsigned long long)a->longest_ev);
            if (a->second_ev) {
                fprintf(f, "max 2nd longest: "), put_secs(f, a->second);
                fprintf(f, ", rank %d, event %llu\n", a->second_r, (unsigned long long)a->second_ev);
            }
            fprintf(f, "shortest event: "), put_secs(f, a->shortest);
            fprintf(f, ", rank %d, event %llu\n", a->shortest_r, (unsigned long long)a->shortest_ev);
            fprintf(f, "longest avg event: "), put_secs(f, (uint64_t)a->avg_max);
            fprintf(f, ", rank %d, %llu event(s)\n", a->avg_max_r, (unsigned long long)a->avg_max_n);
            fprintf(f, "shortest avg event: "), put_secs(f, (uint64_t)a->avg_min);
            fprintf(f, ", rank %d, %llu event(s)\n", a->avg_min_r, (unsigned long long)a->avg_min_n);
            fprintf(f, "avg event: "), put_secs(f, a->total / a->events);
            fprintf(f, ", %llu event(s)\n", (unsigned long long)a->events);
            fprintf(f, "max total: "), put_secs(f, a->tot_max);
            fprintf(f, ", rank %d, %llu event(s)\n", a->tot_max_r, (unsigned long long)a->tot_max_n);
            fprintf(f, "min total: "), put_secs(f, a->tot_min);
            fprintf(f, ", rank %d, %llu event(s)\n", a->tot_min_r, (unsigned long long)a->tot_min_n);
            fprintf(f, "avg total: "), put_secs(f, a->total / a->nranks);
            fprintf(f, ", %llu ranks\n", (unsigned long long)a->nranks);
            fprintf(f, "aggregate total: "), put_secs(f, a->total);
            fputc('\n', f);
        }
        if (a->req_sent || a->req_recv)
            fprintf(f, "sent: %llu bytes in %llu requests; received: %llu bytes in %llu requests (posted sizes)\n",
                    (unsigned long long)a->bytes_sent, (unsigned long long)a->req_sent,
                    (unsigned long long)a->bytes_recv, (unsigned long long)a->req_recv);
        /* Groups in order of their fullest bin, longest first. */
        for (int mb = NBINS - 1; mb >= 0; mb--) {
            const struct hgroup *g = a->groups[mb];
            if (g == NULL)
                continue;
            fprintf(f, "event histogram for rank%s: ", g->nranks == 1 ? "" : "s");
            wp_rep_ranges_print(f, &g->ranks);
            fputc('\n', f);
            for (int b = NBINS - 1; b >= 0; b--) {
                if (g->max[b] == 0)
                    continue;
                if (b == NBINS - 1)
                    fprintf(f, "  >= %llu us: ", (unsigned long long)wp_rep_bin_low(b));
                else if (wp_rep_bin_high(b) - wp_rep_bin_low(b) == 1)
                    fprintf(f, "  %llu us: ", (unsigned long long)wp_rep_bin_low(b));
                else
                    fprintf(f, "  %llu-%llu us: ", (unsigned long long)wp_rep_bin_low(b),
                            (unsigned long long)wp_rep_bin_high(b) - 1);
                fprintf(f, "%u max (rank %d), %u min (rank %d), %.1f avg\n", g->max[b], g->maxr[b], g->min[b],
                        g->minr[b], (double)g->sum[b] / (double)g->nranks);
            }
        }
        fputc('\n', f);
    }
}

/* report.txt: what a person reads first (the largest cause, seconds per
 * state, the main waiting call path, the run in two lines), then the
 * tables, and the meta files' settings and counters last. */
void wp_rep_write_text(FILE *f, const struct run *R, const struct wp_report_opts *o)
{
    fprintf(f, "%s\n", WP_FORMAT_REPORT);
    fprintf(f, "waitprof report of %s%s\n\n", R->c.dir, o->stall_only ? " (MPI-Stall samples only)" : "");
    if (o->ranks)
        fprintf(f, "ranks selected: %s\n\n", o->ranks);
    fprintf(f, "== where the time went\n");
    write_cause(f, R);
    write_states(f, R);
    write_main(f, R);
    write_run(f, R);
    fprintf(f, "\n== ranks by MPI-Stall share (max first; top %d)\n", o->top);
    fprintf(f, "%6s %8s %8s %11s %10s  %s\n", "rank", "stall", "work", "not-in-mpi", "samples", "status");
    const struct rinfo **v = wp_rep_xrealloc(NULL, (R->nr + 1) * sizeof *v);
    for (size_t i = 0; i < R->nr; i++)
        v[i] = &R->r[i];
    qsort(v, R->nr, sizeof *v, wp_rep_rinfo_stall_cmp);
    for (size_t i = 0; i < R->nr && i < (size_t)o->top; i++) {
        uint64_t a = v[i]->st[0] + v[i]->st[1] + v[i]->st[2];
        fprintf(f, "%6d %7.1f%% %7.1f%% %10.1f%% %10llu  %s\n", v[i]->rank, wp_rep_pct(v[i]->st[WP_STATE_STALL], a),
                wp_rep_pct(v[i]->st[WP_STATE_WORK], a), wp_rep_pct(v[i]->st[WP_STATE_NOT_IN_MPI], a),
                (unsigned long long)a,
                !v[i]->has_meta ? "no meta" : v[i]->partial ? "partial" : "complete");
    }
    free(v);
    fprintf(f, "\n== top MPI-Stall call paths (samples)\n");
    write_top_paths(f, R, o->top);
    fprintf(f, "\n== wait states per call site: measured from matched instances, or the estimate\n");
    write_waits(f, R, o->top);
    fprintf(f, "\n== imbalance per call site: time in the call, max over ranks minus average\n");
    write_imbalance(f, R, o->top);
    wp_rep_write_counters_text(f, R);
    fprintf(f, "\n== MPI functions (calls that may wait), reduced over ranks\n");
    write_functions(f, R);
    fprintf(f, "== how the run was measured: settings and counters (rank.R.meta)\n");
    write_meta(f, R);
    fprintf(f, "\n== problems with the input\n");
    for (size_t i = 0; i < R->c.nproblems; i++)
        fprintf(f, "%s\n", R->c.problems[i]);
    if (R->c.nproblems == 0)
        fprintf(f, "none\n");
}

/* The first screen, on stderr at the end of a run: the largest cause
 * first (or the run line when nothing was matched), seconds per state,
 * the main waiting call path, then the run, the top stall paths and two
 * wait-state rows; within 25 lines with the line the runtime adds. */
void wp_rep_write_short(FILE *f, const struct run *R)
{
    fprintf(f, "waitprof report: ");
    if (R->ncauses)
        write_cause(f, R);
    else
        write_run(f, R);
    write_states(f, R);
    write_main(f, R);
    if (R->ncauses)
        write_run(f, R);
    fprintf(f, "top MPI-Stall call paths:\n");
    write_top_paths(f, R, 5);
    fprintf(f, "wait states:\n");
    write_waits(f, R, 2);
}
