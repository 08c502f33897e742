/* mpit/requests.h — which thread waits on which request, for runtime sources.
 *
 * Contract:
 * - A fixed, preallocated, lock-free table maps a request's identity (the
 *   runtime's unique id; in Open MPI the request pointer, recycled from a
 *   free list) to one word: "posted" (the request waits for its peer: a
 *   receive not yet matched, a send whose receiver has not answered) and
 *   "awaited by thread k" (thread k is inside a call that cannot return
 *   before this request completes).
 * - Every thread that ever awaits a request gets a small index and a stall
 *   counter in a static array: the number of its awaited requests that are
 *   posted.  A thread inside MPI with a counter above zero is in MPI-Stall.
 *   Counters live in static memory, never in a thread's stack or TLS, so a
 *   callback on another thread can update them even while the owner exits.
 * - All operations are O(1) expected (open addressing, linear probing, no
 *   deletion: recycled request ids find their old slot), take no lock,
 *   never allocate and never call MPI, so they may run in PERUSE callbacks
 *   on any thread, with the runtime's locks held.  Any thread may call any
 *   of them concurrently: each transition is one compare-and-swap on the
 *   request's word, and the counter moves by exactly the change of that
 *   word's contribution (posted and awaited).
 * - With wp_req_serial set (the MPI runs below MPI_THREAD_MULTIPLE), the
 *   caller promises that one thread at a time calls these functions: Open
 *   MPI's ob1 raises its PERUSE events inside MPI calls, which such a
 *   program makes from one thread at a time, and the program's own
 *   serialization orders them.  Each transition is then a plain load and
 *   store (relaxed atomics, for the SIGPROF handler that reads the
 *   counter), no locked instruction: a ping-pong makes about ten of them
 *   per message.  The table also counts its live requests (activated, not
 *   completed) then; while there is none, the functions below return at
 *   once (wp_req_await: 0, not seen), since every request named is either
 *   complete or not followed.
 * - When the table is full, a request is not tracked and wp_req_untracked
 *   counts it; its waits then count as MPI-Work (reported, never silent).
 * - A source that can see the runtime's progress passes sets wp_req_need
 *   and calls wp_req_progress() at the end of every pass, on any thread: a
 *   thread's stall then counts (for the handler and for its end's date)
 *   only once the process made wp_req_need passes since it began.  Why:
 *   Open MPI's ob1 posts a receive before its first pass reads the
 *   transport, so a message that had arrived but was not yet read leaves
 *   the receive posted for that one pass (2-5 us measured) without any
 *   wait for its sender.  Passes are counted for the process, not per
 *   thread: under MPI_THREAD_MULTIPLE one waiting thread progresses while
 *   the others sleep on a condition, and its passes read every thread's
 *   messages.  With wp_req_need 0 (the default) a stall counts at once.
 */
#ifndef WP_MPIT_REQUESTS_H
#define WP_MPIT_REQUESTS_H

#include <stdint.h>

#include "state/clock.h"

#define WP_REQ_SLOTS 16384      /* power of two */
#define WP_REQ_THREADS 1024

/* Stall counters, indexed by thread index (wp_req_thread_index()). */
extern int wp_req_stall[WP_REQ_THREADS];
/* When each thread's counter last fell to zero (wp_ticks()): the end of
 * its last stall, which the wrappers read after a call the source saw to
 * take the call's wait from the runtime (wp_req_stall_end_mine()).  Read
 * after the call only: a value from before the call's entry means that
 * the call did not stall. */
extern uint64_t wp_req_stall_end[WP_REQ_THREADS];
extern unsigned long wp_req_untracked;
/* Progress passes a stall must last before it counts (see above): 0, or
 * WP_REQ_PASSES while a source calls wp_req_progress().  Two, not one,
 * because a transport whose polling the runtime registered after the
 * source's own callback is read after it within a pass. */
#define WP_REQ_PASSES 2
extern unsigned wp_req_need;
/* The process's progress passes so far (wraps; only differences are
 * used), and the pass at which each thread's stall counter last rose from
 * zero (static memory, as the counters: a callback on another thread may
 * start the thread's stall). */
extern unsigned wp_req_pass;
extern unsigned wp_req_since[WP_REQ_THREADS];

/* Whether a stall that began at pass `since` counts yet. */
static inline int wp_req_counts(unsigned since)
{
    return __atomic_load_n(&wp_req_pass, __ATOMIC_RELAXED) - since >= wp_req_need;
}

/* The end of one progress pass (see the contract).  A relaxed load and
 * store, no locked instruction: passes that run at once on several
 * threads may count as one, which only makes a stall count a pass later. */
static inline void wp_req_progress(void)
{
    __atomic_store_n(&wp_req_pass, __atomic_load_n(&wp_req_pass, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}
/* 1: one thread at a time calls the functions below (see above).  Set
 * before the source starts; never changed while requests are tracked. */
extern int wp_req_serial;

/* The calling thread's index: -2 before its first use, -1 when all were
 * taken.  Initial-exec TLS, so the SIGPROF handler may read it. */
extern __thread int wp_req_me __attribute__((tls_model("initial-exec")));

/* The calling thread's index, claimed on first use; -1 when all are taken. */
int wp_req_thread_index(void);

/* A request was (re)started.  posted: it waits for its peer from the start
 * (sends); awaited_by: the index of the thread that waits on it now (a
 * blocking call posted it), or -1. */
void wp_req_activate(uintptr_t id, int posted, int awaited_by);
/* The request waits for its peer (a receive entered the posted queue). */
void wp_req_posted(uintptr_t id);
/* The peer arrived (matched, or the receiver answered): no longer posted. */
void wp_req_matched(uintptr_t id);
/* The request completed: forget it. */
void wp_req_complete(uintptr_t id);
/* Thread `me` now waits on / no longer waits on the request.  wp_req_await
 * returns 1 when the request is known (so the source saw the call). */
int wp_req_await(uintptr_t id, int me);
void wp_req_unawait(uintptr_t id, int me);

/* Serial mode only (wp_req_serial): the requests that the calling thread's
 * current blocking call started itself live in a small set of the thread's
 * own instead of the shared table.  Their events arrive on this thread
 * (serial), and the call cannot return before they complete, so
 * wp_req_mine_clear() at its end forgets them all without a lookup.
 * The set counts its posted requests in nposted, which the thread's own
 * SIGPROF handler reads (wp_src_stalled_sig): the thread stalls while it is
 * above zero, as while its wp_req_stall[] counter is.
 * wp_req_mine_activate() takes a request started by the call (posted as
 * for wp_req_activate) and returns 1, or 0 when not serial or the set is
 * full (then use the table).  wp_req_mine_event() applies posted (1),
 * matched (0) or completed (-1) to a request of the set and returns 1, or 0
 * when it is not there (then use the table).
 * Inline: they run in every PERUSE callback of a ping-pong, where a call
 * into another file costs more than the work (doc/performance.md). */
#define WP_MINE_MAX 8
struct wp_req_mine {
    int n;            /* entries in use */
    int nposted;      /* entries posted; written with relaxed atomics */
    unsigned since;   /* wp_req_pass when nposted last rose from zero */
    uint64_t stall_end; /* when nposted last fell to zero (wp_ticks()) */
    uintptr_t id[WP_MINE_MAX];
    unsigned char posted[WP_MINE_MAX];
};
extern __thread struct wp_req_mine wp_mine __attribute__((tls_model("initial-exec")));

static inline int wp_req_mine_find(uintptr_t id)
{
    for (int i = 0; i < wp_mine.n; i++)
        if (wp_mine.id[i] == id)
            return i;
    return -1;
}

/* Only this thread writes nposted; its handler may read it at any moment. */
static inline void wp_req_mine_count(int delta)
{
    int was = __atomic_load_n(&wp_mine.nposted, __ATOMIC_RELAXED), n = was + delta;
    if (was == 0) {
        /* A new stall: its passes count from here.  Stored before nposted
         * rises, so that this thread's handler never sees the new stall
         * with the last one's start. */
        __atomic_store_n(&wp_mine.since, __atomic_load_n(&wp_req_pass, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
    __atomic_store_n(&wp_mine.nposted, n, __ATOMIC_RELAXED);
    /* The stall ended: one clock read, taken when the awaited message has
     * come, so it delays nothing but the wake-up it marks.  A stall that
     * did not last wp_req_need passes did not count, so it dates nothing. */
    if (n == 0 && delta < 0 && wp_req_counts(wp_mine.since))
        wp_mine.stall_end = wp_ticks();
}

/* The end of the calling thread's last stall (ticks; 0: none yet), by its
 * own set or by the table. */
static inline uint64_t wp_req_stall_end_mine(void)
{
    uint64_t a = wp_mine.stall_end, b = 0;
    if (wp_req_me >= 0 && wp_req_me < WP_REQ_THREADS)
        b = __atomic_load_n(&wp_req_stall_end[wp_req_me], __ATOMIC_RELAXED);
    return a > b ? a : b;
}

static inline int wp_req_mine_activate(uintptr_t id, int posted)
{
    if (!wp_req_serial || id == 0)
        return 0;
    /* A recycled id (ob1 reuses a completed request within one collective)
     * starts clean, as in the table. */
    int i = wp_req_mine_find(id);
    if (i < 0) {
        if (wp_mine.n == WP_MINE_MAX)
            return 0;
        i = wp_mine.n++;
        wp_mine.id[i] = id;
        wp_mine.posted[i] = 0;
    }
    posted = posted != 0;
    if (posted != wp_mine.posted[i]) {
        wp_req_mine_count(posted - wp_mine.posted[i]);
        wp_mine.posted[i] = (unsigned char)posted;
    }
    return 1;
}

static inline int wp_req_mine_event(uintptr_t id, int what)
{
    int i = wp_req_mine_find(id);
    if (i < 0)
        return 0;
    int posted = what > 0;
    if (posted != wp_mine.posted[i])
        wp_req_mine_count(posted - wp_mine.posted[i]);
    if (what < 0) {
        /* Completed: drop it (the last entry takes its place). */
        int last = --wp_mine.n;
        wp_mine.id[i] = wp_mine.id[last];
        wp_mine.posted[i] = wp_mine.posted[last];
    } else {
        wp_mine.posted[i] = (unsigned char)posted;
    }
    return 1;
}

static inline void wp_req_mine_clear(void)
{
    if (wp_mine.nposted)
        __atomic_store_n(&wp_mine.nposted, 0, __ATOMIC_RELAXED);
    wp_mine.n = 0;
}

/* Serial mode: the table's live requests.  While there is none, events and
 * waits need no lookup (every request they name is either not followed or
 * complete), and the callers test this before calling into the table. */
extern int wp_req_live;
static inline int wp_req_none_live(void)
{
    return wp_req_serial && wp_req_live == 0;
}

#endif
