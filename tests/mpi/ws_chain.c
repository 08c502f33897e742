/* tests/mpi/ws_chain.c — a chain of late senders on 4 ranks, for the delay
 * costs of t_ws_chain.sh.  Each of ITER iterations: rank 0 sends to rank 1
 * at once; rank 1 receives, computes DELAY seconds longer in late_work()
 * and sends to rank 2; rank 2 receives (it waits for rank 1: a direct
 * wait), computes RELAY seconds in relay_work() and sends to rank 3; rank 3
 * receives (it waits for rank 2, which was late mostly because it waited
 * for rank 1: a propagated wait, plus RELAY that rank 2 caused directly).
 * After the loop rank 3 computes 0.05 s in tail_work() (TAIL), then all
 * ranks meet in the MPI_Gather that collects the times.
 *
 * Every rank keeps its calls' entry and exit times (CLOCK_MONOTONIC, one
 * clock on one machine) and rank 0 prints the truth by the definitions of
 * match/exchange.c: per iteration k, W2 = rank 1's send entry - rank 2's
 * receive entry and W3 = rank 2's send entry - rank 3's receive entry (each
 * at least 0, at most the receive's duration); rank 3's propagated part
 * P = min(W3, W2).  Rank 1's short-term cost is the sum of W2, its
 * long-term cost the sum of P; rank 2's short-term cost the sum of W3 - P.
 *   truth short1=S long1=L short2=D
 * Usage: ws_chain [DELAY [RELAY [ITER]]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WP_TEST_COMPUTE
#include "clock.h"

#define MAXIT 64

static volatile int late_calls;
__attribute__((noinline)) static void late_work(double sec)
{
    compute(sec);
    /* Not a tail call, so its frame stays on the stack; and not the same
     * code as the other function, so the two are not folded into one. */
    late_calls++;
}

static volatile int relay_calls;
__attribute__((noinline)) static void relay_work(double sec)
{
    compute(sec);
    /* Not a tail call, so its frame stays on the stack; and not the same
     * code as the other function, so the two are not folded into one. */
    relay_calls++;
}

/* Rank 3's work after its last receive, so that it is the last to enter
 * the MPI_Gather at the end by TAIL seconds: rank 0, which waits there,
 * then waits for rank 3.  Without it, ranks 2 and 3 enter it within
 * microseconds of each other, and a rank 2 descheduled after its last
 * send (4 ranks on 2 cores) made rank 0's whole wait a cost of rank 2's
 * relay_work (1.32 s where the truth was 0.29 s, once in a CI run). */
#define TAIL 0.05
static volatile int tail_calls;
__attribute__((noinline)) static void tail_work(double sec)
{
    compute(sec);
    tail_calls++;
}

static double clip(double w, double dur)
{
    return w < 0 ? 0 : w > dur ? dur : w;
}

int main(int argc, char **argv)
{
    double delay = argc > 1 ? atof(argv[1]) : 0.1;
    double relay = argc > 2 ? atof(argv[2]) : 0.03;
    int iter = argc > 3 ? atoi(argv[3]) : 10;
    if (iter > MAXIT)
        iter = MAXIT;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0)
            fprintf(stderr, "ws_chain: needs 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Per iteration: this rank's receive entry and exit, its send entry. */
    double t[MAXIT][3] = {{0}};
    int msg = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < iter; k++) {
        if (rank > 0) {
            t[k][0] = now();
            MPI_Recv(&msg, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t[k][1] = now();
        }
        if (rank == 1)
            late_work(delay);
        if (rank == 2)
            relay_work(relay);
        if (rank < 3) {
            t[k][2] = now();
            MPI_Send(&msg, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 3)
        tail_work(TAIL);
    double all[4][MAXIT][3];
    MPI_Gather(t, MAXIT * 3, MPI_DOUBLE, all, MAXIT * 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double s1 = 0, l1 = 0, s2 = 0;
        for (int k = 0; k < iter; k++) {
            double w2 = clip(all[1][k][2] - all[2][k][0], all[2][k][1] - all[2][k][0]);
            double w3 = clip(all[2][k][2] - all[3][k][0], all[3][k][1] - all[3][k][0]);
            double p = w3 < w2 ? w3 : w2;
            s1 += w2;
            l1 += p;
            s2 += w3 - p;
        }
        printf("truth short1=%.6f long1=%.6f short2=%.6f\n", s1, l1, s2);
    }
    MPI_Finalize();
    return 0;
}
