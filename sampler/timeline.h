/* sampler/timeline.h — a thread's MPI states over time, in fixed memory.
 *
 * Contract: a timeline is WP_TL_BINS bins of equal width from an origin (the
 * run's start, CLOCK_MONOTONIC ns).  Each bin sums the weight (in configured
 * sampling periods, as the store counts) of the samples taken in it, per MPI
 * state, and keeps a weighted majority vote (Boyer–Moore) over the stack ids
 * of its waiting samples.  When a sample falls past the last bin, pairs of
 * bins are merged and the width doubles, as often as needed: the memory
 * never grows, and the resolution is always at least 1/WP_TL_BINS of the
 * run so far.  Samples whose Work/Stall is decided only when the profile is
 * written (held samples, sampler/store.h) are counted apart, by the class
 * of their time to the call's end (wp_tl_held_class), and split into Work
 * and Stall by the writer.
 *
 * The timeline is allocated when its thread registers (sampler.c) and is
 * then written by that thread only: by its SIGPROF handler, and by the
 * settling of held samples with SIGPROF blocked, so the two never overlap.
 * wp_tl_add_sig and wp_tl_widen_sig allocate nothing, take no lock and call
 * nothing: plain arithmetic on the preallocated bins, async-signal-safe.
 * wp_tl_sum_sig (the writers' sum over threads) is too.
 */
#ifndef WP_SAMPLER_TIMELINE_H
#define WP_SAMPLER_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define WP_TL_BINS 1024
/* Classes of a held sample's time to its call's end: below 1, 4, 16, 64
 * and 256 ms, and longer.  The writer splits each class by the share of
 * Stall among the thread's held samples of the same class. */
#define WP_TL_HELD 6
/* The first bin's width, in sampling periods: a few samples per bin. */
#define WP_TL_FIRST_PERIODS 4

struct wp_tl_bin {
    uint32_t w[3];              /* Not-in-MPI, MPI-Work, MPI-Stall (format/format.h order) */
    uint32_t held[WP_TL_HELD];  /* held samples, by class of time to the call's end */
    uint32_t vote_n;            /* the vote's margin, 0: no candidate */
    uint64_t vote;              /* the candidate stack id (wp_tl_stack_id) */
};

struct wp_timeline {
    uint64_t t0_ns;    /* bin 0 starts here */
    uint64_t width_ns; /* a bin's width, a power-of-two multiple of the first */
    uint32_t nbins;    /* bins in use: the last one a sample reached, plus one */
    uint32_t merges;   /* how often the width doubled */
    struct wp_tl_bin bin[WP_TL_BINS];
};

/* Empty the timeline, with bins of width_ns from t0_ns. */
void wp_tl_init(struct wp_timeline *t, uint64_t t0_ns, uint64_t width_ns);

/* The class of a held sample's time to its call's end (ns). */
int wp_tl_held_class(uint64_t d_ns);

/* The id of a stack: a hash of the MPI function and the frames. */
uint64_t wp_tl_stack_id(int fn, const uintptr_t *ips, int n);

/* Add weight w of a sample taken at at_ns (CLOCK_MONOTONIC) in state (0..2),
 * or held (state -1 - class).  A Stall or held sample votes for stack (0:
 * no vote).  Async-signal-safe. */
void wp_tl_add_sig(struct wp_timeline *t, uint64_t at_ns, int state, uint64_t w, uint64_t stack);

/* Merge pairs of bins until the width is at least width_ns.
 * Async-signal-safe. */
void wp_tl_widen_sig(struct wp_timeline *t, uint64_t width_ns);

/* One weighted step of the majority vote. */
void wp_tl_vote(uint64_t *cand, uint32_t *n, uint64_t id, uint64_t w);

/* Add src into dst (whose width must be at least src's and a power-of-two
 * multiple of it, with the same origin), turning src's held samples of
 * class c into Stall in the proportion stall[c] / all[c] (rounded per bin;
 * all[c] 0: MPI-Work), the rest into MPI-Work.  Votes are combined.
 * Async-signal-safe. */
void wp_tl_sum_sig(struct wp_timeline *dst, const struct wp_timeline *src, const uint64_t stall[WP_TL_HELD],
                   const uint64_t all[WP_TL_HELD]);

#endif
