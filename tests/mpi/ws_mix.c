/* ws_mix: blocking sends mixed with other sends on the same channel, for
 * the numbering of blocking sends after their call (match/numbering.h,
 * wp_mlast, wp_mlast_take): rank 1 sends N messages to rank 0, message i
 * by
 *   i % 7 == 0, 2, 4: MPI_Send on tag 1
 *   i % 7 == 1:       MPI_Isend on tag 3, then MPI_Wait: a channel whose
 *                     slot in the sender's channel cache is tag 1's
 *                     (wp_match_slot's hash of peer 0 and the tag), so the
 *                     MPI_Send after it finds tag 1's slot taken
 *   i % 7 == 3:       MPI_Isend on tag 1, then MPI_Wait, then an MPI_Send
 *                     on tag 1 to MPI_PROC_NULL, which sends nothing:
 *                     the Isend ended the sender's last channel, whose
 *                     peer is then -1, MPICH's MPI_PROC_NULL
 *   i % 7 == 5:       MPI_Send on tag 2 (another channel)
 *   i % 7 == 6:       MPI_Start of a persistent send on tag 1, MPI_Wait
 * and rank 0 receives each with MPI_Recv on its tag, checking that the
 * payload is i.  Then both ranks duplicate MPI_COMM_WORLD, rank 1 sends
 * N / 10 messages by MPI_Send on tag 1 of the duplicate, both free it,
 * duplicate MPI_COMM_WORLD again (MPI may hand out the freed handle
 * again: the thread's last channel then names the new communicator by
 * the old one's handle) and do the same on it.  Both ranks number every
 * message of every channel alike only if the sends' numbers are right,
 * whichever call sent them.
 *
 *   ws_mix [N, default 6000]
 *
 * Prints "truth rank=R messages=N reused=0|1" on each rank after the
 * checks, reused=1 when the second duplicate had the first one's
 * handle. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Rank 0's receive of message i on tag of comm. */
static void recv_check(long i, int tag, MPI_Comm comm)
{
    long got = -1;
    MPI_Recv(&got, 1, MPI_LONG, 1, tag, comm, MPI_STATUS_IGNORE);
    if (got != i) {
        fprintf(stderr, "ws_mix: message %ld carried %ld\n", i, got);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

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
        int tag = i % 7 == 1 ? 3 : i % 7 == 5 ? 2 : 1;
        if (rank == 1) {
            v = i;
            MPI_Request r;
            int dest = 0;
            switch (i % 7) {
            case 6:
                MPI_Start(&pr);
                MPI_Wait(&pr, MPI_STATUS_IGNORE);
                break;
            case 1:
            case 3:
                MPI_Isend(&v, 1, MPI_LONG, 0, tag, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
                if (i % 7 == 1)
                    break;
                /* From the call site of the other MPI_Send, so that the
                 * wrappers' cache of its category holds this one's. */
                dest = MPI_PROC_NULL;
                /* fall through */
            default:
                MPI_Send(&v, 1, MPI_LONG, dest, tag, MPI_COMM_WORLD);
            }
        } else {
            recv_check(i, tag, MPI_COMM_WORLD);
        }
    }
    /* The same channel of two communicators in turn, the second possibly
     * under the first one's handle. */
    MPI_Comm c[2];
    for (int k = 0; k < 2; k++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &c[k]);
        for (long i = 0; i < n / 10; i++) {
            v = i;
            if (rank == 1)
                MPI_Send(&v, 1, MPI_LONG, 0, 1, c[k]);
            else
                recv_check(i, 1, c[k]);
        }
        /* Kept for the comparison below: MPI_Comm_free sets the handle to
         * MPI_COMM_NULL. */
        MPI_Comm kept = c[k];
        MPI_Comm_free(&c[k]);
        c[k] = kept;
    }
    MPI_Request_free(&pr);
    printf("truth rank=%d messages=%ld reused=%d\n", rank, n, c[0] == c[1]);
    MPI_Finalize();
    return 0;
}
