/* state/mpiwait.h — how waitprof waits for its own MPI requests.
 *
 * Contract: wp_wait_yield and wp_waitall_yield complete requests of
 * waitprof's own (on its duplicate communicator, or its collective batches'
 * reductions at MPI_Finalize) by testing them and calling sched_yield
 * between tests, never by a blocking call.  A waitprof collective starts
 * only when the last rank reaches it; where ranks outnumber cores, a rank
 * that waits by polling (MPICH's blocking calls poll without yielding)
 * holds a core that the ranks it waits for need, and every collective
 * step then costs the scheduler's time slices (doc/performance.md,
 * "Start-up and finalize").  Where a core is free, sched_yield returns at
 * once and the loop costs what polling costs.  Never for the application's
 * requests, and not in a signal handler.
 */
#ifndef WP_STATE_MPIWAIT_H
#define WP_STATE_MPIWAIT_H

#include <mpi.h>

/* Complete *req; returns MPI_Test's error code, MPI_SUCCESS when done. */
int wp_wait_yield(MPI_Request *req);

/* Complete the n requests in reqs (MPI_REQUEST_NULL allowed); returns
 * MPI_SUCCESS, or the first error code, after every request completed or
 * failed. */
int wp_waitall_yield(int n, MPI_Request *reqs);

/* Between two polls of a loop of waitprof's own nonblocking calls that
 * found nothing to do: give the core away (see the contract). */
void wp_poll_yield(void);

#endif
