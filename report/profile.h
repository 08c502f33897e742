/* report/profile.h — the symbolized outputs written at the end of a run.
 *
 * Contract (normal context, after wp_sampler_stop()):
 * - wp_profile_build() turns every thread's store into folded lines, the MPI
 *   state as the root frame ("Not-in-MPI", "MPI-Work", "MPI-Stall"), sorted
 *   and merged.  Held samples of collective calls are classified here
 *   (fallback/estimate.h), and the samples of calls still in progress (an
 *   abnormal end) are included, not dropped (sampler/store.h,
 *   wp_pending_split).
 * - wp_profile_write_rank() writes rank.R.folded (via a temporary file and a
 *   rename, so a reader never sees half a file).
 * - wp_profile_merge() is collective over comm and is called after every
 *   rank wrote its per-rank files: after a barrier rank 0 builds every
 *   cross-rank output from those files with the code `waitprof report DIR`
 *   uses (report/report.h) and, unless quiet, prints the report's first
 *   screen on stderr.
 */
#ifndef WP_REPORT_PROFILE_H
#define WP_REPORT_PROFILE_H

#include <mpi.h>

#include "report/folded.h"

int wp_profile_build(struct wp_folded *out);
int wp_profile_write_rank(const char *dir, int rank, const struct wp_folded *f);
int wp_profile_write_file(const char *path, const struct wp_folded *f);
int wp_profile_merge(MPI_Comm comm, int rank, const char *dir, int have_dir, int quiet);

#endif
