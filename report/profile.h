/* report/profile.h — the symbolized outputs written at the end of a run.
 *
 * Contract (normal context, after wp_sampler_stop()):
 * - wp_profile_build() turns every thread's store into folded lines, the MPI
 *   state as the root frame ("Not-in-MPI", "MPI-Work", "MPI-Stall"), sorted
 *   and merged.
 * - wp_profile_write_rank() writes rank.R.folded (via a temporary file and a
 *   rename, so a reader never sees half a file).
 * - wp_profile_merge() is collective over comm: rank 0 receives every rank's
 *   lines and writes all.folded (the sum over ranks), all.svg (a flame graph,
 *   report/svg.h) and summary.txt (report/summary.h).
 */
#ifndef WP_REPORT_PROFILE_H
#define WP_REPORT_PROFILE_H

#include <mpi.h>

#include "report/folded.h"

int wp_profile_build(struct wp_folded *out);
int wp_profile_write_rank(const char *dir, int rank, const struct wp_folded *f);
int wp_profile_write_file(const char *path, const struct wp_folded *f);
int wp_profile_merge(MPI_Comm comm, int rank, int size, const struct wp_folded *mine, const char *dir,
                     int have_dir);

#endif
