/* state/wrap.h — what a generated wrapper does around its PMPI call.
 *
 * Contract: wp_enter() moves the calling thread from Not-in-MPI to MPI-Work,
 * records the function and the entry time, and returns the thread's record;
 * for a call nested inside another wrapped call (MPICH's Fortran bindings
 * call the C MPI_* functions, libraries call MPI from MPI callbacks) it only
 * counts the depth and returns NULL, so each application call is seen once.
 * wp_leave() undoes it.  Both are inline, take no lock and make one clock
 * read (state/clock.h): this is the per-call cost of waitprof.
 */
#ifndef WP_STATE_WRAP_H
#define WP_STATE_WRAP_H

#include <mpi.h>
#include <stdatomic.h>

#include "state/clock.h"
#include "state/functions.h"
#include "state/thread.h"

#define WP_API __attribute__((visibility("default"), section("wp_wrap_text")))

static inline wp_thread_t *wp_enter(int fn)
{
    wp_thread_t *t = &wp_self;
    if (t->depth++ != 0)
        return NULL;
    t->fn = fn;
    t->enter_ticks = wp_ticks();
    /* The handler must never see Work with a stale function or time. */
    atomic_signal_fence(memory_order_release);
    t->state = WAITPROF_STATE_WORK;
    return t;
}

static inline void wp_leave(wp_thread_t *t)
{
    if (t == NULL) {
        wp_self.depth--;
        return;
    }
    t->state = WAITPROF_STATE_NOT_IN_MPI;
    atomic_signal_fence(memory_order_release);
    t->fn = 0;
    t->enter_ticks = 0;
    t->depth = 0;
}

/* The MPI library's own definition of a Fortran binding symbol, found once
 * with dlsym(RTLD_NEXT) and cached.  Never called from a signal handler. */
void *wp_fortran_real(void **cache, const char *symbol);

#endif
