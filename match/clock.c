/* match/clock.c — one time base for the records of all ranks.
 *
 * Ranks on one node share CLOCK_MONOTONIC, ranks on different nodes do not.
 * Every rank first names its clock: the kernel's boot id and the process's
 * time-namespace offsets, which are what CLOCK_MONOTONIC depends on.  When
 * all ranks name the same clock and none has a test clock, one reduction
 * says so at MPI_Init and nothing else is done, then or at MPI_Finalize.
 * Otherwise, at MPI_Init and again at MPI_Finalize, the first rank of every
 * node (the node leader) measures its clock's offset to rank 0's by
 * ping-pong: ten
 * round trips, the shortest one's midpoint taken as the moment rank 0 read
 * its clock (Cristian's method; the error is at most half that round trip).
 * The other ranks of the node take their leader's offsets.  A rank's time
 * in the common base is its own time plus the offset interpolated linearly
 * between the two measurements (a constant drift), or the first offset
 * alone before the second exists (collective batches reduced during the
 * run: their error grows with the drift times the time since MPI_Init).
 * On a single node with no test clock, nothing is measured.  The reduction
 * that finds one clock replaced a shared-memory communicator split, which
 * took 17-44 ms of MPI_Init on MPICH at 4 ranks on 2 cores
 * (doc/performance.md, "Start-up and finalize"); MPI_Init's hook makes it
 * part of its own broadcast of rank 0's decisions (wp_match_clock_words).
 *
 * WAITPROF_TEST_CLOCK=RANK:OFFSET_S:DRIFT_PPM makes one rank's matching
 * clock run OFFSET_S ahead and DRIFT_PPM fast, so that this can be tested on
 * one machine; that rank then measures its own offset like a node leader.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "match/clock.h"
#include "state/clock.h"

static struct {
    int injected;           /* this rank's clock is the test clock */
    double inj_off_ns, inj_rate, inj_t0;
    int phases;             /* 0: no offsets; 1: at MPI_Init; 2: also at MPI_Finalize */
    double o1, t1, o2, t2;  /* offsets (ns, to add) and the local times they were measured */
    double err;             /* the larger bound of the two: half the shortest round trip */
    int idle;               /* the first sync found nothing to measure (one node, no test clock) */
    int agreed;             /* wp_match_clock_agreed told whether there is one clock */
    MPI_Comm node;
} ck = {.node = MPI_COMM_NULL};

void wp_match_clock_test(int injected, double offset_s, double drift_ppm)
{
    ck.injected = injected;
    ck.inj_off_ns = offset_s * 1e9;
    ck.inj_rate = drift_ppm * 1e-6;
    ck.inj_t0 = (double)wp_clock_ns();
}

/* The line matching converts ticks with after wp_match_clock_line(): through
 * the reference pair of MPI_Init's calibration and one taken at
 * MPI_Finalize. */
static struct {
    int on;
    uint64_t t0, t1;
    double n0, n1;
} ln;

void wp_match_clock_line(void)
{
    uint64_t n0, t0, n1, t1;
    wp_clock_anchor(&n0, &t0);
    wp_clock_pair(&n1, &t1);
    if (!wp_clock_tsc || t1 <= t0 || n1 <= n0)
        return;
    ln.t0 = t0, ln.t1 = t1, ln.n0 = (double)n0, ln.n1 = (double)n1;
    ln.on = 1;
}

/* This rank's own clock, as matching reads it. */
static double wp_local_ns(uint64_t ticks)
{
    double ns = ln.on ? ln.n0 + (double)(int64_t)(ticks - ln.t0) * ((ln.n1 - ln.n0) / (double)(ln.t1 - ln.t0))
                      : (double)wp_ticks_to_ns(ticks);
    if (ck.injected)
        ns += ck.inj_off_ns + ck.inj_rate * (ns - ck.inj_t0);
    return ns;
}

double wp_match_ref_ns(uint64_t ticks)
{
    double ns = wp_local_ns(ticks);
    if (ck.phases == 0)
        return ns;
    if (ck.phases == 1 || ck.t2 <= ck.t1)
        return ns + ck.o1;
    return ns + ck.o1 + (ck.o2 - ck.o1) * (ns - ck.t1) / (ck.t2 - ck.t1);
}

#define WP_TAG_CLOCK 7708
#define WP_PINGS 10

/* Rank 0's side: answer every leader's pings, one leader at a time. */
static void wp_serve(MPI_Comm wcomm, int nleaders)
{
    for (int l = 0; l < nleaders; l++) {
        MPI_Status st;
        double t;
        int src = MPI_ANY_SOURCE;
        for (int i = 0; i < WP_PINGS; i++) {
            if (PMPI_Recv(&t, 1, MPI_DOUBLE, src, WP_TAG_CLOCK, wcomm, &st) != MPI_SUCCESS)
                return;
            src = st.MPI_SOURCE;
            t = wp_local_ns(wp_ticks());
            PMPI_Send(&t, 1, MPI_DOUBLE, src, WP_TAG_CLOCK, wcomm);
        }
    }
}

/* A leader's side: the offset that turns its time into rank 0's; *err the
 * bound of its error, half the shortest round trip. */
static double wp_ping(MPI_Comm wcomm, double *err)
{
    double best_rtt = -1, off = 0;
    for (int i = 0; i < WP_PINGS; i++) {
        double a = wp_local_ns(wp_ticks()), b = 0;
        if (PMPI_Send(&a, 1, MPI_DOUBLE, 0, WP_TAG_CLOCK, wcomm) != MPI_SUCCESS ||
            PMPI_Recv(&b, 1, MPI_DOUBLE, 0, WP_TAG_CLOCK, wcomm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            break;
        double c = wp_local_ns(wp_ticks());
        if (best_rtt < 0 || c - a < best_rtt) {
            best_rtt = c - a;
            off = b - (a + c) / 2;
        }
    }
    *err = best_rtt > 0 ? best_rtt / 2 : 0;
    return off;
}

/* FNV-1a of a small file's contents into *h; 1 when it was read. */
static int wp_hash_file(const char *path, uint64_t *h)
{
    char buf[256];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    for (ssize_t i = 0; i < n; i++)
        *h = (*h ^ (unsigned char)buf[i]) * 1099511628211ull;
    return n > 0;
}

/* A name for the clock CLOCK_MONOTONIC reads in this process: the boot id
 * of the kernel, and the offsets of its time namespace (absent before
 * Linux 5.6, where there are none).  0 when the boot id cannot be read. */
static uint64_t wp_clock_name(void)
{
    uint64_t h = 1469598103934665603ull;
    if (!wp_hash_file("/proc/sys/kernel/random/boot_id", &h))
        return 0;
    wp_hash_file("/proc/self/timens_offsets", &h);
    return h ? h : 1;
}

/* The largest name, the smallest (as the largest complement), any test
 * clock, any rank without a name.  A bytewise maximum keeps the test: the
 * complement of the bytewise maximum of the complements is the bytewise
 * minimum, equal to the maximum only when every rank gave the same name. */
void wp_match_clock_words(int injected, unsigned long long w[4])
{
    uint64_t name = wp_clock_name();
    w[0] = name;
    w[1] = ~name;
    w[2] = injected != 0;
    w[3] = name == 0;
}

void wp_match_clock_agreed(const unsigned long long w[4])
{
    ck.agreed = 1;
    ck.idle = w[0] == ~w[1] && !w[2] && !w[3];
}

void wp_match_clock_sync(MPI_Comm wcomm, int rank)
{
    /* Nodes and test clocks are what they were at MPI_Init: when the
     * first sync found nothing to measure, every rank found so (from the
     * same reduction), and the second one is skipped by all of them. */
    if (ck.phases >= 2 || ck.idle)
        return;
    if (ck.phases == 0 && !ck.agreed) {
        unsigned long long in[4], out[4] = {0, 0, 1, 1};
        wp_match_clock_words(ck.injected, in);
        PMPI_Allreduce(in, out, 4, MPI_UNSIGNED_LONG_LONG, MPI_MAX, wcomm);
        wp_match_clock_agreed(out);
        if (ck.idle)
            return;
    }
    if (ck.node == MPI_COMM_NULL &&
        PMPI_Comm_split_type(wcomm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &ck.node) != MPI_SUCCESS)
        ck.node = MPI_COMM_NULL;
    int node_rank = 0;
    if (ck.node != MPI_COMM_NULL)
        PMPI_Comm_rank(ck.node, &node_rank);
    /* Every rank takes part in this reduction, so all agree whether
     * anything is measured: the nodes, the leaders rank 0 serves, the
     * ranks with a test clock. */
    int leader = rank != 0 && (node_rank == 0 || ck.injected);
    int in[3] = {node_rank == 0 || ck.node == MPI_COMM_NULL, leader, ck.injected != 0}, out[3] = {1, 0, 0};
    PMPI_Allreduce(in, out, 3, MPI_INT, MPI_SUM, wcomm);
    int nodes = out[0], nleaders = out[1], any_injected = out[2] > 0;
    if (nodes <= 1 && !any_injected) {
        ck.idle = 1;
        return;
    }
    double off = 0, err = 0;
    if (rank == 0)
        wp_serve(wcomm, nleaders);
    else if (leader)
        off = wp_ping(wcomm, &err);
    /* A node's ranks share its leader's clock, except a test clock. */
    double node[2] = {off, err};
    if (ck.node != MPI_COMM_NULL)
        PMPI_Bcast(node, 2, MPI_DOUBLE, 0, ck.node);
    if (!ck.injected) {
        off = node[0];
        err = node[1];
    }
    if (err > ck.err)
        ck.err = err;
    double now = wp_local_ns(wp_ticks());
    if (ck.phases == 0) {
        ck.o1 = off;
        ck.t1 = now;
    } else {
        ck.o2 = off;
        ck.t2 = now;
    }
    ck.phases++;
}

void wp_match_clock_end(void)
{
    if (ck.node != MPI_COMM_NULL)
        PMPI_Comm_free(&ck.node);
}

void wp_match_clock_offsets(double *o1_s, double *o2_s, double *err_s, int *phases)
{
    *o1_s = ck.o1 * 1e-9;
    *o2_s = ck.o2 * 1e-9;
    *err_s = ck.err * 1e-9;
    *phases = ck.phases;
}
