/* mpit/mpit.c — the MPI_T stall source: Open MPI ob1's posted-receive queue.
 *
 * Open MPI's ob1 publishes the performance variable
 * pml_ob1_posted_recvq_length, bound to a communicator: one unsigned per
 * peer, the number of receives from that peer still waiting in the posted
 * queue (doc/sources.md).  A receive from a specific source is therefore
 * stalled while its peer's count is above zero.  MPI_T_pvar_read takes a
 * mutex, so it can never be read from the signal handler: instead, a
 * thread that would block in MPI_Recv, MPI_Wait or MPI_Waitall on such
 * receives polls (PMPI_Test/PMPI_Testall) and reads the variable between
 * polls, publishing the answer in its stall counter (mpit/requests.h), which
 * the handler reads.  Once no awaited receive is in the queue, the rest of
 * the call is the PMPI blocking call itself (MPI-Work: the transfer).
 *
 * The semantic cost, stated in doc/sources.md: receives from MPI_ANY_SOURCE
 * are not in the per-peer counts, so their waits are left to the estimator;
 * while a receive is unmatched the thread polls instead of blocking (Open
 * MPI polls inside MPI_Wait anyway; under MPI_THREAD_MULTIPLE the waiter no
 * longer sleeps on a condition variable); the count is per peer, not per
 * request, so two receives from one peer are stalled until both match;
 * intercommunicators are not classified.  MPI_Recv becomes PMPI_Irecv and a
 * PMPI_Test loop, which MPI defines to be equivalent.
 *
 * MPI_T is initialised before PMPI_Init when this source may be chosen
 * (wp_mpit_preinit, wp_source_preinit), where Open MPI's MPI_T costs less
 * than after it, and only on Open MPI (wp_mpit_possible).
 *
 * MPI-4 MPI_T events: probed (MPI_T_event_get_num) and reported in the
 * reason line; no MPI here offers a point-to-point matching event (Debian's
 * MPICH 4.0.2 reports none, Open MPI 4.1 has no event interface), so no
 * event-driven path exists yet.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpit/requests.h"
#include "mpit/source.h"
#include "state/clock.h"

#define WP_PVAR_NAME "pml_ob1_posted_recvq_length"
/* How often the queue is read while polling (mpit/source.h,
 * WP_SRC_POLL_NS).  A sample taken between two reads sees the older
 * answer, so this bounds the misclassified time per call; reading more
 * often costs a mutex per read. */
#define WP_MPIT_READ_NS WP_SRC_POLL_NS

static int wp_pvar_index = -1;
static MPI_T_pvar_session wp_session = MPI_T_PVAR_SESSION_NULL;
static int wp_mpit_inited;

/* Handles per communicator, created on first use in normal context. */
#define WP_MPIT_COMMS 256
static struct {
    MPI_Comm comm;
    MPI_T_pvar_handle h;
    int count;
} wp_mcomm[WP_MPIT_COMMS];
static int wp_nmcomm;
static pthread_mutex_t wp_mcomm_lock = PTHREAD_MUTEX_INITIALIZER;

/* The receives a thread started with MPI_Irecv, for its later waits. */
#define WP_MPIT_TRACK 64
static __thread struct {
    MPI_Request req;
    MPI_Comm comm;
    int src;
} wp_track[WP_MPIT_TRACK];
static __thread unsigned wp_ntrack;
static __thread unsigned *wp_buf;
static __thread int wp_bufcap;

static int wp_handle(MPI_Comm comm, MPI_T_pvar_handle *h, int *count)
{
    int found = 0;
    pthread_mutex_lock(&wp_mcomm_lock);
    for (int k = 0; k < wp_nmcomm; k++)
        if (wp_mcomm[k].comm == comm) {
            *h = wp_mcomm[k].h, *count = wp_mcomm[k].count, found = 1;
            break;
        }
    if (!found && wp_nmcomm < WP_MPIT_COMMS) {
        int inter = 0;
        MPI_T_pvar_handle nh;
        int n = 0;
        if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter &&
            MPI_T_pvar_handle_alloc(wp_session, wp_pvar_index, &comm, &nh, &n) == MPI_SUCCESS && n > 0) {
            wp_mcomm[wp_nmcomm].comm = comm;
            wp_mcomm[wp_nmcomm].h = nh;
            wp_mcomm[wp_nmcomm].count = n;
            wp_nmcomm++;
            *h = nh, *count = n, found = 1;
        }
    }
    pthread_mutex_unlock(&wp_mcomm_lock);
    return found;
}

/* Receives from src still waiting in comm's posted queue; -1 if unknown. */
static long wp_posted(MPI_Comm comm, int src)
{
    MPI_T_pvar_handle h;
    int n;
    if (!wp_handle(comm, &h, &n) || src < 0 || src >= n)
        return -1;
    if (wp_bufcap < n) {
        unsigned *b = realloc(wp_buf, (size_t)n * sizeof *b);
        if (b == NULL)
            return -1;
        wp_buf = b, wp_bufcap = n;
    }
    if (MPI_T_pvar_read(wp_session, h, wp_buf) != MPI_SUCCESS)
        return -1;
    return (long)wp_buf[src];
}

static void wp_set_stall(int me, int stalled)
{
    /* A stall that ends is dated (mpit/requests.h): the poll that saw the
     * receive leave the posted queue, at most one period late. */
    if (!stalled && __atomic_load_n(&wp_req_stall[me], __ATOMIC_RELAXED))
        __atomic_store_n(&wp_req_stall_end[me], wp_ticks(), __ATOMIC_RELAXED);
    __atomic_store_n(&wp_req_stall[me], stalled, __ATOMIC_RELAXED);
}

/* The lean wrappers' hint (mpit/source.h, WP_SRC_LONG_KEEP): whether this
 * call lasted until the first read of the queue. */
static void wp_hint(int looked)
{
    if (looked)
        wp_self.src_long = WP_SRC_LONG_KEEP;
    else if (wp_self.src_long > 0)
        wp_self.src_long--;
}

/* Poll until none of the given receives waits for its message.  Returns
 * with MPI_SUCCESS when the caller should finish with its blocking call,
 * or with *done set when a test completed everything. */
static int wp_poll(int n, MPI_Request reqs[], MPI_Status sts[], const MPI_Comm *comms, const int *srcs, int *done)
{
    int me = wp_req_thread_index();
    *done = 0;
    if (me < 0)
        return MPI_SUCCESS;
    int looked = 0;
    /* The first read comes after one period: most short waits (a
     * ping-pong's) end before it and pay no mutex.  Until then the call is
     * not marked seen, so a sample there is left to the estimator. */
    uint64_t next = wp_clock_ns() + WP_MPIT_READ_NS;
    for (;;) {
        int flag = 0, rc;
        rc = n == 1 ? PMPI_Test(&reqs[0], &flag, sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[0])
                    : PMPI_Testall(n, reqs, &flag, sts);
        if (rc != MPI_SUCCESS || flag) {
            wp_set_stall(me, 0);
            wp_hint(looked);
            *done = 1;
            return rc;
        }
        uint64_t now = wp_clock_ns();
        if (now < next)
            continue;
        next = now + WP_MPIT_READ_NS;
        looked = 1;
        int stalled = 0, known = 0;
        for (int i = 0; i < n; i++) {
            if (srcs[i] < 0 || reqs[i] == MPI_REQUEST_NULL)
                continue;
            long p = wp_posted(comms[i], srcs[i]);
            if (p < 0)
                continue;
            known = 1;
            if (p > 0)
                stalled = 1;
        }
        wp_set_stall(me, stalled);
        if (known)
            wp_self.src_seen = 1;
        if (!stalled || !known) {
            wp_hint(1);
            return MPI_SUCCESS;
        }
    }
}

/* With an error handler that returns, the polling below could change
 * which errors the program's call reports (state/thread.h): the calls are
 * then the PMPI ones, and their waits are left to the estimator. */
static int wp_mpit_plain(void)
{
    return __atomic_load_n(&wp_errors_may_return, __ATOMIC_RELAXED);
}

static int wp_mpit_recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    /* MPI_ANY_SOURCE, MPI_PROC_NULL: invisible to the per-peer count */
    if (src < 0 || wp_mpit_plain())
        return PMPI_Recv(buf, count, dt, src, tag, comm, st);
    MPI_Request r;
    int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, &r), done = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Status tmp;
    MPI_Status *sp = st == MPI_STATUS_IGNORE ? &tmp : st;
    rc = wp_poll(1, &r, sp, &comm, &src, &done);
    if (done)
        return rc;
    return PMPI_Wait(&r, st);
}

static int wp_mpit_irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, req);
    if (rc == MPI_SUCCESS && src >= 0) {
        unsigned k = wp_ntrack++ % WP_MPIT_TRACK;
        wp_track[k].req = *req, wp_track[k].comm = comm, wp_track[k].src = src;
    }
    return rc;
}

/* The receive behind a request, if this thread started it with MPI_Irecv.
 * Newest first: a request completed by a call that did not consume its
 * entry (a test, a lean wrapper's plain wait) leaves it behind, and Open
 * MPI recycles request handles, so an older entry may name the same
 * handle; the newest is the live request's. */
static int wp_lookup(MPI_Request req, MPI_Comm *comm, int *src)
{
    if (req == MPI_REQUEST_NULL)
        return 0;
    unsigned n = wp_ntrack < WP_MPIT_TRACK ? wp_ntrack : WP_MPIT_TRACK;
    for (unsigned j = 1; j <= n; j++) {
        unsigned i = (wp_ntrack - j) % WP_MPIT_TRACK;
        if (wp_track[i].req == req) {
            *comm = wp_track[i].comm, *src = wp_track[i].src;
            wp_track[i].req = MPI_REQUEST_NULL; /* the wait consumes it */
            return 1;
        }
    }
    return 0;
}

static int wp_mpit_wait(MPI_Request *req, MPI_Status *st)
{
    MPI_Comm comm;
    int src, done = 0;
    if (!wp_lookup(*req, &comm, &src) || wp_mpit_plain())
        return PMPI_Wait(req, st);
    MPI_Status tmp;
    int rc = wp_poll(1, req, st == MPI_STATUS_IGNORE ? &tmp : st, &comm, &src, &done);
    if (done)
        return rc;
    return PMPI_Wait(req, st);
}

#define WP_MPIT_WAITALL 64

static int wp_mpit_waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    MPI_Comm comms[WP_MPIT_WAITALL];
    int srcs[WP_MPIT_WAITALL], any = 0, done = 0;
    if (n > WP_MPIT_WAITALL || wp_mpit_plain())
        return PMPI_Waitall(n, reqs, sts);
    for (int i = 0; i < n; i++) {
        srcs[i] = -1;
        comms[i] = MPI_COMM_NULL;
        if (wp_lookup(reqs[i], &comms[i], &srcs[i]))
            any = 1;
    }
    if (!any)
        return PMPI_Waitall(n, reqs, sts);
    int rc = wp_poll(n, reqs, sts, comms, srcs, &done);
    if (done)
        return rc;
    return PMPI_Waitall(n, reqs, sts);
}

/* Does the variable work here?  A receive from ourselves on a private
 * communicator must show as one posted receive, and none after cancel. */
static int wp_selftest(char *why, size_t cap)
{
    MPI_Comm self;
    if (PMPI_Comm_dup(MPI_COMM_SELF, &self) != MPI_SUCCESS) {
        snprintf(why, cap, "MPI_Comm_dup failed");
        return 0;
    }
    int ok = 0, x = 0;
    MPI_Request r;
    if (PMPI_Irecv(&x, 1, MPI_INT, 0, 4242, self, &r) == MPI_SUCCESS) {
        long p = wp_posted(self, 0);
        ok = p == 1;
        PMPI_Cancel(&r);
        PMPI_Wait(&r, MPI_STATUS_IGNORE);
        if (!ok)
            snprintf(why, cap, "%s does not count a posted receive (the ob1 PML is not in use?)", WP_PVAR_NAME);
    }
    wp_source_mpit.comm_free(self);
    PMPI_Comm_free(&self);
    return ok;
}

int wp_mpit_when = WP_MPIT_NONE;
uint64_t wp_mpit_init_ns;

/* MPI_T_init_thread, timed.  Before PMPI_Init (wp_mpit_preinit) it asks
 * for MPI_THREAD_MULTIPLE, which MPI_Init then overrides with what the
 * program asks for; after it, the thread level MPI_Init provided, since
 * Open MPI 4.1 makes MPI_Query_thread answer the level MPI_T_init_thread
 * was last given. */
static int wp_mpit_init(int required, int when)
{
    int provided = 0;
    uint64_t t0 = wp_clock_ns();
    int rc = MPI_T_init_thread(required, &provided);
    wp_mpit_init_ns += wp_clock_ns() - t0;
    wp_mpit_when = when;
    if (rc != MPI_SUCCESS)
        return -1;
    wp_mpit_inited = 1;
    return 0;
}

/* The variable is Open MPI ob1's, so the source is for Open MPI (and the
 * libraries built from it), which every one of them tells by exporting
 * ompi_mpi_comm_world, the object behind its MPI_COMM_WORLD.  Elsewhere
 * MPI_T is not touched: MPICH 4.0.2 crashes in MPI_T_pvar_get_num when a
 * program initialises MPI_T again after a full MPI_T_finalize, which a
 * probe that initialised and finalized it would have left behind
 * (tests/mpi/t_init.sh). */
int wp_mpit_possible(char *why, size_t cap)
{
    if (dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world") != NULL)
        return 1;
    if (why != NULL)
        snprintf(why, cap, "this MPI library is not Open MPI, whose ob1 has the %s performance variable",
                 WP_PVAR_NAME);
    return 0;
}

/* Before PMPI_Init.  Open MPI's MPI_T_init_thread registers every
 * component of every framework, loading each one's shared libraries.
 * MPI_Init loads some of them too and unloads those it does not select;
 * among them Debian's libfabric, whose PSM and PSM2 libraries wait 100 ms
 * each in their constructors for a device that is not there.  Called
 * after MPI_Init, MPI_T loads them again and waits again (206-212 ms on
 * 2 ranks here); called before, it keeps them loaded and MPI_Init finds
 * them so, and the two together take about as long as MPI_Init alone
 * plus the registration's CPU time (doc/performance.md, "Start-up and
 * finalize").  Nothing is probed yet: the probe needs MPI. */
void wp_mpit_preinit(void)
{
    if (!wp_mpit_inited)
        wp_mpit_init(MPI_THREAD_MULTIPLE, WP_MPIT_BEFORE);
}

static int wp_mpit_probe(char *why, size_t cap)
{
    int n = 0;
    int level = MPI_THREAD_SINGLE;
    if (!wp_mpit_possible(why, cap))
        return 0;
    if (!wp_mpit_inited && (PMPI_Query_thread(&level) != MPI_SUCCESS || wp_mpit_init(level, WP_MPIT_AFTER) != 0)) {
        snprintf(why, cap, "MPI_T_init_thread failed");
        return 0;
    }
    int (*event_num)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "MPI_T_event_get_num");
    int nev = -1;
    if (event_num == NULL || event_num(&nev) != MPI_SUCCESS)
        nev = -1;
    if (MPI_T_pvar_get_num(&n) != MPI_SUCCESS)
        n = 0;
    wp_pvar_index = -1;
    for (int i = 0; i < n; i++) {
        char name[256], desc[16];
        int nl = sizeof name, dl = sizeof desc, verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        if (MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &en, desc, &dl, &bind, &ro, &cont, &atomic) ==
                MPI_SUCCESS &&
            strcmp(name, WP_PVAR_NAME) == 0 && bind == MPI_T_BIND_MPI_COMM && dt == MPI_UNSIGNED && cont) {
            wp_pvar_index = i;
            break;
        }
    }
    if (wp_pvar_index < 0) {
        if (nev >= 0)
            snprintf(why, cap, "no %s performance variable, and none of the %d MPI_T events is a matching event",
                     WP_PVAR_NAME, nev);
        else
            snprintf(why, cap, "no %s performance variable (an Open MPI with the ob1 PML has it)", WP_PVAR_NAME);
        goto no;
    }
    if (MPI_T_pvar_session_create(&wp_session) != MPI_SUCCESS) {
        snprintf(why, cap, "MPI_T_pvar_session_create failed");
        goto no;
    }
    if (!wp_selftest(why, cap))
        goto no;
    return 1;
no:
    wp_source_mpit.stop();
    return 0;
}

static int wp_mpit_start(char *why, size_t cap)
{
    (void)why, (void)cap;
    return 0;
}

static void wp_mpit_comm_free(MPI_Comm comm)
{
    pthread_mutex_lock(&wp_mcomm_lock);
    for (int k = 0; k < wp_nmcomm; k++)
        if (wp_mcomm[k].comm == comm) {
            MPI_T_pvar_handle_free(wp_session, &wp_mcomm[k].h);
            wp_mcomm[k] = wp_mcomm[--wp_nmcomm];
            break;
        }
    pthread_mutex_unlock(&wp_mcomm_lock);
}

/* Before PMPI_Finalize: the handles and the session are freed, but MPI_T
 * stays initialized.  Open MPI 4.1.4's MPI_T_finalize closes every
 * framework MPI_T_init_thread registered and unloads their components;
 * at 4 ranks on 2 cores it took 12-15 ms of CPU per rank, most of it
 * (perf) in flushing the other core's TLB after the munmap calls of
 * dlclose, and MPI_Finalize as the program sees it took about 45 ms
 * longer than without it (bench/init_cost.c).  Left initialized, the
 * components stay mapped until the process exits, and PMPI_Finalize
 * leaves them loaded too.  MPI_T's count of initializations is the
 * program's to balance, not waitprof's: a program that uses MPI_T
 * itself still finalizes its own.  (Finalized after PMPI_Finalize,
 * Open MPI crashes, so there is no later place for it.) */
static void wp_mpit_stop(void)
{
    pthread_mutex_lock(&wp_mcomm_lock);
    while (wp_nmcomm > 0) {
        MPI_T_pvar_handle_free(wp_session, &wp_mcomm[wp_nmcomm - 1].h);
        wp_nmcomm--;
    }
    pthread_mutex_unlock(&wp_mcomm_lock);
    if (wp_session != MPI_T_PVAR_SESSION_NULL)
        MPI_T_pvar_session_free(&wp_session);
}

const struct wp_source wp_source_mpit = {
    .name = "mpit",
    .probe = wp_mpit_probe,
    .start = wp_mpit_start,
    .comm_free = wp_mpit_comm_free,
    .stop = wp_mpit_stop,
    .recv = wp_mpit_recv,
    .irecv = wp_mpit_irecv,
    .wait = wp_mpit_wait,
    .waitall = wp_mpit_waitall,
    .polls = 1,
};
