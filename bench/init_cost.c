/* bench/init_cost.c — how long MPI_Init and MPI_Finalize take as the program
 * sees them, for bench/init_cost.sh to compare with and without waitprof.
 *
 * usage: init_cost [exchanges]      (default 200)
 *
 * Every rank reads CLOCK_MONOTONIC (one clock for all ranks of a node)
 * right before and right after MPI_Init and MPI_Finalize.  Between them it
 * does a little of what a real program does, so that waitprof has something
 * to write and match at the end: `exchanges` rounds of MPI_Sendrecv with
 * both neighbours of a ring and an 8-byte MPI_Allreduce every tenth round.
 * After MPI_Finalize each rank prints one line:
 *   init_cost rank=R size=P init_ms=... finalize_ms=... init_cpu_ms=...
 *             finalize_cpu_ms=... work_ms=... init_faults=... finalize_faults=...
 *             init_enter_ns=... init_exit_ns=... fin_enter_ns=... fin_exit_ns=...
 * (the cpu figures are the process's CPU time, all threads, during each
 * call: on a machine with fewer cores than ranks the wall time follows the
 * CPU time of all ranks together; the faults are the process's minor page
 * faults during each call)
 * (the stamps are CLOCK_MONOTONIC nanoseconds, so that the script can also
 * tell when the last rank left MPI_Init).  The script takes the largest
 * init_ms and finalize_ms over the ranks.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* CPU time of the whole process (all its threads). */
static long long cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Minor page faults of the process so far: on a machine where a first
 * write to a page is slow, they explain much of what a call's CPU time adds. */
static long minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

int main(int argc, char **argv)
{
    int exchanges = argc > 1 ? atoi(argv[1]) : 200;
    long p0 = minflt();
    long long c0 = cpu_ns(), i0 = now_ns();
    MPI_Init(&argc, &argv);
    long long i1 = now_ns(), c1 = cpu_ns();
    long p1 = minflt();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double out[8] = {0}, in[8], sum = 0, part;
    for (int k = 0; k < exchanges; k++) {
        out[0] = rank + k;
        MPI_Sendrecv(out, 8, MPI_DOUBLE, right, 1, in, 8, MPI_DOUBLE, left, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(out, 8, MPI_DOUBLE, left, 2, in, 8, MPI_DOUBLE, right, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (k % 10 == 0) {
            part = in[0];
            MPI_Allreduce(&part, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
    }
    long p2 = minflt();
    long long c2 = cpu_ns(), f0 = now_ns();
    MPI_Finalize();
    long long f1 = now_ns(), c3 = cpu_ns();
    long p3 = minflt();
    printf("init_cost rank=%d size=%d init_ms=%.3f finalize_ms=%.3f init_cpu_ms=%.3f finalize_cpu_ms=%.3f "
           "work_ms=%.3f init_faults=%ld finalize_faults=%ld init_enter_ns=%lld init_exit_ns=%lld "
           "fin_enter_ns=%lld fin_exit_ns=%lld check=%g\n",
           rank, size, (i1 - i0) * 1e-6, (f1 - f0) * 1e-6, (c1 - c0) * 1e-6, (c3 - c2) * 1e-6, (f0 - i1) * 1e-6,
           p1 - p0, p3 - p2, i0, i1, f0, f1, sum);
    return 0;
}
