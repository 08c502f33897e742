/* report/calls.h — per-MPI-function statistics and message traffic of one
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
 * - wp_traffic_send()/wp_traffic_recv() are called by the generated C and
 *   Fortran wrappers of the point-to-point functions after a successful
 *   call (a Fortran wildcard receive leaves the peer unknown): bytes
 *   and requests sent or received per MPI function, and with
 *   WAITPROF_MATRIX=1 the row of this rank in the transfer matrices
 *   SIZE(i,j) (bytes sent from i to j), REQUEST(i,j) (send calls from i to
 *   j) and TIME(i,j) (time rank i spent in blocking receives from j).
 *   Receive sizes are the posted sizes (count x datatype), not the received
 *   ones: asking the status would cost a call per receive.
 * - wp_calls_write() writes rank.R.calls ("# waitprof-calls 1", TSV) and,
 *   when the matrix is on, rank.R.matrix ("# waitprof-matrix 1").  Normal
 *   context, after the program's last MPI call.
 */
#ifndef WP_REPORT_CALLS_H
#define WP_REPORT_CALLS_H

#include <mpi.h>
#include <stdint.h>

/* Set up (normal context, from the MPI_Init hook): matrix on or off. */
void wp_calls_init(int rank, int size, int matrix);

void wp_traffic_send(int fn, uint64_t bytes, int dest, MPI_Comm comm);
void wp_traffic_recv(int fn, uint64_t bytes, int source, MPI_Comm comm, uint64_t ticks);

int wp_calls_write(const char *dir, int rank);

#endif
