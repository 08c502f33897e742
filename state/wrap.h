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

#include "fallback/stats.h"
#include "report/calls.h"
#include "state/clock.h"
#include "state/functions.h"
#include "state/thread.h"

#define WP_API __attribute__((visibility("default"), section("wp_wrap_text")))

/* Move the samples held for the current call into the store, Stall below
 * threshold ticks from the call's entry (sampler/sampler.c). */
void wp_sampler_settle(wp_thread_t *t, uint64_t threshold);

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
    /* Samples of a call that was not recorded (an error, or not a waiting
     * call after all) are MPI-Work. */
    if (__builtin_expect(t->has_pending, 0))
        wp_sampler_settle(t, 0);
    t->fn = 0;
    t->enter_ticks = 0;
    t->depth = 0;
}

/* --- what the estimator records (fallback/stats.h) -------------------------- */

/* The caller's return address: the call site in the program.  Wrappers are
 * never inlined into the program, so this is the program's own code. */
#define WP_CALL_SITE ((uintptr_t)__builtin_return_address(0))

/* The size of the datatype last asked about on this thread.  A handle may
 * be reused for another type after MPI_Type_free, so the entry also holds
 * the generation of freed types (bumped by the MPI_Type_free wrapper) and is
 * trusted only while no type was freed since. */
extern __thread MPI_Datatype wp_tc_type __attribute__((tls_model("initial-exec")));
extern __thread int wp_tc_size __attribute__((tls_model("initial-exec")));
extern __thread unsigned wp_tc_gen __attribute__((tls_model("initial-exec")));
extern unsigned wp_type_gen;

/* Bytes of count elements of a datatype; only called after a successful
 * call, so the datatype is valid and PMPI_Type_size cannot raise an error. */
static inline uint64_t wp_bytes(long long count, MPI_Datatype dt)
{
    if (count <= 0)
        return 0;
    unsigned gen = __atomic_load_n(&wp_type_gen, __ATOMIC_RELAXED);
    int sz = wp_tc_size;
    if (dt != wp_tc_type || gen != wp_tc_gen || sz <= 0) {
        sz = 0;
        if (PMPI_Type_size(dt, &sz) != MPI_SUCCESS)
            sz = 0;
        wp_tc_type = dt;
        wp_tc_size = sz;
        wp_tc_gen = gen;
    }
    return sz > 0 ? (uint64_t)count * (uint64_t)sz : 0;
}

static inline uint64_t wp_fbytes(const void *count, const void *dt)
{
    return wp_bytes(*(const MPI_Fint *)count, PMPI_Type_f2c(*(const MPI_Fint *)dt));
}

/* Root or not, for rooted collectives.  On an intercommunicator the root
 * group passes MPI_ROOT / MPI_PROC_NULL and the other group only receives. */
static inline int wp_role(int root, MPI_Comm comm)
{
    int inter = 0, rank = -1;
    if (root == MPI_ROOT)
        return WP_ROLE_ROOT;
    if (root == MPI_PROC_NULL || (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter))
        return WP_ROLE_NONROOT;
    PMPI_Comm_rank(comm, &rank);
    return rank == root ? WP_ROLE_ROOT : WP_ROLE_NONROOT;
}

static inline int wp_frole(const void *root, const void *comm)
{
    return wp_role(*(const MPI_Fint *)root, PMPI_Comm_f2c(*(const MPI_Fint *)comm));
}

/* Record the call and settle the samples taken during it: a sample whose
 * offset from the entry is below (duration - minimum so far) was taken
 * while the call was waiting (seed 000's rule, applied to samples). */
static inline void wp_record(wp_thread_t *t, int fn, uint64_t bytes, int role, uintptr_t site, int early)
{
    uint64_t t1 = wp_ticks(), d = t1 - t->enter_ticks;
    uint64_t min = wp_stats_record(fn, bytes, role, site, t->enter_ticks, t1, early);
    wp_calls_record(fn, d); /* the report's per-function figures (report/calls.h) */
    if (__builtin_expect(t->has_pending, 0))
        wp_sampler_settle(t, d > min ? d - min : 0);
}

/* The MPI library's own definition of a Fortran binding symbol, found once
 * with dlsym(RTLD_NEXT) and cached.  Never called from a signal handler. */
void *wp_fortran_real(void **cache, const char *symbol);

#endif
