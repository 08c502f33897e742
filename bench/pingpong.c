/* bench/pingpong.c — two-rank ping-pong: small-message latency and large-
 * message bandwidth, to measure what waitprof adds to blocking point-to-point.
 *
 * usage: pingpong [round_trips [repeats [bw_round_trips [bw_repeats]]]]
 *        (defaults 5000, 181, 50, 15)
 *
 * Rank 0 sends 8 bytes, rank 1 sends them back; each repeat times
 * round_trips of these, and one-way latency is the time / (2 * round_trips).
 * Then the same with 1 MiB messages for bandwidth = bytes / one-way time.
 * Many short repeats rather than a few long ones: each lasts a few ms, so
 * its pair (below) is taken under nearly the same conditions; on this kind of
 * machine 9 repeats of 10^5 round trips gave MPI/PMPI ratios of 0.91-1.42
 * where the true ratio was 1 (no profiler), 181 repeats of 5000 gave
 * 0.99-1.01.
 *
 * Every repeat is done twice, back to back: once with MPI_Send/MPI_Recv
 * (through waitprof's wrappers when it is preloaded) and once with
 * PMPI_Send/PMPI_Recv, which no wrapper intercepts.  The PMPI run is a
 * baseline taken in the same process at the same moment: on a shared VM the
 * latency of two runs can differ by 3x (where the host put the two vCPUs),
 * far more than the wrappers add, while the two halves of one pair see the
 * same placement.  The PMPI half runs on a duplicate of MPI_COMM_WORLD
 * made with PMPI_Comm_dup, which waitprof never sees: a runtime stall source
 * that hooks communicators (PERUSE registers its events per communicator)
 * has no hook on it, so that half pays neither the wrappers nor the source,
 * and MPI/PMPI is the whole cost of both.  Two communicators are not equally
 * fast to the nanosecond: without a profiler (configuration none), MPI/PMPI
 * read 1.001 and 1.002 in the two placements on Open MPI, but 0.985 and
 * 0.995 (-3 ns) on MPICH, 20 runs each; with two duplicates,
 * 0.996 and 1.001 on MPICH, 0.993 and 0.996 on Open MPI.  So the none row of a
 * run is the bias to subtract.  The PMPI half still takes SIGPROF samples;
 * the run-to-run comparison with no profiler adds the sampling.
 *
 * Figures are medians over repeats, after an untimed warm-up that also sets up
 * the connection.  One line from rank 0:
 *   pingpong lat_us=<MPI median> lat_pmpi_us=<PMPI median>
 *            lat_ratio=<median over repeats of MPI/PMPI>
 *            lat_added_ns=<median over repeats of MPI - PMPI, ns per one-way trip>
 *            bw_MBps=... bw_pmpi_MBps=...
 *            bw_ratio=... lat_min_us=... round_trips=N repeats=R bw_round_trips=M bw_repeats=B
 * MB is 10^6 bytes.  Exactly two ranks.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PP_SMALL 8
#define PP_BIG (1024 * 1024)

static int pp_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n), which it sorts. */
static double pp_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, pp_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static MPI_Comm pp_bare; /* the PMPI half's communicator (see above) */

/* n round trips of len bytes between ranks 0 and 1 through the SEND and
 * RECV entry points on COMM (with the caller's rank, buf, len and n),
 * leaving the seconds they took in *SECS.  Both ranks start together
 * (barrier) so rank 0's clock does not include rank 1's arrival.  A macro,
 * not one loop through function pointers: the calls stay direct, as a
 * program makes them, and no indirect call is added to a 0.2 µs trip. */
#define PP_TRIPS(SEND, RECV, COMM, SECS)                                          \
    do {                                                                        \
        PMPI_Barrier(COMM);                                                     \
        double t0_ = MPI_Wtime();                                               \
        for (long i_ = 0; i_ < n; i_++) {                                       \
            if (rank == 0) {                                                    \
                SEND(buf, len, MPI_BYTE, 1, 1, COMM);                           \
                RECV(buf, len, MPI_BYTE, 1, 2, COMM, MPI_STATUS_IGNORE);        \
            } else {                                                            \
                RECV(buf, len, MPI_BYTE, 0, 1, COMM, MPI_STATUS_IGNORE);        \
                SEND(buf, len, MPI_BYTE, 0, 2, COMM);                           \
            }                                                                   \
        }                                                                       \
        *(SECS) = MPI_Wtime() - t0_;                                            \
    } while (0)

/* Seconds for n round trips of len bytes: through the MPI_ entry points on
 * MPI_COMM_WORLD, or the PMPI_ ones on pp_bare. */
static double pp_run(int rank, char *buf, int len, long n, int pmpi)
{
    double secs;
    if (pmpi)
        PP_TRIPS(PMPI_Send, PMPI_Recv, pp_bare, &secs);
    else
        PP_TRIPS(MPI_Send, MPI_Recv, MPI_COMM_WORLD, &secs);
    return secs;
}

/* repeats pairs of timed runs; per[] gets the figure of each MPI run, base[]
 * of each PMPI run, ratio[] their quotient and, when diff is not NULL,
 * diff[] the one-way time MPI minus PMPI in ns.  The order within a pair
 * alternates so that neither kind always runs second. */
static void pp_series(int rank, char *buf, int len, long n, int repeats, int bandwidth, double *per,
                      double *base, double *ratio, double *diff)
{
    pp_run(rank, buf, len, n / 10 + 1, 0);
    pp_run(rank, buf, len, n / 10 + 1, 1);
    for (int r = 0; r < repeats; r++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            int pmpi = (k + r) % 2;
            t[pmpi] = pp_run(rank, buf, len, n, pmpi) / (2.0 * (double)n);
        }
        if (bandwidth) {
            per[r] = (double)len / t[0] / 1e6;
            base[r] = (double)len / t[1] / 1e6;
        } else {
            per[r] = t[0] * 1e6;
            base[r] = t[1] * 1e6;
        }
        ratio[r] = per[r] / base[r];
        if (diff)
            diff[r] = (t[0] - t[1]) * 1e9;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long trips = argc > 1 ? atol(argv[1]) : 5000;
    int repeats = argc > 2 ? atoi(argv[2]) : 181;
    long bw_trips = argc > 3 ? atol(argv[3]) : 50;
    int bw_repeats = argc > 4 ? atoi(argv[4]) : 15;
    if (size != 2 || trips < 1 || repeats < 1 || bw_trips < 1 || bw_repeats < 1) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpirun -np 2 pingpong [round_trips [repeats [bw_round_trips [bw_repeats]]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    PMPI_Comm_dup(MPI_COMM_WORLD, &pp_bare);
    char *buf = malloc(PP_BIG);
    double *v = malloc((4 * (size_t)repeats + 3 * (size_t)bw_repeats) * sizeof *v);
    if (buf == NULL || v == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, rank, PP_BIG);
    double *lat = v, *lat_p = v + repeats, *lat_r = v + 2 * repeats;
    double *lat_d = v + 3 * repeats;
    double *bw = v + 4 * repeats, *bw_p = bw + bw_repeats, *bw_r = bw + 2 * bw_repeats;

    pp_series(rank, buf, PP_SMALL, trips, repeats, 0, lat, lat_p, lat_r, lat_d);
    pp_series(rank, buf, PP_BIG, bw_trips, bw_repeats, 1, bw, bw_p, bw_r, NULL);

    if (rank == 0) {
        double lr = pp_median(lat_r, repeats), br = pp_median(bw_r, bw_repeats);
        double lm = pp_median(lat, repeats), lmin = lat[0];
        printf("pingpong lat_us=%.4f lat_pmpi_us=%.4f lat_ratio=%.4f lat_added_ns=%.2f bw_MBps=%.1f bw_pmpi_MBps=%.1f "
               "bw_ratio=%.4f lat_min_us=%.4f round_trips=%ld repeats=%d bw_round_trips=%ld bw_repeats=%d\n",
               lm, pp_median(lat_p, repeats), lr, pp_median(lat_d, repeats), pp_median(bw, bw_repeats), pp_median(bw_p, bw_repeats), br,
               lmin, trips, repeats, bw_trips, bw_repeats);
    }
    free(buf);
    free(v);
    PMPI_Comm_free(&pp_bare);
    MPI_Finalize();
    return 0;
}
