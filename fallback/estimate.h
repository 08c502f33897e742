/* fallback/estimate.h — wait states by the minimum-duration method (seed 000).
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

enum wp_pattern { WP_PAT_NONE, WP_PAT_LATE_SENDER, WP_PAT_LATE_RECEIVER, WP_PAT_NXN, WP_PAT_BARRIER,
                  WP_PAT_LATE_BCAST, WP_PAT_EARLY_REDUCE, WP_PAT_COUNT };
extern const char *const wp_pattern_names[WP_PAT_COUNT];

/* The pattern of a category (function, size class, role), and whether its
 * minimum is the global one (collectives) or the process-local one.
 * Defined in fallback/stats.c with the other pure parts. */
int wp_pattern_of(int fn, int sclass, int role, int *global);

int wp_estimate_finalize(MPI_Comm comm, int rank, int size, const char *dir, int have_dir, int write_rank,
                         double run_seconds, double threshold);

#endif
