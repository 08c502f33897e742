/* ws_source: known wait states for the stall-source tests (t_src_*.sh).
 *
 *   ws_source MODE DELAY ITER
 *
 * The measured call is always made from the function measured(), so its
 * samples are under ";measured;MPI_<call>".  Each mode prints, on the rank
 * whose call it measures, "truth rank=R stall_share=F wait=S in_call=S":
 * the share of the measured call's time spent waiting for the partner, from
 * CLOCK_MONOTONIC timestamps the ranks exchange (one machine, one clock).
 *
 * eager    rank 0 receives 8 bytes from rank 1, which computes DELAY first
 * rndv     rank 0 receives 16 MiB; in odd iterations rank 1 is late by
 *          DELAY, in even ones rank 0 computes DELAY first (on time)
 * lrecv    rank 0 sends 16 MiB (rendezvous); rank 1 computes DELAY before
 *          its receive in odd iterations (late receiver)
 * there    rank 1 sends 16 MiB at once; rank 0 computes DELAY, then
 *          receives: the message is there when the receive is posted
 * arrived  rank 1 sends 8 bytes and then raises a flag in memory the two
 *          ranks share (MPI_Win_allocate_shared); rank 0 waits for the
 *          flag, then receives: every message is in the receiver's
 *          transport before the receive (truth 0), and the receive takes a
 *          few microseconds, so any time a runtime source counts as waiting
 *          before the runtime reads its transport shows.  DELAY is unused.
 * any      as eager, with MPI_ANY_SOURCE
 * mixed    as eager, but rank 1 is late only in the last quarter of the
 *          ITER iterations: many short receives at the call site, then
 *          long ones
 * waitall  rank 0 posts MPI_Irecv from every other rank and waits in
 *          MPI_Waitall; rank k sleeps k*DELAY/(size-1) before its send
 * comms    as eager (2 ranks), each iteration on another communicator the
 *          program made: MPI_Comm_dup, _split, _create, _idup,
 *          MPI_Cart_create, MPI_Graph_create, MPI_Dist_graph_create_adjacent
 *          and an intercommunicator (MPI_Intercomm_create)
 * threads  MPI_THREAD_MULTIPLE, 4 threads per rank: thread t of rank 0
 *          receives 8 bytes from thread t of rank 1, which sleeps
 *          DELAY*(t+1)/4 first
 */
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIG (16 << 20)
#define NTHREADS 4

#define WP_TEST_COMPUTE
#include "clock.h"

/* Sleep until sec from now.  For the modes with more busy threads than this
 * machine has cores: a sleeping partner leaves the cores to the waiters, so
 * the waiters are not descheduled while their partner is late.  Sleeps
 * until an absolute time, since the profiler's signals interrupt it. */
__attribute__((noinline)) static void idle(double sec)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double until = ts.tv_sec + ts.tv_nsec * 1e-9 + sec;
    ts.tv_sec = (time_t)until;
    ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
        ;
}

enum { RECV, RECV_ANY, SEND };

/* The communicator of the current iteration (comms mode), else WORLD. */
static MPI_Comm comm_now;

/* The measured call; returns its entry time. */
__attribute__((noinline, noclone)) static double measured(int op, void *buf, int n, int peer, int tag)
{
    double t = now();
    if (op == SEND)
        MPI_Send(buf, n, MPI_BYTE, peer, tag, comm_now);
    else
        MPI_Recv(buf, n, MPI_BYTE, op == RECV_ANY ? MPI_ANY_SOURCE : peer, tag, comm_now, MPI_STATUS_IGNORE);
    return t;
}

/* Every kind of communicator creation, for 2 ranks; peer[k] is the other
 * rank's number in comm k. */
static int make_comms(MPI_Comm *c, int *peer, int rank)
{
    int n = 0, other = 1 - rank;
    MPI_Request r;
    MPI_Group g;
    MPI_Comm_dup(MPI_COMM_WORLD, &c[n]), peer[n++] = other;
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c[n]), peer[n++] = other;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Comm_create(MPI_COMM_WORLD, g, &c[n]), peer[n++] = other;
    MPI_Group_free(&g);
    MPI_Comm_idup(MPI_COMM_WORLD, &c[n], &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE), peer[n++] = other;
    int dims[1] = {2}, periods[1] = {0};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c[n]), peer[n++] = other;
    int index[2] = {1, 2}, edges[2] = {1, 0};
    MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &c[n]), peer[n++] = other;
    int w[1] = {1};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &other, w, 1, &other, w, MPI_INFO_NULL, 0, &c[n]);
    peer[n++] = other;
    MPI_Comm local;
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, other, 99, &c[n]), peer[n++] = 0;
    MPI_Comm_free(&local);
    return n;
}

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which gcc 12 reads
 * as an array of no elements passed where MPI_Waitall's prototype wants
 * count of them (-Wstringop-overflow).  Through a volatile pointer the
 * call is the same and the constant is out of the compiler's sight. */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

__attribute__((noinline, noclone)) static double measured_waitall(int n, MPI_Request *r)
{
    double t = now();
    MPI_Waitall(n, r, statuses_ignore);
    return t;
}

static double delay;
static int iter;

struct tres {
    int t;
    double wait, in_call;
};

static void *thread_main(void *arg)
{
    struct tres *r = arg;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double d = delay * (r->t + 1) / NTHREADS, msg[1];
    for (int i = 0; i < iter; i++) {
        if (rank == 0) {
            double entry = measured(RECV, msg, sizeof msg, 1, r->t);
            double leave = now();
            r->in_call += leave - entry;
            if (msg[0] > entry)
                r->wait += msg[0] - entry;
            MPI_Send(msg, 1, MPI_BYTE, 1, 100 + r->t, MPI_COMM_WORLD);
        } else if (rank == 1) {
            idle(d);
            msg[0] = now();
            MPI_Send(msg, sizeof msg, MPI_BYTE, 0, r->t, MPI_COMM_WORLD);
            MPI_Recv(msg, 1, MPI_BYTE, 0, 100 + r->t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "eager";
    delay = argc > 2 ? atof(argv[2]) : 0.1;
    iter = argc > 3 ? atoi(argv[3]) : 10;
    int rank, size, provided = 0;
    if (strcmp(mode, "threads") == 0) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided < MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "ws_source: no MPI_THREAD_MULTIPLE\n");
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    } else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = malloc(BIG);
    if (buf == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    memset(buf, 1, BIG);
    double wait = 0, in_call = 0, stamp;
    int me = 0; /* the measured rank in every mode */
    MPI_Comm comms[8];
    int peers[8], ncomms = 0;
    comm_now = MPI_COMM_WORLD;
    if (strcmp(mode, "comms") == 0) {
        if (size != 2) {
            fprintf(stderr, "ws_source: comms needs 2 ranks\n");
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        ncomms = make_comms(comms, peers, rank);
    }

    if (strcmp(mode, "threads") == 0) {
        pthread_t th[NTHREADS];
        struct tres r[NTHREADS];
        for (int t = 0; t < NTHREADS; t++) {
            r[t] = (struct tres){.t = t};
            pthread_create(&th[t], NULL, thread_main, &r[t]);
        }
        for (int t = 0; t < NTHREADS; t++) {
            pthread_join(th[t], NULL);
            wait += r[t].wait;
            in_call += r[t].in_call;
        }
    } else if (strcmp(mode, "waitall") == 0) {
        MPI_Request *req = malloc(sizeof *req * (size_t)size);
        double *msgs = malloc(sizeof *msgs * (size_t)size);
        for (int i = 0; i < iter; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                for (int k = 1; k < size; k++)
                    MPI_Irecv(&msgs[k], 1, MPI_DOUBLE, k, 0, MPI_COMM_WORLD, &req[k - 1]);
                double entry = measured_waitall(size - 1, req), leave = now(), last = 0;
                for (int k = 1; k < size; k++)
                    if (msgs[k] > last)
                        last = msgs[k];
                in_call += leave - entry;
                if (last > entry)
                    wait += last - entry;
            } else {
                idle(delay * rank / (size - 1));
                stamp = now();
                MPI_Send(&stamp, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
            }
        }
        free(req);
        free(msgs);
    } else {
        int mixed = !strcmp(mode, "mixed");
        int arrived = !strcmp(mode, "arrived");
        int eager = !strcmp(mode, "eager") || !strcmp(mode, "any") || !strcmp(mode, "comms") || mixed || arrived;
        int n = eager ? (int)sizeof(double) : BIG;
        /* arrived: rank 1's count of messages sent, in shared memory. */
        MPI_Win win = MPI_WIN_NULL;
        int *sent_n = NULL;
        if (arrived) {
            if (size != 2) {
                fprintf(stderr, "ws_source: arrived needs 2 ranks\n");
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            MPI_Aint wsz;
            int wdisp;
            MPI_Win_allocate_shared(rank == 1 ? (MPI_Aint)sizeof(int) : 0, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                    &sent_n, &win);
            MPI_Win_shared_query(win, 1, &wsz, &wdisp, &sent_n);
            if (rank == 1)
                __atomic_store_n(sent_n, 0, __ATOMIC_RELEASE);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        for (int i = 0; i < iter; i++) {
            int odd = i % 2 == 1, peer = 1, to = 0;
            if (ncomms > 0) {
                comm_now = comms[i % ncomms];
                peer = to = peers[i % ncomms];
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (!strcmp(mode, "lrecv")) {
                /* The receiver reports its receive's entry time afterwards. */
                if (rank == 0) {
                    double entry = measured(SEND, buf, n, 1, 0), leave = now(), rentry;
                    MPI_Recv(&rentry, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    in_call += leave - entry;
                    if (rentry > entry)
                        wait += rentry - entry;
                } else if (rank == 1) {
                    if (odd)
                        compute(delay);
                    stamp = now();
                    MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(&stamp, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
                }
                continue;
            }
            if (rank == 0) {
                if (!strcmp(mode, "there") || (!strcmp(mode, "rndv") && !odd))
                    compute(delay);
                /* The message is out once rank 1's MPI_Send returned (8
                 * bytes go eagerly into the receiver's memory). */
                while (arrived && __atomic_load_n(sent_n, __ATOMIC_ACQUIRE) <= i)
                    sched_yield();
                double entry = measured(!strcmp(mode, "any") ? RECV_ANY : RECV, buf, n, peer, 0), leave = now(), sent;
                memcpy(&sent, buf, sizeof sent);
                in_call += leave - entry;
                if (sent > entry)
                    wait += sent - entry;
            } else if (rank == 1) {
                if ((eager && !arrived && (!mixed || i >= iter - iter / 4)) || (!strcmp(mode, "rndv") && odd))
                    compute(delay);
                stamp = now();
                memcpy(buf, &stamp, sizeof stamp);
                MPI_Send(buf, n, MPI_BYTE, to, 0, comm_now);
                if (arrived)
                    __atomic_store_n(sent_n, i + 1, __ATOMIC_RELEASE);
            }
        }
        if (win != MPI_WIN_NULL)
            MPI_Win_free(&win);
    }
    if (rank == me)
        printf("truth rank=%d stall_share=%.4f wait=%.6f in_call=%.6f\n", me, in_call > 0 ? wait / in_call : 0, wait,
               in_call);
    for (int k = 0; k < ncomms; k++)
        MPI_Comm_free(&comms[k]);
    free(buf);
    MPI_Finalize();
    return 0;
}
