/* mpit/requests.c — the request table of mpit/requests.h. */
#include "config.h"

#include "mpit/requests.h"

#define POSTED 1u
#define AWAITED 2u
#define LIVE 4u /* activated, not yet completed */
#define OWNER(w) ((int)((w) >> 3) - 1)
#define WITH_OWNER(k) (((uint32_t)(k) + 1u) << 3)
#define MAX_PROBE 64

struct wp_req {
    uintptr_t id;  /* 0 = free; set once by CAS, never cleared */
    uint32_t word; /* POSTED | AWAITED | LIVE | WITH_OWNER(thread) */
};

static struct wp_req wp_reqs[WP_REQ_SLOTS];
int wp_req_stall[WP_REQ_THREADS];
uint64_t wp_req_stall_end[WP_REQ_THREADS];
int wp_req_serial;
unsigned wp_req_need;
unsigned wp_req_pass;
unsigned wp_req_since[WP_REQ_THREADS];
/* Serial mode: requests of the table that are live (requests.h). */
int wp_req_live;
unsigned long wp_req_untracked;
static int wp_req_nthreads;
__thread int wp_req_me __attribute__((tls_model("initial-exec"))) = -2;

int wp_req_thread_index(void)
{
    if (wp_req_me == -2) {
        int k = __atomic_fetch_add(&wp_req_nthreads, 1, __ATOMIC_RELAXED);
        wp_req_me = k < WP_REQ_THREADS ? k : -1;
    }
    return wp_req_me;
}

/* Find the slot of id; claim a free one when insert is set. */
static struct wp_req *wp_req_find(uintptr_t id, int insert)
{
    if (id == 0)
        return 0;
    uint64_t h = ((uint64_t)id >> 4) * 0x9E3779B97F4A7C15ull;
    unsigned i = (unsigned)(h >> 40) & (WP_REQ_SLOTS - 1);
    for (int n = 0; n < MAX_PROBE; n++, i = (i + 1) & (WP_REQ_SLOTS - 1)) {
        uintptr_t k = __atomic_load_n(&wp_reqs[i].id, __ATOMIC_ACQUIRE);
        if (k == id)
            return &wp_reqs[i];
        if (k != 0)
            continue;
        if (!insert)
            return 0;
        if (wp_req_serial) {
            __atomic_store_n(&wp_reqs[i].id, id, __ATOMIC_RELEASE);
            return &wp_reqs[i];
        }
        uintptr_t expect = 0;
        if (__atomic_compare_exchange_n(&wp_reqs[i].id, &expect, id, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
            expect == id)
            return &wp_reqs[i];
    }
    if (insert)
        __atomic_fetch_add(&wp_req_untracked, 1, __ATOMIC_RELAXED);
    return 0;
}

/* Thread k's stall counter is about to rise from zero: its passes count
 * from here (requests.h).  Stored before the counter rises, so that k's
 * handler never sees the new stall with the last one's start. */
static void wp_req_stall_begins(int k)
{
    __atomic_store_n(&wp_req_since[k], __atomic_load_n(&wp_req_pass, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

/* Thread k's stall counter fell to zero: date the end of a stall that
 * counted (one clock read, when the awaited message has come). */
static void wp_req_stall_ended(int k)
{
    if (wp_req_counts(__atomic_load_n(&wp_req_since[k], __ATOMIC_RELAXED)))
        __atomic_store_n(&wp_req_stall_end[k], wp_ticks(), __ATOMIC_RELAXED);
}

/* Move the stall counters by the change of the word's contribution: a
 * request counts for its owner while it is both posted and awaited. */
static void wp_req_account(uint32_t old, uint32_t new)
{
    int was = (old & (POSTED | AWAITED)) == (POSTED | AWAITED) ? OWNER(old) : -1;
    int is = (new & (POSTED | AWAITED)) == (POSTED | AWAITED) ? OWNER(new) : -1;
    if (was == is)
        return;
    if (wp_req_serial) {
        /* One writer at a time (see wp_req_set): a load and a store, no
         * locked instruction.  Relaxed atomics still, because the owner's
         * SIGPROF handler reads the counter at any moment. */
        if (was >= 0 && was < WP_REQ_THREADS) {
            int n = __atomic_load_n(&wp_req_stall[was], __ATOMIC_RELAXED) - 1;
            __atomic_store_n(&wp_req_stall[was], n, __ATOMIC_RELAXED);
            if (n == 0)
                wp_req_stall_ended(was);
        }
        if (is >= 0 && is < WP_REQ_THREADS) {
            int n = __atomic_load_n(&wp_req_stall[is], __ATOMIC_RELAXED);
            if (n == 0)
                wp_req_stall_begins(is);
            __atomic_store_n(&wp_req_stall[is], n + 1, __ATOMIC_RELAXED);
        }
        return;
    }
    /* The stall's end and beginning are handled by whichever thread moved
     * the counter from or to zero.  A race with a new stall of the same
     * thread can only date a wait by the later of two near ends, or count
     * a stall from a pass or two later than it began. */
    if (was >= 0 && was < WP_REQ_THREADS && __atomic_fetch_sub(&wp_req_stall[was], 1, __ATOMIC_RELAXED) == 1)
        wp_req_stall_ended(was);
    if (is >= 0 && is < WP_REQ_THREADS) {
        if (__atomic_load_n(&wp_req_stall[is], __ATOMIC_RELAXED) == 0)
            wp_req_stall_begins(is);
        __atomic_fetch_add(&wp_req_stall[is], 1, __ATOMIC_RELAXED);
    }
}

/* Replace the word by new (computed from old, its value now): one
 * compare-and-swap, or a plain store when serial.  Returns 0 when another
 * thread changed the word first (old then holds its value). */
static int wp_req_set(struct wp_req *r, uint32_t *old, uint32_t new)
{
    if (wp_req_serial) {
        __atomic_store_n(&r->word, new, __ATOMIC_RELEASE);
        return 1;
    }
    return __atomic_compare_exchange_n(&r->word, old, new, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* One transition of a request's word.  mode: 0 set to `bits` exactly,
 * 1 or in `bits`, 2 clear `bits`; cond_owner >= 0: only if the request is
 * awaited by that thread. */
static void wp_req_update(struct wp_req *r, int mode, uint32_t bits, int cond_owner)
{
    uint32_t old = __atomic_load_n(&r->word, __ATOMIC_ACQUIRE), new;
    do {
        if (cond_owner >= 0 && (!(old & AWAITED) || OWNER(old) != cond_owner))
            return;
        new = mode == 0 ? bits : mode == 1 ? (old | bits) : (old & ~bits);
        if (!(new & AWAITED))
            new &= POSTED | LIVE; /* no waiter, no owner */
        /* Most events change nothing (XFER_CONTINUE after the match, a
         * repeated posting): no write at all. */
        if (new == old)
            return;
    } while (!wp_req_set(r, &old, new));
    wp_req_account(old, new);
    if (wp_req_serial && ((old ^ new) & LIVE))
        wp_req_live += (new & LIVE) ? 1 : -1;
}

void wp_req_activate(uintptr_t id, int posted, int awaited_by)
{
    struct wp_req *r = wp_req_find(id, 1);
    if (r == 0)
        return;
    uint32_t w = LIVE | (posted ? POSTED : 0);
    if (awaited_by >= 0)
        w |= AWAITED | WITH_OWNER(awaited_by);
    wp_req_update(r, 0, w, -1);
}

/* One transition of a request the table may follow (wp_req_update's mode,
 * bits and cond_owner); nothing when it does not follow it. */
static void wp_req_event(uintptr_t id, int mode, uint32_t bits, int cond_owner)
{
    if (wp_req_none_live())
        return;
    struct wp_req *r = wp_req_find(id, 0);
    if (r)
        wp_req_update(r, mode, bits, cond_owner);
}

void wp_req_posted(uintptr_t id)
{
    wp_req_event(id, 1, POSTED, -1);
}

void wp_req_matched(uintptr_t id)
{
    wp_req_event(id, 2, POSTED, -1);
}

void wp_req_complete(uintptr_t id)
{
    wp_req_event(id, 0, 0, -1);
}

int wp_req_await(uintptr_t id, int me)
{
    if (me < 0 || wp_req_none_live())
        return 0;
    struct wp_req *r = wp_req_find(id, 0);
    if (r == 0)
        return 0;
    /* Replace the owner and set awaited in one step, keeping "posted". */
    uint32_t old = __atomic_load_n(&r->word, __ATOMIC_ACQUIRE), new;
    do {
        new = (old & (POSTED | LIVE)) | AWAITED | WITH_OWNER(me);
        if (new == old)
            return 1;
    } while (!wp_req_set(r, &old, new));
    wp_req_account(old, new);
    return 1;
}

void wp_req_unawait(uintptr_t id, int me)
{
    wp_req_event(id, 2, AWAITED, me);
}

/* --- serial mode: the current blocking call's own requests (requests.h) --- */

__thread struct wp_req_mine wp_mine __attribute__((tls_model("initial-exec")));
