/* sampler/timeline.c — see sampler/timeline.h.  Everything here is
 * arithmetic on the caller's memory: async-signal-safe. */
#include <string.h>

#include "sampler/timeline.h"

void wp_tl_init(struct wp_timeline *t, uint64_t t0_ns, uint64_t width_ns)
{
    memset(t, 0, sizeof *t);
    t->t0_ns = t0_ns;
    t->width_ns = width_ns ? width_ns : 1;
}

int wp_tl_held_class(uint64_t d_ns)
{
    int c = 0;
    for (uint64_t lim = 1000000; c < WP_TL_HELD - 1 && d_ns >= lim; lim *= 4)
        c++;
    return c;
}

uint64_t wp_tl_stack_id(int fn, const uintptr_t *ips, int n)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)fn;
    for (int i = 0; i < n; i++) {
        h ^= ips[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h | 1; /* 0 means "no vote" */
}

void wp_tl_vote(uint64_t *cand, uint32_t *n, uint64_t id, uint64_t w)
{
    if (id == 0 || w == 0)
        return;
    if (w > UINT32_MAX)
        w = UINT32_MAX;
    if (*n == 0 || *cand == id) {
        *cand = id;
        *n = *n + (uint32_t)w < *n ? UINT32_MAX : *n + (uint32_t)w;
    } else if (*n >= w) {
        *n -= (uint32_t)w;
    } else {
        *cand = id;
        *n = (uint32_t)w - *n;
    }
}

/* dst += src, bin by bin, with the votes combined as two tallies are: the
 * same candidate adds its margins, different ones cancel. */
static void wp_tl_bin_add(struct wp_tl_bin *d, const struct wp_tl_bin *s)
{
    for (int k = 0; k < 3; k++)
        d->w[k] += s->w[k];
    for (int k = 0; k < WP_TL_HELD; k++)
        d->held[k] += s->held[k];
    wp_tl_vote(&d->vote, &d->vote_n, s->vote, s->vote_n);
}

static void wp_tl_halve(struct wp_timeline *t)
{
    for (uint32_t i = 0; i < WP_TL_BINS / 2; i++) {
        struct wp_tl_bin b = t->bin[2 * i];
        wp_tl_bin_add(&b, &t->bin[2 * i + 1]);
        t->bin[i] = b;
    }
    memset(&t->bin[WP_TL_BINS / 2], 0, (WP_TL_BINS / 2) * sizeof t->bin[0]);
    t->width_ns *= 2;
    t->nbins = (t->nbins + 1) / 2;
    t->merges++;
}

void wp_tl_widen_sig(struct wp_timeline *t, uint64_t width_ns)
{
    while (t->width_ns < width_ns)
        wp_tl_halve(t);
}

void wp_tl_add_sig(struct wp_timeline *t, uint64_t at_ns, int state, uint64_t w, uint64_t stack)
{
    if (t == NULL || w == 0)
        return;
    uint64_t rel = at_ns > t->t0_ns ? at_ns - t->t0_ns : 0;
    /* At most 64 halvings: the width cannot outgrow the clock. */
    while (rel / t->width_ns >= WP_TL_BINS && t->merges < 64)
        wp_tl_halve(t);
    uint64_t i = rel / t->width_ns;
    if (i >= WP_TL_BINS)
        i = WP_TL_BINS - 1;
    struct wp_tl_bin *b = &t->bin[i];
    uint32_t w32 = w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
    if (state >= 0 && state < 3) {
        b->w[state] += w32;
    } else if (state < 0 && -1 - state < WP_TL_HELD) {
        b->held[-1 - state] += w32;
    } else {
        return;
    }
    if (state != 0 && state != 1)
        wp_tl_vote(&b->vote, &b->vote_n, stack, w32);
    if (i + 1 > t->nbins)
        t->nbins = (uint32_t)i + 1;
}

void wp_tl_sum_sig(struct wp_timeline *dst, const struct wp_timeline *src, const uint64_t stall[WP_TL_HELD],
                   const uint64_t all[WP_TL_HELD])
{
    uint64_t k = dst->width_ns / (src->width_ns ? src->width_ns : 1);
    if (k == 0)
        k = 1;
    for (uint32_t i = 0; i < src->nbins && i < WP_TL_BINS; i++) {
        const struct wp_tl_bin *s = &src->bin[i];
        struct wp_tl_bin b = {{s->w[0], s->w[1], s->w[2]}, {0}, s->vote_n, s->vote};
        for (int c = 0; c < WP_TL_HELD; c++) {
            if (s->held[c] == 0)
                continue;
            /* In floating point: the product of two weights may not fit 64 bits. */
            uint64_t st = all[c] ? (uint64_t)((double)s->held[c] * (double)stall[c] / (double)all[c] + 0.5) : 0;
            if (st > s->held[c])
                st = s->held[c];
            b.w[2] += (uint32_t)st;
            b.w[1] += s->held[c] - (uint32_t)st;
        }
        uint64_t j = i / k;
        if (j >= WP_TL_BINS)
            j = WP_TL_BINS - 1;
        wp_tl_bin_add(&dst->bin[j], &b);
        if (j + 1 > dst->nbins)
            dst->nbins = (uint32_t)j + 1;
    }
}
