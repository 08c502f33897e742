/* fallback/stats.h — per-call statistics for the minimum-duration estimator.
 *
 * Contract:
 * - Every blocking MPI call that can wait for another rank (wait classes
 *   recv, send, sendrecv, probe, wait, nxn, barrier, one2n, n2one) is
 *   recorded by its outermost wrapper in a category: (MPI function,
 *   message-size class, root role, call site).  The call site is the return
 *   address into the program.
 * - A category keeps count, sum, min, max, second max of the call durations
 *   (in wp_ticks(), state/clock.h) and a multi-resolution histogram: ten
 *   linear bins per decade of microseconds (0-9 us, 10-99 us in steps of 10,
 *   ...), as in White's multi-resolution timers.
 * - Each thread records into its own fixed table, reserved on its first
 *   recorded call: after that, recording allocates nothing, takes no lock and
 *   calls no MPI function.  When a table is full, further new categories are
 *   counted in 'overflow' and their calls are lost to the estimate (never
 *   silently: the count is reported).
 * - wp_stats_record() is called from normal context only (the wrappers);
 *   nothing here is touched by the signal handler.
 */
#ifndef WP_FALLBACK_STATS_H
#define WP_FALLBACK_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "state/thread.h"
#include <string.h>

#define WP_SIZE_CLASSES 42   /* 0: no data; k>0: [2^(k-1), 2^k) bytes; 41: >= 1 TiB */
#define WP_DECADES 10        /* 1 us .. 10^10 us */
#define WP_HIST_BINS (10 * WP_DECADES + 1) /* the last bin holds everything longer */

enum wp_role { WP_ROLE_ANY = 0, WP_ROLE_ROOT = 1, WP_ROLE_NONROOT = 2 };

/* --- request kinds (completion calls) ----------------------------------------
 * A completion call (MPI_Wait family) is classified by what it completes.
 * The wrappers of the calls that create requests remember each request's
 * kind, keyed by the request handle's value (an int in MPICH, a pointer in
 * Open MPI), in a fixed per-thread table; the completion wrappers combine
 * the kinds of the requests still pending on entry into one and record it in
 * the category's role byte, so a Waitall that completes receives and one
 * that completes sends are different categories with different patterns.
 * WP_ROLE_ANY (0) means "not known" (a request created on another thread,
 * by a call whose requests have no kind, req=unknown in
 * wrap/mpi_functions.tbl, or evicted from a full table): such calls keep
 * the minimum-duration method's default, Late Sender. */
enum wp_rkind {
    WP_RK_RECV = 3,    /* receive (Irecv, Imrecv, Recv_init): Late Sender */
    WP_RK_SEND = 4,    /* any send: no pattern */
    WP_RK_NXN = 5,     /* nonblocking NxN collective: Wait at NxN */
    WP_RK_BARRIER = 6, /* MPI_Ibarrier: Wait at Barrier */
    WP_RK_BCAST = 7,   /* Ibcast/Iscatter(v) on a non-root: Late Broadcast */
    WP_RK_REDUCE = 8,  /* Ireduce/Igather(v) on the root: Early Reduce */
    WP_RK_OTHER = 9,   /* anything else (other roots, file, idup): no pattern */
    WP_RK_LAST = 9
};
#define WP_RK_PERSISTENT 0x80 /* flag in the table: kept until MPI_Request_free */

/* Name of a role byte value: "any", "root", "nonroot", "recv", "send", ... */
const char *wp_role_name(int role);

/* Remember / look up / forget the kind of a request (normal context only).
 * wp_req_kind() returns 0 when the request is not known; with forget, a
 * non-persistent entry is removed (the caller completes the request).
 * The wrappers call the inline wp_req_put_in() and wp_req_kind_in(), which
 * settle the usual case, a recycled handle in its own way, and call these
 * for the rest. */
void wp_req_put(uintptr_t key, int kind, int persistent);
int wp_req_kind(uintptr_t key, int forget);
void wp_req_forget(uintptr_t key);
/* The table (fallback/stats.c): WP_REQ_SETS sets of WP_REQ_WAYS handles,
 * so a lookup reads one set (the keys fill one cache line); key's set,
 * and its own way in the set, where a put places it when that way is free
 * (wp_req_put).  MPICH and Open MPI recycle request handles, so a handle's
 * next request then finds its entry in one comparison. */
#define WP_REQ_WAYS 8
#define WP_REQ_SETS 512
struct wp_req_set {
    uintptr_t key[WP_REQ_WAYS];
    uint8_t kind[WP_REQ_WAYS];
    uint8_t next;
};
static inline uint32_t wp_req_set_index(uintptr_t key)
{
    return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 55) & (WP_REQ_SETS - 1);
}
static inline uint32_t wp_req_way(uintptr_t key)
{
    return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 52) & (WP_REQ_WAYS - 1);
}
/* key's entry when it is in its own way, else NULL (also without a
 * table or for the null handle, key 0). */
static inline __attribute__((always_inline)) struct wp_req_set *wp_req_own(uintptr_t key, uint32_t *way)
{
    struct wp_req_set *t = wp_self.table[WP_TABLE_REQS];
    if (__builtin_expect(t == NULL || key == 0, 0))
        return NULL;
    struct wp_req_set *s = &t[wp_req_set_index(key)];
    *way = wp_req_way(key);
    return s->key[*way] == key ? s : NULL;
}
static inline __attribute__((always_inline)) void wp_req_put_in(uintptr_t key, int kind, int persistent)
{
    uint32_t w;
    struct wp_req_set *s = wp_req_own(key, &w);
    if (__builtin_expect(s != NULL, 1))
        s->kind[w] = (uint8_t)(kind | (persistent ? WP_RK_PERSISTENT : 0));
    else
        wp_req_put(key, kind, persistent);
}
static inline __attribute__((always_inline)) int wp_req_kind_in(uintptr_t key, int forget)
{
    uint32_t w;
    struct wp_req_set *s = wp_req_own(key, &w);
    if (__builtin_expect(s == NULL, 0))
        return wp_req_kind(key, forget);
    int k = s->kind[w];
    if (forget && !(k & WP_RK_PERSISTENT))
        s->kind[w] = 0;
    return k & ~WP_RK_PERSISTENT;
}

/* The kind recorded for a completion call, from the bit set (1 << kind) of
 * the kinds of its requests pending on entry (bit 0: unknown):
 * - any receive: WP_RK_RECV (a receive may be what the call waited for);
 * - else any unknown request: WP_ROLE_ANY (Late Sender, as before);
 * - else exactly one collective kind: that kind; more than one: WP_RK_OTHER;
 * - else sends only: WP_RK_SEND; nothing pending: WP_RK_OTHER. */
int wp_req_combine(unsigned mask);

/* --- call paths (WAITPROF_CALLPATH_DEPTH) -------------------------------------- */
#define WP_CALLPATH_MAX 16
/* Set once at MPI_Init from the configuration (runtime/lifecycle.c). */
extern int wp_stats_on;        /* WAITPROF_ESTIMATE: 0 = wrappers record nothing */
extern int wp_callpath_depth;  /* WAITPROF_CALLPATH_DEPTH, 1..16 */
extern int wp_stats_plain;     /* on and depth 1: the recording path's one test */
void wp_stats_configure(int on, int callpath_depth);
/* The call site of a recorded call when the depth is above 1: a nonzero
 * 64-bit hash of the first depth return addresses from ret (the wrapper's
 * own return address) outwards, remembered in a per-thread table so that
 * wp_callpath_get() can give the addresses back after the run.  Returns ret
 * itself when the stack cannot be read or the table is full. */
uintptr_t wp_callpath_site(uintptr_t ret);
/* The return addresses of a call path site, innermost first; 0 if unknown. */
int wp_callpath_get(uintptr_t site, uintptr_t *pcs, int max);

struct wp_cat {
    uintptr_t site;          /* 0: slot unused */
    uint16_t fn;
    uint8_t sclass, role;
    uint64_t count;
    uint64_t sum, min, max, max2; /* ticks */
    /* Calls counted without a duration: blocking point-to-point calls that
     * were not chosen matched instances read no clock (wrap/wrap.h,
     * wp_count).  count, sum, the extremes and the histogram describe the
     * timed calls; the category's calls are count + untimed, and its
     * time and estimated wait are the timed ones' scaled to them. */
    uint64_t untimed;
    /* The timed calls do not all stand for the same number of calls: a
     * call timed only because numbering chose it (a matched instance of a
     * category past its first calls, wrap/wrap.h) was timed with the
     * matching rate's probability, one in 2^e, and stands for 2^e calls,
     * while the other timed calls stand for themselves.  The rate changes
     * during a run (it halves when the records fill their buffer), so
     * scaling the timed calls to all by count alone would give the early
     * calls more weight than the late ones.  xcount and xsum hold what such
     * calls add beyond weight 1: the sum of 2^e - 1 and of (2^e - 1) x
     * their ticks (wp_stats_weigh, cold); wp_cat_scaled weighs with them. */
    double xcount, xsum;
    /* Whether the category's recent calls were long (WP_CAT_LONG_US or
     * more): renewed to WP_CAT_LONG_KEEP by each such call, timed or dated
     * by a sample (wp_cat_saw), worn down by one with each shorter timed
     * call.  Only a hint for the wrappers: an untimed receive, or a wait,
     * goes through a polling stall source only while it is above zero
     * (wrap/wrap.h, wp_src_recv_in, wp_src_wait_in).  Not merged, not
     * written. */
    uint32_t long_recent;
    /* Completion calls whose requests were already complete on entry (found
     * by a test before waiting): they cannot have waited, so they are kept
     * out of the minimum and counted as zero wait.  Included in count, sum,
     * max and the histogram; early_min is their own minimum. */
    uint64_t early_count, early_sum, early_min;
    /* Calls a runtime stall source saw (PERUSE, MPI_T: mpit/source.h) and
     * their waits by it, from entry to the end of their stall (ticks). */
    uint64_t src_count, src_sum;
    /* The report's event numbers (profile/calls.h): the n-th call of this
     * function on this thread, from 1, of the shortest call (min_ev,
     * early_min_ev) and the two longest.  They are why the report needs no
     * statistics of its own on the recording path: everything else it shows
     * per function is summed from the categories after the run. */
    uint64_t *fn_events;     /* the thread's call counter of fn (its table's) */
    uint64_t min_ev, early_min_ev, max_ev, max2_ev;
    uint32_t hist[WP_HIST_BINS];
};

/* One more than the largest function index a table counts events for;
 * state/functions.h's WP_FN_COUNT must not exceed it (a static assertion
 * in fallback/stats.c). */
#define WP_STATS_MAX_FN 1024

struct wp_stats {
    uint32_t nslots, used;
    uint64_t overflow;       /* calls not recorded: table full */
    uint64_t *fn_events;     /* WP_STATS_MAX_FN counters, after cats[] */
    /* The indices of the used slots in the order they were taken, after
     * fn_events.  Readers go through them (wp_stats_used) instead of
     * scanning cats[]: a slot is 576 bytes, so a scan of a table of
     * mostly empty slots reads hundreds of pages the recording never
     * wrote, each a page fault (about 10 us on some days here,
     * doc/performance.md, "Start-up and finalize"). */
    uint32_t *order;
    struct wp_cat cats[];
};

/* The slots taken so far, read with acquire order: every slot the count
 * covers is complete and listed, even while its thread is taking another
 * (wp_stats_slot publishes the count last, with release order), which the
 * writers of a run ending without MPI_Finalize rely on. */
static inline uint32_t wp_stats_count(const struct wp_stats *st)
{
    return __atomic_load_n(&st->used, __ATOMIC_ACQUIRE);
}

/* The k-th used slot of st, k < wp_stats_count(st). */
static inline struct wp_cat *wp_stats_used(const struct wp_stats *st, uint32_t k)
{
    return (struct wp_cat *)&st->cats[st->order[k]];
}

/* Size class of a message of 'bytes' bytes. */
static inline int wp_size_class(uint64_t bytes)
{
    if (bytes == 0)
        return 0;
    int k = 64 - __builtin_clzll(bytes); /* floor(log2(bytes)) + 1 */
    return k < WP_SIZE_CLASSES - 1 ? k : WP_SIZE_CLASSES - 1;
}

/* Histogram bin of a duration in microseconds. */
int wp_hist_bin(uint64_t us);
/* The clock's nanoseconds per tick in 32.32 fixed point, as
 * wp_ticks_duration_ns() (state/clock.h) uses it; set by
 * wp_stats_configure() after the clock's calibration (1 ns per tick
 * before). */
extern uint64_t wp_hist_q32;
/* The histogram bin of a duration in ticks, the same as
 * wp_hist_bin(wp_ticks_to_us(ticks)) but cheaper on the recording path: one
 * multiply instead of a call, divisions by constants (multiplies), and the
 * decades below 1 ms by comparisons; only longer calls take the loop. */
static inline int wp_hist_bin_ticks(uint64_t ticks)
{
    uint64_t us = (uint64_t)(((unsigned __int128)ticks * wp_hist_q32) >> 32) / 1000;
    if (us < 10)
        return (int)us;
    if (us < 100)
        return 10 + (int)(us / 10);
    if (us < 1000)
        return 20 + (int)(us / 100);
    return wp_hist_bin(us);
}
/* Lower bound in microseconds of a bin. */
uint64_t wp_hist_bin_low(int bin);


/* Insert or update a category in a table (also used to merge tables). */
struct wp_cat *wp_stats_slot(struct wp_stats *st, uintptr_t site, int fn, int sclass, int role);
void wp_cat_add(struct wp_cat *c, uint64_t ticks, uint64_t us, int early);
void wp_cat_merge(struct wp_cat *into, const struct wp_cat *from);

/* --- the recording path (inline: it runs in every recorded call) ---------- */

/* The categories of this thread's recent calls, indexed by a hash of site
 * and function: a loop or a phase calls the same few MPI functions at the
 * same sites again and again (a ping-pong alternates MPI_Send and
 * MPI_Recv, a halo exchange a few sends, receives and waits), so most calls
 * find their category here with two compares instead of a hash probe. */
#define WP_STATS_LAST_LOG2 3
extern __thread struct wp_cat *wp_stats_last[1u << WP_STATS_LAST_LOG2] __attribute__((tls_model("initial-exec")));
static inline struct wp_cat **wp_stats_last_slot(uintptr_t site, int fn)
{
    return &wp_stats_last[(((uint64_t)site ^ (uint64_t)fn) * 0x9e3779b97f4a7c15ull) >> (64 - WP_STATS_LAST_LOG2)];
}
/* The slow path: the thread's first call (reserve its table) and any
 * category not in wp_stats_last (probe the table).  NULL when the call
 * cannot be recorded (no memory; table full: counted in overflow). */
struct wp_cat *wp_stats_find(uintptr_t site, int fn, int sclass, int role);

/* fn, sclass and role as one word, as they lie in struct wp_cat. */
_Static_assert(offsetof(struct wp_cat, sclass) == offsetof(struct wp_cat, fn) + 2 &&
                   offsetof(struct wp_cat, role) == offsetof(struct wp_cat, fn) + 3,
               "struct wp_cat: fn, sclass, role must be adjacent");
static inline uint32_t wp_cat_key(int fn, int sclass, int role)
{
    return (uint32_t)(uint16_t)fn | (uint32_t)(uint8_t)sclass << 16 | (uint32_t)(uint8_t)role << 24;
}
static inline uint32_t wp_cat_key_of(const struct wp_cat *c)
{
    uint32_t k;
    memcpy(&k, &c->fn, sizeof k);
    return k;
}

/* struct wp_cat's long_recent: how long a call must be to count as long,
 * its histogram bin (wp_hist_bin(WP_CAT_LONG_US); checked by
 * tests/unit/test_stats.c), and how many shorter timed calls it takes to
 * forget one. */
#define WP_CAT_LONG_US 20
#define WP_CAT_LONG_BIN 12
#define WP_CAT_LONG_KEEP 8
static inline void wp_cat_long_bin(struct wp_cat *c, int bin)
{
    if (bin >= WP_CAT_LONG_BIN)
        c->long_recent = WP_CAT_LONG_KEEP;
    else if (c->long_recent)
        c->long_recent--;
}
/* A call of the category that was not recorded but whose duration is
 * known (a sample dated it: wrap/wrap.h, wp_count_settle): only the hint. */
static inline void wp_cat_saw(struct wp_cat *c, uint64_t ticks)
{
    if (wp_hist_bin_ticks(ticks) >= WP_CAT_LONG_BIN)
        c->long_recent = WP_CAT_LONG_KEEP;
}

/* ev: the call's event number (struct wp_cat). */
static inline void wp_cat_add_bin(struct wp_cat *c, uint64_t ticks, int bin, int early, uint64_t ev)
{
    wp_cat_long_bin(c, bin);
    c->count++;
    c->sum += ticks;
    if (early) {
        if (c->early_count++ == 0 || ticks < c->early_min)
            c->early_min = ticks, c->early_min_ev = ev;
        c->early_sum += ticks;
    } else if (ticks < c->min) {
        c->min = ticks, c->min_ev = ev;
    }
    /* Most calls are below the second largest: one compare.  (A call of 0
     * ticks never enters, so its category's first call may keep event 0,
     * "unknown"; no clock here ticks that coarsely.) */
    if (ticks > c->max2) {
        if (ticks > c->max) {
            c->max2 = c->max, c->max2_ev = c->max_ev;
            c->max = ticks, c->max_ev = ev;
        } else {
            c->max2 = ticks, c->max2_ev = ev;
        }
    }
    c->hist[bin]++;
}


/* The category of (site, fn, sclass, role): from wp_stats_last when it is
 * there (cached), else from the table (wp_stats_find, which caches it);
 * NULL when it cannot be recorded, or with cached_only when it is not in
 * wp_stats_last. */
static inline __attribute__((always_inline)) struct wp_cat *wp_stats_cat(uintptr_t site, int fn, int sclass, int role,
                                                                         int cached_only)
{
    struct wp_cat *c = *wp_stats_last_slot(site, fn);
    if (__builtin_expect(c == NULL || c->site != site || wp_cat_key_of(c) != wp_cat_key(fn, sclass, role), 0))
        return cached_only ? NULL : wp_stats_find(site, fn, sclass, role);
    return c;
}

/* Record one call.  Normal context; the first call of a thread reserves its
 * table.  Returns the minimum duration so far (ticks, this call included) of
 * the call's (function, size class, role) at this call site, or the call's
 * own duration when it could not be recorded. */
static inline __attribute__((always_inline)) uint64_t wp_stats_record(int fn, uint64_t bytes, int role,
                                                                      uintptr_t site, uint64_t t0, uint64_t t1,
                                       int early)
{
    uint64_t ticks = t1 > t0 ? t1 - t0 : 0;
    struct wp_cat *c = wp_stats_cat(site, fn, wp_size_class(bytes), role, 0);
    if (c == NULL)
        return ticks;
    wp_cat_add_bin(c, ticks, wp_hist_bin_ticks(ticks), early, ++*c->fn_events);
    return early ? ticks : c->min;
}

/* A category's calls, timed or not, and a timed figure scaled to them. */
static inline uint64_t wp_cat_calls(const struct wp_cat *c)
{
    return c->count + c->untimed;
}
/* The timed calls' time, each weighed by what it stands for (xcount,
 * xsum), is the time of all calls as a ratio estimate: weighed sum over
 * weighed count times the calls.  Other timed figures (the estimated
 * waits) are scaled by the same factor.  Without weights this is
 * timed_figure x calls / count. */
static inline uint64_t wp_cat_scaled(const struct wp_cat *c, uint64_t timed_figure)
{
    if (c->untimed == 0 || c->count == 0)
        return timed_figure;
    double wn = (double)c->count + c->xcount;
    double f = c->sum && c->xsum > 0 ? ((double)c->sum + c->xsum) / (double)c->sum : 1;
    return (uint64_t)((double)timed_figure * f * (double)(c->count + c->untimed) / wn + 0.5);
}

/* A call just recorded by wp_stats_record() in category (site, fn, sclass,
 * role), ticks long, was timed with probability 2^-e (e > 0): it stands
 * for 2^e calls (struct wp_cat, xcount).  Not while the category is in its
 * first calls, which are timed anyway (first: how many those are).  Cold:
 * only chosen matched instances. */
void wp_stats_weigh(uintptr_t site, int fn, int sclass, int role, unsigned e, uint64_t ticks, uint64_t first);

/* A call just recorded by wp_stats_record() was seen by a runtime stall
 * source, which says it waited wait ticks.  Cold: only such calls. */
static inline void wp_stats_source(uintptr_t site, int fn, int sclass, int role, uint64_t wait)
{
    struct wp_cat *c = wp_stats_cat(site, fn, sclass, role, 1);
    if (c == NULL)
        return; /* not recorded (a full table) */
    c->src_count++;
    c->src_sum += wait;
}

/* The minimum-duration estimate of one category: calls complete on entry
 * (early) wait zero; each other call waits its excess over min_ns.  With
 * early_calls = early_sum_ns = 0 this is the minimum-duration method's plain
 * formula,
 * sum - calls x min.  Never negative; 0 when min_ns is unknown (UINT64_MAX). */
uint64_t wp_estimate_wait(uint64_t sum_ns, uint64_t calls, uint64_t early_sum_ns, uint64_t early_calls,
                          uint64_t min_ns);

struct wp_stats *wp_stats_create(uint32_t nslots);
void wp_stats_destroy(struct wp_stats *st);

/* The tables of every thread that recorded a call (for the finalize step
 * and the calls writer): wp_table_count() and wp_table_at() of
 * state/thread.h. */
extern struct wp_table_list wp_stats_list;

/* Every used category of every thread's table, table by table in the
 * order each was taken, as far as wp_stats_count() covers when a table is
 * reached:
 *     struct wp_stats_iter it = {0};
 *     for (const struct wp_cat *c; (c = wp_stats_next(&it)) != NULL;)
 * Reads only; the readers at MPI_Finalize and at an exit without it. */
struct wp_stats_iter {
    int t;
    uint32_t k, n;
    const struct wp_stats *st;
};
static inline const struct wp_cat *wp_stats_next(struct wp_stats_iter *it)
{
    while (it->k >= it->n) {
        if (it->t >= wp_table_count(&wp_stats_list))
            return NULL;
        it->st = wp_table_at(&wp_stats_list, it->t++);
        it->k = 0;
        it->n = it->st ? wp_stats_count(it->st) : 0;
    }
    return wp_stats_used(it->st, it->k++);
}

#endif
