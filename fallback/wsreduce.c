/* fallback/wsreduce.c — see fallback/wsreduce.h. */
#include <stdlib.h>
#include <string.h>

#include "fallback/wsreduce.h"

int wp_agg_key_cmp(const struct wp_agg *a, const struct wp_agg *b)
{
    int c = strcmp(a->site, b->site);
    if (c)
        return c;
    if (a->fn != b->fn)
        return a->fn < b->fn ? -1 : 1;
    return a->pattern < b->pattern ? -1 : a->pattern > b->pattern;
}

static int wp_agg_qcmp(const void *a, const void *b)
{
    return wp_agg_key_cmp(a, b);
}

size_t wp_agg_normalize(struct wp_agg *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, wp_agg_qcmp);
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (wp_agg_key_cmp(&v[k], &v[i]) == 0) {
            /* Two rows of the same rank: one rank, one summed wait. */
            v[k].calls += v[i].calls;
            v[k].time_ns += v[i].time_ns;
            v[k].wait_ns += v[i].wait_ns;
            v[k].matched += v[i].matched;
            v[k].by_source += v[i].by_source;
            v[k].wmin = v[k].wmax = v[k].wait_ns * 1e-9;
        } else {
            v[++k] = v[i];
        }
    }
    return k + 1;
}

/* Combine the records of one key from two disjoint rank sets. */
static void wp_agg_combine(struct wp_agg *into, const struct wp_agg *b)
{
    into->calls += b->calls;
    into->time_ns += b->time_ns;
    into->wait_ns += b->wait_ns;
    into->matched += b->matched;
    into->by_source += b->by_source;
    into->nranks += b->nranks;
    if (b->wmin < into->wmin || (b->wmin == into->wmin && b->rmin < into->rmin)) {
        into->wmin = b->wmin;
        into->rmin = b->rmin;
    }
    if (b->wmax > into->wmax || (b->wmax == into->wmax && b->rmax < into->rmax)) {
        into->wmax = b->wmax;
        into->rmax = b->rmax;
    }
}

size_t wp_agg_merge(const struct wp_agg *a, size_t na, const struct wp_agg *b, size_t nb, struct wp_agg *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < na || j < nb) {
        int c = i == na ? 1 : j == nb ? -1 : wp_agg_key_cmp(&a[i], &b[j]);
        if (c < 0) {
            out[k++] = a[i++];
        } else if (c > 0) {
            out[k++] = b[j++];
        } else {
            out[k] = a[i++];
            wp_agg_combine(&out[k++], &b[j++]);
        }
    }
    return k;
}
