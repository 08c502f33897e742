/* match/types.h — the data types and pure functions of matched instances
 * (match/match.h has the contract): the hashed choice of instances, a
 * call's category, a communicator as numbering knows it, and the measured
 * results.  Nothing here refers to a definition in another file, so every
 * file of match/ can include it. */
#ifndef WP_MATCH_TYPES_H
#define WP_MATCH_TYPES_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

/* Every instance below this number on a channel or communicator is chosen,
 * so call sites with few calls are measured in full. */
#define WP_MATCH_FIRST 16
#define WP_MATCH_RATE_DEFAULT 16

/* A call's category, as the estimator records it (fallback/stats.h). */
struct wp_mcat {
    uintptr_t site;
    uint16_t fn;
    uint8_t sclass, role;
};

/* A communicator as numbering knows it. */
struct wp_mcomm {
    uintptr_t key;          /* the handle, widened (0: slot free) */
    MPI_Comm handle;
    uint64_t id;            /* agreed across ranks */
    int rank, size;         /* the calling process's rank in it, its size */
    int world;              /* its ranks are MPI_COMM_WORLD's */
    int *wranks;            /* else each member's rank in MPI_COMM_WORLD, read
                             * once at its creation (for the members' hash) */
    atomic_uint_fast64_t coll; /* collective instances so far */
    atomic_uint_fast64_t cnext; /* no collective number below it is chosen
                                 * (wp_match_after; collectives of one
                                 * communicator never run concurrently) */
    struct wp_cbatch *batch;   /* chosen collective instances not yet reduced */
    int dead;               /* freed: its handle may come back as another */
};

/* --- pure parts --------------------------------------------------------- */

static inline uint64_t wp_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* The channel of a message: the same value on both sides. */
static inline uint64_t wp_match_channel(uint64_t comm_id, int src, int dst, int tag)
{
    uint64_t h = wp_mix64(comm_id ^ 0x9e3779b97f4a7c15ull);
    h = wp_mix64(h ^ ((uint64_t)(uint32_t)src << 32 | (uint32_t)dst));
    return wp_mix64(h ^ (uint64_t)(uint32_t)tag) | 1; /* never 0: 0 marks a free counter */
}

#define WP_MATCH_BLOCK_LOG2 2

/* Thinning (WAITPROF_MATCH_DENSE): beyond the first 2^dense_log2 numbers
 * of a channel or communicator, the rate halves each time the number
 * doubles, so numbers in [2^j, 2^(j+1)), j >= dense_log2, are chosen at
 * exponent bits + j - dense_log2 + 1.  A channel's records then grow with
 * the logarithm of its messages instead of in proportion to them: a loop
 * that sends a million messages on one channel records a few thousand of
 * them, not 60 000, and a latency-bound loop stops paying for a record
 * every few calls (doc/performance.md).  Each octave still holds about
 * 2^(dense_log2 - bits - 1) chosen numbers, enough for its mean.  A
 * chosen number then stands for 2^thin times as many numbers of the
 * sampled stratum as an unthinned one (wp_match_weight).  dense_log2 0:
 * never thinned. */
static inline unsigned wp_match_thin(uint64_t k, unsigned dense_log2)
{
    if (dense_log2 == 0 || (k >> dense_log2) == 0)
        return 0;
    return (unsigned)(64 - __builtin_clzll(k)) - dense_log2;
}

/* Whether instance k of a channel or communicator is recorded at sampling
 * exponent bits and thinning dense_log2.
 * The choice depends on the number alone, in blocks of WP_MATCH_BLOCK
 * consecutive numbers, not on the channel: in a program that repeats a
 * pattern of messages, the k-th message of every channel belongs to one
 * repetition, so a chosen repetition is recorded on every channel, and a
 * chosen message's predecessors (the receives that made its sender late,
 * in the same repetition or the one before) are mostly recorded too.
 * Without them a wait could not be followed back through ranks that
 * waited themselves (match/exchange.c).
 * At exponent e, exactly one block of every aligned group of 2^e blocks
 * is chosen, in a place a hash of the group picks: block b is chosen when
 * each of its e low bits, from the highest down, equals the hash bit of
 * the bits above it (wp_match_bit).  So the choice is monotone (chosen at
 * e + 1 implies chosen at e: its e low bits match too), a sample of
 * exactly one block in 2^e (one per group, nowhere in step with a period
 * of the program), and the chosen block of a group is computed directly,
 * bit by bit (wp_match_pick), where a hash of the block against a
 * threshold had to be searched block by block for the next chosen one:
 * that search (wp_match_after) cost an 8-byte ping-pong 20 million
 * instructions per rank over 905 000 round trips, 11 per MPI call, on the
 * path of the calls that reached it (bench/pingpong.c, callgrind).  A
 * block that is not chosen fails at its first bit half the time, so the
 * test costs two hashes on average. */
static inline unsigned wp_match_bit(unsigned i, uint64_t above)
{
    return (unsigned)(wp_mix64(above * 0x9e3779b97f4a7c15ull ^ ((uint64_t)(i + 1) << 56)) >> 63);
}
/* The exponent of number k (0: every number chosen). */
static inline unsigned wp_match_exp(uint64_t k, unsigned bits, unsigned dense_log2)
{
    if (k < WP_MATCH_FIRST)
        return 0;
    bits += wp_match_thin(k, dense_log2);
    return bits > 62 ? 62 : bits;
}
static inline int wp_match_block_chosen(uint64_t b, unsigned e)
{
    for (unsigned i = e; i-- > 0;)
        if (((b >> i) & 1) != wp_match_bit(i, b >> (i + 1)))
            return 0;
    return 1;
}
static inline int wp_match_chosen(uint64_t k, unsigned bits, unsigned dense_log2)
{
    return wp_match_block_chosen(k >> WP_MATCH_BLOCK_LOG2, wp_match_exp(k, bits, dense_log2));
}
/* The chosen block of group g (blocks g * 2^e to (g + 1) * 2^e - 1) at
 * exponent e: its low bits from the highest down, each the hash bit of
 * the bits above it. */
static inline uint64_t wp_match_pick(uint64_t g, unsigned e)
{
    uint64_t b = g << e;
    for (unsigned i = e; i-- > 0;)
        b |= (uint64_t)wp_match_bit(i, b >> (i + 1)) << i;
    return b;
}

/* How many numbers of its stratum a chosen number k stands for, relative
 * to an unthinned one: the weight of its instance in the measured means
 * (match/measured.c). */
static inline uint64_t wp_match_weight(uint64_t k, unsigned dense_log2)
{
    return k < WP_MATCH_FIRST ? 1 : 1ull << wp_match_thin(k, dense_log2);
}

/* The smallest number above k that may be chosen at exponent bits: none
 * between k and it is.  The wrappers compare each number with it (one
 * comparison) and evaluate the choice only there: at the numbers of a
 * chosen block, and once after it.  From the block after k's, each step
 * takes the chosen block of the current block's group: if it lies ahead,
 * it is the answer, unless thinning gave it a higher exponent there, at
 * which it is not chosen (then the search goes on after it); if it lies
 * behind, the search goes on at the next group.  Neither skips a chosen
 * block: a block not chosen at an exponent is not chosen at any higher
 * one, and the exponent only grows with the number.  After 64 steps the
 * bound reached is returned (a number there is then evaluated again); a
 * bound found at an exponent stays a bound at every higher one. */
static inline uint64_t wp_match_after(uint64_t k, unsigned bits, unsigned dense_log2)
{
    uint64_t n = k + 1;
    if (n < WP_MATCH_FIRST || wp_match_chosen(n, bits, dense_log2))
        return n;
    uint64_t b = (n >> WP_MATCH_BLOCK_LOG2) + 1;
    for (int step = 0; step < 64; step++) {
        unsigned e = wp_match_exp(b << WP_MATCH_BLOCK_LOG2, bits, dense_log2);
        uint64_t c = wp_match_pick(b >> e, e);
        if (c < b) {
            b = ((b >> e) + 1) << e;
            continue;
        }
        if (wp_match_chosen(c << WP_MATCH_BLOCK_LOG2, bits, dense_log2))
            return c << WP_MATCH_BLOCK_LOG2;
        b = c + 1;
    }
    return b << WP_MATCH_BLOCK_LOG2;
}

/* Whether instance k is in the always-chosen stratum. */
static inline int wp_match_first(uint64_t k)
{
    return k < WP_MATCH_FIRST;
}

/* The measured figures of one category (match/measured.c). */
struct wp_measured {
    struct wp_mcat cat;
    /* Instances of the always-chosen stratum (the first ones of every
     * channel) and of the sampled one: recorded, matched, summed wait (ns),
     * and for the sampled stratum the sum of squared waits (s^2). */
    uint64_t first_n, first_m, first_w;
    uint64_t samp_n, samp_m;
    /* The sampled stratum's matched instances and their summed wait (ns),
     * each weighed by wp_match_weight: a thinned instance stands for more
     * calls (all weights are 1 where nothing is thinned). */
    double samp_mw, samp_ww;
    /* The sampled stratum by block: the choice takes or leaves a block of
     * numbers whole, on every channel at once, so a block's instances are
     * one draw (a cluster), and the interval comes from the blocks' sums:
     * their number, and the sums of y^2, y*m and m^2 over blocks, y a
     * block's matched wait (s) and m its matched instances, both weighed
     * (a block's instances share one weight).  Blocks still
     * being filled wait in open[] (instances of a block arrive close
     * together, but interleaved with other blocks of other channels). */
    uint64_t cl_n;
    double cl_y2, cl_ym, cl_m2;
#define WP_MEAS_OPEN 4
    struct wp_mblock {
        uint64_t blk, y_ns;
        uint32_t m, used;
        double wt;
    } open[WP_MEAS_OPEN];
    double scale; /* wp_match_wait's figure over the matched waits' sum */
};

/* Who caused the waits of a category: see match/match.h. */
struct wp_cause {
    struct wp_mcat cat;
    int pattern, delayer;
    int propagated; /* 0: waits the delayer caused directly; 1: through
                     * ranks that waited for it (match/exchange.c) */
    uint64_t cause, n, wait_ns;
};

/* Counters for the meta file: see match/match.h. */
struct wp_match_counts {
    uint64_t p2p_records, coll_records, matched, unmatched, dropped, unnumbered;
    uint64_t rounds; /* the propagation's rounds at MPI_Finalize */
};

#endif
