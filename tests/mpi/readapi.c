/* readapi: the public read API, found with dlsym as another tool would.
 * Outside MPI the state is Not-in-MPI; inside MPI_Allreduce (read from the
 * user-defined reduction operator, which MPI calls from within the call) it
 * is an MPI state with the function "MPI_Allreduce" and an entry time
 * between the times taken around the call (within 50 us: waitprof keeps TSC
 * ticks and converts them); from a signal handler in MPI_Recv, the entry
 * time lies within 2 ms after the time taken just before the call (a fifth
 * of the default sampling period, so a call dated by its first sample would
 * mostly fail; the margin absorbs a descheduling of the main thread on a
 * busy machine, which once took 240 us there).
 * Under WAITPROF_LEAN=1 the wrappers read no clock and a call's entry time
 * is that of its first sample: 0 until then, and the MPI_Recv (waiting
 * 100 ms at WAITPROF_HZ, default 100) is dated within two sampling periods
 * of its entry.  Prints one
 * "readapi ..." line per check and exits 1 if any fails; exits 3 if the API
 * is absent (run without waitprof). */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "waitprof.h"

static int (*st_fn)(void);
static int (*ts_fn)(struct waitprof_thread_state *);
static struct waitprof_thread_state in_op, in_sig;
static volatile sig_atomic_t sig_seen;

static void op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
    ts_fn(&in_op);
}

/* Signal the main thread itself: a process-directed signal may be handled
 * by any thread, such as the MPI library's own. */
static pthread_t main_thread;
static volatile int poke_started;
static void *poke(void *arg)
{
    (void)arg;
    __atomic_store_n(&poke_started, 1, __ATOMIC_RELEASE);
    usleep(100000);
    pthread_kill(main_thread, SIGUSR1);
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    ts_fn(&in_sig); /* async-signal-safe by the API's contract */
    sig_seen = 1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, fails = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    st_fn = (int (*)(void))dlsym(RTLD_DEFAULT, "waitprof_state");
    ts_fn = (int (*)(struct waitprof_thread_state *))dlsym(RTLD_DEFAULT, "waitprof_thread_state");
    if (!st_fn || !ts_fn) {
        printf("readapi rank=%d absent\n", rank);
        MPI_Finalize();
        return 3;
    }
#define CHECK(cond, what)                                                                          \
    do {                                                                                           \
        int ok_ = (cond);                                                                          \
        fails += !ok_;                                                                             \
        printf("readapi rank=%d %s %s\n", rank, ok_ ? "ok" : "FAILED", what);                       \
    } while (0)
    struct waitprof_thread_state out;
    CHECK(ts_fn(&out) == WAITPROF_API_VERSION, "version");
    CHECK(st_fn() == WAITPROF_STATE_NOT_IN_MPI && out.state == WAITPROF_STATE_NOT_IN_MPI &&
              out.function == 0 && strcmp(out.function_name, "none") == 0,
          "outside MPI: Not-in-MPI, no function");

    MPI_Op sum;
    MPI_Op_create(op, 1, &sum);
    int a = 1, b = 0;
    uint64_t before = now_ns();
    MPI_Allreduce(&a, &b, 1, MPI_INT, sum, MPI_COMM_WORLD);
    MPI_Op_free(&sum);
    const char *lean_s = getenv("WAITPROF_LEAN"), *hz_s = getenv("WAITPROF_HZ");
    int lean = lean_s && strcmp(lean_s, "1") == 0;
    uint64_t period = 1000000000u / (uint64_t)(hz_s ? atoi(hz_s) : 100);
    if (in_op.function_name) /* a single rank may never call the operator */
        CHECK(in_op.state != WAITPROF_STATE_NOT_IN_MPI && strcmp(in_op.function_name, "MPI_Allreduce") == 0 &&
                  ((lean && in_op.enter_ns == 0) ||
                   (in_op.enter_ns + 50000 >= before && in_op.enter_ns <= now_ns() + 50000)),
              "inside MPI_Allreduce (from the reduction operator)");

    /* Rank 0 waits in MPI_Recv while rank 1 sleeps 300 ms; a SIGUSR1 sent
     * to rank 0's main thread at 100 ms reads the state from the handler. */
    int buf = 0;
    if (rank == 0) {
        signal(SIGUSR1, on_alarm);
        main_thread = pthread_self();
        pthread_t th;
        pthread_create(&th, NULL, poke, NULL);
        /* Keep the new thread's start-up out of the timed window. */
        while (!__atomic_load_n(&poke_started, __ATOMIC_ACQUIRE))
            sched_yield();
        uint64_t entered = now_ns();
        MPI_Recv(&buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        pthread_join(th, NULL);
        CHECK(sig_seen && in_sig.state != WAITPROF_STATE_NOT_IN_MPI &&
                  strcmp(in_sig.function_name, "MPI_Recv") == 0,
              "inside MPI_Recv (from a signal handler)");
        /* Lean: the first sample dates the call, at most a period after
         * entry (two, for a late timer), never before it. */
        uint64_t slack = lean ? 2 * period + 5000000u : 2000000u;
        CHECK(in_sig.enter_ns + 50000 >= entered && in_sig.enter_ns <= entered + slack,
              lean ? "MPI_Recv dated by its first sample (lean)" : "MPI_Recv entry time");
        printf("readapi rank=0 recv entry_offset_us=%.1f\n", ((double)in_sig.enter_ns - (double)entered) / 1e3);
        if (!sig_seen || in_sig.state == WAITPROF_STATE_NOT_IN_MPI)
            printf("readapi rank=0 signal seen=%d state=%d function=%s\n", (int)sig_seen, in_sig.state,
                   in_sig.function_name ? in_sig.function_name : "(null)");
    } else if (rank == 1) {
        /* Sleep to a deadline: sampling signals cut a plain usleep short
         * (EINTR), as any signal does. */
        uint64_t until = now_ns() + 300000000u;
        while (now_ns() < until)
            usleep(10000);
        MPI_Send(&buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    CHECK(st_fn() == WAITPROF_STATE_NOT_IN_MPI, "after the calls: Not-in-MPI again");
    MPI_Finalize();
    return fails ? 1 : 0;
}
