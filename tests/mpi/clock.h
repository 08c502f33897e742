/* tests/mpi/clock.h — the clock of the test programs: now() is
 * CLOCK_MONOTONIC in seconds, the time base every rank of a one-machine
 * test shares, so truths computed from it compare across ranks.  With
 * WP_TEST_COMPUTE defined, also compute(sec): a CPU-bound loop for sec
 * seconds of wall time, noinline so that its samples land under its own
 * frame.  Included after <time.h>. */
#ifndef WP_TESTS_MPI_CLOCK_H
#define WP_TESTS_MPI_CLOCK_H

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#ifdef WP_TEST_COMPUTE
__attribute__((noinline)) static void compute(double sec)
{
    double t0 = now();
    volatile double x = 0;
    while (now() - t0 < sec)
        for (int i = 0; i < 1000; i++)
            x = x + i * 1e-9;
}
#endif

#endif
