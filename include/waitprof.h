/* waitprof.h — the public read API of libwaitprof.
 *
 * Contract: while libwaitprof is loaded into an MPI process, every thread has
 * an MPI state that waitprof keeps current.  Other tools (a second profiler, a
 * debugger script, a runtime) read it with the functions below.  They are
 * async-signal-safe: each reads a few words of the calling thread's own
 * initial-exec TLS record, with no lock, allocation or system call, so they
 * may be called from a SIGPROF handler.  Find them at run time with
 *     int (*st)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "waitprof_state");
 * so that a tool works with or without waitprof present (the rendezvous of
 * the MPI state-profiling proposal).  Everything here is stable within
 * WAITPROF_API_VERSION.
 */
#ifndef WAITPROF_H
#define WAITPROF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WAITPROF_API_VERSION 1

/* The three MPI states of a thread. */
#define WAITPROF_STATE_NOT_IN_MPI 0 /* running outside the MPI library */
#define WAITPROF_STATE_WORK       1 /* inside MPI and making progress */
#define WAITPROF_STATE_STALL      2 /* inside MPI, waiting for another rank */

struct waitprof_thread_state {
    int state;                 /* one of WAITPROF_STATE_* */
    int function;              /* id of the outermost MPI call, 0 outside MPI */
    const char *function_name; /* e.g. "MPI_Recv"; "none" outside MPI; static storage */
    uint64_t enter_ns;         /* CLOCK_MONOTONIC time the call was entered, 0 outside MPI;
                                * under WAITPROF_LEAN=1 the time of the call's first
                                * sample, 0 until then */
};

/* The calling thread's state (WAITPROF_STATE_*).  Async-signal-safe. */
int waitprof_state(void);

/* Fill *out with the calling thread's state, current call and entry time.
 * Returns WAITPROF_API_VERSION.  Async-signal-safe. */
int waitprof_thread_state(struct waitprof_thread_state *out);

/* Name of the MPI state (e.g. "MPI-Stall"), or "unknown".  Async-signal-safe. */
const char *waitprof_state_name(int state);

#ifdef __cplusplus
}
#endif
#endif
