/* match/match.h — matched instances: exact wait states from both sides of a
 * message or a collective call (issue 16; doc/design.md "Matched instances").
 *
 * Contract:
 * - Every rank numbers its point-to-point messages per channel (the
 *   communicator's id, sender and receiver ranks in it, tag) and its
 *   collective calls per communicator.  MPI's ordering rules make the k-th
 *   message sent on a channel the k-th one received on it, and every member
 *   calls a communicator's collectives in the same order, so both sides
 *   number an instance alike without any message.
 * - A deterministic function of (channel or communicator, k) chooses the
 *   instances both sides record (wp_match_chosen): the first
 *   WP_MATCH_FIRST of every channel, then one in 2^rate_log2.  A record
 *   holds entry and exit times, the call site and the category the
 *   estimator records the call under (fallback/stats.h), so a measured wait
 *   replaces the estimate of exactly that category.
 * - Communicator ids agree across ranks without messages: MPI_COMM_WORLD
 *   has a fixed id; a new communicator's id is a hash of its parent's, of
 *   its members' ranks in MPI_COMM_WORLD and of how many communicators
 *   with that parent and those members this process created before (every
 *   member takes part in those creations, in the same order).
 *   Intercommunicators and communicators made by calls not in the table
 *   (MPI_Comm_idup, spawn, connect) are not numbered: their calls keep the
 *   estimate.
 * - Point-to-point records stay on the rank until MPI_Finalize
 *   (match/exchange.c); when their buffer fills, the rate is halved and the
 *   records the lower rate would not have chosen are dropped (a subset on
 *   both sides: a rank's chosen set at a lower rate is contained in its set
 *   at a higher one).  Collective records are reduced over the
 *   communicator in batches (one MPI_Allreduce per batch: when a batch
 *   fills, at MPI_Comm_free and at MPI_Finalize), so their memory is fixed.
 * - Numbering runs in the wrappers, in normal context, never in a signal
 *   handler.  It takes no lock: channel counters are claimed with a
 *   compare-and-swap and counted with an atomic add (a plain one when only
 *   one thread calls MPI at a time); records are appended under a mutex,
 *   for chosen instances only.
 */
#ifndef WP_MATCH_MATCH_H
#define WP_MATCH_MATCH_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "state/clock.h"
#include "state/thread.h"

/* Every instance below this number on a channel or communicator is chosen,
 * so call sites with few calls are measured in full. */
#define WP_MATCH_FIRST 16
#define WP_MATCH_RATE_DEFAULT 16

/* 1 when the wrappers number instances (set at MPI_Init: WAITPROF_MATCH
 * not 0, estimate on, not lean). */
extern int wp_match_on;
/* The sampling exponent: one instance in 2^wp_match_bits beyond the first
 * ones.  Raised by one each time the point-to-point buffer fills. */
extern unsigned wp_match_bits;
/* The same for collective instances, fixed for the run: every member of a
 * communicator must choose the same instances, or their batches would
 * differ (point-to-point records may differ between the sides: an instance
 * only one side chose stays unmatched). */
extern unsigned wp_match_cbits;
/* Nonblocking receives awaiting their completion call (match.c): the
 * completion wrappers look requests up only while this is nonzero. */
extern int wp_match_tracked;

/* A communicator as numbering knows it. */
struct wp_mcomm {
    uintptr_t key;          /* the handle, widened (0: slot free) */
    MPI_Comm handle;
    uint64_t id;            /* agreed across ranks */
    int rank, size;         /* the calling process's rank in it, its size */
    int world;              /* its ranks are MPI_COMM_WORLD's */
    MPI_Group group;        /* for ranks in MPI_COMM_WORLD (when !world) */
    atomic_uint_fast64_t coll; /* collective instances so far */
    struct wp_cbatch *batch;   /* chosen collective instances not yet reduced */
    int dead;               /* freed: its handle may come back as another */
};

/* --- pure parts (also unit-tested) --------------------------------------------- */

static inline uint64_t wp_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* The channel of a message: the same value on both sides. */
static inline uint64_t wp_match_channel(uint64_t comm_id, int src, int dst, int tag)
{
    uint64_t h = wp_mix64(comm_id ^ 0x9e3779b97f4a7c15ull);
    h = wp_mix64(h ^ ((uint64_t)(uint32_t)src << 32 | (uint32_t)dst));
    return wp_mix64(h ^ (uint64_t)(uint32_t)tag) | 1; /* never 0: 0 marks a free counter */
}

/* Whether instance k of a channel or communicator is recorded at sampling
 * exponent bits.  Monotone: chosen at bits + 1 implies chosen at bits. */
static inline int wp_match_chosen(uint64_t chan, uint64_t k, unsigned bits)
{
    if (k < WP_MATCH_FIRST)
        return 1;
    if (bits == 0)
        return 1;
    return (wp_mix64(chan + k * 0x9e3779b97f4a7c15ull) >> (64 - bits)) == 0;
}

/* Whether instance k is in the always-chosen stratum. */
static inline int wp_match_first(uint64_t k)
{
    return k < WP_MATCH_FIRST;
}

/* --- set-up ------------------------------------------------------------------------ */

/* At MPI_Init (normal context), collective over wcomm (a duplicate of
 * MPI_COMM_WORLD): rate is WAITPROF_MATCH (0 off, else one in rate,
 * rounded down to a power of two), bytes the memory for point-to-point
 * records.  On for all ranks or for none.  Then, while on, the clocks'
 * offsets are measured (match/clock.c). */
void wp_match_init(MPI_Comm wcomm, int on, unsigned rate, size_t bytes);

/* --- one time base (match/clock.c) ------------------------------------------------ */

/* The test clock (WAITPROF_TEST_CLOCK) on this rank: before wp_match_init. */
void wp_match_clock_test(int injected, double offset_s, double drift_ppm);
/* Collective over wcomm: measure this rank's offset to rank 0 (at MPI_Init,
 * then at MPI_Finalize). */
void wp_match_clock_sync(MPI_Comm wcomm, int rank);
/* A time stamp (ticks) of this rank in the common base, ns. */
double wp_match_ref_ns(uint64_t ticks);
/* The offsets measured (s), the bound of their error (s: half the shortest
 * ping-pong round trip) and how many times they were measured (0, 1, 2),
 * for the meta file.  Reads memory only. */
void wp_match_clock_offsets(double *o1_s, double *o2_s, double *err_s, int *phases);
void wp_match_clock_end(void);
/* A new communicator from a parent (the table's newcomm= rows); fn is the
 * creating function. */
void wp_match_comm_new(MPI_Comm parent, MPI_Comm comm);
/* Before MPI_Comm_free (collective): reduce the communicator's batch. */
void wp_match_comm_free(MPI_Comm comm);

/* The descriptor of a communicator, NULL when it is not numbered. */
struct wp_mcomm *wp_match_comm_slow(MPI_Comm comm);
extern struct wp_mcomm wp_match_world;
static inline struct wp_mcomm *wp_match_comm(MPI_Comm comm)
{
    if (__builtin_expect(comm == MPI_COMM_WORLD, 1))
        return &wp_match_world;
    return wp_match_comm_slow(comm);
}

/* The counter of a channel in direction dir (0 sent, 1 received): NULL
 * when the channel table is full (the channel is not numbered). */
atomic_uint_fast64_t *wp_match_counter(uint64_t chan, int dir);
/* The next number on a channel; UINT64_MAX when it is not numbered. */
uint64_t wp_match_next(uint64_t chan, int dir);

/* 1 when at most one thread calls MPI at a time (the thread level provided
 * is below MPI_THREAD_MULTIPLE): counters are then incremented without an
 * atomic read-modify-write, which costs more than the rest of numbering. */
extern int wp_match_serial;

/* The calling thread's last channel per direction: a ping-pong or a halo
 * exchange numbers the same few channels over and over, and a hit skips
 * the hash and the table.  A communicator's descriptor is never freed (a
 * freed communicator's is only marked dead), so a cached pointer cannot
 * come to stand for another communicator. */
struct wp_mcache {
    const struct wp_mcomm *mc;
    int peer, tag;
    uint64_t chan;
    atomic_uint_fast64_t *count;
};
extern __thread struct wp_mcache wp_mcache[2] __attribute__((tls_model("initial-exec")));

/* Number a message of comm between src and dst (ranks in mc) with tag, in
 * direction dir: *chan receives its channel.  UINT64_MAX: not numbered. */
static inline uint64_t wp_match_number(struct wp_mcomm *mc, int src, int dst, int tag, int dir, uint64_t *chan)
{
    struct wp_mcache *c = &wp_mcache[dir];
    int peer = dir ? src : dst;
    if (__builtin_expect(c->mc != mc || c->peer != peer || c->tag != tag || c->count == NULL, 0)) {
        uint64_t ch = wp_match_channel(mc->id, src, dst, tag);
        atomic_uint_fast64_t *n = wp_match_counter(ch, dir);
        if (n == NULL)
            return UINT64_MAX;
        c->mc = mc, c->peer = peer, c->tag = tag, c->chan = ch, c->count = n;
    }
    *chan = c->chan;
    if (wp_match_serial) {
        uint64_t k = atomic_load_explicit(c->count, memory_order_relaxed);
        atomic_store_explicit(c->count, k + 1, memory_order_relaxed);
        return k;
    }
    return atomic_fetch_add_explicit(c->count, 1, memory_order_relaxed);
}

/* --- what the wrappers call ------------------------------------------------------ */

/* A call's category, as the estimator records it (fallback/stats.h). */
struct wp_mcat {
    uintptr_t site;
    uint16_t fn;
    uint8_t sclass, role;
};

/* Record a chosen point-to-point instance (cold).  side 0: a send entered
 * at t0 (ticks); 1: a receive posted at post and waited for from t0 to t1;
 * lr: a blocking send, whose own wait (Late Receiver) is measured. */
void wp_match_p2p_record(const struct wp_mcat *c, uint64_t chan, uint64_t k, int side, int peer_rank,
                         struct wp_mcomm *mc, uint64_t post, uint64_t t0, uint64_t t1, int lr, uint64_t cause);

/* A message sent (blocking or not) on comm to dest with tag; enter is the
 * call's entry.  lr as above.  cause: what the thread computed before the
 * call (wp_thread_t.last_compute), named as the cause of its partner's
 * wait. */
static inline void wp_match_send(const struct wp_mcat *c, int dest, int tag, MPI_Comm comm, uint64_t enter, int lr,
                                 uint64_t cause)
{
    if (dest < 0) /* MPI_PROC_NULL */
        return;
    struct wp_mcomm *mc = wp_match_comm(comm);
    if (mc == NULL)
        return;
    uint64_t chan;
    uint64_t k = wp_match_number(mc, mc->rank, dest, tag, 0, &chan);
    if (__builtin_expect(k != UINT64_MAX && wp_match_chosen(chan, k, wp_match_bits), 0))
        wp_match_p2p_record(c, chan, k, 0, dest, mc, enter, enter, lr ? wp_ticks() : enter, lr, cause);
}

/* A blocking receive that completed: source and tag from the status for
 * wildcards.  Waited from enter until now. */
static inline void wp_match_recv(const struct wp_mcat *c, int source, int tag, MPI_Comm comm,
                                 const MPI_Status *st, uint64_t enter, uint64_t cause)
{
    if (source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG) {
        if (st == MPI_STATUS_IGNORE)
            return;
        source = st->MPI_SOURCE;
        tag = st->MPI_TAG;
    }
    if (source < 0) /* MPI_PROC_NULL */
        return;
    struct wp_mcomm *mc = wp_match_comm(comm);
    if (mc == NULL)
        return;
    uint64_t chan;
    uint64_t k = wp_match_number(mc, source, mc->rank, tag, 1, &chan);
    if (__builtin_expect(k != UINT64_MAX && wp_match_chosen(chan, k, wp_match_bits), 0))
        wp_match_p2p_record(c, chan, k, 1, source, mc, enter, enter, wp_ticks(), 0, cause);
}

/* A nonblocking receive posted at enter: numbered now when its source and
 * tag are known (the k-th posted receive of a channel takes its k-th
 * message), at completion otherwise; tracked until its completion call
 * when chosen or a wildcard. */
void wp_match_irecv_slow(MPI_Request req, int source, int tag, MPI_Comm comm, uint64_t enter, uint64_t cause);
static inline void wp_match_irecv(MPI_Request req, int source, int tag, MPI_Comm comm, uint64_t enter,
                                  uint64_t cause)
{
    if (source == MPI_PROC_NULL)
        return;
    wp_match_irecv_slow(req, source, tag, comm, enter, cause);
}

/* A request handle that a call other than MPI_Irecv created: if a stale
 * tracked receive had the same handle value, it is forgotten. */
void wp_match_forget(MPI_Request req);

/* Completion calls.  Before the PMPI call, the tracked receives among the
 * requests are taken out (at most WP_MATCH_PEND of them); after it, the
 * ones that completed are recorded with the call's category, waited from
 * enter (the call's entry; early: complete on entry, no wait) until now.
 * A wildcard receive needs its status: want_status says whether the call
 * must be given a status array of its own when the program ignores them. */
#define WP_MATCH_PEND 64
struct wp_mpend {
    int n, want_status;
    int idx[WP_MATCH_PEND];
    uint32_t slot[WP_MATCH_PEND];
};
void wp_match_take(struct wp_mpend *p, const MPI_Request *reqs, int n);
/* done(i): whether request i completed: all (Wait, Waitall), one index
 * (Waitany), or a list (Waitsome). */
void wp_match_done(struct wp_mpend *p, const struct wp_mcat *c, const MPI_Status *sts, int all, int one,
                   const int *list, int nlist, uint64_t enter, int early);

/* The same for the Fortran bindings: requests, statuses, index and list
 * as Fortran passes them (integers; indices from 1), NULL where the call
 * has none; fstatuses NULL also where their layout is not the integer
 * array's (mpi_f08). */
void wp_match_ftake(struct wp_mpend *p, const void *freqs, const void *count);
void wp_match_fdone(struct wp_mpend *p, const struct wp_mcat *c, const void *fstatuses, int all, const void *findex,
                    const void *flist, const void *fcount, uint64_t enter, int early);

/* A Fortran status as a C one in *buf; MPI_STATUS_IGNORE when there is
 * none (NULL, MPI_F_STATUS_IGNORE). */
static inline const MPI_Status *wp_match_fstatus(const void *fst, MPI_Status *buf)
{
    if (fst == NULL || fst == MPI_F_STATUS_IGNORE || PMPI_Status_f2c(fst, buf) != MPI_SUCCESS)
        return MPI_STATUS_IGNORE;
    return buf;
}

/* A collective call on comm that returned: entered at enter. */
void wp_match_coll_record(const struct wp_mcat *c, struct wp_mcomm *mc, uint64_t k, int is_root, uint64_t enter,
                          uint64_t cause);
static inline void wp_match_coll(const struct wp_mcat *c, MPI_Comm comm, int is_root, uint64_t enter, uint64_t cause)
{
    struct wp_mcomm *mc = wp_match_comm(comm);
    if (mc == NULL)
        return;
    uint64_t k = atomic_fetch_add_explicit(&mc->coll, 1, memory_order_relaxed);
    if (__builtin_expect(wp_match_chosen(mc->id, k, wp_match_cbits), 0))
        wp_match_coll_record(c, mc, k, is_root, enter, cause);
}

/* --- results ------------------------------------------------------------------------- */

/* At MPI_Finalize, collective over wcomm (a duplicate of MPI_COMM_WORLD),
 * before the profile is built and the estimator writes its rows: reduce
 * the collective batches still open, send every point-to-point record to
 * its partner's rank and match.  Runs once; returns 0. */
int wp_match_finalize(MPI_Comm wcomm, int rank, int size);

/* The measured figures of one category (match/measured.c). */
struct wp_measured {
    struct wp_mcat cat;
    /* Instances of the always-chosen stratum (the first ones of every
     * channel) and of the sampled one: recorded, matched, summed wait (ns),
     * and for the sampled stratum the sum of squared waits (s^2). */
    uint64_t first_n, first_m, first_w;
    uint64_t samp_n, samp_m, samp_w;
    double samp_w2;
    double scale; /* wp_match_wait's figure over the matched waits' sum */
};

/* The measured wait of a category that had calls calls, in ns, with the
 * half-width of its 95 % confidence interval in *ci_ns and the matched
 * instances in *matched; -1 when nothing was matched there (the estimate
 * stays). */
int64_t wp_match_wait(const struct wp_mcat *c, uint64_t calls, uint64_t *ci_ns, uint64_t *matched);

/* Who caused the waits of a category (match/measured.c): per partner rank
 * (in MPI_COMM_WORLD) and what it computed before its call (a hash of a
 * store entry on that rank; 0: it had no sample yet), the matched waits it
 * caused and their number.  The table has wp_match_cause_slots() slots,
 * unused ones with n 0; scale a row by wp_match_scale() of its category
 * (set by wp_match_wait) for the figure of all calls. */
struct wp_cause {
    struct wp_mcat cat;
    int pattern, delayer;
    uint64_t cause, n, wait_ns;
};
const struct wp_cause *wp_match_cause_at(size_t i);
size_t wp_match_cause_slots(void);
double wp_match_scale(const struct wp_mcat *c);
/* Whether this rank's computation (a store entry's hash) caused a wait on
 * another rank: its call path goes into rank.R.paths.  Reads memory only. */
int wp_match_cause_is_used(uint64_t cause);

/* The held samples' threshold (sampler/store.h) of a category: the mean
 * time its matched calls spent after the partner arrived, in ns; a sample
 * taken more than this before its call's end was waiting.  UINT64_MAX when
 * no call of the category was matched.  Reads memory only. */
uint64_t wp_match_tail_ns(int fn, int sclass, int role);

/* Counters for the meta file and the log: records kept, instances matched
 * and unmatched (their partner left no record), records dropped when the
 * buffer was full, and receives that could not be numbered (a wildcard
 * whose status was ignored where waitprof cannot supply one, too many
 * receives in flight, a full channel table) or matched inconsistently.
 * Written under the module's mutex; a writer in a signal handler reads
 * wp_match_cnt with plain loads (a torn value is only a count). */
struct wp_match_counts {
    uint64_t p2p_records, coll_records, matched, unmatched, dropped, unnumbered, bits;
};
extern struct wp_match_counts wp_match_cnt;
void wp_match_counts(struct wp_match_counts *out);

#endif
