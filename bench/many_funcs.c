/* bench/many_funcs.c — a program whose profile names many frames in a
 * large symbol table, for bench/finalize_symbols.sh: it calls `called` of
 * the generated functions (many_funcs.gen.c, which the script writes:
 * wpb_table[] of `total` functions, each a short loop) `rounds` times,
 * so that samples at 1000 Hz fall in most of them, then times
 * MPI_Finalize on every rank.
 *
 *   many_funcs CALLED ROUNDS WORK
 *
 * Prints one line per rank: "rank=R finalize_ms=F cpu_ms=C faults=N", the
 * call's wall time, the process's CPU time (all threads) and its minor
 * page faults during it. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

typedef void (*wpb_fn)(int);
extern wpb_fn wpb_table[];
extern const int wpb_total;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int called = argc > 1 ? atoi(argv[1]) : 400;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    int work = argc > 3 ? atoi(argv[3]) : 200000;
    /* Spread over the table, so that the frames lie across the whole
     * symbol table and its compilation unit. */
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < called; i++)
            wpb_table[(long)i * 7919 % wpb_total](work);
    MPI_Barrier(MPI_COMM_WORLD);
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    double t0 = now_ms();
    MPI_Finalize();
    double t1 = now_ms();
    getrusage(RUSAGE_SELF, &u1);
    double cpu = (u1.ru_utime.tv_sec - u0.ru_utime.tv_sec + u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) * 1e3 +
                 (u1.ru_utime.tv_usec - u0.ru_utime.tv_usec + u1.ru_stime.tv_usec - u0.ru_stime.tv_usec) * 1e-3;
    printf("rank=%d finalize_ms=%.1f cpu_ms=%.1f faults=%ld\n", rank, t1 - t0, cpu, u1.ru_minflt - u0.ru_minflt);
    return 0;
}
