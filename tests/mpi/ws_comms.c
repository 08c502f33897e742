/* ws_comms: PERSISTENT wait states on communicators the program created,
 * for checking that matched instances number them alike on every member
 * (doc/design.md, "Matched instances": a new communicator's id is a hash of
 * its parent's id and its members) and measure their waits
 * (t_ws_comms.sh).
 *
 *   mpirun -np 4 ws_comms split|dup [DELAY seconds, default 0.1] [ITER, default 10]
 *
 *   split  MPI_Comm_split into the even and the odd ranks, each ordered
 *          backwards (key -rank): in {0, 2} world rank 2 is rank 0, in
 *          {1, 3} world rank 3 is.  Per iteration the communicator's rank 1
 *          (world 0 and 1) computes DELAY (the odd one 1.5 DELAY) before an
 *          MPI_Allreduce on it, then DELAY again before it sends to its
 *          rank 0 (MPI_Send, received by MPI_Recv on world ranks 2 and 3).
 *   dup    d1 = MPI_Comm_dup(MPI_COMM_WORLD), d2 = MPI_Comm_dup(d1).  Per
 *          iteration rank 1 computes DELAY and sends to rank 0 on d2, then
 *          computes DELAY again before an MPI_Allreduce on d1.
 *
 * Every iteration begins with an MPI_Barrier on MPI_COMM_WORLD (a function
 * not checked), so one iteration's delay does not shift into the next.
 * The late ranks compute (a CPU-bound loop) rather than sleep.
 *
 * Truth, from CLOCK_MONOTONIC timestamps, which all ranks of one machine
 * share: a receive waits max(0, send entry - receive entry), the send
 * entry travelling in the message; an MPI_Allreduce waits the last entry of
 * its communicator's members minus its own.  After the measured loop, and
 * after freeing the communicators (MPI_Comm_free, or MPI_Comm_disconnect
 * with WS_FREE=disconnect, reduces their last collective batch),
 * MPI_Gather brings every rank's figures to rank 0,
 * which prints for each rank the pattern applies to
 *   truth rank=R pattern=P function=F wait=S
 * with R the rank in MPI_COMM_WORLD. */
/* clock_gettime and CLOCK_MONOTONIC are POSIX, not C11. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WP_TEST_COMPUTE
#include "clock.h"

#define TAG 9
#define COUNT 8

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    int split = strcmp(mode, "split") == 0;
    double delay = argc > 2 ? atof(argv[2]) : 0.1;
    int iter = argc > 3 ? atoi(argv[3]) : 10;
    if ((!split && strcmp(mode, "dup") != 0) || size != 4 || !(delay >= 0) || iter < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 4 ws_comms split|dup [DELAY] [ITER]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* The communicators: red for the collective, p2p for the messages. */
    MPI_Comm red, p2p, d1 = MPI_COMM_NULL;
    if (split) {
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &red);
        p2p = red;
    } else {
        MPI_Comm_dup(MPI_COMM_WORLD, &d1);
        MPI_Comm_dup(d1, &p2p);
        red = d1;
    }
    int crank;
    MPI_Comm_rank(p2p, &crank);
    /* The late member: the split communicators' rank 1, or world rank 1. */
    int late = split ? crank == 1 : rank == 1;
    double lateness = split && rank % 2 ? 1.5 * delay : delay;

    /* Per rank: [0] the receives' summed wait (receivers only), then the
     * MPI_Allreduce entry time of every iteration. */
    double *mine = calloc((size_t)iter + 1, sizeof *mine);
    double *all = rank == 0 ? calloc((size_t)size * (iter + 1), sizeof *all) : NULL;
    if (!mine || (rank == 0 && !all))
        MPI_Abort(MPI_COMM_WORLD, 3);
    double in[COUNT], out[COUNT];
    for (int k = 0; k < COUNT; k++)
        in[k] = rank + k;

    for (int it = 0; it < iter; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (split) {
            if (late)
                compute(lateness);
            mine[1 + it] = now();
            MPI_Allreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, red);
        }
        /* The late sender: the p2p communicator's rank 1 to its rank 0. */
        if (late) {
            compute(delay);
            double t = now(); /* travels in the message */
            MPI_Send(&t, 1, MPI_DOUBLE, 0, TAG, p2p);
        } else if (crank == 0) {
            double ts, t0 = now();
            MPI_Recv(&ts, 1, MPI_DOUBLE, 1, TAG, p2p, MPI_STATUS_IGNORE);
            if (ts > t0)
                mine[0] += ts - t0;
        }
        if (!split) {
            if (late)
                compute(delay);
            mine[1 + it] = now();
            MPI_Allreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, red);
        }
    }
    const char *how = getenv("WS_FREE");
    int (*release)(MPI_Comm *) = how && strcmp(how, "disconnect") == 0 ? MPI_Comm_disconnect : MPI_Comm_free;
    if (split) {
        release(&red);
    } else {
        release(&p2p);
        release(&d1);
    }

    MPI_Gather(mine, iter + 1, MPI_DOUBLE, all, iter + 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
#define AT(r, i) all[(size_t)(r) * (iter + 1) + (i)]
        for (int r = 0; r < size; r++) {
            /* Receivers: in split mode the communicators' rank 0 (world 2
             * and 3), in dup mode world rank 0. */
            if (split ? r >= 2 : r == 0)
                printf("truth rank=%d pattern=late_sender function=MPI_Recv wait=%.6f\n", r, AT(r, 0));
            double w = 0;
            for (int i = 1; i <= iter; i++) {
                double last = 0;
                for (int q = 0; q < size; q++)
                    if ((!split || q % 2 == r % 2) && AT(q, i) > last)
                        last = AT(q, i);
                w += last - AT(r, i);
            }
            printf("truth rank=%d pattern=wait_nxn function=MPI_Allreduce wait=%.6f\n", r, w);
        }
#undef AT
        fflush(stdout);
    }
    free(all);
    free(mine);
    MPI_Finalize();
    return 0;
}
