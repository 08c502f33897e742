/* mpit/peruse.c — the PERUSE stall source (Open MPI built with
 * --enable-peruse, ob1 PML).
 *
 * What it knows (doc/sources.md, and Open MPI 4.1.4's ob1 source): every
 * point-to-point request of ob1, including the ones collectives post
 * internally, reports REQ_ACTIVATE when it starts (on the thread that
 * starts it), REQ_INSERT_IN_POSTED_Q when a receive waits for its message
 * (none when the message was already there), REQ_REMOVE_FROM_POSTED_Q when
 * a waiting receive gets its message, XFER_CONTINUE for each fragment a
 * rendezvous send schedules after the receiver's answer, COMPLETE at the
 * end.  So:
 * - a receive is posted (stalls its waiter) from INSERT_IN_POSTED_Q to the
 *   match; the transfer that follows is MPI-Work;
 * - a send is posted from ACTIVATE to its first XFER_CONTINUE (copy
 *   protocol: the receiver answered), or to COMPLETE.  With
 *   single-copy RGET the sender sees no event between the request to the
 *   receiver and the end, so the whole send is stall; inline eager sends
 *   (vader sendi) report nothing and are MPI-Work.
 * - a request is awaited by the thread that posted it inside a blocking
 *   call (MPI_Recv, MPI_Send, MPI_Sendrecv, a blocking collective), or by
 *   a thread that enters MPI_Wait/MPI_Waitall on it (mpit/source.c).
 *
 * Callbacks run inside ob1, possibly on another thread than the request's
 * owner and with ob1's matching lock held: they only call mpit/requests.c
 * (lock-free, O(1), no allocation, no MPI) and read the calling thread's
 * own TLS record.  Registration happens in normal context under a mutex.
 * PERUSE functions are found with dlsym at probe time, so a libwaitprof
 * built with peruse.h still loads against an Open MPI without PERUSE.
 *
 * ob1 posts a receive (INSERT_IN_POSTED_Q) before its first progress pass
 * reads the transport, so a message that arrived while the receiver
 * computed leaves the receive posted for one pass: 2-5 us per receive on
 * the machines of doc/sources.md, a quarter of an 8-byte receive's samples
 * where every message had arrived.  The source therefore registers a
 * progress callback with Open MPI's opal_progress_register (exported by
 * libopen-pal, found with dlsym) and has a stall count only after
 * WP_REQ_PASSES passes (mpit/requests.h).  Where that symbol is missing a
 * stall counts at once, as before.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mpit/requests.h"
#include "mpit/source.h"
#include "state/functions.h"

#ifdef HAVE_PERUSE_H
#include <peruse.h>

/* The events followed: every callback costs each message some tens of ns,
 * so only those that change a request's word.  REQ_MATCH_UNEX (the message
 * was there) changes nothing: an activated receive is not posted until
 * INSERT_IN_POSTED_Q.  MSG_MATCH_POSTED_REQ follows REMOVE_FROM_POSTED_Q for
 * the same match in ob1's two matching paths, and XFER_END precedes
 * COMPLETE, so those two would repeat what is already known. */
enum { EV_ACTIVATE, EV_POSTED, EV_REMOVE_POSTED, EV_XFER_CONTINUE, EV_COMPLETE, EV_COUNT };

static const char *const wp_ev_names[EV_COUNT] = {
    "PERUSE_COMM_REQ_ACTIVATE",      "PERUSE_COMM_REQ_INSERT_IN_POSTED_Q", "PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q",
    "PERUSE_COMM_REQ_XFER_CONTINUE", "PERUSE_COMM_REQ_COMPLETE",
};

static int wp_ev[EV_COUNT];

static struct {
    int (*init)(void);
    int (*query_event)(const char *, int *);
    int (*comm_register)(int, MPI_Comm, peruse_comm_callback_f *, void *, peruse_event_h *);
    int (*activate)(peruse_event_h);
    int (*deactivate)(peruse_event_h);
    int (*release)(peruse_event_h *);
    /* Open MPI's own progress hooks (libopen-pal); NULL when absent. */
    int (*progress_register)(int (*)(void));
    int (*progress_unregister)(int (*)(void));
} wp_pe;

/* Called by opal_progress at the end of each of its passes, on any thread,
 * after the transports registered before it; it only counts the pass
 * (mpit/requests.h: a relaxed load and store of a static word).  Returns
 * the number of events it completed, none, so that Open MPI's idle
 * yielding is unchanged. */
static int wp_pe_pass(void)
{
    wp_req_progress();
    return 0;
}

/* Communicators with registered events.  Normal context only, under the
 * mutex; the callbacks never look here. */
#define WP_PERUSE_COMMS 4096
static struct {
    MPI_Comm comm;
    peruse_event_h h[EV_COUNT];
} wp_pcomm[WP_PERUSE_COMMS];
static int wp_npcomm;
static unsigned long wp_pcomm_skipped;
static pthread_mutex_t wp_pcomm_lock = PTHREAD_MUTEX_INITIALIZER;

/* The callbacks, one per event so that none dispatches on its argument
 * (a ping-pong makes four of them per message on each half of the
 * benchmark pair).  See the file comment for why each step is safe here. */
static int wp_cb_activate(peruse_event_h h, MPI_Aint unique_id, peruse_comm_spec_t *spec, void *param)
{
    (void)h, (void)param;
    /* ACTIVATE runs on the thread that starts the request.  Requests
     * started outside any wrapped call (direct PMPI calls: another tool's,
     * waitprof's own) are not followed; a wrapped MPI_Wait on one is then
     * left to the estimator.  If the thread is inside a blocking call, the
     * call waits for the request: below MPI_THREAD_MULTIPLE it goes to the
     * thread's own small set, else to the table with this thread as its
     * waiter. */
    wp_thread_t *t = &wp_self;
    if (t->depth == 0)
        return MPI_SUCCESS;
    uintptr_t id = (uintptr_t)unique_id;
    int posted = spec->operation == PERUSE_SEND;
    if (t->fn > 0 && t->fn < WP_FN_COUNT && wp_fn_table[t->fn].waits) {
        if (wp_req_mine_activate(id, posted)) {
            t->src_seen = 1; /* this thread's own record (state/thread.h) */
            return MPI_SUCCESS;
        }
        int me = wp_req_me; /* TLS; claimed once per thread */
        if (__builtin_expect(me == -2, 0))
            me = wp_req_thread_index();
        if (me >= 0) {
            wp_src_hold(id); /* marks the call seen */
            wp_req_activate(id, posted, me);
            return MPI_SUCCESS;
        }
    }
    wp_req_activate(id, posted, -1);
    return MPI_SUCCESS;
}

/* The others: the call's own requests first (serial mode, inline), then
 * the table, which is not even called while it follows no live request. */
static int wp_cb_posted(peruse_event_h h, MPI_Aint unique_id, peruse_comm_spec_t *spec, void *param)
{
    (void)h, (void)spec, (void)param;
    if (!wp_req_mine_event((uintptr_t)unique_id, 1) && !wp_req_none_live())
        wp_req_posted((uintptr_t)unique_id);
    return MPI_SUCCESS;
}

/* REMOVE_FROM_POSTED_Q (a receive matched) and XFER_CONTINUE (a rendezvous
 * send's receiver answered). */
static int wp_cb_matched(peruse_event_h h, MPI_Aint unique_id, peruse_comm_spec_t *spec, void *param)
{
    (void)h, (void)spec, (void)param;
    if (!wp_req_mine_event((uintptr_t)unique_id, 0) && !wp_req_none_live())
        wp_req_matched((uintptr_t)unique_id);
    return MPI_SUCCESS;
}

static int wp_cb_complete(peruse_event_h h, MPI_Aint unique_id, peruse_comm_spec_t *spec, void *param)
{
    (void)h, (void)spec, (void)param;
    if (!wp_req_mine_event((uintptr_t)unique_id, -1) && !wp_req_none_live())
        wp_req_complete((uintptr_t)unique_id);
    return MPI_SUCCESS;
}

static peruse_comm_callback_f *const wp_ev_cb[EV_COUNT] = {wp_cb_activate, wp_cb_posted, wp_cb_matched,
                                                           wp_cb_matched, wp_cb_complete};

static int wp_peruse_probe(char *why, size_t cap)
{
    wp_pe.init = (int (*)(void))dlsym(RTLD_DEFAULT, "PERUSE_Init");
    if (wp_pe.init == NULL) {
        snprintf(why, cap, "this MPI library has no PERUSE (Open MPI built with --enable-peruse provides it)");
        return 0;
    }
    wp_pe.query_event = (int (*)(const char *, int *))dlsym(RTLD_DEFAULT, "PERUSE_Query_event");
    wp_pe.comm_register = (int (*)(int, MPI_Comm, peruse_comm_callback_f *, void *, peruse_event_h *))dlsym(
        RTLD_DEFAULT, "PERUSE_Event_comm_register");
    wp_pe.activate = (int (*)(peruse_event_h))dlsym(RTLD_DEFAULT, "PERUSE_Event_activate");
    wp_pe.deactivate = (int (*)(peruse_event_h))dlsym(RTLD_DEFAULT, "PERUSE_Event_deactivate");
    wp_pe.release = (int (*)(peruse_event_h *))dlsym(RTLD_DEFAULT, "PERUSE_Event_release");
    if (!wp_pe.query_event || !wp_pe.comm_register || !wp_pe.activate || !wp_pe.deactivate || !wp_pe.release) {
        snprintf(why, cap, "the MPI library's PERUSE interface is incomplete");
        return 0;
    }
    wp_pe.progress_register = (int (*)(int (*)(void)))dlsym(RTLD_DEFAULT, "opal_progress_register");
    wp_pe.progress_unregister = (int (*)(int (*)(void)))dlsym(RTLD_DEFAULT, "opal_progress_unregister");
    if (wp_pe.init() != PERUSE_SUCCESS) {
        snprintf(why, cap, "PERUSE_Init failed");
        return 0;
    }
    for (int i = 0; i < EV_COUNT; i++)
        if (wp_pe.query_event(wp_ev_names[i], &wp_ev[i]) != PERUSE_SUCCESS) {
            snprintf(why, cap, "PERUSE does not offer %s", wp_ev_names[i]);
            return 0;
        }
    return 1;
}

static int wp_peruse_attach(MPI_Comm comm)
{
    pthread_mutex_lock(&wp_pcomm_lock);
    int rc = -1;
    if (wp_npcomm >= WP_PERUSE_COMMS) {
        wp_pcomm_skipped++;
        goto out;
    }
    int k = wp_npcomm, i;
    for (i = 0; i < EV_COUNT; i++) {
        wp_pcomm[k].h[i] = PERUSE_EVENT_HANDLE_NULL;
        if (wp_pe.comm_register(wp_ev[i], comm, wp_ev_cb[i], NULL, &wp_pcomm[k].h[i]) !=
                PERUSE_SUCCESS ||
            wp_pe.activate(wp_pcomm[k].h[i]) != PERUSE_SUCCESS)
            break;
    }
    if (i < EV_COUNT) {
        /* Half a registration would see matches without postings: undo. */
        for (int j = 0; j <= i && j < EV_COUNT; j++)
            if (wp_pcomm[k].h[j] != PERUSE_EVENT_HANDLE_NULL) {
                wp_pe.deactivate(wp_pcomm[k].h[j]);
                wp_pe.release(&wp_pcomm[k].h[j]);
            }
        goto out;
    }
    wp_pcomm[k].comm = comm;
    wp_npcomm++;
    rc = 0;
out:
    pthread_mutex_unlock(&wp_pcomm_lock);
    return rc;
}

/* Deactivate first: PERUSE_Event_release alone leaves the callback armed. */
static void wp_peruse_detach_at(int k)
{
    for (int i = 0; i < EV_COUNT; i++) {
        wp_pe.deactivate(wp_pcomm[k].h[i]);
        wp_pe.release(&wp_pcomm[k].h[i]);
    }
    wp_pcomm[k] = wp_pcomm[--wp_npcomm];
}

static int wp_peruse_start(char *why, size_t cap)
{
    /* Below MPI_THREAD_MULTIPLE one thread at a time is inside MPI, and ob1
     * raises its events there: the request table may skip its locked
     * instructions (mpit/requests.h).  Set before the first event. */
    int level = MPI_THREAD_MULTIPLE;
    wp_req_serial = PMPI_Query_thread(&level) == MPI_SUCCESS && level < MPI_THREAD_MULTIPLE;
    if (wp_peruse_attach(MPI_COMM_WORLD) != 0 || wp_peruse_attach(MPI_COMM_SELF) != 0) {
        snprintf(why, cap, "PERUSE refused to register events on MPI_COMM_WORLD");
        pthread_mutex_lock(&wp_pcomm_lock);
        while (wp_npcomm > 0)
            wp_peruse_detach_at(wp_npcomm - 1);
        pthread_mutex_unlock(&wp_pcomm_lock);
        return -1;
    }
    /* Passes are counted from here; stalls wait for them only once the
     * callback is in (0 is Open MPI's OPAL_SUCCESS). */
    if (wp_pe.progress_register && wp_pe.progress_unregister && wp_pe.progress_register(wp_pe_pass) == 0)
        __atomic_store_n(&wp_req_need, WP_REQ_PASSES, __ATOMIC_RELAXED);
    return 0;
}

static void wp_peruse_comm_new(MPI_Comm comm)
{
    wp_peruse_attach(comm);
}

static void wp_peruse_comm_free(MPI_Comm comm)
{
    pthread_mutex_lock(&wp_pcomm_lock);
    for (int k = 0; k < wp_npcomm; k++)
        if (wp_pcomm[k].comm == comm) {
            wp_peruse_detach_at(k);
            break;
        }
    pthread_mutex_unlock(&wp_pcomm_lock);
}

static void wp_peruse_stop(void)
{
    if (wp_req_need) {
        __atomic_store_n(&wp_req_need, 0, __ATOMIC_RELAXED);
        wp_pe.progress_unregister(wp_pe_pass);
    }
    pthread_mutex_lock(&wp_pcomm_lock);
    while (wp_npcomm > 0)
        wp_peruse_detach_at(wp_npcomm - 1);
    pthread_mutex_unlock(&wp_pcomm_lock);
}

unsigned long wp_peruse_comms_skipped(void)
{
    return wp_pcomm_skipped;
}

/* A thread entering a completion call awaits its requests. */
static int wp_peruse_wait(MPI_Request *req, MPI_Status *st)
{
    int me = wp_req_thread_index();
    if (wp_req_await((uintptr_t)*req, me))
        wp_src_hold((uintptr_t)*req);
    return PMPI_Wait(req, st);
}

static int wp_peruse_waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    int me = wp_req_thread_index();
    for (int i = 0; i < n; i++)
        if (reqs[i] != MPI_REQUEST_NULL && wp_req_await((uintptr_t)reqs[i], me))
            wp_src_hold((uintptr_t)reqs[i]);
    return PMPI_Waitall(n, reqs, sts);
}

const struct wp_source wp_source_peruse = {
    .name = "peruse",
    .probe = wp_peruse_probe,
    .start = wp_peruse_start,
    .comm_new = wp_peruse_comm_new,
    .comm_free = wp_peruse_comm_free,
    .stop = wp_peruse_stop,
    .wait = wp_peruse_wait,
    .waitall = wp_peruse_waitall,
    .whole = 1,
};

#else /* no peruse.h at build time */

static int wp_peruse_probe(char *why, size_t cap)
{
    snprintf(why, cap, "waitprof was built without peruse.h; configure it against an Open MPI built with "
                       "--enable-peruse");
    return 0;
}

static int wp_peruse_start(char *why, size_t cap)
{
    (void)why, (void)cap;
    return -1;
}

unsigned long wp_peruse_comms_skipped(void)
{
    return 0;
}

const struct wp_source wp_source_peruse = {
    .name = "peruse",
    .probe = wp_peruse_probe,
    .start = wp_peruse_start,
};

#endif
