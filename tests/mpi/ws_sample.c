/* ws_sample: many messages with waits of varying size, for checking the
 * sampling error of matched instances (WAITPROF_MATCH): with one message in
 * 64 matched, the Late Sender wait waitprof scales up must lie within the
 * 95 % interval it states (rank.R.waits, ci_ns) of the truth.
 *
 *   ws_sample [N, default 10000] [STEP seconds, default 0.001] [RUN, default 1] [ramp]
 *
 * 2 ranks.  Before its i-th send, rank 1 sleeps 0, 1 or 2 STEP (a
 * fixed pseudo-random sequence, so every run waits alike; drawn once for
 * RUN consecutive messages, whose waits are then alike), or with ramp 0
 * before the first N / 2 messages and 2 STEP before the others (waits
 * that change with the message number, which thinned matched instances
 * must weigh right, match/types.h), and puts its
 * send-entry time into the message; rank 0 receives at one call site and
 * sums max(0, send entry - receive entry).  Prints
 *   truth rank=0 pattern=late_sender function=MPI_Recv wait=S
 *   info rank=0 calls=N mean=S sd=S late=K sd_core=S sd_block=S sd_block_core=S
 * the second with the mean and the standard deviation of the N waits, from
 * which the test tells how wide the interval of a sample should be; how
 * many waits were more than 1 ms longer than the delay injected (a rank
 * descheduled on a busy machine: their waits are real, both the truth and
 * waitprof see them, but they widen the spread), and the standard
 * deviation of the others: the spread of a sample that holds none of
 * those; and the standard deviation of the sums of aligned blocks of four
 * messages (i / 4 alike), with and without the blocks that hold a late
 * wait: the spread of a sample that takes blocks of four whole. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

/* Sleeping, not computing: on a busy 2-CPU machine a computing rank is
 * descheduled for whole time slices, which would add waits of several ms
 * to one message in a hundred and swamp the spread the test injects; a
 * sleeping one only wakes a little late. */
static void sleep_for(double sec)
{
    struct timespec ts = {(time_t)sec, (long)((sec - (double)(time_t)sec) * 1e9)};
    while (sec > 0 && nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 1 ? atol(argv[1]) : 10000;
    double step = argc > 2 ? atof(argv[2]) : 1e-3;
    long run = argc > 3 ? atol(argv[3]) : 1;
    int ramp = argc > 4 && strcmp(argv[4], "ramp") == 0;
    if (size != 2 || n < 1 || !(step >= 0) || run < 1 || (argc > 4 && !ramp)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 ws_sample [N] [STEP] [RUN] [ramp]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint32_t x = 12345;
    double sum = 0, sum2 = 0, core = 0, core2 = 0;
    long late = 0; /* waits more than 1 ms beyond the injected delay */
    /* Aligned blocks of four: the current one's sum and whether it holds
     * a late wait; over whole blocks, with and without those. */
    double bsum = 0, b1 = 0, b2 = 0, bc1 = 0, bc2 = 0;
    long nb = 0, nbc = 0;
    int blate = 0;
    double d = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < n; i++) {
        if (i % run == 0) {
            x = x * 1103515245u + 12345u;
            d = ((x >> 16) % 3) * step;
        }
        if (ramp)
            d = i >= n / 2 ? 2 * step : 0;
        if (rank == 1) {
            sleep_for(d);
            double t = now();
            MPI_Send(&t, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD);
        } else {
            double t0 = now(), ts;
            MPI_Recv(&ts, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double w = ts > t0 ? ts - t0 : 0;
            sum += w;
            sum2 += w * w;
            if (w > d + 1e-3) {
                late++;
                blate = 1;
            } else {
                core += w;
                core2 += w * w;
            }
            bsum += w;
            if (i % 4 == 3) {
                nb++, b1 += bsum, b2 += bsum * bsum;
                if (!blate)
                    nbc++, bc1 += bsum, bc2 += bsum * bsum;
                bsum = 0, blate = 0;
            }
        }
    }
    if (rank == 0) {
        double mean = sum / (double)n, var = n > 1 ? (sum2 - (double)n * mean * mean) / (double)(n - 1) : 0;
        long nc = n - late;
        double cmean = nc ? core / (double)nc : 0, cvar = nc > 1 ? (core2 - (double)nc * cmean * cmean) / (double)(nc - 1) : 0;
        printf("truth rank=0 pattern=late_sender function=MPI_Recv wait=%.6f\n", sum);
        double bm = nb ? b1 / (double)nb : 0, bvar = nb > 1 ? (b2 - (double)nb * bm * bm) / (double)(nb - 1) : 0;
        double bcm = nbc ? bc1 / (double)nbc : 0,
               bcvar = nbc > 1 ? (bc2 - (double)nbc * bcm * bcm) / (double)(nbc - 1) : 0;
        printf("info rank=0 calls=%ld mean=%.9f sd=%.9f late=%ld sd_core=%.9f sd_block=%.9f sd_block_core=%.9f\n", n,
               mean, var > 0 ? sqrt(var) : 0, late, cvar > 0 ? sqrt(cvar) : 0, bvar > 0 ? sqrt(bvar) : 0,
               bcvar > 0 ? sqrt(bcvar) : 0);
    }
    MPI_Finalize();
    return 0;
}
