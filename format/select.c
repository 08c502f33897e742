/* format/select.c — see format/select.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/select.h"

/* A whole number >= 0 at *s, digits only; advances *s.  -1 on no digits or
 * overflow past 2^40 (far beyond any job size). */
static long wp_num(const char **s)
{
    const char *p = *s;
    long v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (*p - '0');
        if (v > (1L << 40))
            return -1;
    }
    *s = p;
    return v;
}

int wp_ranks_parse(const char *s, struct wp_ranks *r, char *why, size_t whylen)
{
    memset(r, 0, sizeof *r);
    if (s == NULL || strcmp(s, "all") == 0) {
        r->kind = WP_RANKS_ALL;
        return 0;
    }
    if (strcmp(s, "none") == 0) {
        r->kind = WP_RANKS_NONE;
        return 0;
    }
    if (s[0] == '\0') {
        snprintf(why, whylen, "empty");
        return -1;
    }
    if (strncmp(s, "random:", 7) == 0) {
        const char *p = s + 7;
        long n = wp_num(&p);
        if (n < 1) {
            snprintf(why, whylen, "random:N needs a whole number N >= 1");
            return -1;
        }
        r->kind = WP_RANKS_RANDOM;
        r->nrandom = n;
        if (*p == ':') {
            p++;
            const char *q = p;
            long seed = wp_num(&p);
            if (seed < 0 || p == q) {
                snprintf(why, whylen, "the seed in random:N:SEED must be a whole number");
                return -1;
            }
            r->seed = (unsigned long long)seed;
            r->has_seed = 1;
        }
        if (*p != '\0') {
            snprintf(why, whylen, "unexpected text after random:N");
            return -1;
        }
        return 0;
    }
    r->kind = WP_RANKS_LIST;
    const char *p = s;
    for (;;) {
        if (r->nitems == WP_RANKS_MAX_ITEMS) {
            snprintf(why, whylen, "more than %d items", WP_RANKS_MAX_ITEMS);
            return -1;
        }
        struct wp_rank_item it = {0, 0, 1};
        it.first = wp_num(&p);
        if (it.first < 0) {
            snprintf(why, whylen, "expected a rank number at \"%.16s\"", p);
            return -1;
        }
        it.last = it.first;
        if (*p == '-') {
            p++;
            it.last = wp_num(&p);
            if (it.last < 0) {
                snprintf(why, whylen, "expected the end of a range at \"%.16s\"", p);
                return -1;
            }
            if (it.last < it.first) {
                snprintf(why, whylen, "range %ld-%ld goes backwards", it.first, it.last);
                return -1;
            }
            if (*p == ':') {
                p++;
                it.stride = wp_num(&p);
                if (it.stride < 1) {
                    snprintf(why, whylen, "a stride must be a whole number >= 1");
                    return -1;
                }
            }
        }
        r->items[r->nitems++] = it;
        if (*p == '\0')
            return 0;
        if (*p != ',') {
            snprintf(why, whylen, "unexpected \"%.16s\"", p);
            return -1;
        }
        p++;
    }
}

static int wp_item_has(const struct wp_rank_item *it, long x)
{
    return x >= it->first && x <= it->last && (x - it->first) % it->stride == 0;
}

/* A keyed permutation of [0, size): a four-round Feistel network on the
 * smallest even number of bits that covers size, walked until the value
 * falls inside (cycle walking keeps it a bijection).  Each rank can so test
 * its own membership in random:N without any list: rank x is selected when
 * its image is below N, which selects exactly min(N, size) ranks. */
static uint64_t wp_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static long wp_permute(long x, long size, unsigned long long seed)
{
    int bits = 2;
    while ((1L << bits) < size)
        bits += 2;
    int h = bits / 2;
    uint64_t mask = (1ull << h) - 1;
    uint64_t v = (uint64_t)x;
    do {
        uint64_t left = v >> h, right = v & mask;
        for (int round = 0; round < 4; round++) {
            uint64_t f = wp_mix(right ^ (seed * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)round << 56)) & mask;
            uint64_t nl = right;
            right = left ^ f;
            left = nl;
        }
        v = (left << h) | right;
    } while (v >= (uint64_t)size);
    return (long)v;
}

int wp_ranks_has(const struct wp_ranks *r, long rank)
{
    switch (r->kind) {
    case WP_RANKS_ALL:
        return 1;
    case WP_RANKS_NONE:
        return 0;
    case WP_RANKS_RANDOM:
        /* Before wp_ranks_fit the domain is unknown: nothing is selected. */
        return rank >= 0 && rank < r->domain && wp_permute(rank, r->domain, r->seed) < r->nrandom;
    default:
        for (int i = 0; i < r->nitems; i++)
            if (wp_item_has(&r->items[i], rank))
                return 1;
        return 0;
    }
}

int wp_ranks_fit(struct wp_ranks *r, long size, char *note, size_t notelen)
{
    note[0] = '\0';
    if (r->kind == WP_RANKS_RANDOM) {
        if (r->nrandom >= size) {
            snprintf(note, notelen, "asks for %ld random ranks of the job's %ld; sampling all ranks", r->nrandom,
                     size);
            r->kind = WP_RANKS_ALL;
            return r->nrandom > size;
        }
        r->domain = size;
        return 0;
    }
    if (r->kind != WP_RANKS_LIST)
        return 0;
    int beyond = 0, overlap = 0;
    int k = 0;
    for (int i = 0; i < r->nitems; i++) {
        struct wp_rank_item it = r->items[i];
        if (it.first >= size) {
            beyond = 1;
            continue;
        }
        if (it.last >= size) {
            beyond = 1;
            it.last = it.first + (size - 1 - it.first) / it.stride * it.stride;
        }
        r->items[k++] = it;
    }
    r->nitems = k;
    /* Overlap: a rank named by two items.  Walk the sparser progression
     * inside the common bounds (bounded, so a huge list cannot stall). */
    long steps = 0;
    for (int i = 0; i < k && !overlap; i++)
        for (int j = i + 1; j < k && !overlap; j++) {
            const struct wp_rank_item *a = &r->items[i], *b = &r->items[j];
            long lo = a->first > b->first ? a->first : b->first, hi = a->last < b->last ? a->last : b->last;
            if (lo > hi)
                continue;
            const struct wp_rank_item *w = a->stride >= b->stride ? a : b, *o = w == a ? b : a;
            long x = w->first + (lo > w->first ? (lo - w->first + w->stride - 1) / w->stride * w->stride : 0);
            for (; x <= hi && steps < 1000000; x += w->stride, steps++)
                if (wp_item_has(o, x)) {
                    overlap = 1;
                    break;
                }
        }
    r->overlap = overlap;
    if (!beyond && !overlap)
        return 0;
    if (k == 0) {
        /* Nothing left of the list: every named rank is beyond the job. */
        r->kind = WP_RANKS_NONE;
    }
    char fixed[160];
    wp_ranks_format(r, size, fixed, sizeof fixed);
    if (beyond)
        snprintf(note, notelen, "names ranks beyond the job's last rank %ld%s; sampling ranks %s", size - 1,
                 overlap ? " and has overlapping items" : "", fixed);
    else
        snprintf(note, notelen, "has overlapping items; sampling ranks %s", fixed);
    return 1;
}

long wp_ranks_count(const struct wp_ranks *r, long size)
{
    if (r->kind == WP_RANKS_ALL)
        return size;
    if (r->kind == WP_RANKS_NONE)
        return 0;
    if (r->kind == WP_RANKS_RANDOM)
        return r->nrandom < size ? r->nrandom : size;
    long n = 0;
    if (!r->overlap) {
        for (int i = 0; i < r->nitems; i++)
            if (r->items[i].first < size) {
                long last = r->items[i].last < size ? r->items[i].last : size - 1;
                n += (last - r->items[i].first) / r->items[i].stride + 1;
            }
        return n;
    }
    for (long x = 0; x < size; x++)
        n += wp_ranks_has(r, x);
    return n;
}

long wp_ranks_first(const struct wp_ranks *r, long size)
{
    if (r->kind == WP_RANKS_NONE || size <= 0)
        return -1;
    if (r->kind == WP_RANKS_LIST) {
        long first = -1;
        for (int i = 0; i < r->nitems; i++)
            if (r->items[i].first < size && (first < 0 || r->items[i].first < first))
                first = r->items[i].first;
        return first;
    }
    for (long x = 0; x < size; x++)
        if (wp_ranks_has(r, x))
            return x;
    return -1;
}

int wp_range_put(char *buf, size_t cap, long lo, long hi, int first)
{
    return hi > lo ? snprintf(buf, cap, "%s%ld-%ld", first ? "" : ",", lo, hi)
                   : snprintf(buf, cap, "%s%ld", first ? "" : ",", lo);
}

void wp_rank_ranges(const int *ranks, size_t n, char *buf, size_t cap)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && k < cap;) {
        size_t j = i;
        while (j + 1 < n && ranks[j + 1] == ranks[j] + 1)
            j++;
        k += (size_t)wp_range_put(buf + k, cap - k, ranks[i], ranks[j], i == 0);
        i = j + 1;
    }
    if (k >= cap && cap > 4)
        memcpy(buf + cap - 4, "...", 4);
}

void wp_ranks_format(const struct wp_ranks *r, long size, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    long run = -1;
    int any = 0, cut = 0;
    for (long x = 0; x <= size && !cut; x++) {
        int in = x < size && wp_ranks_has(r, x);
        if (in && run < 0)
            run = x;
        if (!in && run >= 0) {
            char item[48];
            wp_range_put(item, sizeof item, run, x - 1, !any);
            size_t len = strlen(item);
            if (n + len + 5 > cap) {
                cut = 1;
                break;
            }
            memcpy(out + n, item, len + 1);
            n += len;
            any = 1;
            run = -1;
        }
    }
    if (cut && n + 5 <= cap)
        memcpy(out + n, ",...", 5);
    if (!any && !cut)
        snprintf(out, cap, "none");
}

int wp_window_parse(const char *s, double *every, double *dur, char *why, size_t whylen)
{
    char *end;
    if (s[0] == '\0') {
        snprintf(why, whylen, "empty");
        return -1;
    }
    /* Plain decimals only (no exponents, signs or spaces). */
    if (strncmp(s, "every:", 6) != 0 || strspn(s + 6, "0123456789.") == 0 ||
        s[6 + strspn(s + 6, "0123456789.")] != ',') {
        snprintf(why, whylen, "expected every:SECONDS,for:SECONDS");
        return -1;
    }
    errno = 0;
    double p = strtod(s + 6, &end);
    if (errno || strncmp(end, ",for:", 5) != 0 || strspn(end + 5, "0123456789.") != strlen(end + 5) ||
        end[5] == '\0') {
        snprintf(why, whylen, "expected every:SECONDS,for:SECONDS");
        return -1;
    }
    const char *q = end + 5;
    double d = strtod(q, &end);
    if (*end != '\0' || errno) {
        snprintf(why, whylen, "expected every:SECONDS,for:SECONDS");
        return -1;
    }
    if (!(p > 0) || !(d > 0) || d > p || p > 1e9) {
        snprintf(why, whylen, "needs 0 < for <= every");
        return -1;
    }
    *every = p;
    *dur = d;
    return 0;
}

uint64_t wp_window_pieces_sig(const struct wp_timesel *t, uint64_t from, uint64_t to,
                          void (*fn)(uint64_t a, uint64_t b, void *arg), void *arg)
{
    uint64_t lo = from > t->start_ns ? from : t->start_ns;
    uint64_t hi = to;
    if (t->stop_ns && t->stop_ns < hi)
        hi = t->stop_ns;
    if (lo >= hi)
        return 0;
    if (t->every_ns == 0) {
        if (fn)
            fn(lo, hi, arg);
        return hi - lo;
    }
    uint64_t total = 0;
    uint64_t k = (lo - t->start_ns) / t->every_ns;
    for (;; k++) {
        uint64_t a = t->start_ns + k * t->every_ns, b = a + t->for_ns;
        if (a >= hi)
            break;
        if (a < lo)
            a = lo;
        if (b > hi)
            b = hi;
        if (a < b) {
            if (fn)
                fn(a, b, arg);
            total += b - a;
        }
    }
    return total;
}
