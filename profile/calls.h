/* profile/calls.h — per-MPI-function statistics and message traffic of one
 * rank, for the cross-rank report (report/report.h).
 *
 * Contract:
 * - The per-function timing figures are not kept here: wp_calls_write()
 *   sums them from the estimator's categories (fallback/stats.h), which
 *   hold every recorded call (the calls that may wait): count, total,
 *   shortest, longest and second-longest call with the call's event number
 *   (the n-th call of that function on that thread, from 1), and the
 *   multi-resolution histogram.  So the recording path does that work once.
 *   Calls lost to a full category table are lost here too (the meta file
 *   counts them).
 * - Traffic per function and the matrix row come from the wrappers' counts
 *   (wrap/traffic.h).
 * - wp_calls_write() writes rank.R.calls ("# waitprof-calls 1", TSV) and,
 *   when the matrix is on, rank.R.matrix ("# waitprof-matrix 1").  Normal
 *   context, after the program's last MPI call.
 */
#ifndef WP_PROFILE_CALLS_H
#define WP_PROFILE_CALLS_H

#include <stdint.h>

int wp_calls_write(const char *dir, int rank);

#endif
