/* bench/floor_wrap.c — the least a PMPI wrapper that keeps a per-thread MPI
 * state can add to a ping-pong: a preload library with MPI_Send and MPI_Recv
 * only, each moving an initial-exec TLS record from Not-in-MPI to Work and
 * back around its PMPI call (depth counter, function id, state word, the
 * compiler fences a signal handler needs), with no clock read and nothing
 * else.  Not waitprof: bench/run.sh runs the ping-pong under it (configuration
 * floor-wrap) to show how much of waitprof's cost any such wrapper pays on
 * this machine. */
#include <mpi.h>

struct fw_state {
    volatile int state, fn;
    int depth;
};

static __thread struct fw_state fw_self __attribute__((tls_model("initial-exec")));

#define FW_API __attribute__((visibility("default")))

FW_API int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    struct fw_state *t = &fw_self;
    int top = t->depth++ == 0;
    if (top) {
        t->fn = 1;
        __atomic_signal_fence(__ATOMIC_RELEASE);
        t->state = 1;
    }
    int rc = PMPI_Send(buf, count, dt, dest, tag, comm);
    if (top) {
        t->state = 0;
        __atomic_signal_fence(__ATOMIC_RELEASE);
        t->fn = 0;
    }
    t->depth--;
    return rc;
}

FW_API int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    struct fw_state *t = &fw_self;
    int top = t->depth++ == 0;
    if (top) {
        t->fn = 2;
        __atomic_signal_fence(__ATOMIC_RELEASE);
        t->state = 1;
    }
    int rc = PMPI_Recv(buf, count, dt, src, tag, comm, st);
    if (top) {
        t->state = 0;
        __atomic_signal_fence(__ATOMIC_RELEASE);
        t->fn = 0;
    }
    t->depth--;
    return rc;
}
