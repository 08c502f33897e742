/* ws_mix: blocking sends mixed with other sends on the same channel, for
 * the numbering of blocking sends after their call (match/numbering.h,
 * wp_mlast): rank 1 sends N messages to rank 0, message i by
 *   i % 6 == 0, 1, 3: MPI_Send on tag 1
 *   i % 6 == 2:       MPI_Isend on tag 1, then MPI_Wait
 *   i % 6 == 4:       MPI_Send on tag 2 (another channel)
 *   i % 6 == 5:       MPI_Start of a persistent send on tag 1, MPI_Wait
 * and rank 0 receives each with MPI_Recv on its tag, checking that the
 * payload is i.  Both ranks number every message of both channels alike
 * only if the sends' numbers are right, whichever call sent them.
 *
 *   ws_mix [N, default 6000]
 *
 * Prints "truth rank=R messages=N" on each rank after the checks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 1 ? atol(argv[1]) : 6000;
    if (size != 2 || n < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 ws_mix [N]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long v = 0;
    MPI_Request pr;
    MPI_Send_init(&v, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD, &pr);
    for (long i = 0; i < n; i++) {
        int tag = i % 6 == 4 ? 2 : 1;
        if (rank == 1) {
            v = i;
            MPI_Request r;
            switch (i % 6) {
            case 2:
                MPI_Isend(&v, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
                break;
            case 5:
                MPI_Start(&pr);
                MPI_Wait(&pr, MPI_STATUS_IGNORE);
                break;
            default:
                MPI_Send(&v, 1, MPI_LONG, 0, tag, MPI_COMM_WORLD);
            }
        } else {
            long got = -1;
            MPI_Recv(&got, 1, MPI_LONG, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (got != i) {
                fprintf(stderr, "ws_mix: message %ld carried %ld\n", i, got);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    MPI_Request_free(&pr);
    printf("truth rank=%d messages=%ld\n", rank, n);
    MPI_Finalize();
    return 0;
}
