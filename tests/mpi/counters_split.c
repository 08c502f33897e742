/* tests/mpi/counters_split.c — the CPU time each rank spends outside and
 * inside MPI, as the program itself measures it, for the exact split of
 * the counters (WAITPROF_COUNTERS_SPLIT, t_counters_split.sh).
 *
 * usage: counters_split [N]
 * N rounds (default 200): rank 1 computes 3 ms of its own CPU time in
 * split_work() and sends a message to rank 0, which waits for it in
 * MPI_Recv and then computes 1 ms; both then meet in MPI_Barrier every 20
 * rounds.  Every MPI call is bracketed by reads of the thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID); at the end each rank prints
 *   truth rank=R outside_ns=O inside_ns=I calls=C
 * where O is its CPU time from MPI_Init's return to MPI_Finalize's call
 * outside those brackets and I inside them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline, noclone)) static double split_work(double sec)
{
    double t0 = cpu_now();
    volatile double x = 0;
    while (cpu_now() - t0 < sec)
        for (int i = 0; i < 2000; i++)
            x = x + i * 1e-9;
    return x;
}

static double inside;
static long calls;

#define IN_MPI(call)                  \
    do {                              \
        double c0_ = cpu_now();       \
        call;                         \
        inside += cpu_now() - c0_;    \
        calls++;                      \
    } while (0)

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    MPI_Init(&argc, &argv);
    double start = cpu_now();
    int rank, token = 0;
    IN_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    for (int i = 0; i < rounds; i++) {
        if (rank == 1) {
            split_work(0.003);
            IN_MPI(MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
        } else if (rank == 0) {
            IN_MPI(MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            split_work(0.001);
        }
        if (i % 20 == 19)
            IN_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    double all = cpu_now() - start;
    printf("truth rank=%d outside_ns=%.0f inside_ns=%.0f calls=%ld\n", rank, (all - inside) * 1e9, inside * 1e9,
           calls);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
