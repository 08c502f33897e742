/* report/aggregate.c — figures computed from the model (report/model.h) for
 * the writers: state shares per rank, sample totals, the orders of call
 * paths and ranks by MPI-Stall, and the merged profile as folded stacks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/folded.h"
#include "report/model.h"

/* --- state shares per rank ------------------------------------------------------------ */

void wp_rep_state_mm(const struct run *R, int st, struct mm *m)
{
    memset(m, 0, sizeof *m);
    m->min = 1e300;
    m->max = -1;
    for (size_t i = 0; i < R->nr; i++) {
        const struct rinfo *ri = &R->r[i];
        uint64_t all = ri->st[0] + ri->st[1] + ri->st[2];
        if (!ri->has_folded || all == 0)
            continue;
        double v = wp_rep_pct(ri->st[st], all);
        if (v < m->min)
            m->min = v, m->rmin = ri->rank;
        if (v > m->max)
            m->max = v, m->rmax = ri->rank;
        m->sum += v;
        m->n++;
    }
    if (m->n == 0)
        m->min = m->max = 0;
}

uint64_t wp_rep_total_samples(const struct run *R, int st)
{
    uint64_t t = 0;
    for (size_t i = 0; i < R->nr; i++)
        t += R->r[i].st[st];
    return t;
}

double wp_rep_run_total_s(const struct run *R)
{
    double t = 0;
    for (size_t i = 0; i < R->nr; i++)
        t += R->r[i].duration_ns * 1e-9;
    return t;
}

double wp_rep_rank_state_s(const struct rinfo *ri, int st)
{
    uint64_t a = ri->st[0] + ri->st[1] + ri->st[2];
    return a ? ri->duration_ns * 1e-9 * (double)ri->st[st] / (double)a : 0;
}

double wp_rep_state_s(const struct run *R, int st)
{
    double t = 0;
    for (size_t i = 0; i < R->nr; i++)
        t += wp_rep_rank_state_s(&R->r[i], st);
    return t;
}

/* --- orders by MPI-Stall ---------------------------------------------------------------- */

static int path_stall_cmp(const void *a, const void *b)
{
    const struct path *x = *(const struct path *const *)a, *y = *(const struct path *const *)b;
    if (x->c[WP_STATE_STALL] != y->c[WP_STATE_STALL])
        return x->c[WP_STATE_STALL] < y->c[WP_STATE_STALL] ? 1 : -1;
    return strcmp(x->path, y->path);
}

int wp_rep_rinfo_stall_cmp(const void *a, const void *b)
{
    const struct rinfo *x = *(const struct rinfo *const *)a, *y = *(const struct rinfo *const *)b;
    uint64_t ax = x->st[0] + x->st[1] + x->st[2], ay = y->st[0] + y->st[1] + y->st[2];
    double sx = wp_rep_pct(x->st[WP_STATE_STALL], ax), sy = wp_rep_pct(y->st[WP_STATE_STALL], ay);
    if (sx != sy)
        return sx < sy ? 1 : -1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

const struct path **wp_rep_top_stall(const struct run *R, size_t *n)
{
    const struct path **v = wp_rep_xrealloc(NULL, (R->paths.n + 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < R->paths.n; i++)
        if (R->paths.v[i].c[WP_STATE_STALL])
            v[k++] = &R->paths.v[i];
    qsort(v, k, sizeof *v, path_stall_cmp);
    *n = k;
    return v;
}

/* --- the merged profile ----------------------------------------------------------------- */

/* The merged profile as a wp_folded (state frame first), sorted. */
void wp_rep_to_folded(const struct run *R, struct wp_folded *out)
{
    size_t cap = 256;
    char *line = wp_rep_xrealloc(NULL, cap);
    for (size_t i = 0; i < R->paths.n; i++) {
        const struct path *p = &R->paths.v[i];
        for (int s = 0; s < WP_STATE_COUNT; s++) {
            if (p->c[s] == 0)
                continue;
            size_t n = strlen(wp_state_name(s)) + strlen(p->path) + 2;
            if (n > cap)
                line = wp_rep_xrealloc(line, cap = 2 * n);
            int l = p->path[0] ? snprintf(line, cap, "%s;%s", wp_state_name(s), p->path)
                               : snprintf(line, cap, "%s", wp_state_name(s));
            if (wp_folded_add(out, line, (size_t)l, p->c[s]) != 0)
                wp_rep_oom((size_t)l);
        }
    }
    free(line);
    wp_folded_finish(out);
}

/* --- the timeline ---------------------------------------------------------------------- */

/* A rank's start in the common time base: its own clock's origin, plus the
 * offset to rank 0's clock measured at MPI_Init (match/clock.c) when it
 * runs on another host than the first rank.  Ranks on one host share
 * CLOCK_MONOTONIC, and their offset is only nonzero when a test injects
 * one into the matching clock alone. */
static int64_t tl_start(const struct run *R, const struct rinfo *ri)
{
    int other_host = ri->host[0] && R->nr && strcmp(ri->host, R->r[0].host) != 0;
    return (int64_t)ri->tl->origin_ns + (other_host ? ri->clock_offset_ns : 0);
}

void wp_rep_timeline(const struct run *R, uint32_t max_bins, struct tgrid *g)
{
    memset(g, 0, sizeof *g);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    uint64_t width = 0;
    for (size_t i = 0; i < R->nr; i++) {
        const struct rinfo *ri = &R->r[i];
        if (ri->tl == NULL)
            continue;
        int64_t a = tl_start(R, ri), b = a + (int64_t)(ri->tl->nbins * ri->tl->bin_ns);
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
        width = ri->tl->bin_ns > width ? ri->tl->bin_ns : width;
        g->nrows++;
    }
    if (g->nrows == 0)
        return;
    if (max_bins == 0)
        max_bins = 1;
    /* The widest rank's bins, doubled until the span fits. */
    while ((uint64_t)(hi - lo) / width + 1 > max_bins)
        width *= 2;
    g->origin_ns = (uint64_t)lo;
    g->bin_ns = width;
    g->nbins = (uint32_t)(((uint64_t)(hi - lo) + width - 1) / width);
    if (g->nbins == 0)
        g->nbins = 1;
    g->row = wp_rep_xrealloc(NULL, g->nrows * sizeof *g->row);
    g->start_s = wp_rep_xrealloc(NULL, g->nrows * sizeof *g->start_s);
    size_t cells = g->nrows * g->nbins;
    g->s = wp_rep_xrealloc(NULL, cells * sizeof *g->s);
    g->path = wp_rep_xrealloc(NULL, cells * sizeof *g->path);
    memset(g->s, 0, cells * sizeof *g->s);
    memset(g->path, 0xff, cells * sizeof *g->path);
    /* The stall weight of the source bin that named each cell's path. */
    uint64_t *best = wp_rep_xrealloc(NULL, g->nbins * sizeof *best);
    size_t k = 0;
    for (size_t i = 0; i < R->nr; i++) {
        const struct rinfo *ri = &R->r[i];
        const struct tline *t = ri->tl;
        if (t == NULL)
            continue;
        g->row[k] = i;
        int64_t a = tl_start(R, ri) - lo;
        g->start_s[k] = (double)a * 1e-9;
        memset(best, 0, g->nbins * sizeof *best);
        double (*row)[WP_STATE_COUNT] = &g->s[k * g->nbins];
        int32_t *prow = &g->path[k * g->nbins];
        /* Each of the rank's bins goes whole to the cell holding its
         * middle: the common grid is at least as wide, so a bin is off by
         * at most half of its own width. */
        for (uint32_t b = 0; b < t->nbins; b++) {
            uint64_t mid = (uint64_t)a + b * t->bin_ns + t->bin_ns / 2;
            uint64_t j = mid / width;
            if (j >= g->nbins)
                j = g->nbins - 1;
            for (int st = 0; st < WP_STATE_COUNT; st++)
                row[j][st] += (double)t->w[b][st] * (double)t->period_ns * 1e-9;
            if (t->path[b] >= 0 && t->w[b][WP_STATE_STALL] > best[j]) {
                best[j] = t->w[b][WP_STATE_STALL];
                prow[j] = t->path[b];
            }
        }
        k++;
    }
    free(best);
}

void wp_rep_tgrid_free(struct tgrid *g)
{
    free(g->row);
    free(g->start_s);
    free(g->s);
    free(g->path);
    memset(g, 0, sizeof *g);
}
