/* wrap/wrap.h — what a generated wrapper does around its PMPI call: the
 * wrapper layer, which drives the sampler, the estimator and the stall
 * sources below it.
 *
 * Contract: wp_enter() moves the calling thread from Not-in-MPI to MPI-Work,
 * records the function, the entry time and the wrapper's frame (for the
 * sampler), and returns the thread's record;
 * for a call nested inside another wrapped call (MPICH's Fortran bindings
 * call the C MPI_* functions, libraries call MPI from MPI callbacks) it only
 * counts the depth and returns NULL, so each application call is seen once.
 * wp_leave() undoes it.  Both are inline and take no lock.  They make one
 * clock read (state/clock.h), except in lean mode (wp_lean, WAITPROF_LEAN=1),
 * which keeps no per-call figures, so that nothing needs a call's entry
 * time but the read API: there the wrappers read no clock and the sampler
 * dates a call by its first sample.  A clock read on the critical path of
 * a message costs about 10 ns here (doc/performance.md), more than 3 % of
 * this machine's fastest ping-pong.
 * The generated C wrappers have a lean and a full form (wrap/gen_wrappers.py);
 * the Fortran ones test wp_recorder(), NULL in lean mode, before each piece
 * of per-call bookkeeping.
 */
#ifndef WP_WRAP_WRAP_H
#define WP_WRAP_WRAP_H

#include <mpi.h>
#include <stdatomic.h>
#include <string.h>

#include "config.h"
#include "fallback/estimate.h"
#include "fallback/stats.h"
#include "match/match.h"
#include "mpit/source.h"
#include "sampler/ctr_split.h"
#include "sampler/sampler.h"
#include "state/clock.h"
#include "state/functions.h"
#include "state/thread.h"
#include "wrap/traffic.h"

/* Every wrapper starts on a 64-byte line, so that an edit elsewhere in
 * the generated files does not move a wrapper within its lines: with the
 * compiler's 16-byte alignment, a change that took 8 instructions out of
 * MPI_Waitall made bench/poll_cost's isendrecv loop 15.6 ns slower on
 * MPICH (21 paired rounds) and 9.0 faster on Open MPI (15); with the
 * wrappers aligned it was 9.0 ns faster than before the change on MPICH
 * and 9.8 on Open MPI, and MPI_Test 1.0 and 0.6 ns (15 rounds each).
 * It costs the library 27 KB of text. */
#define WP_API __attribute__((visibility("default"), section("wp_wrap_text"), aligned(64)))
/* Each generated file's wrappers start on a page: the section's place in
 * the library then does not move with the size of the library's other
 * code, and a wrapper's offset within its page changes only when the
 * wrappers before it in its file change.  The offset matters as the line
 * does: an edit in wrap/wrap.c that grew .text by 192 bytes and changed
 * no instruction of MPI_Test's wrappers moved them by 192 bytes and made
 * bench/poll_cost's MPI_Test loop 9 ns slower on MPICH (+13.3 against
 * +4.3 ns per call, 9 paired rounds), and no slower on Open MPI. */
#define WP_WRAP_TEXT_PAGE __asm__(".pushsection wp_wrap_text,\"ax\",@progbits\n\t.p2align 12\n\t.popsection")
/* The lean, full and fast forms of a C wrapper (wrap/gen_wrappers.py): in
 * the same section, so the sampler takes their frames for the MPI call as it
 * does the exported wrapper's (sampler/handler.c), and named
 * wp_lean_<MPI name>, wp_full_<MPI name> and wp_fast_<MPI name>, which
 * wp_fn_lookup() reads as the MPI name; aligned as WP_API. */
#define WP_WRAP_FORM static __attribute__((noinline, section("wp_wrap_text"), aligned(64)))

/* The stall source's side of a call (mpit/source.c), named by the table's
 * via=, newcomm= and freecomm directives. */
void wp_src_comm_new(MPI_Comm comm);
void wp_src_comm_free(MPI_Comm comm);

/* The calls named by via=: the source's replacement if it has one, else the
 * PMPI call.  Inline, so the usual case costs a load and a branch, not a
 * call.  MPI_Recv's via=wp_src_recv names two forms, chosen by
 * wrap/gen_wrappers.py: wp_src_recv_in for the full wrapper and
 * wp_src_recv_lean for the lean one; MPI_Wait's and MPI_Waitall's lean
 * wrappers take the _lean forms too.
 *
 * An untimed receive (wp_untimed_cat gave its category c): through the
 * source only while c's recent calls were long (struct wp_cat's
 * long_recent).  A polling source's first look comes WP_SRC_POLL_NS into
 * the call, so a shorter receive was never classified by it: its samples
 * go to the estimator's rule either way, and the PMPI call spares it the
 * source's nonblocking receive and polls (mpit/mpit.c).  A category whose
 * calls turn long is seen as soon as a sample dates one of them
 * (wp_count_settle) or a timed one is recorded; c == NULL (a timed call) always
 * goes through the source. */
_Static_assert(WP_CAT_LONG_US * 1000 <= WP_SRC_POLL_NS,
               "a receive the source can classify must count as long");
static inline int wp_src_short(const struct wp_source *s, const struct wp_cat *c)
{
    return c != NULL && c->long_recent == 0 && s->polls;
}
static inline int wp_src_recv_in(const struct wp_cat *c, void *buf, int count, MPI_Datatype dt, int src, int tag,
                                 MPI_Comm comm, MPI_Status *st)
{
    const struct wp_source *s = wp_src;
    if (s->recv == NULL || wp_src_short(s, c))
        return PMPI_Recv(buf, count, dt, src, tag, comm, st);
    return s->recv(buf, count, dt, src, tag, comm, st);
}

/* The lean wrappers' forms (mpit/source.h, WP_SRC_LONG_KEEP): through a
 * polling source only while the thread's hint says its receives and waits
 * last long enough for it (a source that does not poll sees every call);
 * otherwise the PMPI call, after which a call that a
 * sample fell in (the handler dated it: a lean wrapper reads no clock, so
 * enter_ticks is 0 until then) sends the next one through the source to
 * be measured.  The samples of such a plain call are MPI-Work, as in a
 * lean call the source did not see. */
static inline int wp_src_lean_short(const struct wp_source *s)
{
    return s->polls && wp_self.src_long == 0;
}
static inline int wp_src_lean_plain_done(int rc)
{
    if (wp_self.enter_ticks != 0)
        wp_self.src_long = 1;
    return rc;
}
static inline int wp_src_recv_lean(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                                   MPI_Status *st)
{
    const struct wp_source *s = wp_src;
    if (s->recv == NULL)
        return PMPI_Recv(buf, count, dt, src, tag, comm, st);
    if (!wp_src_lean_short(s))
        return s->recv(buf, count, dt, src, tag, comm, st);
    return wp_src_lean_plain_done(PMPI_Recv(buf, count, dt, src, tag, comm, st));
}

static inline int wp_src_irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                               MPI_Request *req)
{
    const struct wp_source *s = wp_src;
    return s->irecv ? s->irecv(buf, count, dt, src, tag, comm, req) : PMPI_Irecv(buf, count, dt, src, tag, comm, req);
}

static inline int wp_src_wait(MPI_Request *req, MPI_Status *st)
{
    const struct wp_source *s = wp_src;
    return s->wait ? s->wait(req, st) : PMPI_Wait(req, st);
}

static inline int wp_src_waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    const struct wp_source *s = wp_src;
    return s->waitall ? s->waitall(n, reqs, sts) : PMPI_Waitall(n, reqs, sts);
}

/* The full wrappers' waits, as wp_src_recv_in: c is the category the call
 * will be recorded in, when the thread has it cached (wp_stats_cat's
 * cached_only), else NULL.  Waits are always timed, so their categories
 * keep long_recent up to date; a plain wait leaves its receives' entries
 * in the source's table, which the source's lookup allows for
 * (mpit/mpit.c). */
static inline int wp_src_wait_in(const struct wp_cat *c, MPI_Request *req, MPI_Status *st)
{
    const struct wp_source *s = wp_src;
    if (s->wait == NULL || wp_src_short(s, c))
        return PMPI_Wait(req, st);
    return s->wait(req, st);
}

static inline int wp_src_waitall_in(const struct wp_cat *c, int n, MPI_Request reqs[], MPI_Status sts[])
{
    const struct wp_source *s = wp_src;
    if (s->waitall == NULL || wp_src_short(s, c))
        return PMPI_Waitall(n, reqs, sts);
    return s->waitall(n, reqs, sts);
}

/* Lean, as wp_src_recv_lean.  A plain wait leaves its receive's entry in
 * the source's table, which the source's lookup allows for (mpit/mpit.c). */
static inline int wp_src_wait_lean(MPI_Request *req, MPI_Status *st)
{
    const struct wp_source *s = wp_src;
    if (s->wait == NULL)
        return PMPI_Wait(req, st);
    if (!wp_src_lean_short(s))
        return s->wait(req, st);
    return wp_src_lean_plain_done(PMPI_Wait(req, st));
}

static inline int wp_src_waitall_lean(int n, MPI_Request reqs[], MPI_Status sts[])
{
    const struct wp_source *s = wp_src;
    if (s->waitall == NULL)
        return PMPI_Waitall(n, reqs, sts);
    if (!wp_src_lean_short(s))
        return s->waitall(n, reqs, sts);
    return wp_src_lean_plain_done(PMPI_Waitall(n, reqs, sts));
}

/* A PC inside the calling function (x86-64; elsewhere 0, and the handler
 * unwinds every sample from its leaf). */
static inline __attribute__((always_inline)) uintptr_t wp_here(void)
{
#if defined(__x86_64__)
    uintptr_t pc;
    __asm__("lea 0(%%rip), %0" : "=r"(pc));
    return pc;
#else
    return 0;
#endif
}

/* The entry of a call at depth 0, after wp_enter's tests (or a fast
 * form's, wp_fast_thread). */
static inline __attribute__((always_inline)) wp_thread_t *wp_enter_at(wp_thread_t *t, int fn, int timed)
{
    /* The wrapper's frame, for the sampler: a sample inside the call is
     * unwound from here, not through the MPI library's frames, which the
     * wrapper's frame stands for anyway (sampler/unwind.h).  Two stores and
     * two address computations; written before depth says they are valid.
     * Inlined, so the frame is the wrapper's. */
    t->call_cfa = (uintptr_t)__builtin_dwarf_cfa();
    t->call_pc = wp_here();
    atomic_signal_fence(memory_order_release);
    t->depth = 1;
    t->fn = fn;
    if (timed)
        t->enter_ticks = wp_ticks();
    /* The handler must never see Work with a stale function or time. */
    atomic_signal_fence(memory_order_release);
    t->state = WAITPROF_STATE_WORK;
    return t;
}
/* The rare part of a call's leaving (wrap/wrap.c).  Samples of a call
 * that was not recorded (an error, or not a waiting call after all) are
 * MPI-Work; then what the stall source saw this call await is released.
 * Out of line, so that the common leaving keeps no registers for it. */
void wp_leave_work(wp_thread_t *t) __attribute__((cold));
/* The leaving of a call entered by wp_enter_at, after wp_leave's tests. */
static inline __attribute__((always_inline)) void wp_leave_at(wp_thread_t *t)
{
    t->state = WAITPROF_STATE_NOT_IN_MPI;
    atomic_signal_fence(memory_order_release);
    /* One test for both (state/thread.h, leave_work): most calls have
     * neither. */
    if (__builtin_expect(t->leave_work != 0, 0))
        wp_leave_work(t);
    t->fn = 0;
    t->enter_ticks = 0;
    t->depth = 0;
}

/* timed: read the clock (0 in lean mode; a constant in the C wrappers,
 * which have a lean and a full form).  Untimed, enter_ticks stays 0
 * (wp_leave() left it so) until the handler dates the call. */
static inline __attribute__((always_inline)) wp_thread_t *wp_enter(int fn, int timed)
{
    wp_thread_t *t = &wp_self;
    if (t->depth != 0) {
        t->depth++;
        return NULL;
    }
    /* WAITPROF_COUNTERS_SPLIT: the counts so far were made outside MPI
     * (sampler/ctr_split.h); read before the clock, so the call's measured
     * duration leaves the read out.  One predicted branch otherwise. */
    if (__builtin_expect(wp_ctr_split, 0))
        wp_ctr_split_read(0);
    return wp_enter_at(t, fn, timed);
}

static inline __attribute__((always_inline)) void wp_leave(wp_thread_t *t)
{
    if (t == NULL) {
        wp_self.depth--;
        return;
    }
    /* The counts since the entry's read were made inside the call. */
    if (__builtin_expect(wp_ctr_split, 0))
        wp_ctr_split_read(1);
    wp_leave_at(t);
}

/* The fast forms of blocking sends and receives (wp_send_fast,
 * wp_recv_fast) take their path only for a thread at depth 0 with no
 * counter split (wp_fast_thread), and then enter and leave by
 * wp_enter_at(&wp_self, fn, 0) and wp_leave_at, which test neither
 * again: nested calls and the split go to the full form.  The
 * split is set at MPI_Init, before a fast form can run, and only cleared
 * after (sampler/sampler.c), so a call that found it clear finds it clear
 * at its end.  So a fast form's work before its call makes no call, and
 * GCC keeps the arguments in their registers instead of saving registers
 * that must be restored after the call, on the path of the reply the
 * program waits for. */
static inline __attribute__((always_inline)) int wp_fast_thread(void)
{
    return (wp_self.depth | __atomic_load_n(&wp_ctr_split, __ATOMIC_RELAXED)) == 0;
}

/* The record for the per-call bookkeeping (estimator, request kinds, traffic):
 * the outermost call's, except in lean mode. */
static inline wp_thread_t *wp_recorder(wp_thread_t *t)
{
    return __builtin_expect(wp_lean, 0) ? NULL : t;
}

/* --- what the estimator records (fallback/stats.h) -------------------------- */

/* The caller's return address: the call site in the program.  Wrappers are
 * never inlined into the program, so this is the program's own code. */
#define WP_CALL_SITE ((uintptr_t)__builtin_return_address(0))

/* The call site as the exported C wrapper saw it, for the full form it jumps
 * to (wrap/gen_wrappers.py), which reads it before anything else can
 * overwrite it: no MPI call, so no other wrapper, comes in between. */
extern __thread uintptr_t wp_call_site __attribute__((tls_model("initial-exec")));

/* The fast forms of blocking sends and receives (wp_send_fast,
 * wp_recv_fast) take the call site from their own return address where
 * the compiler makes the exported wrapper's jump to them a tail call
 * (configure's WP_SIBCALL_SITE: -O2 and above): that is the program's
 * call site, with no store and load of wp_call_site on the path of a
 * ping-pong's message.  They hand it over in wp_call_site only when they
 * go on to the full form.  Elsewhere the exported wrapper hands it over,
 * as for every other form. */
#if defined(WP_SIBCALL_SITE) && WP_SIBCALL_SITE
#define WP_FAST_SITE WP_CALL_SITE
#define WP_FAST_HANDOVER(site) (wp_call_site = (site))
#define WP_FAST_ENTRY_SITE() ((void)0)
#else
#define WP_FAST_SITE wp_call_site
#define WP_FAST_HANDOVER(site) ((void)(site))
#define WP_FAST_ENTRY_SITE() (wp_call_site = WP_CALL_SITE)
#endif

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

/* The same before the call, from the thread's cached size only: 1 and the
 * bytes in *nb when the datatype is the cached one (or count is not
 * positive), else 0.  A datatype is only asked about after a successful
 * call (wp_bytes), so a call with an invalid one still fails in MPI as
 * the program wrote it. */
static inline int wp_bytes_cached(long long count, MPI_Datatype dt, uint64_t *nb)
{
    *nb = 0;
    if (count <= 0)
        return 1;
    if (dt != wp_tc_type || __atomic_load_n(&wp_type_gen, __ATOMIC_RELAXED) != wp_tc_gen || wp_tc_size <= 0)
        return 0;
    *nb = (uint64_t)count * (uint64_t)wp_tc_size;
    return 1;
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

/* Settle the samples of a recorded call (at most once per sample period,
 * so out of the way of the recording path): they are held under the
 * bucket of their time to the call's end, and at MPI_Finalize the
 * category's share of time waited, by its matched calls or by the
 * estimator, makes those with the longest times MPI-Stall
 * (fallback/estimate.c, wp_estimate_held_prepare).  Calls complete on
 * entry did not wait. */
static __attribute__((noinline, cold)) void wp_settle_recorded(wp_thread_t *t, uint64_t bytes, int role, int early,
                                                               uint64_t d)
{
    /* The runtime source saw this call from before it could wait (mpit/
     * source.h, whole): what it held was taken earlier, in the wrapper or
     * the library's set-up of the call, and did not wait.  Measured on
     * PERUSE (tests/mpi/ws_source arrived): without this, those samples
     * were a tenth of an 8-byte receive's, all counted as waiting. */
    if (t->src_seen && wp_src->whole) {
        wp_sampler_settle(t, 0);
        return;
    }
    /* Every call's samples are held: the share of time its category
     * waited, by its matched calls or by the estimator, is known only at
     * MPI_Finalize (fallback/estimate.h, wp_estimate_held_prepare).  A call
     * complete on entry did not wait. */
    if (!early)
        wp_sampler_settle_held(t, d, wp_size_class(bytes), role);
    else
        wp_sampler_settle(t, 0);
}

/* Record the call and settle the samples taken during it: a sample whose
 * offset from the entry is below (duration - minimum so far) was taken
 * while the call was waiting (the minimum-duration rule, applied to
 * samples). */
/* always_inline: GCC's own choice differs between wrappers and builds.
 * Callgrind, instructions per recorded zero-byte MPI_Sendrecv
 * (bench/record_cost.c): Open MPI 261 with it, 294 without; MPICH 402 with,
 * 385 without.  Kept for the larger gain. */
/* *mc receives the call's category, for the matched instances
 * (match/match.h), which measure the wait of exactly that category. */
/* Returns the call's duration (ticks), the one recorded: the transfer
 * matrix's TIME(i,j) adds it (wrap/traffic.h), so that the matrix and the
 * per-function figures agree and neither counts this recording.  With
 * WAITPROF_ESTIMATE=0 nothing is recorded and the clock is read for the
 * matrix only (0 without it). */
static inline __attribute__((always_inline)) uint64_t wp_record(wp_thread_t *t, int fn, uint64_t bytes, int role,
                                                                uintptr_t site, int early, struct wp_mcat *mc)
{
    /* One test for the usual case (statistics on, depth 1). */
    if (__builtin_expect(!wp_stats_plain, 0)) {
        /* WAITPROF_ESTIMATE=0: nothing recorded; wp_leave() settles any
         * held samples as MPI-Work.  Matching is off then too. */
        if (!wp_stats_on)
            return wp_mx && t->enter_ticks ? wp_ticks() - t->enter_ticks : 0;
        /* WAITPROF_CALLPATH_DEPTH > 1: the site is the call path, not just
         * the return address.  Costs an unwind; only then. */
        site = wp_callpath_site(site);
    }
    mc->site = site;
    mc->fn = (uint16_t)fn;
    mc->sclass = (uint8_t)wp_size_class(bytes);
    mc->role = (uint8_t)role;
    uint64_t t1 = wp_ticks(), d = t1 - t->enter_ticks;
    /* Also the report's per-function figures (profile/calls.h). */
    wp_stats_record(fn, bytes, role, site, t->enter_ticks, t1, early);
    /* A call the runtime source saw: its wait by the source, from entry to
     * the end of its stall (none before entry: it did not stall). */
    if (__builtin_expect(t->src_seen, 0)) {
        uint64_t end = wp_req_stall_end_mine();
        wp_stats_source(site, fn, mc->sclass, role,
                        end > t->enter_ticks ? (end < t1 ? end : t1) - t->enter_ticks : 0);
    }
    if (__builtin_expect(t->has_pending, 0))
        wp_settle_recorded(t, bytes, role, early, d);
    return d;
}

/* Blocking point-to-point calls that numbering did not choose read no
 * clock (match/numbering.h, wp_match_pre_send): they are counted in their
 * category without a duration (fallback/stats.h, untimed).  Before such a
 * call, wp_untimed_cat() finds its category, or returns NULL when the call
 * must be timed anyway: one of its category's first WP_TIMED_FIRST calls,
 * so that every category has timed calls whose figures stand for the
 * others; a datatype whose size the thread has not cached (wp_bytes_cached:
 * its first call with it); a category that cannot be recorded; call paths
 * deeper than one frame, or no estimator.  *nb receives the call's bytes. */
#define WP_TIMED_FIRST 16
static inline __attribute__((always_inline)) struct wp_cat *wp_untimed_find(int fn, long long count, MPI_Datatype dt,
                                                                            int role, uintptr_t site, uint64_t *nb)
{
    if (!wp_bytes_cached(count, dt, nb))
        return NULL;
    struct wp_cat *c = wp_stats_cat(site, fn, wp_size_class(*nb), role, 0);
    return c && c->count >= WP_TIMED_FIRST ? c : NULL;
}

/* The thread's last untimed category per function (by fn modulo
 * WP_UCACHE), with the arguments that found it: a loop's blocking calls
 * repeat them exactly, and a hit is five comparisons instead of the
 * datatype cache, the size class and the category hash (about 35
 * instructions on each of a ping-pong's calls, callgrind).  Only a
 * category past its first WP_TIMED_FIRST calls is kept, and categories
 * are never freed or moved, so a hit is what wp_untimed_find would have
 * found; gen guards the datatype as wp_bytes_cached does. */
#define WP_UCACHE 8
struct wp_ucache {
    uintptr_t site;
    long long count;
    MPI_Datatype dt;
    unsigned gen;
    uint32_t key; /* wp_cat_key(fn, 0, role) */
    struct wp_cat *cat;
    uint64_t nb;
};
extern __thread struct wp_ucache wp_ucache[WP_UCACHE] __attribute__((tls_model("initial-exec")));
/* fn's entry: the one every wrapper of fn reads and writes. */
static inline __attribute__((always_inline)) struct wp_ucache *wp_ucache_of(int fn)
{
    return &wp_ucache[(unsigned)fn % WP_UCACHE];
}

/* Whether fn's cache entry holds the category of these arguments.  A hit
 * also says that the estimator records plain sites (wp_stats_plain), so
 * the fast forms do not test that: only then is an entry filled
 * (wp_untimed_cat), which runs only for calls that numbering did not
 * choose, after MPI_Init set wp_stats_plain for the run and then turned
 * matching on (runtime/lifecycle.c). */
static inline __attribute__((always_inline)) int wp_untimed_hit(const struct wp_ucache *u, int fn, long long count,
                                                               MPI_Datatype dt, int role, uintptr_t site)
{
    return u->site == site && u->key == wp_cat_key(fn, 0, role) && u->count == count && u->dt == dt &&
           u->gen == __atomic_load_n(&wp_type_gen, __ATOMIC_RELAXED);
}
static inline __attribute__((always_inline)) struct wp_cat *wp_untimed_cat(int fn, long long count, MPI_Datatype dt,
                                                                           int role, uintptr_t site, uint64_t *nb)
{
    if (__builtin_expect(!wp_stats_plain, 0))
        return NULL;
    struct wp_ucache *u = wp_ucache_of(fn);
    if (__builtin_expect(wp_untimed_hit(u, fn, count, dt, role, site), 1)) {
        *nb = u->nb;
        return u->cat;
    }
    /* The generation before the lookup: a type freed meanwhile leaves the
     * entry stale, and the next call looks again. */
    unsigned gen = __atomic_load_n(&wp_type_gen, __ATOMIC_RELAXED);
    struct wp_cat *c = wp_untimed_find(fn, count, dt, role, site, nb);
    if (c != NULL)
        *u = (struct wp_ucache){site, count, dt, gen, wp_cat_key(fn, 0, role), c, *nb};
    return c;
}

/* The fast form of a blocking send (wrap/gen_wrappers.py, wp_fast_<MPI
 * name>): the exported wrapper jumps to it, and it tests whether the
 * thread has the whole decision at hand, the send on its last channel
 * with an unchosen number (match/numbering.h, wp_match_send_unchosen) and
 * its untimed category in fn's cache entry.  If so it only enters, calls,
 * and does the rest after the call, where a send's bookkeeping is off the
 * path of the reply it waits for; if not it jumps on to the full form.
 * The full form does the same work but keeps its many other cases' values
 * across the call: on the 8-byte ping-pong (bench/pingpong.c) the fast
 * form took a median 3.0 and 3.4 ns off each one-way trip on Open MPI and
 * 0.9 to 1.7 ns on MPICH, in invocations of 11 to 15 rounds that ran the
 * libraries with and without it back to back.  The test is in the fast
 * form, not in the exported wrapper: that, with the receive's fast form
 * tested the same way, took off another 1.0 ns on MPICH (18 rounds) and
 * 1.5 ns on Open MPI (5 rounds; 0.8 in 12 rounds of the slower vCPU
 * placement), where the receive's fast form tested in the exported
 * wrapper had cost MPICH 1.0 to 1.9 ns (four invocations of 17 to 19
 * rounds; +0.1 in one of 13).  site is the program's call site
 * (WP_FAST_SITE).  The test also asks for a thread at depth 0 without a
 * counter split (wp_fast_thread), so that the form's work before its
 * call makes no call.  After the call the
 * category and bytes are read again from the entry, and the channel from
 * wp_mlast, which only a wrapper at depth 0 of this thread writes
 * (wp_untimed_cat, numbering; a call nested in PMPI_Send has no record,
 * wp_enter, and is timed by wp_match_pre_send before it looks), so they
 * are what the test saw. */
static inline __attribute__((always_inline)) int wp_send_fast(int fn, long long count, MPI_Datatype dt, int dest,
                                                             int tag, MPI_Comm comm, uintptr_t site)
{
    return wp_fast_thread() && wp_match_send_unchosen(dest, tag, comm) &&
           wp_untimed_hit(wp_ucache_of(fn), fn, count, dt, WP_ROLE_ANY, site);
}

/* A timed blocking send or receive whose numbering decided before its
 * call whether to time it (wrap/gen_wrappers.py; match/numbering.h,
 * wp_match_pre_send): recorded, and weighed when numbering alone made it
 * timed (p->tw: a chosen instance past its channel's first numbers;
 * fallback/stats.h, wp_stats_weigh), unless its category is in its first
 * WP_TIMED_FIRST calls, which are timed anyway. */
/* Returns wp_record's duration. */
static inline __attribute__((always_inline)) uint64_t wp_record_pre(wp_thread_t *t, int fn, uint64_t bytes, int role,
                                                                    uintptr_t site, int early, struct wp_mcat *mc,
                                                                    const struct wp_mpre *p)
{
    uint64_t d = wp_record(t, fn, bytes, role, site, early, mc);
    if (__builtin_expect(p->tw != 0, 0) && mc->site != 0)
        wp_stats_weigh(mc->site, mc->fn, mc->sclass, mc->role, p->tw, d, WP_TIMED_FIRST);
    return d;
}

/* After the call: count it.  A call that a sample fell in reads the clock
 * now, so that its samples are settled as a timed call's are: the handler
 * dated the call at its first sample, and a sample's distance from the
 * call's end is all the rule needs. */
static inline __attribute__((always_inline)) void wp_count_settle(wp_thread_t *t, struct wp_cat *c, uint64_t bytes,
                                                                  int role)
{
    if (__builtin_expect(t->has_pending, 0)) {
        uint64_t d = t->enter_ticks ? wp_ticks() - t->enter_ticks : 0;
        wp_cat_saw(c, d);
        wp_settle_recorded(t, bytes, role, 0, d);
    }
}
/* One untimed call more in c (n 1), or one less (n -1: a call counted
 * before it that then failed). */
static inline __attribute__((always_inline)) void wp_count_untimed(struct wp_cat *c, int n)
{
    c->untimed += (uint64_t)(int64_t)n;
    *c->fn_events += (uint64_t)(int64_t)n;
}
static inline __attribute__((always_inline)) void wp_count(wp_thread_t *t, struct wp_cat *c, uint64_t bytes, int role)
{
    wp_count_untimed(c, 1);
    wp_count_settle(t, c, bytes, role);
}

/* After a send in its fast form (wp_send_fast): what the full form does
 * after an untimed send (wrap/wrap.c).  A function of its own, so that the
 * fast form keeps nothing but its record and result across its call and
 * saves almost no register before it. */
void wp_sent_fast(wp_thread_t *t, int fn, int lr);

/* An untimed blocking receive is counted before its call: its category's
 * counts, its traffic and the end of the thread's link to its last
 * recorded receive (match/numbering.h, wp_mprev; an untimed receive is
 * numbered and not chosen, so that is all its numbering does after the
 * call).  They then run while the receive waits for its message instead
 * of after it arrived, on the path of a ping-pong's reply: about 1 ns
 * per one-way trip here (doc/performance.md).  Such a receive has a
 * known source and runs with the matrix off (wp_recv_fast and the full
 * form test both before it), so its traffic is the inline count
 * (wp_traffic_recv_known, which tests neither again).  After the call, wp_count_after() settles its samples as
 * wp_count() does, or, when the call failed (under an error handler that
 * returns), takes the counts back; the link stays ended, which only
 * leaves out a propagation through that receive. */
static inline __attribute__((always_inline)) void wp_count_before(struct wp_cat *c, int fn, uint64_t bytes,
                                                                  int source, MPI_Comm comm)
{
    wp_count_untimed(c, 1);
    wp_traffic_recv_known(fn, bytes, source, comm, 0);
    wp_mprev.chan = 0;
}
static inline __attribute__((always_inline)) void wp_count_after(wp_thread_t *t, struct wp_cat *c, int fn,
                                                                 uint64_t bytes, int role, int rc)
{
    if (__builtin_expect(rc != MPI_SUCCESS, 0)) {
        wp_count_untimed(c, -1);
        wp_traffic_recv_undo(fn, bytes);
        return;
    }
    wp_count_settle(t, c, bytes, role);
}

/* The fast form of a blocking receive (wrap/gen_wrappers.py, wp_fast_<MPI
 * name>), as wp_send_fast for a send: the exported wrapper jumps to it,
 * and it tests the matrix off, the thread (wp_fast_thread), its traffic
 * table and the receive's untimed category in the thread's cache
 * (wp_recv_fast), then takes the receive's number if that is not chosen
 * and its channel is in the thread's cache (wp_recv_fast_number;
 * match/numbering.h, wp_match_recv_unchosen) and counts it as
 * wp_count_before does, enters, receives and settles, keeping nothing
 * across its call but its record and result: after the call, on the path
 * of the reply the program sends next, that is all that is left.  A
 * receive's work before its call runs while it waits for its message,
 * and makes no call.  A receive that must be timed (its number may be
 * chosen, it is not numbered before its call: a nested call, matching
 * off, a wildcard; or its category or channel is not cached) jumps to the
 * full form with nothing taken, which numbers it itself.  Figures at
 * wp_send_fast and in doc/performance.md. */
static inline __attribute__((always_inline)) int wp_recv_fast(int fn, long long count, MPI_Datatype dt,
                                                             uintptr_t site)
{
    return wp_mx == NULL && wp_fast_thread() && wp_self.table[WP_TABLE_TRAFFIC] != NULL &&
           wp_untimed_hit(wp_ucache_of(fn), fn, count, dt, WP_ROLE_ANY, site);
}
static inline __attribute__((always_inline)) int wp_recv_fast_number(int fn, int source, int tag, MPI_Comm comm)
{
    if (__builtin_expect(!wp_match_recv_unchosen(source, tag, comm), 0))
        return 0;
    /* wp_count_before, whose test of the traffic table wp_recv_fast made. */
    const struct wp_ucache *u = wp_ucache_of(fn);
    wp_count_untimed(u->cat, 1);
    wp_traffic_recv_table(fn, u->nb);
    wp_mprev.chan = 0;
    return 1;
}
/* The fast receive form's call: through the source only as
 * wp_src_recv_in decides for the cached category. */
static inline __attribute__((always_inline)) int wp_src_recv_fast(int fn, void *buf, int count, MPI_Datatype dt,
                                                                 int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    return wp_src_recv_in(wp_ucache_of(fn)->cat, buf, count, dt, src, tag, comm, st);
}

/* After a receive in its fast form (wp_recv_fast): wp_count_after, then
 * the leaving (wp_leave_at), with the category and bytes read again from
 * the thread's cache only on their rare paths (a failed call, a call a
 * sample fell in); they are the ones wp_recv_fast_number counted, for the
 * reason wp_send_fast gives.  The leaving comes first and its one test of
 * leave_work stands for wp_count_after's test of has_pending too: this
 * is the receive's whole work after its message arrived, on the path of
 * the reply the program sends next.  Settling the call's samples after
 * its state went back to Not-in-MPI changes nothing: the handler holds no
 * sample of a thread outside MPI, and the settling blocks it anyway
 * (sampler/handler.c, wp_settle).  The rare part is wp_recvd_work
 * (wrap/wrap.c). */
void wp_recvd_work(wp_thread_t *t, int fn, int rc) __attribute__((cold));
static inline __attribute__((always_inline)) void wp_recvd_leave(wp_thread_t *t, int fn, int rc)
{
    if (__builtin_expect(rc != MPI_SUCCESS, 0)) {
        const struct wp_ucache *u = wp_ucache_of(fn);
        wp_count_after(t, u->cat, fn, u->nb, WP_ROLE_ANY, rc);
    }
    t->state = WAITPROF_STATE_NOT_IN_MPI;
    atomic_signal_fence(memory_order_release);
    if (__builtin_expect(t->leave_work != 0, 0))
        wp_recvd_work(t, fn, rc);
    t->fn = 0;
    t->enter_ticks = 0;
    t->depth = 0;
}

/* --- request kinds (fallback/stats.h) ------------------------------------------ */

/* A request handle as the key of the kind table: an int (MPICH) or a
 * pointer (Open MPI), widened; the null request is never stored. */
static inline uintptr_t wp_req_key(MPI_Request r)
{
    if (r == MPI_REQUEST_NULL)
        return 0;
    uintptr_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    return k;
}

static inline uintptr_t wp_freq_key(const void *fhandle)
{
    return wp_req_key(PMPI_Request_f2c(*(const MPI_Fint *)fhandle));
}

/* The kind of a request created by a collective with a root: the pattern
 * exists only on one side (fallback/stats.h). */
static inline int wp_rk_one2n(int role)
{
    return role == WP_ROLE_NONROOT ? WP_RK_BCAST : WP_RK_OTHER;
}
static inline int wp_rk_n2one(int role)
{
    return role == WP_ROLE_ROOT ? WP_RK_REDUCE : WP_RK_OTHER;
}

/* The kind a completion call is recorded under: the kinds of the requests
 * still pending on entry (the null request is not pending), combined by
 * wp_req_combine().  With forget (Wait, Waitall: every request completes
 * when the call succeeds) their non-persistent entries are dropped now,
 * because the call overwrites the handles.  Persistent requests stay
 * until MPI_Request_free.  *known says whether every pending request was
 * created by a call the table gives a kind (a point-to-point request,
 * persistent or not, a nonblocking collective, a collective file
 * operation): only then does a completion wrapper try the remedy's test
 * first (wrap/gen_wrappers.py, REMEDY).  Other requests (the req=unknown
 * rows' persistent collectives, partitioned, generalized, one-sided and
 * noncollective file requests, whose wrappers drop a stale kind under
 * their handle; requests made on another thread) go straight to the
 * wait: MPICH 4.0.2's MPI_Testall aborts on persistent collective
 * requests that the same MPI_Waitall completes.  Nor does any request once
 * the program set an error handler (wp_errors_may_return): with one that
 * returns, the test's progress can change which errors a wait reports
 * (Open MPI's MPI_Waitall returns at a truncated receive that failed
 * during the call, and waits for the others when it failed before). */
static inline int wp_req_kinds(const MPI_Request *reqs, long n, int forget, int *known)
{
    unsigned mask = 0;
    for (long i = 0; i < n; i++) {
        uintptr_t k = wp_req_key(reqs[i]);
        if (k)
            mask |= 1u << wp_req_kind_in(k, forget);
    }
    *known = !(mask & 1u) && !__atomic_load_n(&wp_errors_may_return, __ATOMIC_RELAXED);
    return wp_req_combine(mask);
}

/* The same for Fortran handles (converted to C ones first). */
static inline int wp_freq_kinds(const void *freqs, const void *count, int forget, int *known)
{
    const MPI_Fint *r = freqs;
    long n = count ? *(const MPI_Fint *)count : 1;
    unsigned mask = 0;
    for (long i = 0; i < n; i++) {
        uintptr_t k = wp_freq_key(&r[i]);
        if (k)
            mask |= 1u << wp_req_kind_in(k, forget);
    }
    *known = !(mask & 1u) && !__atomic_load_n(&wp_errors_may_return, __ATOMIC_RELAXED);
    return wp_req_combine(mask);
}

/* The MPI library's own definition of a Fortran binding symbol, found once
 * with dlsym(RTLD_NEXT) and cached.  Never called from a signal handler. */
void *wp_fortran_real(void **cache, const char *symbol);

/* The stall source's hooks (via=) for the Fortran bindings with integer
 * handles ('use mpi', mpif.h): Open MPI's Fortran MPI_Recv, MPI_Irecv,
 * MPI_Wait and MPI_Waitall call PMPI_* directly and would pass the source
 * by, so while a source has the hook, the wrapper converts the arguments
 * as the library's Fortran binding does, calls the hook and converts the
 * results back.  Returns 1 when it made the call (its error code is in
 * *ierr), 0 when the caller must call the library's Fortran symbol: no
 * hook, MPI_BOTTOM as the buffer (only the library can tell it), more
 * requests than it converts on the stack. */
int wp_fsrc_recv(void *buf, const void *count, const void *dt, const void *src, const void *tag, const void *comm,
                 void *status, void *ierr);
int wp_fsrc_irecv(void *buf, const void *count, const void *dt, const void *src, const void *tag, const void *comm,
                  void *req, void *ierr);
int wp_fsrc_wait(void *req, void *status, void *ierr);
int wp_fsrc_waitall(const void *count, void *reqs, void *statuses, void *ierr);

#endif
