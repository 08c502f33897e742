/* tests/mpi/partial_names.c — computes in one named function until killed,
 * for t_partial_names.sh (a partial profile named afterwards).
 *
 *   partial_names run     every rank computes in partial_crunch() with an
 *                         MPI_Allreduce every ~20 ms, until killed; prints
 *                         "ready rank=R" once computing has started
 *   partial_names SECS    the same for SECS seconds, then MPI_Finalize (a
 *                         complete run, whose names the partial one must
 *                         agree with)
 * Built as a position-independent executable (-fPIE -pie): the partial
 * writer's offsets are from its load address. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Global and never inlined: the frame the test looks for by name. */
__attribute__((noinline)) double partial_crunch(double secs)
{
    double x = 1.0, end = now() + secs;
    while (now() < end)
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double secs = argc > 1 && strcmp(argv[1], "run") != 0 ? atof(argv[1]) : -1, start = now(), sink = 0;
    printf("ready rank=%d\n", rank);
    fflush(stdout);
    /* The ranks stop together: each says whether its time is up in the
     * same MPI_Allreduce, so none leaves the loop while another still
     * waits in it. */
    for (;;) {
        double x[2] = {partial_crunch(0.02), secs >= 0 && now() - start >= secs}, sum[2];
        MPI_Allreduce(x, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        sink += sum[0];
        if (sum[1] > 0)
            break;
    }
    MPI_Finalize();
    return sink == 0.5; /* keeps the computation */
}
