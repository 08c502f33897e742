/* state/mpiwait.c — waiting for waitprof's own requests without holding a
 * core (state/mpiwait.h). */
#include <sched.h>

#include "state/mpiwait.h"

void wp_poll_yield(void)
{
    sched_yield();
}

int wp_wait_yield(MPI_Request *req)
{
    int done = 0, rc;
    while ((rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done)
        wp_poll_yield();
    return rc;
}

int wp_waitall_yield(int n, MPI_Request *reqs)
{
    int first = MPI_SUCCESS;
    /* One request at a time (MPI_Test, not MPI_Testall: GCC takes MPICH's
     * MPI_STATUSES_IGNORE for an empty array).  Testing one request
     * progresses the others too, so the waits overlap. */
    for (int i = 0; i < n; i++) {
        int rc = wp_wait_yield(&reqs[i]);
        if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
            first = rc;
    }
    return first;
}
