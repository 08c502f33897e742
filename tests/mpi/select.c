/* tests/mpi/select.c — programs for rank selection, time selection and the
 * memory budget (tests/mpi/t_select.sh, t_window.sh, t_budget.sh).
 *
 *   select barrier D ITERS LATE   each iteration rank LATE computes D seconds,
 *                                 then all ranks meet in MPI_Barrier: every
 *                                 other rank waits about D there, LATE about
 *                                 nothing, so the global minimum comes from
 *                                 LATE.  Prints "truth rank=R pattern=
 *                                 wait_barrier function=MPI_Barrier wait=S".
 *   select phases A B C           computes A s, MPI_Pcontrol(0), B s,
 *                                 MPI_Pcontrol(1), C s; prints the measured
 *                                 phase times ("phase rank=R a=.. b=.. c=..").
 *   select deep SECONDS           computes in call paths of 12 frames drawn
 *                                 from 8 functions (8^12 distinct stacks) for
 *                                 SECONDS; prints "rss rank=R init_hwm_kb=..
 *                                 end_hwm_kb=.. run_s=.." where the run time
 *                                 is from MPI_Init's return to the end.
 * Compute is a busy loop on the monotonic clock, so the wall time is exact
 * whatever the scheduler does.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

static volatile double sink;

static void compute(double s)
{
    double end = now() + s;
    while (now() < end)
        for (int i = 0; i < 1000; i++)
            sink += i * 0.5;
}

static long hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

/* Eight functions that call each other by the digits of a path: every path
 * is a distinct stack. */
static void step(unsigned long path, int depth);
#define WP_STEP(k)                                                                                                   \
    __attribute__((noinline)) static void f##k(unsigned long path, int depth)                                        \
    {                                                                                                                \
        step(path, depth);                                                                                           \
        __asm__ volatile("" ::: "memory");                                                                           \
    }
WP_STEP(0) WP_STEP(1) WP_STEP(2) WP_STEP(3) WP_STEP(4) WP_STEP(5) WP_STEP(6) WP_STEP(7)
static void (*const fns[8])(unsigned long, int) = {f0, f1, f2, f3, f4, f5, f6, f7};

__attribute__((noinline)) static void step(unsigned long path, int depth)
{
    if (depth == 0) {
        compute(0.0002);
        return;
    }
    fns[path & 7](path >> 3, depth - 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double t0 = now();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "barrier") == 0 && argc == 5) {
        double d = atof(argv[2]);
        int iters = atoi(argv[3]), late = atoi(argv[4]);
        /* Every barrier call is timed, so measured_in_barrier bounds the
         * estimate (sum of durations - calls x minimum). */
        double waited = now();
        MPI_Barrier(MPI_COMM_WORLD);
        waited = now() - waited;
        for (int i = 0; i < iters; i++) {
            if (rank == late)
                compute(d);
            double a = now();
            MPI_Barrier(MPI_COMM_WORLD);
            waited += now() - a;
        }
        /* The truth for the others: the time the late rank computed. */
        if (rank != late)
            printf("truth rank=%d pattern=wait_barrier function=MPI_Barrier wait=%.6f\n", rank, iters * d);
        printf("detail rank=%d measured_in_barrier=%.6f\n", rank, waited);
    } else if (strcmp(mode, "phases") == 0 && argc == 5) {
        double a = now();
        compute(atof(argv[2]));
        double b = now();
        MPI_Pcontrol(0);
        compute(atof(argv[3]));
        MPI_Pcontrol(1);
        double c = now();
        compute(atof(argv[4]));
        double e = now();
        printf("phase rank=%d start=%.6f a=%.6f b=%.6f c=%.6f\n", rank, a - t0, b - a, c - b, e - c);
    } else if (strcmp(mode, "deep") == 0 && argc == 3) {
        long init_hwm = hwm_kb();
        double end = now() + atof(argv[2]);
        unsigned long path = (unsigned long)rank * 7919;
        while (now() < end)
            step(path = path * 6364136223846793005ul + 1442695040888963407ul, 12);
        printf("rss rank=%d init_hwm_kb=%ld end_hwm_kb=%ld run_s=%.6f\n", rank, init_hwm, hwm_kb(), now() - t0);
    } else {
        if (rank == 0)
            fprintf(stderr, "usage: select barrier D ITERS LATE | phases A B C | deep SECONDS\n");
        MPI_Finalize();
        return 2;
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
