/* wrap/wrap.c — the wrappers' own state: the call-site and datatype-size
 * caches and the Fortran bindings' lookup of the MPI library's
 * definitions.  See wrap/wrap.h. */
#include <dlfcn.h>
#include <stdlib.h>

#include "state/log.h"
#include "wrap/wrap.h"

__thread uintptr_t wp_call_site __attribute__((tls_model("initial-exec")));

/* The datatype-size cache of wrap/wrap.h.  MPI_DATATYPE_NULL never reaches
 * it (only successful calls are recorded), so it is a safe "empty". */
__thread MPI_Datatype wp_tc_type __attribute__((tls_model("initial-exec"))) = MPI_DATATYPE_NULL;
__thread int wp_tc_size __attribute__((tls_model("initial-exec")));
__thread unsigned wp_tc_gen __attribute__((tls_model("initial-exec")));
unsigned wp_type_gen;
/* wrap/wrap.h, wp_untimed_cat.  site 0 never matches a call. */
__thread struct wp_ucache wp_ucache[WP_UCACHE] __attribute__((tls_model("initial-exec")));

/* The channel is the thread's last one, which the test found equal to the
 * call's (wp_send_fast says why it and the category are as the test saw
 * them): read again, the fast form keeps no argument across its call.
 * Matching is on: the test found the send unchosen (match/numbering.h,
 * wp_match_send_unchosen). */
static __attribute__((noinline)) void wp_sent_number(wp_thread_t *t, int lr)
{
    const struct wp_mlast l = wp_mlast;
    const struct wp_mpre pre = {.numbered = 2};
    const struct wp_mcat none = {0, 0, 0, 0};
    wp_match_sent(&pre, &none, l.peer, l.tag, l.comm, t->enter_ticks, lr, t->last_compute);
}
static __attribute__((noinline)) void wp_sent_all(wp_thread_t *t, int fn, int lr)
{
    const struct wp_ucache *u = wp_ucache_of(fn);
    wp_count(t, u->cat, u->nb, WP_ROLE_ANY);
    wp_traffic_send_in(fn, u->nb, wp_mlast.peer, wp_mlast.comm);
    wp_sent_number(t, lr);
}
/* The common case first, with no call but the tail calls of the rest: no
 * sample fell in the call, the traffic is the thread's inline count, and
 * the number is taken from the thread's slot alone (wp_mlast_take).  GCC
 * then saves no register for it, where one body with every case saved six
 * and took a frame. */
void wp_sent_fast(wp_thread_t *t, int fn, int lr)
{
    if (__builtin_expect(t->has_pending || !wp_traffic_inline(), 0)) {
        wp_sent_all(t, fn, lr);
        return;
    }
    const struct wp_ucache *u = wp_ucache_of(fn);
    wp_count_untimed(u->cat, 1);
    wp_traffic_send_add(fn, u->nb);
    if (__builtin_expect(!wp_mlast_take(), 0))
        wp_sent_number(t, lr);
}

void wp_leave_work(wp_thread_t *t)
{
    if (t->has_pending)
        wp_sampler_settle(t, 0);
    if (t->src_seen)
        wp_src_leave(t);
}

/* wrap/wrap.h, wp_recvd_leave: a successful call's samples are settled as
 * the call's (wp_count_settle); a failed one's, already uncounted, by
 * wp_leave_work as MPI-Work. */
void wp_recvd_work(wp_thread_t *t, int fn, int rc)
{
    if (rc == MPI_SUCCESS) {
        const struct wp_ucache *u = wp_ucache_of(fn);
        wp_count_settle(t, u->cat, u->nb, WP_ROLE_ANY);
    }
    wp_leave_work(t);
}

void wp_hook_errhandler(void)
{
    __atomic_store_n(&wp_errors_may_return, 1, __ATOMIC_RELAXED);
}

void wp_hook_type_free(int rc)
{
    (void)rc;
    __atomic_fetch_add(&wp_type_gen, 1, __ATOMIC_RELAXED);
}


void *wp_fortran_real(void **cache, const char *symbol)
{
    void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (p)
        return p;
    /* dlsym takes the loader lock: samples are dropped meanwhile (see
     * wp_dl_begin), as for dlopen. */
    wp_dl_begin();
    p = dlsym(RTLD_NEXT, symbol);
    wp_dl_end();
    if (p == NULL) {
        wp_log_always("waitprof: the MPI library defines no %s, yet the program called it; "
                      "rebuild waitprof against the MPI the program uses", symbol);
        abort();
    }
    __atomic_store_n(cache, p, __ATOMIC_RELEASE);
    return p;
}

/* --- the stall source's hooks for the Fortran bindings (wrap/wrap.h) ----------------------- */

/* Open MPI's Fortran MPI_BOTTOM: the address of one of these common
 * blocks, by the compiler's naming.  Weak: other MPIs have none. */
extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_bottom __attribute__((weak));
extern int mpi_fortran_bottom__ __attribute__((weak));
extern int MPI_FORTRAN_BOTTOM __attribute__((weak));

static int wp_fbottom(const void *buf)
{
    return buf == &mpi_fortran_bottom_ || buf == &mpi_fortran_bottom || buf == &mpi_fortran_bottom__ ||
           buf == &MPI_FORTRAN_BOTTOM;
}

static void wp_fset_ierr(void *ierr, int rc)
{
    if (ierr)
        *(MPI_Fint *)ierr = (MPI_Fint)rc;
}

int wp_fsrc_recv(void *buf, const void *count, const void *dt, const void *src, const void *tag, const void *comm,
                 void *status, void *ierr)
{
    const struct wp_source *s = wp_src;
    if (s->recv == NULL || wp_fbottom(buf))
        return 0;
    MPI_Status st;
    int ignore = status == (void *)MPI_F_STATUS_IGNORE;
    int rc = s->recv(buf, *(const MPI_Fint *)count, PMPI_Type_f2c(*(const MPI_Fint *)dt), *(const MPI_Fint *)src,
                     *(const MPI_Fint *)tag, PMPI_Comm_f2c(*(const MPI_Fint *)comm), ignore ? MPI_STATUS_IGNORE : &st);
    if (rc == MPI_SUCCESS && !ignore)
        PMPI_Status_c2f(&st, (MPI_Fint *)status);
    wp_fset_ierr(ierr, rc);
    return 1;
}

int wp_fsrc_irecv(void *buf, const void *count, const void *dt, const void *src, const void *tag, const void *comm,
                  void *req, void *ierr)
{
    const struct wp_source *s = wp_src;
    if (s->irecv == NULL || wp_fbottom(buf))
        return 0;
    MPI_Request r;
    int rc = s->irecv(buf, *(const MPI_Fint *)count, PMPI_Type_f2c(*(const MPI_Fint *)dt), *(const MPI_Fint *)src,
                      *(const MPI_Fint *)tag, PMPI_Comm_f2c(*(const MPI_Fint *)comm), &r);
    if (rc == MPI_SUCCESS)
        *(MPI_Fint *)req = PMPI_Request_c2f(r);
    wp_fset_ierr(ierr, rc);
    return 1;
}

int wp_fsrc_wait(void *req, void *status, void *ierr)
{
    const struct wp_source *s = wp_src;
    if (s->wait == NULL)
        return 0;
    MPI_Request r = PMPI_Request_f2c(*(const MPI_Fint *)req);
    MPI_Status st;
    int ignore = status == (void *)MPI_F_STATUS_IGNORE;
    int rc = s->wait(&r, ignore ? MPI_STATUS_IGNORE : &st);
    if (rc == MPI_SUCCESS) {
        *(MPI_Fint *)req = PMPI_Request_c2f(r);
        if (!ignore)
            PMPI_Status_c2f(&st, (MPI_Fint *)status);
    }
    wp_fset_ierr(ierr, rc);
    return 1;
}

#define WP_FSRC_WAITALL 64
/* Integers per Fortran status: MPI-3 names it; older headers do not, and
 * their Fortran status has the C one's layout (as their bindings assume). */
#ifdef MPI_F_STATUS_SIZE
#define WP_FSTATUS_INTS MPI_F_STATUS_SIZE
#else
#define WP_FSTATUS_INTS (sizeof(MPI_Status) / sizeof(MPI_Fint))
#endif

int wp_fsrc_waitall(const void *count, void *reqs, void *statuses, void *ierr)
{
    const struct wp_source *s = wp_src;
    int n = *(const MPI_Fint *)count;
    if (s->waitall == NULL || n < 0 || n > WP_FSRC_WAITALL)
        return 0;
    MPI_Request r[WP_FSRC_WAITALL];
    MPI_Status st[WP_FSRC_WAITALL];
    MPI_Fint *fr = reqs;
    int ignore = statuses == (void *)MPI_F_STATUSES_IGNORE;
    for (int i = 0; i < n; i++)
        r[i] = PMPI_Request_f2c(fr[i]);
    int rc = s->waitall(n, r, ignore ? MPI_STATUSES_IGNORE : st);
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < n; i++) {
            fr[i] = PMPI_Request_c2f(r[i]);
            if (!ignore)
                PMPI_Status_c2f(&st[i], (MPI_Fint *)statuses + (size_t)i * WP_FSTATUS_INTS);
        }
    }
    wp_fset_ierr(ierr, rc);
    return 1;
}
