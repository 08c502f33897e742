/* sampler/ctr_split.h — counters read at MPI entry and exit
 * (WAITPROF_COUNTERS_SPLIT=1), so that what a thread counted outside and
 * inside MPI is exact rather than sampled.
 *
 * Contract:
 * - wp_ctr_split is set by the sampler's start (sampler.c) when the split
 *   was asked for, counters are kept (sampler/counters.h) and the wrappers
 *   are full (not WAITPROF_LEAN); it is cleared by wp_sampler_stop_sig()
 *   before the counter groups are closed.  The wrappers (wrap/wrap.h) test
 *   it at the outermost MPI call's entry and exit and then call
 *   wp_ctr_split_read().
 * - wp_ctr_split_read(in_mpi) (normal context, a wrapper of a sampled
 *   thread) reads the calling thread's counters and adds the deltas since
 *   its previous read (the split keeps a baseline of its own, so the
 *   samples still take every count since the previous sample to their
 *   call paths) to its store's split[in_mpi ? 1 : 0]: at entry the
 *   stretch just ended was outside MPI (in_mpi 0), at exit inside the call
 *   (in_mpi 1).  It marks the thread's slot ctr_busy meanwhile: a SIGPROF
 *   that comes then reads no counter (its sample carries zero deltas and
 *   its counts go to the next sample), so the two never interleave on the
 *   thread's previous counts; and wp_sampler_stop_sig() waits for the mark
 *   to clear before it closes the groups.
 * - The SIGPROF handler adds the deltas each of its reads takes to the
 *   same split (wp_ctr_split_abs_sig, against the same baseline), by the
 *   thread's state at the signal,
 *   so every count the thread's group makes lands in exactly one of the two
 *   sums, from the thread's registration to the end of sampling (pauses and
 *   unselected stretches included: the split is of the whole run).
 * - The sums are written to rank.R.meta as counters_split= (profile/partial.c).
 * Cost: one read of the group per MPI entry and exit (a read() system call
 * with perf_event), measured in doc/performance.md.
 */
#ifndef WP_SAMPLER_CTR_SPLIT_H
#define WP_SAMPLER_CTR_SPLIT_H

#include <stdint.h>

extern int wp_ctr_split;

void wp_ctr_split_read(int in_mpi);

/* The handler's part: the thread's counts as they stand (abs, from
 * wp_ctr_read_abs_sig) against the split's own baseline, into
 * slot->store->split[in_mpi].  Async-signal-safe (plain arithmetic on the
 * thread's own memory). */
struct wp_slot;
void wp_ctr_split_abs_sig(struct wp_slot *slot, int in_mpi, const uint64_t *abs);

#endif
