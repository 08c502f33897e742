/* ws_exact: PERSISTENT wait states of known size, for checking the waits
 * waitprof measures from matched message and collective instances (issue
 * 16) against the truth.
 *
 *   ws_exact MODE [DELAY seconds, default 0.1] [ITER, default 10]
 *
 * Unlike ws_p2p and ws_coll, EVERY iteration waits about the same: the
 * imbalance is persistent, so a category has no wait-free call and the
 * minimum-duration estimate sees (almost) nothing.  Only matching the
 * instances of both sides measures these waits.  Each iteration begins with
 * an MPI_Barrier at its own call site (barrier mode: the measured barrier is
 * that sync itself), so one iteration's delay does not shift into the next.
 * The late ranks compute (a CPU-bound loop, not a sleep) before their call.
 *
 *   mode      ranks  who is late                    truth, summed over the calls
 *   recv      2      rank 1 sends DELAY late        rank 0 MPI_Recv late_sender:
 *                                                   max(0, send entry - recv entry)
 *   wildcard  3      ranks 1 and 2 send DELAY and   rank 0 MPI_Recv late_sender, 2 receives
 *                    1.5 DELAY late                 per iteration at ONE call site with
 *                                                   MPI_ANY_SOURCE, MPI_ANY_TAG: the same
 *   iwildcard 3      as wildcard                    rank 0 MPI_Wait late_sender: each receive
 *                                                   an MPI_Irecv with MPI_ANY_SOURCE and
 *                                                   MPI_ANY_TAG, completed by MPI_Wait with
 *                                                   MPI_STATUS_IGNORE (waitprof supplies the
 *                                                   status it numbers the message by):
 *                                                   max(0, send entry - Wait entry)
 *   ssend     2      rank 1 receives DELAY late     rank 0 MPI_Ssend late_receiver:
 *                                                   max(0, recv entry - ssend entry)
 *   allreduce 4      rank 1                         every rank MPI_Allreduce wait_nxn:
 *                                                   last entry - own entry (rank 1: ~0)
 *   barrier   4      rank 1                         every rank MPI_Barrier wait_barrier: the same
 *   bcast     4      the root (0)                   non-roots MPI_Bcast late_broadcast:
 *                                                   max(0, root entry - own entry)
 *   reduce    4      every non-root                 the root (0) MPI_Reduce early_reduce:
 *                                                   max(0, last non-root entry - root entry)
 *                                                   (waitprof's definition: until the last
 *                                                   contribution could have been sent)
 *   waitall   4      rank k sends k*DELAY/(P-1)     rank 0 MPI_Waitall late_sender, on
 *                    late (the last one DELAY)      MPI_Irecv from every other rank, after
 *                                                   NULLS (WS_NULLS) null requests in the array:
 *                                                   max(0, latest send entry - Waitall entry)
 *   iallreduce 4     rank 1                         every rank MPI_Wait wait_nxn, completing
 *                                                   an MPI_Iallreduce after DELAY/10 of work:
 *                                                   max(0, last Iallreduce entry - Wait entry)
 *   ibcast    4      the root (0)                   non-roots MPI_Wait late_broadcast, the same
 *                                                   with MPI_Ibcast: max(0, root's Ibcast
 *                                                   entry - Wait entry)
 *   persist   2      rank 1 starts its persistent   rank 0 MPI_Wait late_sender, completing a
 *                    MPI_Send_init DELAY late       started MPI_Recv_init (both made once):
 *                                                   max(0, send's Start entry - Wait entry)
 *   mprobe    2      rank 1 sends A DELAY late,     rank 0 MPI_Mprobe late_sender (it takes A,
 *                    then B DELAY later, one        MPI_ANY_SOURCE, status ignored):
 *                    channel                        max(0, A's send entry - Mprobe entry);
 *                                                   then rank 0 MPI_Recv late_sender takes B
 *                                                   before MPI_Mrecv takes A: max(0, B's send
 *                                                   entry - Recv entry).  Numbering A at the
 *                                                   Mrecv instead would match the Recv with
 *                                                   A's send and measure it as 0.
 *   testany   2      rank 1 sends A and C at once, rank 0 MPI_Recv late_sender of B:
 *                    then B DELAY late, one      max(0, B's send entry - Recv entry).
 *                    channel                     Rank 0 first takes A by an MPI_Irecv from
 *                                                rank 1 and C by a wildcard MPI_Irecv
 *                                                (MPI_ANY_SOURCE, status ignored), each
 *                                                completed by polling MPI_Testany over NULLS
 *                                                null requests and the receive.  Missing
 *                                                the wildcard's number at its test would
 *                                                match the Recv with C's send and measure
 *                                                it as 0.
 *   ifill     3      none: no truth.  No blocking collective in the loop (no per-
 *                    iteration barrier); rank 1 receives from rank 0 before its
 *                    MPI_Ibarrier, rank 0 sends after its own, then both MPI_Wait:
 *                    correct MPI, which a blocking reduction of waitprof's inside an
 *                    I-call would deadlock.  Run with ITER > 256 and WAITPROF_MATCH=1,
 *                    so that a batch of collective instances fills at an I-call.
 *
 * "ranks" is what the test runs; every mode works with 2 or more (wildcard
 * 3 or more), ranks the mode does not use only join the barriers.  With a
 * truth about ITER x DELAY (wildcard: ITER x 1.5 DELAY) the waiting ranks
 * of the default arguments wait about 1 s.
 *
 * Times are CLOCK_MONOTONIC (clock.h), which all ranks on one machine share,
 * so timestamps of different ranks can be subtracted.  Senders put their
 * send-entry time into the message itself (recv, wildcard, waitall); all
 * other times reach rank 0 after the measured loop through MPI_Gather, a
 * function no mode measures, so the exchange adds nothing to the rows the
 * truth is compared with.  Rank 0 prints, for each rank the pattern applies
 * to, in rank order:
 *   detail rank=R waits=w0,w1,...        the per-call truth, for the log
 *   truth rank=R pattern=P function=F wait=S
 * and then for every rank, as evidence for whoever reads a failure:
 *   info rank=R function=F calls=N in_call=S max_call=S
 * (the time the rank spent inside the measured calls, summed, and the
 * longest one). */
/* clock_gettime and CLOCK_MONOTONIC are POSIX, not C11. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ITER 1000
#define SLOTS 2 /* measured calls per iteration and rank, at most (wildcard's rank 0) */
#define COUNT 8 /* doubles per collective: a short call once everyone is there */
#define TAG 7
/* waitall mode: null requests before the receives in the MPI_Waitall's
 * array, which they leave as it is (MPI ignores them), so that the array
 * is longer than 8 handles: waitprof copies such an array with the
 * library's memcpy and the short ones by a loop (match/numbering.h,
 * wp_match_take), and a copy that fell short of the last handles would
 * leave these receives unmatched.  WS_NULLS sets another count (up to
 * MAX_NULLS): with 70, the array is longer than the 64 handles waitprof
 * copies on the stack, and goes to its thread's own buffer. */
#define NULLS 9
#define MAX_NULLS 1000

#define WP_TEST_COMPUTE
#include "clock.h"

enum mode { RECV, WILDCARD, SSEND, ALLREDUCE, BARRIER, BCAST, REDUCE, WAITALL, IALLREDUCE, IBCAST, PERSIST, MPROBE,
            IFILL, IWILDCARD, TESTANY, ISENDRECV, NMODES };
static const char *const modes[NMODES] = {"recv",    "wildcard", "ssend",      "allreduce", "barrier",
                                          "bcast",   "reduce",   "waitall",    "iallreduce", "ibcast",
                                          "persist", "mprobe",   "ifill",      "iwildcard",
                                          "testany", "isendrecv"};
static const char *const pattern[NMODES] = {"late_sender",  "late_sender",    "late_receiver", "wait_nxn",
                                            "wait_barrier", "late_broadcast", "early_reduce",  "late_sender",
                                            "wait_nxn",     "late_broadcast", "late_sender",   "late_sender",
                                            "wait_barrier", "late_sender",    "late_sender",   "late_sender"};
static const char *const function[NMODES] = {"MPI_Recv",    "MPI_Recv",  "MPI_Ssend",  "MPI_Allreduce",
                                             "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Waitall",
                                             "MPI_Wait",    "MPI_Wait",  "MPI_Wait",   "MPI_Mprobe",
                                             "MPI_Wait",    "MPI_Wait",  "MPI_Recv",   "MPI_Wait"};

static double pos(double x)
{
    return x > 0 ? x : 0;
}

/* "detail" and "truth" lines for rank r from its per-call waits w[0..n),
 * of function f (NULL: the mode's). */
static void print_truth_of(int r, enum mode m, const char *f, const double *w, int n)
{
    double sum = 0;
    printf("detail rank=%d waits=", r);
    for (int i = 0; i < n; i++) {
        printf("%s%.6f", i ? "," : "", w[i]);
        sum += w[i];
    }
    printf("\ntruth rank=%d pattern=%s function=%s wait=%.6f\n", r, pattern[m], f ? f : function[m], sum);
}

static void print_truth(int r, enum mode m, const double *w, int n)
{
    print_truth_of(r, m, NULL, w, n);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *arg = argc > 1 ? argv[1] : "";
    int mode = -1;
    for (int m = 0; m < NMODES; m++)
        if (strcmp(arg, modes[m]) == 0)
            mode = m;
    double delay = argc > 2 ? atof(argv[2]) : 0.1;
    int iter = argc > 3 ? atoi(argv[3]) : 10;
    if (mode < 0 || size < (mode == WILDCARD || mode == IWILDCARD ? 3 : 2) || iter < 1 || iter > MAX_ITER || !(delay >= 0)) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpirun -np P ws_exact recv|wildcard|ssend|allreduce|barrier|bcast|reduce|waitall|"
                    "iallreduce|ibcast|persist|mprobe|ifill|iwildcard|testany|isendrecv [DELAY] [ITER<=%d]\n"
                    "(P >= 2; wildcard, iwildcard: P >= 3)\n",
                    MAX_ITER);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* This rank's measured calls: entry and exit times, slot s of iteration
     * i at [i * SLOTS + s]; unused slots stay 0.  Rank 0 also keeps what
     * its receives told it: the partner's send-entry time and source. */
    size_t nrec = (size_t)iter * SLOTS;
    double *rec = calloc(2 * nrec, sizeof *rec), *t_in = rec, *t_out = rec + nrec;
    double *sent_at = calloc(nrec, sizeof *sent_at);
    int *source = calloc(nrec, sizeof *source);
    const char *wn = getenv("WS_NULLS");
    int nulls = wn && *wn ? atoi(wn) : NULLS;
    if (nulls < 0 || nulls > MAX_NULLS)
        nulls = NULLS;
    if (mode == WAITALL && rank == 0)
        printf("info rank=0 waitall_handles=%d\n", nulls + size - 1);
    MPI_Request *reqs = malloc((size_t)(nulls + size) * sizeof *reqs);
    /* Not MPI_STATUSES_IGNORE: with MPICH's mpi.h, GCC takes that constant
     * for an array of size 0 (-Wstringop-overflow). */
    MPI_Status *stats = malloc((size_t)(nulls + size) * sizeof *stats);
    double *payload = malloc((size_t)size * sizeof *payload);
    double in[COUNT], out[COUNT];
    if (!rec || !sent_at || !source || !reqs || !stats || !payload)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (int k = 0; k < COUNT; k++)
        in[k] = rank + k;

    /* Start together, so launch skew does not land in the first iteration.
     * Not MPI_Barrier: in barrier mode it would add to the rows checked. */
    int one = 1, *ones = malloc((size_t)size * sizeof *ones);
    MPI_Allgather(&one, 1, MPI_INT, ones, 1, MPI_INT, MPI_COMM_WORLD);

    /* persist: one persistent request per side, made once and started in
     * every iteration; the send's buffer carries its Start's entry time. */
    MPI_Request preq = MPI_REQUEST_NULL;
    double pbuf = 0;
    if (mode == PERSIST && rank == 1)
        MPI_Send_init(&pbuf, 1, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, &preq);
    else if (mode == PERSIST && rank == 0)
        MPI_Recv_init(&pbuf, 1, MPI_DOUBLE, 1, TAG, MPI_COMM_WORLD, &preq);

    /* The per-iteration sync of the nonblocking collective modes is on a
     * communicator of its own: MPI_COMM_WORLD's instances are then only
     * the measured ones, all among the first 16, which waitprof always
     * records, so its figure is exact rather than extrapolated. */
    MPI_Comm sync = MPI_COMM_WORLD;
    if (mode == IALLREDUCE || mode == IBCAST)
        MPI_Comm_dup(MPI_COMM_WORLD, &sync);

    for (int it = 0; it < iter; it++) {
        size_t at = (size_t)it * SLOTS;
        if (mode != BARRIER && mode != IFILL)
            MPI_Barrier(sync); /* the per-iteration sync: its own call site */
        switch (mode) {
        case TESTANY:
            /* A and C at once, each received and completed by a test, then
             * RECV's late sender B on the same channel. */
            if (rank == 1) {
                double a = 0;
                MPI_Send(&a, 1, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD);
                MPI_Send(&a, 1, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD);
            } else if (rank == 0) {
                double a;
                for (int s = 0; s < 2; s++) {
                    for (int k = 0; k < nulls; k++)
                        reqs[k] = MPI_REQUEST_NULL;
                    MPI_Irecv(&a, 1, MPI_DOUBLE, s ? MPI_ANY_SOURCE : 1, TAG, MPI_COMM_WORLD, &reqs[nulls]);
                    int idx, flag = 0;
                    while (!flag)
                        MPI_Testany(nulls + 1, reqs, &idx, &flag, MPI_STATUS_IGNORE);
                    if (idx != nulls)
                        MPI_Abort(MPI_COMM_WORLD, 4);
                }
            }
            /* fall through */
        case RECV:
            if (rank == 1) {
                compute(delay);
                double t = now(); /* travels in the message */
                t_in[at] = t;
                MPI_Send(&t, 1, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD);
                t_out[at] = now();
            } else if (rank == 0) {
                t_in[at] = now();
                MPI_Recv(&sent_at[at], 1, MPI_DOUBLE, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                t_out[at] = now();
                source[at] = 1;
            }
            break;
        case ISENDRECV:
            /* MPI-4's MPI_Isendrecv (even iterations) and
             * MPI_Isendrecv_replace (odd), completed by MPI_Wait: rank 1
             * receives rank 0's half at once and sends its own DELAY late,
             * the late sender.  waitprof numbers both halves, as an
             * MPI_Isend's and an MPI_Irecv's. */
#if MPI_VERSION >= 4
            if (rank == 1) {
                double x;
                MPI_Recv(&x, 1, MPI_DOUBLE, 0, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                compute(delay);
                double t = now();
                t_in[at] = t;
                MPI_Send(&t, 1, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD);
                t_out[at] = now();
            } else if (rank == 0) {
                MPI_Request r;
                double x = it;
                if (it % 2 == 0)
                    MPI_Isendrecv(&x, 1, MPI_DOUBLE, 1, TAG + 1, &sent_at[at], 1, MPI_DOUBLE, 1, TAG,
                                  MPI_COMM_WORLD, &r);
                else
                    MPI_Isendrecv_replace(&x, 1, MPI_DOUBLE, 1, TAG + 1, 1, TAG, MPI_COMM_WORLD, &r);
                t_in[at] = now();
                MPI_Wait(&r, MPI_STATUS_IGNORE);
                t_out[at] = now();
                if (it % 2)
                    sent_at[at] = x;
            }
#else
            if (rank == 0)
                fprintf(stderr, "ws_exact: isendrecv needs an MPI-4 library\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
#endif
            break;
        case WILDCARD:
        case IWILDCARD:
            if (rank == 1 || rank == 2) {
                /* Rank 2 is DELAY/2 later than rank 1.  The tag changes with
                 * the iteration: the receives take any. */
                compute(rank == 1 ? delay : 1.5 * delay);
                double t = now();
                t_in[at] = t;
                MPI_Send(&t, 1, MPI_DOUBLE, 0, 10 * rank + it % 3, MPI_COMM_WORLD);
                t_out[at] = now();
            } else if (rank == 0 && mode == WILDCARD) {
                for (int s = 0; s < 2; s++) {
                    MPI_Status st;
                    t_in[at + s] = now();
                    MPI_Recv(&sent_at[at + s], 1, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                    t_out[at + s] = now();
                    source[at + s] = st.MPI_SOURCE;
                }
            } else if (rank == 0) {
                for (int s = 0; s < 2; s++) {
                    MPI_Request r;
                    MPI_Irecv(&sent_at[at + s], 1, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
                    t_in[at + s] = now();
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                    t_out[at + s] = now();
                    source[at + s] = -1; /* the program ignored the status */
                }
            }
            break;
        case SSEND:
            if (rank == 0) {
                double x = it;
                t_in[at] = now();
                MPI_Ssend(&x, 1, MPI_DOUBLE, 1, TAG, MPI_COMM_WORLD);
                t_out[at] = now();
            } else if (rank == 1) {
                double x;
                compute(delay);
                t_in[at] = now();
                MPI_Recv(&x, 1, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                t_out[at] = now();
            }
            break;
        case ALLREDUCE:
            if (rank == 1)
                compute(delay);
            t_in[at] = now();
            MPI_Allreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            t_out[at] = now();
            break;
        case BARRIER:
            if (rank == 1)
                compute(delay);
            t_in[at] = now();
            MPI_Barrier(MPI_COMM_WORLD); /* measured, and the sync */
            t_out[at] = now();
            break;
        case BCAST:
            if (rank == 0)
                compute(delay);
            t_in[at] = now();
            MPI_Bcast(in, COUNT, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            t_out[at] = now();
            break;
        case REDUCE:
            if (rank != 0)
                compute(delay);
            t_in[at] = now();
            MPI_Reduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            t_out[at] = now();
            break;
        case WAITALL:
            if (rank == 0) {
                /* nulls null requests first, the receives after them */
                for (int k = 0; k < nulls; k++)
                    reqs[k] = MPI_REQUEST_NULL;
                for (int k = 1; k < size; k++)
                    MPI_Irecv(&payload[k], 1, MPI_DOUBLE, k, TAG, MPI_COMM_WORLD, &reqs[nulls + k - 1]);
                t_in[at] = now();
                MPI_Waitall(nulls + size - 1, reqs, stats);
                t_out[at] = now();
                /* The Waitall waits for the latest sender. */
                double latest = payload[1];
                for (int k = 2; k < size; k++)
                    if (payload[k] > latest)
                        latest = payload[k];
                sent_at[at] = latest;
            } else {
                /* Staggered: rank k is k/(P-1) of DELAY late, the last DELAY. */
                compute(delay * rank / (size - 1));
                double t = now();
                t_in[at] = t;
                MPI_Send(&t, 1, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD);
                t_out[at] = now();
            }
            break;
        case IALLREDUCE:
        case IBCAST: {
            /* Slot 0: the I-call; slot 1: the MPI_Wait that completes it,
             * after some work of every rank's own. */
            MPI_Request r;
            if (rank == (mode == IBCAST ? 0 : 1))
                compute(delay);
            t_in[at] = now();
            if (mode == IBCAST)
                MPI_Ibcast(in, COUNT, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r);
            else
                MPI_Iallreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
            t_out[at] = now();
            compute(delay / 10);
            t_in[at + 1] = now();
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            t_out[at + 1] = now();
            break;
        }
        case PERSIST:
            if (rank == 1) {
                compute(delay);
                pbuf = now(); /* travels in the message */
                t_in[at] = pbuf;
                MPI_Start(&preq);
                MPI_Wait(&preq, MPI_STATUS_IGNORE);
                t_out[at] = now();
            } else if (rank == 0) {
                MPI_Start(&preq);
                t_in[at] = now();
                MPI_Wait(&preq, MPI_STATUS_IGNORE);
                t_out[at] = now();
                sent_at[at] = pbuf;
                source[at] = 1;
            }
            break;
        case IFILL: {
            MPI_Request r;
            double x = it;
            if (rank == 1)
                MPI_Recv(&x, 1, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t_in[at] = now();
            MPI_Ibarrier(MPI_COMM_WORLD, &r);
            if (rank == 0)
                MPI_Send(&x, 1, MPI_DOUBLE, 1, TAG, MPI_COMM_WORLD);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            t_out[at] = now();
            break;
        }
        case MPROBE:
            if (rank == 1) {
                for (int s = 0; s < 2; s++) {
                    compute(delay);
                    double t = now();
                    t_in[at + s] = t;
                    MPI_Send(&t, 1, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD);
                    t_out[at + s] = now();
                }
            } else if (rank == 0) {
                /* Slot 0: the Mprobe that takes A; slot 1: the Recv of B,
                 * which comes before A's MPI_Mrecv. */
                MPI_Message msg;
                t_in[at] = now();
                MPI_Mprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
                t_out[at] = now();
                t_in[at + 1] = now();
                MPI_Recv(&sent_at[at + 1], 1, MPI_DOUBLE, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                t_out[at + 1] = now();
                MPI_Mrecv(&sent_at[at], 1, MPI_DOUBLE, &msg, MPI_STATUS_IGNORE);
            }
            break;
        }
    }
    if (preq != MPI_REQUEST_NULL)
        MPI_Request_free(&preq);
    if (sync != MPI_COMM_WORLD)
        MPI_Comm_free(&sync);

    /* After the loop, at another call site and with a function no mode
     * measures: every rank's times to rank 0. */
    double *all = NULL;
    if (rank == 0 && !(all = malloc((size_t)size * 2 * nrec * sizeof *all)))
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Gather(rec, (int)(2 * nrec), MPI_DOUBLE, all, (int)(2 * nrec), MPI_DOUBLE, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        /* Rank q's entry and exit of slot j. */
#define IN(q, j) all[(size_t)(q) * 2 * nrec + (j)]
#define OUT(q, j) all[(size_t)(q) * 2 * nrec + nrec + (j)]
        double *w = malloc(nrec * sizeof *w);
        if (!w)
            MPI_Abort(MPI_COMM_WORLD, 3);
        int n = 0;
        switch (mode) {
        case RECV:
        case WILDCARD:
        case IWILDCARD:
        case WAITALL:
        case TESTANY:
        case ISENDRECV:
            /* The send entries came with the messages; also say who the
             * wildcard receives matched, in order. */
            if (mode == WILDCARD) {
                printf("detail rank=0 sources=");
                for (int i = 0; i < iter * SLOTS; i++)
                    printf("%s%d", i ? "," : "", source[i]);
                printf("\n");
            }
            for (int i = 0; i < iter; i++)
                for (int s = 0; s < (mode == WILDCARD || mode == IWILDCARD ? 2 : 1); s++) {
                    size_t j = (size_t)i * SLOTS + s;
                    w[n++] = pos(sent_at[j] - t_in[j]);
                }
            print_truth(0, mode, w, n);
            break;
        case IFILL: /* no truth: it checks that the run completes */
            break;
        case PERSIST:
            for (int i = 0; i < iter; i++) {
                size_t j = (size_t)i * SLOTS;
                w[n++] = pos(sent_at[j] - t_in[j]);
            }
            print_truth(0, mode, w, n);
            break;
        case MPROBE:
            for (int s = 0; s < 2; s++) {
                n = 0;
                for (int i = 0; i < iter; i++) {
                    size_t j = (size_t)i * SLOTS + s;
                    w[n++] = pos(sent_at[j] - t_in[j]);
                }
                print_truth_of(0, mode, s ? "MPI_Recv" : "MPI_Mprobe", w, n);
            }
            break;
        case IALLREDUCE:
        case IBCAST:
            for (int p = mode == IBCAST ? 1 : 0; p < size; p++) {
                n = 0;
                for (int i = 0; i < iter; i++) {
                    size_t j = (size_t)i * SLOTS;
                    double ref = IN(0, j); /* the root's I-call, or the latest of all */
                    for (int q = 1; q < size && mode == IALLREDUCE; q++)
                        if (IN(q, j) > ref)
                            ref = IN(q, j);
                    double wait = pos(ref - IN(p, j + 1)), dur = OUT(p, j + 1) - IN(p, j + 1);
                    w[n++] = wait < dur ? wait : dur;
                }
                print_truth(p, mode, w, n);
            }
            break;
        case SSEND:
            for (int i = 0; i < iter; i++) {
                size_t j = (size_t)i * SLOTS;
                w[n++] = pos(IN(1, j) - IN(0, j));
            }
            print_truth(0, mode, w, n);
            break;
        case ALLREDUCE:
        case BARRIER:
        case BCAST:
        case REDUCE: {
            double first_arrival = 0; /* reduce: the same with the first non-root, for the log */
            for (int p = 0; p < size; p++) {
                /* The pattern applies to: every rank; the non-roots; the root. */
                if ((mode == BCAST && p == 0) || (mode == REDUCE && p != 0))
                    continue;
                n = 0;
                for (int i = 0; i < iter; i++) {
                    size_t j = (size_t)i * SLOTS;
                    double last = IN(mode == REDUCE ? 1 : 0, j), first = last;
                    for (int q = mode == REDUCE ? 2 : 1; q < size; q++) {
                        if (IN(q, j) > last)
                            last = IN(q, j);
                        if (IN(q, j) < first)
                            first = IN(q, j);
                    }
                    w[n++] = pos((mode == BCAST ? IN(0, j) : last) - IN(p, j));
                    first_arrival += pos(first - IN(p, j));
                }
                print_truth(p, mode, w, n);
            }
            if (mode == REDUCE)
                printf("info rank=0 early_reduce_to_first_nonroot=%.6f\n", first_arrival);
            break;
        }
        }
        for (int q = 0; q < size; q++) {
            double sum = 0, max = 0;
            int calls = 0;
            for (size_t j = 0; j < nrec; j++)
                if (IN(q, j) > 0) {
                    double d = OUT(q, j) - IN(q, j);
                    sum += d;
                    max = d > max ? d : max;
                    calls++;
                }
            const char *f = function[mode];
            if (q != 0 && (mode == RECV || mode == WILDCARD || mode == IWILDCARD || mode == WAITALL || mode == MPROBE ||
                           mode == ISENDRECV))
                f = "MPI_Send";
            else if (q != 0 && mode == PERSIST)
                f = "MPI_Start+MPI_Wait";
            else if (mode == IALLREDUCE || mode == IBCAST)
                f = "I-call+MPI_Wait";
            else if (mode == MPROBE)
                f = "MPI_Mprobe+MPI_Recv";
            else if (q != 0 && mode == SSEND)
                f = "MPI_Recv";
            if (calls)
                printf("info rank=%d function=%s calls=%d in_call=%.6f max_call=%.6f\n", q, f, calls, sum, max);
        }
#undef IN
#undef OUT
        fflush(stdout);
        free(w);
        free(all);
    }
    free(ones);
    free(payload);
    free(stats);
    free(reqs);
    free(source);
    free(sent_at);
    free(rec);
    MPI_Finalize();
    return 0;
}
