/* tests/mpi/greq.h — the callbacks of a generalized request that is done
 * when the program says so (MPI_Grequest_complete), for the tests that
 * start one (reqkinds.c, ws_stale.c).  The query reports 7 MPI_INTs and
 * no source or tag; greq_nquery and greq_nfree count the calls, so that a
 * test can compare them with and without waitprof. */
#ifndef WP_TEST_GREQ_H
#define WP_TEST_GREQ_H

#include <mpi.h>

static int greq_nquery, greq_nfree;

static int greq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    greq_nquery++;
    MPI_Status_set_elements(st, MPI_INT, 7);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int greq_free(void *extra)
{
    (void)extra;
    greq_nfree++;
    return MPI_SUCCESS;
}
static int greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

#endif
