/* fallback/estimate.h — wait states by the minimum-duration method (Mao et al.,
 * "Catching Idlers with Ease", EuroMPI 2014; doc/design.md, "Wait states").
 *
 * Contract: wp_estimate_finalize() is collective over comm and runs at
 * MPI_Finalize after sampling stopped.  It merges the threads' statistics
 * (fallback/stats.h), takes the process-local minimum per (function, size
 * class, role) for point-to-point patterns and the global minimum over all
 * ranks (one reduction) for collective ones, and estimates per category
 *     wait = sum of durations - calls x minimum.
 * It writes rank.R.waits (TSV, "# waitprof-waits 1") on every rank that has
 * a directory and write_rank set (the ranks WAITPROF_RANKS selects), and,
 * after reducing the rows of all ranks along a binomial tree (O(log P)
 * steps, O(distinct call sites) data per message, fallback/wsreduce.h), at
 * rank 0 waitstates.txt: the call sites whose wait is at
 * least threshold of the run's time summed over ranks, with min/avg/max over
 * ranks, and waitstates.tsv: the same figures for every call site, for
 * scripts ("# waitprof-waitstates 1").  Patterns: late_sender, late_receiver, wait_nxn, wait_barrier,
 * late_broadcast, early_reduce, none.
 */
#ifndef WP_FALLBACK_ESTIMATE_H
#define WP_FALLBACK_ESTIMATE_H

#include <mpi.h>
#include <stdint.h>

#include "format/format.h"

/* The pattern of a category (function, size class, role), and whether its
 * minimum is the global one (collectives) or the process-local one.
 * Defined in fallback/stats.c with the other pure parts. */
int wp_pattern_of(int fn, int sclass, int role, int *global);

int wp_estimate_finalize(MPI_Comm comm, int rank, int size, const char *dir, int have_dir, int write_rank,
                         double run_seconds, double threshold);

/* The first half of wp_estimate_finalize(), which calls it if nobody did:
 * the minima, with the one reduction over comm (collective; every rank,
 * sampled or not), and the sum of the ranks' run_seconds beside it (the
 * same value wp_estimate_finalize gets).  Called before the profile is
 * written, so that the held samples of collective calls are classified
 * against the global minimum.  Returns 0, or -1 when the rank had no
 * memory for its table. */
int wp_estimate_minima(MPI_Comm comm, int rank, double run_seconds);
/* Its first part alone: the table, and the two reductions started, not
 * waited for, so that other collectives of waitprof's (the matched
 * instances' finalize step) can run while they complete; every rank then
 * calls wp_estimate_minima, which waits for them.  Collective, like it. */
void wp_estimate_minima_start(MPI_Comm comm, int rank, double run_seconds);

/* After wp_estimate_minima() and the matched instances' finalize step,
 * before the profile is written: for every category with a wait pattern,
 * which of its held samples wait (fallback/estimate.c says how: by the
 * share of time it waited, by its matched calls where there are some,
 * else by this estimate).  Normal context; reads the rank's stores, which
 * no handler writes any more. */
void wp_estimate_held_prepare(void);

/* The minimum (ns) that decides a held sample of a call of category (fn,
 * sclass, role) (sampler/store.h): a sample that was taken more than this
 * before the call's end is MPI-Stall.  After wp_estimate_minima() the
 * global minimum over all ranks; before it (an abnormal end) the
 * process-local one from the threads' tables.  UINT64_MAX when unknown.
 * Reads memory only: safe in a termination handler. */
uint64_t wp_estimate_held_min_ns(int fn, int sclass, int role);

/* What the profile writers (profile/profile.c, profile/partial.c) ask:
 * - the state a store entry stands for, a held one decided by its
 *   category's share (wp_estimate_held_prepare) where it has one, else by
 *   the minimum above (sampler/store.h, wp_entry_state), and the part of
 *   its weight that is MPI-Stall;
 * - for the samples of a call still in progress at an abnormal end, whose
 *   category is not known, their weight and in *stall the weight of those
 *   that waited by the process-local minimum of the call's function, any
 *   size, role and site (wp_pending_split); none without a minimum.
 * Memory reads and static arrays only: safe in a termination handler. */
struct wp_stack_entry;
struct wp_pending;
int wp_estimate_entry_state(const struct wp_stack_entry *e);
/* Of weight (the entry's samples, or a counter's sum over them), the part
 * that is MPI-Stall: all or none, except for a held entry in the bucket
 * that divides its category's samples, whose part makes the share exact;
 * wp_estimate_entry_state() gives that entry the state of the larger
 * part.  Memory reads only. */
uint64_t wp_estimate_entry_stall(const struct wp_stack_entry *e, uint64_t weight);
uint64_t wp_estimate_pending_split(const struct wp_pending *p, uint64_t now, uint64_t *stall);
/* The same for counter c of nctr: the counter deltas of those samples. */
uint64_t wp_estimate_pending_split_ctr(const struct wp_pending *p, uint64_t now, uint32_t nctr, int c,
                                       uint64_t *stall);
/* The minimum (ns) wp_estimate_pending_split decides p's samples by,
 * UINT64_MAX when there is none. */
uint64_t wp_estimate_pending_min_ns(const struct wp_pending *p);

#endif
