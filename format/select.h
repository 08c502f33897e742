/* format/select.h — which ranks and which time intervals are sampled.
 *
 * Contract: pure functions (no MPI, no globals, no allocation except where a
 * function says so), shared by the library (state/config.c, the sampler,
 * the meta writer), the report tool (--ranks, its rank lists) and the unit
 * tests (tests/unit/test_select.c).
 *
 * Rank lists (WAITPROF_RANKS): "all", "none", "random:N" or "random:N:SEED",
 * or a comma-separated list of items "A", "A-B" or "A-B:STRIDE" (ranks A,
 * A+STRIDE, ... up to B).  wp_ranks_parse() checks the syntax only;
 * wp_ranks_fit() resolves the list against the job size and reports what it
 * had to change (ranks beyond the job, overlapping items) in one line.
 *
 * Time selection: WAITPROF_START / WAITPROF_STOP are seconds since MPI_Init
 * (STOP 0 = no stop); WAITPROF_WINDOW "every:P,for:D" samples the first D
 * seconds of every P seconds counted from START.  wp_window_on_sig() tells
 * whether a time is selected; it only does arithmetic on its arguments, so
 * the SIGPROF handler may call it.
 */
#ifndef WP_FORMAT_SELECT_H
#define WP_FORMAT_SELECT_H

#include <stddef.h>
#include <stdint.h>

#define WP_RANKS_MAX_ITEMS 256

struct wp_rank_item {
    long first, last, stride; /* first..last step stride, stride >= 1 */
};

struct wp_ranks {
    int kind;     /* WP_RANKS_ALL, _NONE, _LIST, _RANDOM */
    int nitems;
    struct wp_rank_item items[WP_RANKS_MAX_ITEMS];
    long nrandom;           /* random:N */
    long domain;            /* random: the job size, set by wp_ranks_fit */
    int overlap;            /* list: some rank is named twice (wp_ranks_fit) */
    unsigned long long seed;
    int has_seed;
};

enum { WP_RANKS_ALL = 0, WP_RANKS_NONE, WP_RANKS_LIST, WP_RANKS_RANDOM };

/* Parse a rank list.  Returns 0, or -1 with a short reason in why (the
 * caller names the variable and the fallback). */
int wp_ranks_parse(const char *s, struct wp_ranks *r, char *why, size_t whylen);

/* Resolve against the job size: drop ranks >= size, note overlapping items,
 * turn random:N into a sorted list of N distinct ranks (N > size: all ranks)
 * drawn with the seed.  Returns 0 when nothing changed, 1 when something did
 * (a line saying what is in note). */
int wp_ranks_fit(struct wp_ranks *r, long size, char *note, size_t notelen);

/* Is rank selected (after wp_ranks_fit)? */
int wp_ranks_has(const struct wp_ranks *r, long rank);

/* Number of selected ranks among 0..size-1 (after wp_ranks_fit).  O(items)
 * for lists without overlap, else a walk over the ranks. */
long wp_ranks_count(const struct wp_ranks *r, long size);

/* The lowest selected rank, or -1 (after wp_ranks_fit).  O(items) for lists,
 * about size / N tests for random:N. */
long wp_ranks_first(const struct wp_ranks *r, long size);

/* The selected ranks of 0..size-1 as compressed ranges, "0-3,5,8-9" ("none"
 * when empty); cut with ",..." when longer than cap allows. */
void wp_ranks_format(const struct wp_ranks *r, long size, char *out, size_t cap);

/* The one spelling of a range of ranks: "lo" or "lo-hi", preceded by a
 * comma unless first, into buf (snprintf's contract and return value).
 * Every printer of rank lists (here, the meta file, the report) uses it. */
int wp_range_put(char *buf, size_t cap, long lo, long hi, int first);

/* A sorted list of n ranks as ranges, "0-122,180-302", into buf; cut with
 * "..." when longer than cap allows. */
void wp_rank_ranges(const int *ranks, size_t n, char *buf, size_t cap);

/* A periodic window "every:P,for:D" (seconds, 0 < D <= P).  Returns 0, or -1
 * with a reason in why. */
int wp_window_parse(const char *s, double *every, double *dur, char *why, size_t whylen);

/* Time selection in nanoseconds since MPI_Init. */
struct wp_timesel {
    uint64_t start_ns, stop_ns; /* stop 0: none */
    uint64_t every_ns, for_ns;  /* every 0: no periodic window */
};

static inline int wp_window_on_sig(const struct wp_timesel *t, uint64_t since_init_ns)
{
    if (since_init_ns < t->start_ns || (t->stop_ns && since_init_ns >= t->stop_ns))
        return 0;
    return t->every_ns == 0 || (since_init_ns - t->start_ns) % t->every_ns < t->for_ns;
}

/* The first selected instant at or after at, or UINT64_MAX when nothing
 * is selected from at on.  Arithmetic only (the SIGPROF handler calls
 * it). */
static inline uint64_t wp_window_next_sig(const struct wp_timesel *t, uint64_t at)
{
    uint64_t x = at < t->start_ns ? t->start_ns : at;
    if (t->every_ns && (x - t->start_ns) % t->every_ns >= t->for_ns)
        x = t->start_ns + ((x - t->start_ns) / t->every_ns + 1) * t->every_ns;
    return t->stop_ns && x >= t->stop_ns ? UINT64_MAX : x;
}

/* Intersect [from, to) with the time selection and call fn(a, b, arg) for
 * every selected piece, in order.  Returns the selected nanoseconds. */
uint64_t wp_window_pieces_sig(const struct wp_timesel *t, uint64_t from, uint64_t to,
                          void (*fn)(uint64_t a, uint64_t b, void *arg), void *arg);

#endif
