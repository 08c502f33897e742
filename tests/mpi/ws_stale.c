/* tests/mpi/ws_stale.c — a followed receive completed by MPI_Test, whose
 * handle a generalized request then takes (2 ranks, ROUNDS rounds, default
 * 4), for t_ws_stale.sh.  Rank 1 sends ROUNDS messages; rank 0 receives
 * each with MPI_Irecv and MPI_Test, which leaves the receive's entry in
 * waitprof's matching table (a test's completion of a known-source
 * receive makes no record, match/numbering.c), then starts a generalized
 * request, completes it and waits for it.  Where MPI hands the request the
 * receive's handle (MPICH's requests share one pool) the wait must not be
 * taken for the receive's completion: MPI_Grequest_start's wrapper drops
 * the entry (wrap/mpi_functions.tbl, req=unknown).  Prints "info rank=0
 * reused=N", the rounds whose generalized request had the receive's
 * handle. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "greq.h"

int main(int argc, char **argv)
{
    int rank, rounds = argc > 1 ? atoi(argv[1]) : 4, reused = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < rounds; i++) {
        int v = i, flag = 0;
        if (rank == 1) {
            MPI_Send(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
        } else if (rank == 0) {
            MPI_Request r, g;
            MPI_Irecv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r);
            MPI_Request was = r;
            do
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            while (!flag);
            if (v != i)
                MPI_Abort(MPI_COMM_WORLD, 2);
            MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &g);
            reused += g == was;
            MPI_Grequest_complete(g);
            MPI_Wait(&g, MPI_STATUS_IGNORE);
        }
    }
    if (rank == 0)
        printf("info rank=0 reused=%d\n", reused);
    MPI_Finalize();
    return 0;
}
