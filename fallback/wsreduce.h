/* fallback/wsreduce.h — the cross-rank reduction of the wait-state table.
 *
 * Contract: pure code (no MPI, no globals), shared by the finalize step
 * (fallback/estimate.c, which moves the lists along a binomial tree over the
 * ranks: O(log P) steps) and the 100 000-rank simulation (bench/reduce_sim.c).
 * A list holds one record per (call site, MPI function, pattern), sorted by
 * that key, with the sums over the ranks it covers and the smallest and the
 * largest wait of one rank at that site (ties go to the lower rank).  Merging
 * is associative and commutative, so the tree's shape does not change the
 * result, and a list's length is bounded by the number of distinct sites,
 * whatever the number of ranks.
 */
#ifndef WP_FALLBACK_WSREDUCE_H
#define WP_FALLBACK_WSREDUCE_H

#include <stddef.h>
#include <stdint.h>

#define WP_SITE_MAX 512

struct wp_agg {
    char site[WP_SITE_MAX];
    int32_t fn, pattern;
    uint64_t calls, time_ns, wait_ns;
    uint64_t matched;    /* instances whose wait was measured (match/match.h);
                          * 0: the wait is the minimum-duration estimate */
    uint64_t by_source;  /* calls whose wait the runtime stall source gave
                          * (not matched: mpit/source.h) */
    uint64_t nranks;     /* ranks with at least one row for the key */
    double wmin, wmax;   /* seconds of wait of one rank at the key */
    int64_t rmin, rmax;  /* the ranks they belong to */
};

/* Order of lists: site, then function, then pattern. */
int wp_agg_key_cmp(const struct wp_agg *a, const struct wp_agg *b);

/* Sort n records by key and combine records with the same key (as rows of
 * one rank: sums added, the wait of the rank is their summed wait).  Returns
 * the new length. */
size_t wp_agg_normalize(struct wp_agg *v, size_t n);

/* Merge two sorted lists of different rank sets into out (room for na + nb).
 * Returns the length of out. */
size_t wp_agg_merge(const struct wp_agg *a, size_t na, const struct wp_agg *b, size_t nb, struct wp_agg *out);

#endif
