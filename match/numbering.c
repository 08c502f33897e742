/* match/numbering.c — numbering: communicator ids, channel counters, the
 * point-to-point records, the tracked nonblocking receives and the
 * collective batches.  See match/match.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "match/batch.h"
#include "match/clock.h"
#include "match/internal.h"
#include "match/measured.h"
#include "match/numbering.h"
#include "state/log.h"
#include "state/mpiwait.h"
#include "state/prefault.h"

int wp_match_on;
unsigned wp_match_bits;
unsigned wp_match_cbits;
int wp_match_tracked;
int wp_match_wild;
int wp_match_test_seen;
struct wp_mcomm wp_match_world;
struct wp_mrec *wp_match_recs;
size_t wp_match_nrec;

static size_t rec_cap;
/* Records whose pages are present (wp_match_init, wp_recs_ahead), and the
 * count of records at which the next ones are made present. */
static size_t rec_ready, rec_ahead_at = SIZE_MAX;
static MPI_Group world_group = MPI_GROUP_NULL;

/* --- channel counters ----------------------------------------------------------------
 * One process-wide open-addressing table: a slot's key is the channel
 * times two plus the direction, claimed once with a compare-and-swap, its
 * count incremented with an atomic add.  Slots are never freed, so a
 * lookup that finds its key may use the slot at once. */
#define WP_CHAN_SLOTS (1u << 16)
struct wp_chan {
    atomic_uint_fast64_t key;
    atomic_uint_fast64_t count;
};
static struct wp_chan *chans;

int wp_match_serial;
__thread struct wp_mcache wp_mcache[2][1u << WP_MCACHE_LOG2] __attribute__((tls_model("initial-exec")));
__thread struct wp_mprev wp_mprev __attribute__((tls_model("initial-exec")));
/* A thread starts with no last channel: the state wp_mlast_end leaves
 * (match/numbering.h), written out because a thread-local initializer
 * cannot call it. */
__thread struct wp_mlast wp_mlast __attribute__((tls_model("initial-exec"))) = {.peer = -1, .chosen_next = 1};

/* A timed send is recorded as any other; an untimed one has no entry
 * time for wp_match_p2p_due to stand in for (a blocking send may wait),
 * so a chosen one is only counted. */
void wp_match_sent_check(struct wp_mcache *ch, uint64_t k, int dest, struct wp_mcomm *mc, const struct wp_mcat *c,
                         uint64_t enter, int lr, uint64_t cause)
{
    if (enter != 0)
        wp_match_p2p_due(c, ch, k, 0, dest, mc, enter, lr, cause);
    else if (wp_match_due(ch, k))
        __atomic_fetch_add(&wp_match_cnt.unnumbered, 1, __ATOMIC_RELAXED);
}

uint64_t wp_match_next(uint64_t chan, int dir)
{
    atomic_uint_fast64_t *n = wp_match_counter(chan, dir);
    if (n == NULL)
        return UINT64_MAX;
    if (wp_match_serial) {
        uint64_t k = atomic_load_explicit(n, memory_order_relaxed);
        atomic_store_explicit(n, k + 1, memory_order_relaxed);
        return k;
    }
    return atomic_fetch_add_explicit(n, 1, memory_order_relaxed);
}

struct wp_mcache *wp_match_cache_fill(struct wp_mcache *c, struct wp_mcomm *mc, int src, int dst, int tag, int dir)
{
    uint64_t ch = wp_match_channel(mc->id, src, dst, tag);
    atomic_uint_fast64_t *n = wp_match_counter(ch, dir);
    if (n == NULL) {
        c->mc = NULL;
        return NULL;
    }
    /* next 0: the slot's first number is evaluated, whatever an earlier
     * channel of the slot left. */
    *c = (struct wp_mcache){
        .mc = mc, .comm = mc->handle, .peer = dir ? src : dst, .tag = tag, .chan = ch, .count = n, .next = 0};
    return c;
}

int wp_match_due(struct wp_mcache *c, uint64_t k)
{
    unsigned bits = __atomic_load_n(&wp_match_bits, __ATOMIC_RELAXED);
    c->next = wp_match_after(k, bits, wp_match_dense_log2);
    return wp_match_chosen(k, bits, wp_match_dense_log2);
}

int wp_match_coll_due(struct wp_mcomm *mc, uint64_t k)
{
    atomic_store_explicit(&mc->cnext, wp_match_after(k, wp_match_cbits, wp_match_dense_log2), memory_order_relaxed);
    return wp_match_chosen(k, wp_match_cbits, wp_match_dense_log2);
}

void wp_match_p2p_due(const struct wp_mcat *c, struct wp_mcache *ch, uint64_t k, int side, int peer,
                      struct wp_mcomm *mc, uint64_t enter, int lr, uint64_t cause)
{
    if (!wp_match_due(ch, k))
        return;
    enter = wp_match_when(enter);
    uint64_t now = side || lr ? wp_ticks() : enter;
    wp_match_p2p_record(c, ch->chan, k, side, peer, mc, enter, enter, now, lr, cause);
}

atomic_uint_fast64_t *wp_match_counter(uint64_t chan, int dir)
{
    if (chans == NULL)
        return NULL;
    uint64_t key = chan * 2 + (uint64_t)dir;
    key = key ? key : 2; /* 0 marks a free slot */
    uint32_t i = (uint32_t)wp_mix64(key) & (WP_CHAN_SLOTS - 1);
    for (uint32_t probe = 0; probe < 64; probe++, i = (i + 1) & (WP_CHAN_SLOTS - 1)) {
        uint64_t k = atomic_load_explicit(&chans[i].key, memory_order_acquire);
        if (k == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&chans[i].key, &expected, key))
                k = key;
            else
                k = expected;
        }
        if (k == key)
            return &chans[i].count;
    }
    /* A full neighbourhood: this channel is not numbered on this rank (its
     * partner's records for it stay unmatched, and are counted). */
    __atomic_fetch_add(&wp_match_cnt.unnumbered, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* --- communicators ------------------------------------------------------------------- */

#define WP_COMM_SLOTS 1024
static struct wp_mcomm *comms[WP_COMM_SLOTS];
static int ncomms;
/* How many communicators this process made from each (parent, members)
 * hash: the creation sequence in a new communicator's id. */
#define WP_BASES 1024
static struct {
    uint64_t base, seq;
} bases[WP_BASES];

static uintptr_t wp_comm_key(MPI_Comm c)
{
    uintptr_t k = 0;
    memcpy(&k, &c, sizeof c < sizeof k ? sizeof c : sizeof k);
    return k;
}

struct wp_mcomm *wp_match_comm_slow(MPI_Comm comm)
{
    uintptr_t key = wp_comm_key(comm);
    uint32_t h = (uint32_t)wp_mix64(key);
    for (uint32_t p = 0; p < WP_COMM_SLOTS; p++) {
        struct wp_mcomm *mc = __atomic_load_n(&comms[(h + p) % WP_COMM_SLOTS], __ATOMIC_ACQUIRE);
        if (mc == NULL)
            return NULL;
        if (mc->key == key && !__atomic_load_n(&mc->dead, __ATOMIC_ACQUIRE))
            return mc;
    }
    return NULL;
}

/* The members' ranks in MPI_COMM_WORLD (into w, size entries) and a hash
 * of them; 0 when they cannot be had. */
static uint64_t wp_members_hash(MPI_Comm comm, int size, int *w)
{
    MPI_Group g;
    if (w == NULL || PMPI_Comm_group(comm, &g) != MPI_SUCCESS)
        return 0;
    uint64_t h = wp_mix64((uint64_t)size);
    enum { CHUNK = 256 };
    int in[CHUNK];
    for (int r = 0; r < size; r += CHUNK) {
        int n = size - r < CHUNK ? size - r : CHUNK;
        for (int i = 0; i < n; i++)
            in[i] = r + i;
        if (PMPI_Group_translate_ranks(g, n, in, world_group, &w[r]) != MPI_SUCCESS) {
            PMPI_Group_free(&g);
            return 0;
        }
        for (int i = 0; i < n; i++)
            h = wp_mix64(h ^ (uint64_t)(uint32_t)w[r + i]);
    }
    PMPI_Group_free(&g);
    return h;
}

void wp_match_comm_new(MPI_Comm parent, MPI_Comm comm)
{
    if (!wp_match_on || comm == MPI_COMM_NULL)
        return;
    struct wp_mcomm *pc = wp_match_comm(parent);
    int inter = 0;
    if (pc == NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return;
    struct wp_mcomm *mc = calloc(1, sizeof *mc);
    int size = 0, ok = mc != NULL;
    PMPI_Comm_size(comm, &size);
    if (ok) {
        PMPI_Comm_rank(comm, &mc->rank);
        mc->size = size;
        mc->batch = calloc(1, sizeof *mc->batch);
        mc->wranks = malloc((size_t)(size > 0 ? size : 1) * sizeof *mc->wranks);
    }
    uint64_t members = mc ? wp_members_hash(comm, size, mc->wranks) : 0;
    ok = ok && members != 0 && mc->batch != NULL && __atomic_load_n(&ncomms, __ATOMIC_RELAXED) < WP_COMM_SLOTS * 3 / 4;
    /* Every member numbers the communicator or none does: a member that
     * could not would leave the others waiting in their batch reductions.
     * The one extra message of a creation, which is collective anyway. */
    int all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all) {
        if (mc) {
            free(mc->batch);
            free(mc->wranks);
        }
        free(mc);
        return;
    }
    uint64_t base = wp_mix64(pc->id ^ wp_mix64(members));
    mc->key = wp_comm_key(comm);
    mc->handle = comm;
    pthread_mutex_lock(&wp_match_mu);
    uint64_t seq = 0;
    for (uint32_t p = 0, i = (uint32_t)base % WP_BASES; p < WP_BASES; p++, i = (i + 1) % WP_BASES) {
        if (bases[i].base == base || bases[i].base == 0) {
            bases[i].base = base;
            seq = bases[i].seq++;
            break;
        }
    }
    mc->id = wp_mix64(base + seq * 0x9e3779b97f4a7c15ull) | 1;
    /* A handle the program freed and MPI gave out again: the old entry is
     * dead already (wp_match_comm_free); this one goes in a new slot.  The
     * table has room: it is filled to 3/4 at most, and only this process's
     * creations, which the test above counted, fill it (one thread creates
     * at a time per communicator; concurrent creations on other threads
     * may pass the test together, hence the margin). */
    uint32_t h = (uint32_t)wp_mix64(mc->key);
    for (uint32_t p = 0; p < WP_COMM_SLOTS; p++) {
        struct wp_mcomm **s = &comms[(h + p) % WP_COMM_SLOTS];
        if (*s == NULL) {
            __atomic_store_n(s, mc, __ATOMIC_RELEASE);
            __atomic_fetch_add(&ncomms, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    pthread_mutex_unlock(&wp_match_mu);
}

void wp_match_comm_free(MPI_Comm comm)
{
    if (!wp_match_on)
        return;
    struct wp_mcomm *mc = wp_match_comm_slow(comm);
    if (mc == NULL || mc == &wp_match_world)
        return;
    /* Collective, like the MPI_Comm_free it precedes: every member has the
     * same chosen instances in its batch. */
    wp_match_flush(mc, 0);
    __atomic_store_n(&mc->dead, 1, __ATOMIC_RELEASE);
    /* MPI may give the handle to the next communicator: the thread's next
     * blocking send on it must not take the prediction made for this one
     * (wp_mlast).  Another thread's prediction is only wrong then
     * (numbered after its send, wp_mlast_take sees the dead descriptor). */
    if (wp_mlast.comm == comm)
        wp_mlast_end();
}

struct wp_mcomm **wp_match_comms(int *n)
{
    struct wp_mcomm **v = malloc((WP_COMM_SLOTS + 1) * sizeof *v);
    *n = 0;
    if (v == NULL)
        return NULL;
    v[(*n)++] = &wp_match_world;
    pthread_mutex_lock(&wp_match_mu);
    for (int i = 0; i < WP_COMM_SLOTS; i++)
        if (comms[i] && !comms[i]->dead)
            v[(*n)++] = comms[i];
    pthread_mutex_unlock(&wp_match_mu);
    /* One order on every rank: by id (ties, which a 64-bit hash makes
     * unlikely, by nothing the ranks share; documented). */
    for (int i = 1; i < *n; i++)
        for (int j = i; j > 0 && v[j - 1]->id > v[j]->id; j--) {
            struct wp_mcomm *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v;
}

/* --- set-up ---------------------------------------------------------------------------- */

/* Records made present at MPI_Init (wp_match_init): 1 MiB, about 9 000, a
 * ping-pong's records for its first million messages (the thinning makes
 * them grow with the logarithm of a channel's messages).  Then 256 KiB
 * more each time the records come within half of that of the end of what
 * is present (wp_recs_ahead): one system call of about 45 us every 2 000
 * records or so, where their pages' faults would cost 64 of about 11 us
 * each, on the calls that write them (state/prefault.h). */
#define WP_RECS_TOUCHED ((size_t)(1u << 20) / sizeof(struct wp_mrec))
#define WP_RECS_AHEAD ((size_t)(256u << 10) / sizeof(struct wp_mrec))
_Static_assert(WP_RECS_TOUCHED > WP_RECS_AHEAD / 2, "the first records must reach past the first trigger");

/* The next records' pages, made present before a call writes them.
 * Called with wp_match_mu held, from wp_append. */
static void wp_recs_ahead(void)
{
    size_t n = rec_cap - rec_ready < WP_RECS_AHEAD ? rec_cap - rec_ready : WP_RECS_AHEAD;
    if (n == 0 || wp_prefault(&wp_match_recs[rec_ready], n * sizeof *wp_match_recs) != 0) {
        rec_ahead_at = SIZE_MAX;
        return;
    }
    rec_ready += n;
    rec_ahead_at = rec_ready < rec_cap ? rec_ready - WP_RECS_AHEAD / 2 : SIZE_MAX;
}

void wp_match_init(MPI_Comm wcomm, int on, unsigned rate, unsigned dense, size_t bytes)
{
    /* All ranks take the same value from the environment (a launcher may
     * give ranks different ones, and then matching is off for all). */
    int want = on && rate != 0;
    unsigned bits = 0;
    while ((2u << bits) <= rate && bits < 30)
        bits++;
    /* The thinning must be every rank's, or a thinned side would leave its
     * partners' records unmatched and collective batches would differ: the
     * smallest exponent any rank asks for, which is 0 (none) where any
     * asks for none. */
    int dlog = 0;
    if (dense >= WP_MATCH_FIRST && bits > 0)
        while ((2u << dlog) <= dense && dlog < 30)
            dlog++;
    int ok = 0;
    struct wp_cbatch *wb = NULL;
    if (want) {
        chans = calloc(WP_CHAN_SLOTS, sizeof *chans);
        rec_cap = bytes / sizeof(struct wp_mrec);
        wp_match_recs = rec_cap ? malloc(rec_cap * sizeof *wp_match_recs) : NULL;
        wb = calloc(1, sizeof *wb);
        ok = chans != NULL && wp_match_recs != NULL && wb != NULL &&
             PMPI_Comm_group(MPI_COMM_WORLD, &world_group) == MPI_SUCCESS;
    }
    /* Whether every rank wants matching, the thinning and whether every
     * rank has its memory (on all ranks or on none: collective batches are
     * reduced together), in one reduction, waited for with sched_yield
     * (state/mpiwait.h): on MPICH, whose waiting ranks spin, three blocking
     * ones took about 8 ms of CPU per rank of MPI_Init at 4 ranks on 2
     * cores (perf). */
    int mine[3] = {want, dlog, ok}, all[3] = {0, 0, 0};
    MPI_Request req;
    if (PMPI_Iallreduce(mine, all, 3, MPI_INT, MPI_MIN, wcomm, &req) != MPI_SUCCESS ||
        wp_wait_yield(&req) != MPI_SUCCESS)
        all[0] = all[2] = 0;
    if (!all[0] || !all[2]) {
        if (all[0] && !ok)
            wp_log_always("waitprof: no memory for matched instances; wait states are estimated on every rank "
                          "(raise WAITPROF_MEMORY, or WAITPROF_MATCH=0 to silence this)");
        if (world_group != MPI_GROUP_NULL)
            PMPI_Group_free(&world_group);
        free(chans);
        free(wp_match_recs);
        free(wb);
        chans = NULL;
        wp_match_recs = NULL;
        rec_cap = 0;
        return;
    }
    wp_match_dense_log2 = (unsigned)all[1];
    /* The first records' pages are made present now, and later ones ahead
     * of the records (wp_recs_ahead), not by the chosen calls that would
     * fault them in one by one: a receive's record is written after its
     * call, on the path of the reply, and a first write to a page cost a
     * ping-pong more than its records did.  With the default settings
     * (about 7 500 records a rank) writing them at MPI_Init took 2.5 ns
     * off each one-way trip (bench/pingpong.c, Open MPI, 12 rounds, fast
     * placement); with numbers never thinned (WAITPROF_MATCH_DENSE=0,
     * 59 000 records) 15 ns (6 rounds, slow placement: +23 ns against +7,
     * the whole 4 MiB written).  Where the kernel cannot populate a range,
     * the first WP_RECS_TOUCHED are written, at about 11 us a page. */
    rec_ready = rec_cap < WP_RECS_TOUCHED ? rec_cap : WP_RECS_TOUCHED;
    if (wp_prefault(wp_match_recs, rec_ready * sizeof *wp_match_recs) == 0)
        rec_ahead_at = rec_ready < rec_cap ? rec_ready - WP_RECS_AHEAD / 2 : SIZE_MAX;
    else
        memset(wp_match_recs, 0, rec_ready * sizeof *wp_match_recs);
    wp_match_world.key = wp_comm_key(MPI_COMM_WORLD);
    wp_match_world.handle = MPI_COMM_WORLD;
    wp_match_world.id = 0x5741495450524f46ull; /* any constant: every rank's */
    wp_match_world.world = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &wp_match_world.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &wp_match_world.size);
    wp_match_world.batch = wb;
    wp_match_bits = wp_match_cbits = bits;
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    wp_match_serial = provided != MPI_THREAD_MULTIPLE;
    wp_match_on = 1;
    wp_match_clock_sync(wcomm, wp_match_world.rank);
}

/* --- point-to-point records ------------------------------------------------------------- */


/* The buffer is full: halve the rate and keep what the lower one chose.
 * The first instances of every channel stay, so a buffer that holds only
 * those frees nothing, and later records are dropped (and counted). */
static void wp_match_compact(void)
{
    unsigned bits = wp_match_bits + 1;
    size_t n = 0;
    for (size_t i = 0; i < wp_match_nrec; i++) {
        const struct wp_mrec *r = &wp_match_recs[i];
        if (wp_match_chosen(r->k, bits, wp_match_dense_log2))
            wp_match_recs[n++] = *r;
    }
    wp_match_cnt.dropped += wp_match_nrec - n;
    wp_match_nrec = n;
    __atomic_store_n(&wp_match_bits, bits, __ATOMIC_RELAXED);
}

static void wp_append(const struct wp_mrec *r)
{
    if (wp_match_nrec == rec_cap)
        wp_match_compact();
    if (wp_match_nrec == rec_cap) {
        wp_match_cnt.dropped++;
        return;
    }
    wp_match_recs[wp_match_nrec++] = *r;
    wp_match_cnt.p2p_records++;
    if (__builtin_expect(wp_match_nrec == rec_ahead_at, 0))
        wp_recs_ahead();
}

void wp_match_p2p_record(const struct wp_mcat *c, uint64_t chan, uint64_t k, int side, int peer_rank,
                         struct wp_mcomm *mc, uint64_t post, uint64_t t0, uint64_t t1, int lr, uint64_t cause)
{
    struct wp_mrec r = {.chan = chan, .k = k, .post = post, .t0 = t0, .t1 = t1, .cat = *c, .cause = cause,
                        .side = (uint8_t)side, .lr = (uint8_t)lr, .first = (uint8_t)wp_match_first(k)};
    r.peer = wp_match_world_rank(mc, peer_rank);
    if (side == 0) {
        r.pchan = wp_mprev.chan;
        r.pk = wp_mprev.k;
    } else {
        wp_mprev = (struct wp_mprev){r.peer < 0 ? 0 : chan, k};
    }
    if (r.peer < 0)
        return;
    pthread_mutex_lock(&wp_match_mu);
    wp_append(&r);
    pthread_mutex_unlock(&wp_match_mu);
}

/* --- tracked nonblocking receives -------------------------------------------------------- */

#define WP_PEND_SLOTS 4096
struct wp_pendrecv {
    uintptr_t key;           /* the request handle; 0: free */
    struct wp_mcomm *mc;
    uint64_t chan, k, post, cause;
    int source, tag;         /* as posted (wildcards numbered at completion) */
    int wild;
    uint32_t coll;           /* not a receive but a nonblocking collective:
                              * its slot in match/batch.c, plus one */
    /* A receive posted through the Fortran bindings is kept twice: under
     * its C handle and under its Fortran one (wp_fkey), each entry naming
     * the other's key in twin, so that a Fortran completion call finds it
     * by the Fortran handle it copied before the call (wp_match_ftake).
     * Only the C one counts in wp_match_wild (wp_pend_is_fkey). */
    uintptr_t twin;
};
const struct wp_mcat wp_mcat_none;
static struct wp_pendrecv pend[WP_PEND_SLOTS];
static uint64_t wp_call_ids;
/* Entries without a twin (C handles only): while there is one, a Fortran
 * completion call could complete it and would not find it by its Fortran
 * handle, so it looks its handles up before the call instead.  Written
 * under wp_match_mu, read without it (wp_match_ftake): read stale, it can
 * only let a Fortran call miss a request another thread posted from C
 * meanwhile, whose instance then stays unmatched (counted), as a stale
 * filter count can. */
unsigned long wp_match_untwinned;
/* The Fortran handle of the receive the calling thread is posting
 * (wp_match_firecv), as a key; 0 for a C call. */
static __thread uintptr_t wp_ftwin_key __attribute__((tls_model("initial-exec")));

/* A Fortran handle as a key: bit 63 set, which no C handle has (a pointer
 * in user space, or MPICH's 32-bit integer). */
#if WP_FTWIN
static inline uintptr_t wp_fkey(MPI_Fint f)
{
    return ((uintptr_t)1 << 63) | (uint32_t)f;
}
static inline int wp_pend_is_fkey(uintptr_t key)
{
    return (int)(key >> 63);
}
#else
static inline int wp_pend_is_fkey(uintptr_t key)
{
    (void)key;
    return 0;
}
#endif

static uintptr_t wp_rkey(MPI_Request r)
{
    uintptr_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    return k;
}

static struct wp_pendrecv *wp_pend_find(uintptr_t key)
{
    uint32_t h = (uint32_t)wp_mix64(key) % WP_PEND_SLOTS;
    for (uint32_t p = 0; p < WP_PEND_SLOTS; p++) {
        struct wp_pendrecv *e = &pend[(h + p) % WP_PEND_SLOTS];
        if (e->key == key)
            return e;
        if (e->key == 0)
            return NULL;
    }
    return NULL;
}

/* How many followed requests fall in each of 1024 buckets of handle
 * values: the completion wrappers look a request up (under the mutex) only
 * where its bucket holds one, so a test over many requests of which none
 * is followed costs a load per request, not a hash probe.  Written under
 * wp_match_mu, read without it: a count read stale by another thread can
 * only make a completion go unrecorded (its instance stays unmatched,
 * counted), never record a wrong one. */
#define WP_PEND_FILTER_LOG2 10
static uint8_t pend_filter[1u << WP_PEND_FILTER_LOG2];
static inline uint32_t wp_pend_bucket(uintptr_t key)
{
    return (uint32_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> (64 - WP_PEND_FILTER_LOG2));
}

/* Linear probing without tombstones: removal moves later entries of the
 * same run back (the standard deletion), so a lookup may stop at a hole. */
static void wp_pend_remove_one(struct wp_pendrecv *e)
{
    uint32_t i = (uint32_t)(e - pend);
    if (e->twin == 0)
        __atomic_store_n(&wp_match_untwinned, wp_match_untwinned - 1, __ATOMIC_RELAXED);
    /* A saturated count stays saturated: it no longer knows how many
     * entries it stands for, and counting it down could reach zero while
     * entries of the bucket are still in flight. */
    uint8_t *f = &pend_filter[wp_pend_bucket(e->key)];
    if (*f < 255)
        __atomic_store_n(f, (uint8_t)(*f - 1), __ATOMIC_RELAXED);
    if (!wp_pend_is_fkey(e->key)) {
        if (e->wild)
            __atomic_store_n(&wp_match_wild, wp_match_wild - 1, __ATOMIC_RELAXED);
        if (e->wild || e->coll)
            __atomic_store_n(&wp_match_test_seen, wp_match_test_seen - 1, __ATOMIC_RELAXED);
    }
    e->key = 0;
    for (uint32_t j = (i + 1) % WP_PEND_SLOTS; pend[j].key != 0; j = (j + 1) % WP_PEND_SLOTS) {
        uint32_t h = (uint32_t)wp_mix64(pend[j].key) % WP_PEND_SLOTS;
        /* Move j to i when its home h is not in (i, j] cyclically. */
        int between = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!between) {
            pend[i] = pend[j];
            pend[j].key = 0;
            i = j;
        }
    }
    wp_match_tracked--;
}
/* An entry and its twin, if it has one. */
static void wp_pend_remove(struct wp_pendrecv *e)
{
    uintptr_t twin = e->twin;
    wp_pend_remove_one(e);
    struct wp_pendrecv *t = twin ? wp_pend_find(twin) : NULL;
    if (t != NULL && t->twin != 0)
        wp_pend_remove_one(t);
}


/* With wp_match_mu held: a stale entry of the same handle value (and its
 * twin) is dropped. */
static void wp_pend_drop(uintptr_t key)
{
    struct wp_pendrecv *e = wp_pend_find(key);
    if (e) {
        wp_match_nbc_forget_locked(e->coll);
        wp_pend_remove(e);
    }
}
/* A followed request's entry (and its twin) dropped, if the filter says
 * key may have one; the lock is taken only then. */
static void wp_forget_key(uintptr_t key)
{
    if (!__atomic_load_n(&wp_match_tracked, __ATOMIC_RELAXED) || key == 0 ||
        !__atomic_load_n(&pend_filter[wp_pend_bucket(key)], __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&wp_match_mu);
    wp_pend_drop(key);
    pthread_mutex_unlock(&wp_match_mu);
}

void wp_match_forget(MPI_Request req)
{
    wp_forget_key(wp_rkey(req));
}

/* With wp_match_mu held: a new entry of key, which wp_pend_drop left
 * absent, zeroed but for its key and counted as without a twin; NULL when
 * too many are in flight.  It moves no other entry. */
static struct wp_pendrecv *wp_pend_new(uintptr_t key)
{
    if (wp_match_tracked >= WP_PEND_SLOTS * 3 / 4)
        return NULL;
    uint32_t h = (uint32_t)wp_mix64(key) % WP_PEND_SLOTS;
    while (pend[h].key != 0)
        h = (h + 1) % WP_PEND_SLOTS;
    struct wp_pendrecv *e = &pend[h];
    *e = (struct wp_pendrecv){.key = key};
    wp_match_tracked++;
    __atomic_store_n(&wp_match_untwinned, wp_match_untwinned + 1, __ATOMIC_RELAXED);
    /* At most WP_PEND_SLOTS * 3 / 4 = 3072 entries: a bucket's count
     * saturates at 255 and then stays (a lookup too many, never one too
     * few). */
    uint8_t *f = &pend_filter[wp_pend_bucket(key)];
    if (*f < 255)
        __atomic_store_n(f, (uint8_t)(*f + 1), __ATOMIC_RELAXED);
    return e;
}
static struct wp_pendrecv *wp_pend_slot(uintptr_t key)
{
    wp_pend_drop(key);
    return wp_pend_new(key);
}

/* A receive posted at enter on mc, with its channel and number when its
 * source and tag are known (wild 0), followed until its completion. */
static void wp_pend_recv(uintptr_t key, struct wp_mcomm *mc, uint64_t chan, uint64_t k, int source, int tag,
                         int wild, uint64_t enter, uint64_t cause)
{
    enter = wp_match_when(enter);
    uintptr_t fk = wp_ftwin_key;
    pthread_mutex_lock(&wp_match_mu);
    /* Both keys' stale entries first: dropping one moves others, adding
     * one does not, so e stays where it is while its twin is added. */
    wp_pend_drop(key);
    if (fk)
        wp_pend_drop(fk);
    struct wp_pendrecv *e = wp_pend_new(key);
    if (e) {
        *e = (struct wp_pendrecv){.key = key, .mc = mc, .chan = chan, .k = k, .post = enter, .cause = cause,
                                  .source = source, .tag = tag, .wild = wild};
        if (wild) {
            __atomic_store_n(&wp_match_wild, wp_match_wild + 1, __ATOMIC_RELAXED);
            __atomic_store_n(&wp_match_test_seen, wp_match_test_seen + 1, __ATOMIC_RELAXED);
        }
        struct wp_pendrecv *f = fk ? wp_pend_new(fk) : NULL;
        if (f) {
            *f = *e;
            f->key = fk;
            f->twin = key;
            e->twin = fk;
            __atomic_store_n(&wp_match_untwinned, wp_match_untwinned - 2, __ATOMIC_RELAXED);
        }
    } else {
        /* Too many receives in flight to follow: a specific one is lost to
         * matching; a wildcard one leaves its channel's numbering short by
         * one, which makes later matches on it inconsistent (and counted). */
        wp_match_cnt.unnumbered++;
    }
    pthread_mutex_unlock(&wp_match_mu);
}

void wp_match_icoll_slow(MPI_Request req, struct wp_mcomm *mc, uint64_t k, int cls, int root, int kind,
                         uint64_t enter, uint64_t cause)
{
    uint32_t slot = wp_match_icoll_record(mc, k, cls, root, kind, wp_match_when(enter), cause);
    uintptr_t key = wp_rkey(req);
    if (slot == 0 || key == 0) {
        wp_match_forget(req);
        if (slot) {
            pthread_mutex_lock(&wp_match_mu);
            wp_match_nbc_forget_locked(slot);
            pthread_mutex_unlock(&wp_match_mu);
        }
        return;
    }
    pthread_mutex_lock(&wp_match_mu);
    struct wp_pendrecv *e = wp_pend_slot(key);
    if (e) {
        *e = (struct wp_pendrecv){.key = key, .mc = mc, .coll = slot};
        __atomic_store_n(&wp_match_test_seen, wp_match_test_seen + 1, __ATOMIC_RELAXED);
    } else
        wp_match_nbc_forget_locked(slot);
    pthread_mutex_unlock(&wp_match_mu);
}

void wp_match_irecv_chosen(MPI_Request req, struct wp_mcomm *mc, uint64_t chan, uint64_t k, int source, int tag,
                           uint64_t enter, uint64_t cause)
{
    uintptr_t key = wp_rkey(req);
    if (key == 0)
        return;
    wp_pend_recv(key, mc, chan, k, source, tag, 0, enter, cause);
}

void wp_match_irecv_wild(MPI_Request req, int source, int tag, MPI_Comm comm, uint64_t enter, uint64_t cause)
{
    struct wp_mcomm *mc = wp_match_comm(comm);
    uintptr_t key = wp_rkey(req);
    if (mc == NULL || key == 0) {
        wp_match_forget(req);
        return;
    }
    wp_pend_recv(key, mc, 0, 0, source, tag, 1, enter, cause);
}

/* Request i (its key: a C handle's, or wp_fkey of a Fortran one) as a
 * candidate of p if its filter bucket holds a followed receive. */
static inline void wp_take_key(struct wp_mpend *p, int i, uintptr_t key)
{
    if (p->n < WP_MATCH_PEND && key && __atomic_load_n(&pend_filter[wp_pend_bucket(key)], __ATOMIC_RELAXED)) {
        p->idx[p->n] = i;
        p->key[p->n++] = key;
    }
}
static inline void wp_take_one(struct wp_mpend *p, int i, MPI_Request r)
{
    wp_take_key(p, i, wp_rkey(r));
}

/* The copy of an array longer than WP_MATCH_PEND handles, per thread,
 * grown to the longest such array the thread completed requests of (up to
 * WP_MATCH_LONG handles, 512 KiB) and freed when the thread ends.  Before
 * it, every call over such an array looked each handle up in the filter
 * before the call: MPI_Testany over 256 receives with followed ones
 * pending cost 162 ns more per call, over 1024 678 ns (bench/poll_cost.c,
 * Open MPI), where the copy costs what the library's memcpy does, and the
 * lookups are left to the requests the call completed. */
#define WP_MATCH_LONG (1 << 16)
static __thread MPI_Request *wp_long __attribute__((tls_model("initial-exec")));
static __thread int wp_long_cap __attribute__((tls_model("initial-exec")));
static pthread_key_t wp_long_key;
static pthread_once_t wp_long_once = PTHREAD_ONCE_INIT;
static int wp_long_keyed;

static void wp_long_free(void *buf)
{
    free(buf);
}
static void wp_long_key_make(void)
{
    wp_long_keyed = pthread_key_create(&wp_long_key, wp_long_free) == 0;
}

/* Room for n handles in the thread's copy; 0 when there is none (no
 * memory, or more than WP_MATCH_LONG handles): the caller then looks the
 * handles up before the call.  Never in a signal handler: the completion
 * wrappers call it. */
static int wp_long_room(int n)
{
    if (n <= wp_long_cap)
        return 1;
    if (n > WP_MATCH_LONG)
        return 0;
    pthread_once(&wp_long_once, wp_long_key_make);
    if (!wp_long_keyed)
        return 0;
    int cap = wp_long_cap ? wp_long_cap : 256;
    while (cap < n)
        cap *= 2;
    MPI_Request *b = malloc((size_t)cap * sizeof *b);
    if (b == NULL || pthread_setspecific(wp_long_key, b) != 0) {
        free(b);
        return 0;
    }
    free(wp_long);
    wp_long = b;
    wp_long_cap = cap;
    return 1;
}

/* An array longer than WP_MATCH_PEND handles of size bytes each into the
 * thread's copy, for the C and the Fortran takes; 0 when there is no room
 * (the caller then looks the handles up before the call). */
static int wp_take_long(struct wp_mpend *p, const void *src, int n, size_t size)
{
    if (!wp_long_room(n))
        return 0;
    memcpy(wp_long, src, (size_t)n * size);
    p->ncopy = n;
    p->n = -1;
    return 1;
}

int wp_match_take_other(struct wp_mpend *p, const MPI_Request *reqs, int n)
{
    p->n = 0;
    p->ncopy = 0;
    /* Up to WP_MATCH_PEND handles are copied inline (wp_match_take). */
    if (!(n > WP_MATCH_PEND && wp_take_long(p, reqs, n, sizeof *reqs)))
        for (int i = 0; i < n && p->n < WP_MATCH_PEND; i++)
            wp_take_one(p, i, reqs[i]);
    return __atomic_load_n(&wp_match_wild, __ATOMIC_RELAXED) != 0;
}

/* The candidates of a deferred take (n -1) among the requests the call
 * completed (all, one index, or a list, as wp_match_done describes). */
static void wp_take_completed(struct wp_mpend *p, int all, int one, const int *list, int nlist)
{
    const MPI_Request *copy = p->ncopy > WP_MATCH_PEND ? wp_long : p->copy;
    p->n = 0;
    if (all)
        for (int i = 0; i < p->ncopy; i++)
            wp_take_one(p, i, copy[i]);
    else if (one != -1) {
        if (one >= 0 && one < p->ncopy) /* not MPI_UNDEFINED */
            wp_take_one(p, one, copy[one]);
    } else
        for (int q = 0; list && q < nlist; q++)
            if (list[q] >= 0 && list[q] < p->ncopy)
                wp_take_one(p, list[q], copy[list[q]]);
}

/* The status of the pos-th completion, from C statuses or Fortran ones
 * (NULL: none given); 0 when there is none. */
#ifdef MPI_F_STATUS_SIZE
#define WP_F_STATUS_SIZE MPI_F_STATUS_SIZE
#else
/* Open MPI 4.1 names no size; its Fortran status is the C one in integers. */
#define WP_F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#endif
static int wp_status_at(const MPI_Status *sts, const MPI_Fint *fsts, int pos, MPI_Status *out)
{
    if (fsts)
        return fsts != MPI_F_STATUSES_IGNORE && fsts != MPI_F_STATUS_IGNORE &&
               PMPI_Status_f2c(fsts + (size_t)pos * WP_F_STATUS_SIZE, out) == MPI_SUCCESS;
    if (sts == NULL || sts == MPI_STATUSES_IGNORE || sts == MPI_STATUS_IGNORE)
        return 0;
    *out = sts[pos];
    return 1;
}

static void wp_done(struct wp_mpend *p, const struct wp_mcat *c, const MPI_Status *sts, const MPI_Fint *fsts,
                    int all, int one, const int *list, const MPI_Fint *flist, int nlist, uint64_t enter, int early);

void wp_match_done(struct wp_mpend *p, const struct wp_mcat *c, const MPI_Status *sts, int all, int one,
                   const int *list, int nlist, uint64_t enter, int early)
{
    if (p->n < 0)
        wp_take_completed(p, all, one, list, nlist);
    if (p->n)
        wp_done(p, c, sts, NULL, all, one, list, NULL, nlist, enter, early);
}

void wp_match_fforget(const void *freq)
{
#if WP_FTWIN
    wp_forget_key(wp_fkey(*(const MPI_Fint *)freq));
#else
    (void)freq;
#endif
}

void wp_match_firecv(const void *freq, int source, int tag, MPI_Comm comm, uint64_t enter, uint64_t cause)
{
    MPI_Fint f = *(const MPI_Fint *)freq;
    /* A receive that is not chosen adds no twin, so a stale one of its
     * Fortran handle goes first; a chosen one replaces it anyway. */
    wp_match_fforget(freq);
#if WP_FTWIN
    wp_ftwin_key = wp_fkey(f);
#endif
    wp_match_irecv(PMPI_Request_f2c(f), source, tag, comm, enter, cause);
    wp_ftwin_key = 0;
}

/* The thread's copy holds Fortran handles as well as C ones. */
_Static_assert(sizeof(MPI_Fint) <= sizeof(MPI_Request), "wp_long holds as many Fortran handles as C ones");

void wp_match_ftake_other(struct wp_mpend *p, const void *freqs, const void *count)
{
    p->n = p->ncopy = 0;
    const MPI_Fint *r = freqs;
    int n = count ? *(const MPI_Fint *)count : 1;
    /* A longer array of twinned requests goes to the thread's copy, as a
     * C one does (wp_match_take_other), and its completed requests are
     * looked up after the call by their Fortran handles. */
    if (WP_FTWIN && n > WP_MATCH_PEND && __atomic_load_n(&wp_match_untwinned, __ATOMIC_RELAXED) == 0 &&
        wp_take_long(p, r, n, sizeof *r))
        return;
    for (int i = 0; i < n && p->n < WP_MATCH_PEND; i++)
        wp_take_one(p, i, PMPI_Request_f2c(r[i]));
}

#if WP_FTWIN
/* wp_take_completed for the Fortran handles copied by wp_match_ftake:
 * all, one index (from 0; -2 for MPI_UNDEFINED), or a list of nlist
 * Fortran indices (from 1). */
static void wp_ftake_completed(struct wp_mpend *p, int all, int one, const MPI_Fint *flist, int nlist)
{
    const MPI_Fint *copy = p->ncopy > WP_MATCH_PEND ? (const MPI_Fint *)wp_long : p->fcopy;
    p->n = 0;
    if (all)
        for (int i = 0; i < p->ncopy; i++)
            wp_take_key(p, i, wp_fkey(copy[i]));
    else if (one != -1) {
        if (one >= 0 && one < p->ncopy)
            wp_take_key(p, one, wp_fkey(copy[one]));
    } else
        for (int q = 0; flist && q < nlist; q++)
            if (flist[q] >= 1 && flist[q] <= p->ncopy)
                wp_take_key(p, flist[q] - 1, wp_fkey(copy[flist[q] - 1]));
}
#endif

void wp_match_fdone(struct wp_mpend *p, const struct wp_mcat *c, const void *fsts, int all, const void *findex,
                    const void *flist, const void *fn, uint64_t enter, int early)
{
    if (p->n == 0)
        return;
    /* Fortran indices count from 1. */
    int one = -1;
    if (findex) {
        MPI_Fint x = *(const MPI_Fint *)findex;
        one = x == MPI_UNDEFINED ? -2 : x - 1;
    }
    static const MPI_Fint none = MPI_UNDEFINED;
    const MPI_Fint *list = flist ? (const MPI_Fint *)flist : &none;
    int nlist = fn ? *(const MPI_Fint *)fn : 0;
#if WP_FTWIN
    if (p->n < 0) {
        wp_ftake_completed(p, all, one, flist ? list : NULL, nlist);
        if (p->n == 0)
            return;
    }
#endif
    wp_done(p, c, NULL, fsts ? (const MPI_Fint *)fsts : MPI_F_STATUSES_IGNORE, all, one, NULL, list, nlist, enter,
            early);
}

static void wp_done(struct wp_mpend *p, const struct wp_mcat *c, const MPI_Status *sts, const MPI_Fint *fsts,
                    int all, int one, const int *list, const MPI_Fint *flist, int nlist, uint64_t enter, int early)
{
    uint64_t now = wp_ticks();
    if (enter == 0)
        enter = now; /* a test: it returned at once */
    struct wp_mrec r[WP_MATCH_PEND];
    int nr = 0, ncoll = 0;
    uint32_t colls[WP_MATCH_PEND];
    pthread_mutex_lock(&wp_match_mu);
    for (int j = p->n - 1; j >= 0; j--) {
        int i = p->idx[j], pos = -1;
        if (all)
            pos = i;
        else if (one != -1)
            pos = one == i ? 0 : -1;
        else
            for (int q = 0; q < nlist; q++)
                if ((list ? list[q] : flist[q] - 1) == i)
                    pos = q;
        if (pos < 0)
            continue;
        /* Each by its handle, after the removals before it (a removal
         * may move an entry of the same probe run). */
        struct wp_pendrecv *e = wp_pend_find(p->key[j]);
        if (e == NULL)
            continue; /* not followed after all: the filter's bucket only */
        if (e->coll) {
            colls[ncoll++] = e->coll;
            wp_pend_remove(e);
            continue;
        }
        struct wp_mcomm *mc = e->mc;
        uint64_t chan = e->chan, k = e->k, post = e->post, cause = e->cause;
        int source = e->source, tag = e->tag, wild = e->wild;
        wp_pend_remove(e);
        if (wild) {
            MPI_Status st;
            if (!wp_status_at(sts, fsts, pos, &st)) {
                wp_match_cnt.unnumbered++;
                continue;
            }
            source = source == MPI_ANY_SOURCE ? st.MPI_SOURCE : source;
            tag = tag == MPI_ANY_TAG ? st.MPI_TAG : tag;
            if (source < 0)
                continue;
            chan = wp_match_channel(mc->id, source, mc->rank, tag);
            k = wp_match_next(chan, 1);
            if (k == UINT64_MAX || !wp_match_chosen(k, wp_match_bits, wp_match_dense_log2))
                continue;
        }
        /* A test's completions are numbered (a wildcard's) but waited for
         * nothing: no record. */
        int w = c->site ? wp_match_world_rank(mc, source) : -1;
        if (w < 0)
            continue;
        r[nr++] = (struct wp_mrec){.chan = chan, .k = k, .post = post, .t0 = early ? now : enter, .t1 = now,
                                   .cat = *c, .peer = w, .side = 1, .first = (uint8_t)wp_match_first(k),
                                   .cause = cause};
    }
    uint64_t call = nr > 1 ? ++wp_call_ids : 0;
    for (int j = 0; j < nr; j++) {
        r[j].call = call;
        wp_append(&r[j]);
    }
    /* Any record of the call stands for its instance (exchange.c). */
    wp_mprev = nr ? (struct wp_mprev){r[nr - 1].chan, r[nr - 1].k} : (struct wp_mprev){0, 0};
    pthread_mutex_unlock(&wp_match_mu);
    /* Nonblocking collectives: the call's wait, for when their batch is
     * reduced (or now, if it was). */
    if (ncoll)
        wp_match_nbc_done(colls, ncoll, c, early ? now : enter, now);
}

/* --- persistent point-to-point requests ------------------------------------------------------
 * What MPI_Start needs to number a persistent send or receive: its channel
 * and the channel's counter, found by the request handle.  Written under
 * wp_match_mu at the *_init calls and MPI_Request_free, read without a lock
 * by MPI_Start and MPI_Startall: an entry is complete before its key is
 * published, and a removed one becomes a tombstone, so a reader never
 * stops short of its key.  A handle that MPI gives out again for a new
 * persistent request takes over its old entry; the program cannot start a
 * request it freed, so no reader can be looking at it then. */
#define WP_PERSIST_SLOTS 4096
#define WP_PERSIST_TOMB UINTPTR_MAX /* neither an MPICH handle (32 bits) nor a pointer */
struct wp_persist {
    _Atomic uintptr_t key; /* 0: never used */
    struct wp_mcomm *mc;
    uint64_t chan;
    atomic_uint_fast64_t *count; /* NULL: a wildcard receive, numbered at completion */
    int peer, tag;               /* the destination or source, in mc; the tag */
    int dir;                     /* 0 send, 1 receive */
};
static struct wp_persist persist[WP_PERSIST_SLOTS];
int wp_match_npersist;

static struct wp_persist *wp_persist_find(uintptr_t key)
{
    uint32_t h = (uint32_t)wp_mix64(key) % WP_PERSIST_SLOTS;
    for (uint32_t p = 0; p < WP_PERSIST_SLOTS; p++) {
        struct wp_persist *e = &persist[(h + p) % WP_PERSIST_SLOTS];
        uintptr_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if (k == key)
            return e;
        if (k == 0)
            return NULL;
    }
    return NULL;
}

/* With wp_match_mu held. */
static void wp_persist_remove(uintptr_t key)
{
    struct wp_persist *e = wp_persist_find(key);
    if (e) {
        atomic_store_explicit(&e->key, WP_PERSIST_TOMB, memory_order_release);
        __atomic_fetch_sub(&wp_match_npersist, 1, __ATOMIC_RELAXED);
    }
}

void wp_match_pinit(MPI_Request req, int dir, int peer, int tag, MPI_Comm comm)
{
    uintptr_t key = wp_rkey(req);
    if (key == 0 || key == WP_PERSIST_TOMB)
        return;
    wp_match_forget(req);
    struct wp_mcomm *mc = peer == MPI_PROC_NULL ? NULL : wp_match_comm(comm);
    uint64_t chan = 0;
    atomic_uint_fast64_t *count = NULL;
    int wild = dir == 1 && (peer == MPI_ANY_SOURCE || tag == MPI_ANY_TAG);
    if (mc && !wild) {
        chan = dir ? wp_match_channel(mc->id, peer, mc->rank, tag) : wp_match_channel(mc->id, mc->rank, peer, tag);
        count = wp_match_counter(chan, dir);
        if (count == NULL)
            mc = NULL; /* the channel is not numbered on this rank */
    }
    pthread_mutex_lock(&wp_match_mu);
    wp_persist_remove(key);
    if (mc && __atomic_load_n(&wp_match_npersist, __ATOMIC_RELAXED) < WP_PERSIST_SLOTS * 3 / 4) {
        uint32_t h = (uint32_t)wp_mix64(key) % WP_PERSIST_SLOTS;
        struct wp_persist *e = NULL;
        for (uint32_t p = 0; p < WP_PERSIST_SLOTS && e == NULL; p++) {
            struct wp_persist *x = &persist[(h + p) % WP_PERSIST_SLOTS];
            uintptr_t k = atomic_load_explicit(&x->key, memory_order_relaxed);
            if (k == 0 || k == WP_PERSIST_TOMB)
                e = x;
        }
        if (e) {
            e->mc = mc;
            e->chan = chan;
            e->count = count;
            e->peer = peer;
            e->tag = tag;
            e->dir = dir;
            atomic_store_explicit(&e->key, key, memory_order_release);
            __atomic_fetch_add(&wp_match_npersist, 1, __ATOMIC_RELAXED);
        }
    } else if (mc) {
        /* Too many persistent requests to follow: this one's channel loses
         * its numbering on this rank (later matches on it are inconsistent,
         * and counted). */
        wp_match_cnt.unnumbered++;
    }
    pthread_mutex_unlock(&wp_match_mu);
}

void wp_match_request_free(MPI_Request req)
{
    uintptr_t key = wp_rkey(req);
    if (key == 0)
        return;
    wp_match_forget(req);
    if (!__atomic_load_n(&wp_match_npersist, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&wp_match_mu);
    wp_persist_remove(key);
    pthread_mutex_unlock(&wp_match_mu);
}

void wp_match_start_slow(const MPI_Request *reqs, int n, uint64_t enter, uint64_t cause)
{
    static const struct wp_mcat none;
    /* A started send takes a number of its channel, which the thread's
     * next blocking send must not expect to take (wp_mlast). */
    wp_mlast_end();
    for (int i = 0; i < n; i++) {
        uintptr_t key = wp_rkey(reqs[i]);
        const struct wp_persist *e = key ? wp_persist_find(key) : NULL;
        if (e == NULL) {
            /* Not a persistent send or receive waitprof follows (a
             * persistent collective, say): no stale receive may stand for
             * it at its completion. */
            wp_match_forget(reqs[i]);
            continue;
        }
        if (e->count == NULL) {
            wp_pend_recv(key, e->mc, 0, 0, e->peer, e->tag, 1, enter, cause);
            continue;
        }
        uint64_t k;
        if (wp_match_serial) {
            k = atomic_load_explicit(e->count, memory_order_relaxed);
            atomic_store_explicit(e->count, k + 1, memory_order_relaxed);
        } else {
            k = atomic_fetch_add_explicit(e->count, 1, memory_order_relaxed);
        }
        if (!wp_match_chosen(k, wp_match_bits, wp_match_dense_log2)) {
            if (e->dir)
                wp_match_forget(reqs[i]);
            continue;
        }
        if (e->dir)
            wp_pend_recv(key, e->mc, e->chan, k, e->peer, e->tag, 0, enter, cause);
        else {
            uint64_t t = wp_match_when(enter);
            wp_match_p2p_record(&none, e->chan, k, 0, e->peer, e->mc, t, t, t, 0, cause);
        }
    }
}

void wp_match_fstart(const void *freqs, const void *count, uint64_t enter, uint64_t cause)
{
    const MPI_Fint *r = freqs;
    int n = count ? *(const MPI_Fint *)count : 1;
    MPI_Request c[WP_MATCH_PEND];
    for (int base = 0; base < n; base += WP_MATCH_PEND) {
        int m = n - base < WP_MATCH_PEND ? n - base : WP_MATCH_PEND;
        for (int i = 0; i < m; i++)
            c[i] = PMPI_Request_f2c(r[base + i]);
        wp_match_start_slow(c, m, enter, cause);
    }
}
