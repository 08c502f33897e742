/* ws_threads: PERSISTENT late senders under MPI_THREAD_MULTIPLE, one per
 * thread, for checking that matched instances measure every thread's
 * waits (t_ws_threads.sh).
 *
 *   mpirun -np 2 ws_threads [DELAY seconds, default 0.1] [ITER, default 10]
 *
 * Both ranks run NT = 4 threads.  Thread t of rank 1 sleeps DELAY before
 * each of its ITER sends to rank 0 on tag 10 + t; thread t of rank 0
 * receives them in recv_tT, a function of its own, so that every thread's
 * receive is a call site of its own (waitprof names a site by the return
 * address of the MPI call).  Every receive waits about DELAY: the
 * imbalance is persistent, the minimum-duration estimate cannot see it and
 * only matching both sides of each message measures it.  Each thread has
 * its own channel (its tag), so the messages of one channel come from one
 * thread in order and both sides number them alike.
 *
 * The sender puts its send-entry time (CLOCK_MONOTONIC, which both ranks
 * of one machine share) into the message; the receiving thread adds
 * max(0, send entry - receive entry) per call and rank 0 prints, per thread,
 *   truth rank=0 site=recv_tT pattern=late_sender function=MPI_Recv wait=S
 * Exit 77 (a skip for the test driver) when the library does not provide
 * MPI_THREAD_MULTIPLE. */
/* clock_gettime, nanosleep and CLOCK_MONOTONIC are POSIX, not C11. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"

#define NT 4
#define TAG0 10

static double delay = 0.1;
static int iter = 10;
static int rank;
static double waited[NT];

/* One receive per thread, each in a function of its own and each with its
 * own tag written out, so that the compiler cannot fold them into one call
 * instruction (one return address, one call site). */
#define RECV_FN(T)                                                                                                     \
    __attribute__((noinline)) static void recv_t##T(double *ts)                                                        \
    {                                                                                                                  \
        MPI_Recv(ts, 1, MPI_DOUBLE, 1, TAG0 + T, MPI_COMM_WORLD, MPI_STATUS_IGNORE);                                   \
    }
RECV_FN(0)
RECV_FN(1)
RECV_FN(2)
RECV_FN(3)
static void (*const recv_fn[NT])(double *) = {recv_t0, recv_t1, recv_t2, recv_t3};

static void sleep_for(double sec)
{
    struct timespec ts = {(time_t)sec, (long)((sec - (double)(time_t)sec) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < iter; i++) {
        if (rank == 1) {
            sleep_for(delay);
            double ts = now(); /* travels in the message */
            MPI_Send(&ts, 1, MPI_DOUBLE, 0, TAG0 + t, MPI_COMM_WORLD);
        } else {
            double ts, t0 = now();
            recv_fn[t](&ts);
            if (ts > t0)
                waited[t] += ts - t0;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "ws_threads: the MPI library does not provide MPI_THREAD_MULTIPLE (%d)\n", provided);
        MPI_Finalize();
        return 77;
    }
    delay = argc > 1 ? atof(argv[1]) : 0.1;
    iter = argc > 2 ? atoi(argv[2]) : 10;
    if (size != 2 || !(delay >= 0) || iter < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 ws_threads [DELAY] [ITER]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Start together, so launch skew does not land in the first receive. */
    MPI_Barrier(MPI_COMM_WORLD);
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(long)t) != 0)
            MPI_Abort(MPI_COMM_WORLD, 3);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    if (rank == 0)
        for (int t = 0; t < NT; t++)
            printf("truth rank=0 site=recv_t%d pattern=late_sender function=MPI_Recv wait=%.6f\n", t, waited[t]);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
