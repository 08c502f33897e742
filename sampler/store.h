/* sampler/store.h — a thread's preallocated sample store.
 *
 * Contract: a store aggregates samples by (MPI state, call stack) in a fixed
 * open-addressing table whose stacks live in a fixed arena, both allocated by
 * wp_store_create() before sampling starts.  wp_store_add() runs in the
 * SIGPROF handler: it allocates nothing, takes no lock and calls nothing but
 * its own code.  Only the owning thread's handler writes a store; readers
 * (the writer at the end, or a termination handler) go through the entries
 * wp_store_count() covers, a count published with release order after the
 * entry is complete, so they never read a half-made stack.  When table or arena is full, the sample's weight is added to
 * dropped_full: nothing is lost silently.
 */
#ifndef WP_SAMPLER_STORE_H
#define WP_SAMPLER_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "sampler/counters.h"
#include "state/thread.h"

struct wp_stack_entry {
    uint64_t hash;
    uint64_t count;       /* weighted samples */
    uint32_t off;         /* first frame in the arena */
    uint16_t depth;       /* frames, root last */
    uint16_t fn;          /* enum wp_fn of the MPI call, 0 outside MPI */
    uint8_t state;        /* WAITPROF_STATE_* */
    uint8_t used;         /* the slot is taken (the owner's handler's own
                           * probes; readers go by wp_store_count) */
    /* Held samples (wp_pending_flush_held): nonzero for samples of a
     * recorded call whose Work/Stall waits for what its category (fn,
     * sclass, role) is known to have waited at MPI_Finalize
     * (fallback/estimate.h); held is the bucket of the time from the
     * sample to the call's end (wp_held_bucket), and state says MPI-Work
     * until then. */
    uint16_t held;
    uint8_t sclass, role;
};

/* The bucket of a time (ticks) from a sample to its call's end: exact below
 * 16, then 16 buckets per power of two (a bucket spans at most 1/16 of its
 * value).  Never 0. */
static inline uint16_t wp_held_bucket(uint64_t x)
{
    if (x < 16)
        return (uint16_t)(1 + x);
    int m = 63 - __builtin_clzll(x); /* >= 4 */
    return (uint16_t)(1 + 16 * (m - 3) + (int)((x >> (m - 4)) & 15));
}

/* The middle of a bucket, in ticks. */
static inline uint64_t wp_held_ticks(uint16_t b)
{
    unsigned k = b ? b - 1u : 0u;
    if (k < 16)
        return k;
    int m = (int)(k / 16) + 3;
    return ((16 + (uint64_t)(k % 16)) << (m - 4)) + ((1ull << (m - 4)) >> 1);
}

/* Histogram of handler time in ns, eight bins per power of two: 0–7 ns
 * exactly in bins 0–7, then bin 8(m-2)+q holds [(8+q)·2^(m-3),
 * (9+q)·2^(m-3)) for 2^m <= ns < 2^(m+1); the top bin is open (from 2^33
 * ns).  A bin spans at most an eighth of its lower edge, so the median read
 * from it is within about 6 % (a target of 5 µs needs better than powers
 * of two: [4096, 5120) would not tell). */
#define WP_HANDLER_BINS 256

struct wp_store {
    struct wp_pending *pending; /* the calling thread's, inside the mapping */
    uint32_t nslots;       /* power of two */
    uint32_t nstacks;      /* entries made: order[0 .. nstacks) (release) */
    uint32_t arena_cap;
    volatile uint32_t arena_used;
    struct wp_stack_entry *slots;
    /* The slots of the entries in the order they were made.  Readers go
     * through these (wp_store_count, wp_store_entry) instead of scanning
     * slots[]: the table takes a quarter of a store's bytes, megabytes
     * mostly never written, and reading it touches every page of it. */
    uint32_t *order;
    uintptr_t *arena;
    /* Counters, all weighted by timer overruns, written by the owner only. */
    uint64_t samples;        /* samples stored */
    uint64_t dropped_full;   /* table or arena full */
    uint64_t dropped_dl;     /* taken while the loader lock might be held */
    uint64_t unwind_fail;    /* stored with no stack: the unwinder failed */
    uint64_t truncated;      /* stack deeper than the frame limit */
    uint64_t lib_unwinds;    /* unwound by libunwind: waitprof's unwinder declined */
    uint64_t slow_unwinds;   /* of those, by the signal-frame cursor, not the fast trace */
    uint64_t by_source;      /* Work/Stall told by the runtime stall source (mpit/) */
    uint64_t by_estimate;    /* Work/Stall told by the estimator's rule when the call returned */
    uint64_t paused_signals; /* signals that came during MPI_Pcontrol(0), unweighted */
    uint64_t unselected_signals; /* signals with no time selected by START/STOP/WINDOW */
    uint64_t handler_calls;
    uint64_t handler_ns;
    uint64_t handler_hist[WP_HANDLER_BINS];
    /* The memory budget (WAITPROF_MEMORY, wp_store_add_sig): */
    uint64_t merged;         /* weight stored under a shortened stack: the
                              * full one no longer fitted */
    uint32_t stride;         /* timer period in base periods (1, 2, 4, ...):
                              * the rate was halved log2(stride) times */
    uint32_t in_pool;        /* laid out in the rank's pool: never unmapped */
    uint64_t last_hash;      /* the entry the last wp_store_add_sig added to, 0 if none */
    /* The thread's states over time (sampler/timeline.h), NULL when it has
     * none: the flushes below add the samples they decide to it. */
    struct wp_timeline *tl;
    /* Counters (sampler/counters.h): nctr sums per table slot, slot i's at
     * ctr[i * nctr], laid out after the arena only when counters are on,
     * so a store without them costs nothing more.  NULL and 0 without. */
    uint64_t *ctr;
    uint32_t nctr;
    /* WAITPROF_COUNTERS_SPLIT (sampler/ctr_split.h): every counter delta
     * this thread read, at MPI entry and exit and at its signals, by
     * where the thread was: [0] outside MPI, [1] inside an MPI call. */
    uint64_t split[2][WP_CTR_MAX];
};

/* The entries made so far, and the k-th of them (k < the count).  The count
 * is read with acquire order: every entry it covers is complete, even when
 * the owner's handler is adding to the store on another thread. */
static inline uint32_t wp_store_count(const struct wp_store *s)
{
    return __atomic_load_n(&s->nstacks, __ATOMIC_ACQUIRE);
}
static inline const struct wp_stack_entry *wp_store_entry(const struct wp_store *s, uint32_t k)
{
    return &s->slots[s->order[k]];
}

/* Every entry with samples of every thread's store, in the order of the
 * slots and then of the entries: start with wp_entries_start, then
 * wp_entries_next until it returns NULL; it->s is the store of the entry
 * last returned.  Loads only, so the termination writers may walk it from
 * a signal handler; each store's count is read once, with acquire order
 * (wp_store_count), so every entry it covers is complete. */
struct wp_entries {
    const struct wp_store *s;
    int slot, nslots;
    uint32_t j, nj;
};
static inline void wp_entries_start(struct wp_entries *it)
{
    *it = (struct wp_entries){.nslots = wp_slots_used()};
}
static inline const struct wp_stack_entry *wp_entries_next(struct wp_entries *it)
{
    for (;;) {
        while (it->j < it->nj) {
            const struct wp_stack_entry *e = wp_store_entry(it->s, it->j++);
            if (e->count)
                return e;
        }
        if (it->slot >= it->nslots)
            return NULL;
        it->s = wp_slots[it->slot++].store;
        it->j = 0;
        it->nj = it->s ? wp_store_count(it->s) : 0;
    }
}

/* The counter sums of entry e of store s, or NULL when it has none. */
static inline const uint64_t *wp_entry_ctr(const struct wp_store *s, const struct wp_stack_entry *e)
{
    return s->ctr ? &s->ctr[(size_t)(e - s->slots) * s->nctr] : NULL;
}

/* Samples taken inside one blocking MPI call, held until the call returns
 * and its duration tells Work from Stall (fallback/stats.h): a sample at
 * offset o from the call's entry is Stall when o < duration - minimum.
 * Every sample of one call has the same stack (frames below the wrapper are
 * cut), so the stack is kept once.  Written by the owner's handler; flushed
 * by the owner in normal context with SIGPROF blocked. */
#define WP_PENDING_MAX 1024
struct wp_pending {
    uint32_t n;
    uint16_t depth;
    uint16_t fn;
    uint64_t enter; /* the call's entry (ticks), for a call that never returns */
    /* With counters (wp_store_create_in, nctr > 0): WP_PENDING_MAX rows of
     * nctr counter deltas, one per held sample, which go with it into the
     * store when the call's state is decided.  NULL without counters. */
    uint64_t *ctr;
    uintptr_t ips[128];
    uint64_t off[WP_PENDING_MAX]; /* ticks since the call's entry */
    uint32_t weight[WP_PENDING_MAX];
};

/* Move the pending samples into the store: Stall below threshold ticks,
 * Work at or above it, and into the timeline at the time each was taken.
 * Caller blocks SIGPROF. */
void wp_pending_flush(struct wp_store *s, struct wp_pending *p, uint64_t threshold);
/* The same for a call whose samples wait for its category's share of time
 * waited, known at MPI_Finalize (fallback/estimate.h): each sample is
 * stored held, under the bucket of its time to the call's end (duration
 * ticks minus its offset), and classified when the profile is written.
 * Caller blocks SIGPROF. */
void wp_pending_flush_held(struct wp_store *s, struct wp_pending *p, uint64_t duration, int sclass, int role);
/* The samples of a call still in progress at an abnormal end (never
 * settled): returns their weight, and in *stall the weight of those that
 * came more than min_ns before now (ticks): whatever the call's duration
 * turns out to be, they were taken more than the function's minimum before
 * its end, so they waited (the estimator's rule).  min_ns UINT64_MAX (no
 * call of the function ever returned): none, Work as for the estimator's
 * first call.  Reads only; async-signal-safe. */
uint64_t wp_pending_split(const struct wp_pending *p, uint64_t now, uint64_t min_ns, uint64_t *stall);
/* The same for counter c of nctr (the held samples' counter deltas, by the
 * same rule); c < 0 is the sample weights, as wp_pending_split. */
uint64_t wp_pending_split_ctr(const struct wp_pending *p, uint64_t now, uint64_t min_ns, uint32_t nctr, int c,
                              uint64_t *stall);

/* Add the samples of a call still in progress (as wp_pending_split
 * classifies them) to a timeline (sampler/timeline.h) at the times they
 * were taken.  Async-signal-safe. */
struct wp_timeline;
void wp_pending_timeline_sig(const struct wp_pending *p, uint64_t now, uint64_t min_ns, struct wp_timeline *t);

/* The state a held entry stands for: MPI-Stall when its sample came more
 * than the category's minimum (ns; UINT64_MAX: unknown, so Work) before
 * the call's end, as the estimator's rule says; else MPI-Work.  The state
 * itself for entries that are not held. */
int wp_entry_state(const struct wp_stack_entry *e, uint64_t min_ns);

/* Allocate a store for nslots stacks (rounded up to a power of two) and
 * arena_frames frames.  Returns NULL when memory cannot be had. */
struct wp_store *wp_store_create(uint32_t nslots, uint32_t arena_frames);

/* Lay a store out in bytes of preallocated memory (a slice of the rank's
 * pool): the pending buffer, then a table with a power-of-two number of
 * slots taking about a quarter of the rest, then the arena; with nctr
 * counters (0..8) also nctr sums per slot and per pending sample, taken
 * from the same bytes.  Returns NULL when bytes cannot hold a minimal
 * store. */
struct wp_store *wp_store_create_in(void *mem, size_t bytes, int nctr);

/* Like wp_store_add, but for a store of bounded size that must not lose
 * weight: a new stack is stored whole while the table is at most 5/8 full
 * and the arena 7/8 used; past that, under its 4 outermost frames (while
 * the table is at most 11/16 full), or failing that under no frame at all
 * (up to 3/4), and the weight is counted in merged.  Only when
 * even that is impossible is it counted in dropped_full.  The state and the
 * MPI function are always kept, so the weighted totals per state and per
 * function stay exact.  Async-signal-safe. */
int wp_store_add_sig(struct wp_store *s, int state, int fn, const uintptr_t *ips, int n, uint64_t weight);
/* The same with the sample's counter deltas ctr[0..s->nctr) added to the
 * entry's sums (ctr NULL, or a store without counters: none).  Where the
 * weight goes (whole, shortened or frameless stack), the deltas go too;
 * where it is dropped, they are.  Async-signal-safe. */
int wp_store_add_ctr_sig(struct wp_store *s, int state, int fn, const uintptr_t *ips, int n, uint64_t weight,
                         const uint64_t *ctr);

/* How close the store is to its soft limits: k when the room left is at most
 * 2^-k of it (0: less than half used), at most 5, so the rate is halved at
 * most five times (1/32 of the configured rate).  The sampler halves
 * the rate each time this passes log2(stride).  Async-signal-safe. */
int wp_store_pressure_sig(const struct wp_store *s);
void wp_store_destroy(struct wp_store *s);

/* Add weight samples of the stack ips[0..n) (leaf first) in state, inside
 * MPI function fn (0 outside MPI).
 * Returns 0, or -1 when the store was full (weight counted in dropped_full).
 * Async-signal-safe. */
int wp_store_add(struct wp_store *s, int state, int fn, const uintptr_t *ips, int n, uint64_t weight);

/* Record the duration of one handler run.  Async-signal-safe. */
void wp_store_handler_time_sig(struct wp_store *s, uint64_t ns);

/* Median handler time estimated from the histogram (the bin's middle). */
uint64_t wp_store_handler_median_ns(const struct wp_store *s);

#endif
