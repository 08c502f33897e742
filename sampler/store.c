/* sampler/store.c — see sampler/store.h. */
#include <string.h>
#include <sys/mman.h>

#include "sampler/store.h"
#include "sampler/timeline.h"
#include "state/clock.h"
#include "waitprof.h"

/* The mapping of a store of wp_store_create: header, table, its order
 * list, arena, pending buffer. */
static size_t wp_store_bytes(uint32_t nslots, uint32_t arena_frames)
{
    return sizeof(struct wp_store) + (size_t)nslots * (sizeof(struct wp_stack_entry) + sizeof(uint32_t)) +
           (size_t)arena_frames * sizeof(uintptr_t) + sizeof(struct wp_pending);
}

struct wp_store *wp_store_create(uint32_t nslots, uint32_t arena_frames)
{
    uint32_t n = 16;
    while (n < nslots && n < (1u << 30))
        n <<= 1;
    size_t bytes = wp_store_bytes(n, arena_frames);
    /* mmap, not malloc: the memory is reserved now and only the pages that
     * samples reach are ever touched. */
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return NULL;
    struct wp_store *s = mem;
    s->nslots = n;
    s->arena_cap = arena_frames;
    s->slots = (struct wp_stack_entry *)(s + 1);
    s->order = (uint32_t *)(s->slots + n);
    /* n is a power of two of at least 16, so the arena stays 8-aligned. */
    s->arena = (uintptr_t *)(s->order + n);
    s->pending = (struct wp_pending *)(s->arena + arena_frames);
    return s;
}

struct wp_store *wp_store_create_in(void *mem, size_t bytes, int nctr)
{
    if (nctr < 0 || nctr > 8)
        return NULL;
    /* The pending samples' deltas are fixed; the sums grow with the table,
     * so a counter costs each slot 8 bytes and the table is sized with it. */
    size_t pend_ctr = (size_t)WP_PENDING_MAX * (size_t)nctr * sizeof(uint64_t);
    size_t slot_bytes = sizeof(struct wp_stack_entry) + sizeof(uint32_t) + (size_t)nctr * sizeof(uint64_t);
    size_t head = sizeof(struct wp_store) + sizeof(struct wp_pending) + pend_ctr;
    if (bytes < head + 16 * (slot_bytes + 4 * sizeof(uintptr_t)))
        return NULL;
    size_t rest = bytes - head;
    uint32_t n = 16;
    while ((size_t)n * 2 * slot_bytes <= rest / 4 && n < (1u << 30))
        n <<= 1;
    size_t frames = (rest - (size_t)n * slot_bytes) / sizeof(uintptr_t);
    if (frames > UINT32_MAX)
        frames = UINT32_MAX;
    struct wp_store *s = mem;
    memset(s, 0, sizeof *s);
    s->nslots = n;
    s->arena_cap = (uint32_t)frames;
    s->slots = (struct wp_stack_entry *)(s + 1);
    s->order = (uint32_t *)(s->slots + n);
    s->arena = (uintptr_t *)(s->order + n);
    s->pending = (struct wp_pending *)(s->arena + frames);
    s->in_pool = 1;
    if (nctr > 0) {
        /* After the pending buffer: uint64_t-aligned, as everything before
         * it is made of 8-byte fields. */
        s->nctr = (uint32_t)nctr;
        s->pending->ctr = (uint64_t *)(s->pending + 1);
        s->ctr = s->pending->ctr + (size_t)WP_PENDING_MAX * (size_t)nctr;
    }
    return s;
}

void wp_store_destroy(struct wp_store *s)
{
    if (s && !s->in_pool)
        munmap(s, wp_store_bytes(s->nslots, s->arena_cap));
}

/* What an entry is keyed by besides its frames. */
struct wp_key {
    int state, fn;
    uint16_t held;
    uint8_t sclass, role;
};

static uint64_t wp_hash(const struct wp_key *k, const uintptr_t *ips, int n)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)k->state ^ ((uint64_t)k->fn << 8) ^
                 ((uint64_t)k->held << 24) ^ ((uint64_t)k->sclass << 40) ^ ((uint64_t)k->role << 48);
    for (int i = 0; i < n; i++) {
        h ^= ips[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h | 1; /* never 0, so hash 0 can mean "no entry" in debugging */
}

/* Add a sample's counter deltas to slot i's sums.  The slot's sums were
 * zero when it was made (fresh memory, never reused), so a new entry
 * starts from its first sample's deltas. */
static inline void wp_ctr_add(struct wp_store *s, uint32_t i, const uint64_t *ctr)
{
    if (ctr == NULL || s->ctr == NULL)
        return;
    uint64_t *sum = &s->ctr[(size_t)i * s->nctr];
    for (uint32_t j = 0; j < s->nctr; j++)
        sum[j] += ctr[j];
}

/* Add to an existing entry, or make a new one while the table holds fewer
 * than max_stacks entries and the arena has room below max_frames.  Returns
 * 0, or -1 without counting anything. */
static int wp_store_insert(struct wp_store *s, const struct wp_key *k, const uintptr_t *ips, int n, uint64_t weight,
                           uint32_t max_stacks, uint32_t max_frames, const uint64_t *ctr)
{
    uint64_t h = wp_hash(k, ips, n);
    uint32_t mask = s->nslots - 1;
    for (uint32_t probe = 0, i = (uint32_t)h & mask; probe <= mask; probe++, i = (i + 1) & mask) {
        struct wp_stack_entry *e = &s->slots[i];
        if (!e->used) {
            if (s->nstacks + 1 > max_stacks || s->arena_used + (uint32_t)n > max_frames)
                return -1;
            memcpy(&s->arena[s->arena_used], ips, (size_t)n * sizeof *ips);
            e->hash = h;
            e->off = s->arena_used;
            e->depth = (uint16_t)n;
            e->state = (uint8_t)k->state;
            e->fn = (uint16_t)k->fn;
            e->held = k->held;
            e->sclass = k->sclass;
            e->role = k->role;
            e->count = weight;
            wp_ctr_add(s, i, ctr);
            s->last_hash = h;
            s->arena_used += (uint32_t)n;
            s->order[s->nstacks] = i;
            /* The slot is taken, for this handler's later probes: only the
             * owner's handler reads the flag, so a plain store does. */
            e->used = 1;
            /* Last: a reader that sees the new count sees the entry and
             * its place in order[] (wp_store_count). */
            __atomic_store_n(&s->nstacks, s->nstacks + 1, __ATOMIC_RELEASE);
            s->samples += weight;
            return 0;
        }
        if (e->hash == h && e->state == k->state && e->fn == k->fn && e->held == k->held &&
            e->sclass == k->sclass && e->role == k->role && e->depth == n &&
            memcmp(&s->arena[e->off], ips, (size_t)n * sizeof *ips) == 0) {
            e->count += weight;
            wp_ctr_add(s, i, ctr);
            s->samples += weight;
            s->last_hash = h;
            return 0;
        }
    }
    return -1;
}

int wp_store_add(struct wp_store *s, int state, int fn, const uintptr_t *ips, int n, uint64_t weight)
{
    /* Keep the table at most 3/4 full so probes stay short. */
    struct wp_key k = {.state = state, .fn = fn};
    if (wp_store_insert(s, &k, ips, n, weight, s->nslots - s->nslots / 4, s->arena_cap, NULL) == 0)
        return 0;
    s->dropped_full += weight;
    return -1;
}

#define WP_SHORT_FRAMES 4
/* Pressure stops at 5 (room left at most 1/64): a full store keeps its
 * room for shortened stacks, and a lower rate would no longer save memory,
 * only lose detail. */
#define WP_PRESSURE_MAX 5

static uint32_t wp_soft_stacks(const struct wp_store *s)
{
    return s->nslots / 2 + s->nslots / 8;
}

static uint32_t wp_soft_frames(const struct wp_store *s)
{
    return s->arena_cap - s->arena_cap / 8;
}

static int wp_store_add_key(struct wp_store *s, const struct wp_key *key, const uintptr_t *ips, int n,
                            uint64_t weight, const uint64_t *ctr)
{
    uint32_t hard = s->nslots - s->nslots / 4;
    if (wp_store_insert(s, key, ips, n, weight, wp_soft_stacks(s), wp_soft_frames(s), ctr) == 0)
        return 0;
    /* The stack is leaf first: its outermost frames are at the end. */
    int k = n < WP_SHORT_FRAMES ? n : WP_SHORT_FRAMES;
    /* The last sixteenth of the table is kept for the frameless entries, one
     * per (state, function), so that they can always be made. */
    if ((k < n && wp_store_insert(s, key, ips + (n - k), k, weight, hard - s->nslots / 16, s->arena_cap, ctr) == 0) ||
        wp_store_insert(s, key, ips, 0, weight, hard, s->arena_cap, ctr) == 0) {
        s->merged += weight;
        return 0;
    }
    s->dropped_full += weight;
    return -1;
}

int wp_store_add_ctr_sig(struct wp_store *s, int state, int fn, const uintptr_t *ips, int n, uint64_t weight,
                         const uint64_t *ctr)
{
    s->last_hash = 0;
    struct wp_key k = {.state = state, .fn = fn};
    return wp_store_add_key(s, &k, ips, n, weight, ctr);
}

int wp_store_add_sig(struct wp_store *s, int state, int fn, const uintptr_t *ips, int n, uint64_t weight)
{
    return wp_store_add_ctr_sig(s, state, fn, ips, n, weight, NULL);
}

int wp_store_pressure_sig(const struct wp_store *s)
{
    /* Room left, as a fraction of the soft limits, in 1/1024 units. */
    uint64_t ms = wp_soft_stacks(s), mf = wp_soft_frames(s);
    uint64_t ls = s->nstacks >= ms ? 0 : (ms - s->nstacks) * 1024 / ms;
    uint64_t lf = s->arena_used >= mf || mf == 0 ? 0 : (mf - s->arena_used) * 1024 / mf;
    uint64_t left = ls < lf ? ls : lf;
    int k = 0;
    while (k < WP_PRESSURE_MAX && left <= (512u >> k))
        k++;
    return k;
}

void wp_store_handler_time_sig(struct wp_store *s, uint64_t ns)
{
    int b = (int)ns;
    if (ns >= 8) {
        int m = 63 - __builtin_clzll(ns);
        b = 8 * (m - 2) + (int)((ns >> (m - 3)) & 7);
    }
    if (b > WP_HANDLER_BINS - 1)
        b = WP_HANDLER_BINS - 1;
    s->handler_hist[b]++;
    s->handler_calls++;
    s->handler_ns += ns;
}

uint64_t wp_store_handler_median_ns(const struct wp_store *s)
{
    uint64_t half = (s->handler_calls + 1) / 2, seen = 0;
    for (int b = 0; b < WP_HANDLER_BINS; b++) {
        seen += s->handler_hist[b];
        if (seen >= half && s->handler_calls) {
            if (b < 8)
                return (uint64_t)b;
            int m = b / 8 + 2, q = b % 8;
            uint64_t lo = (uint64_t)(8 + q) << (m - 3), hi = (uint64_t)(9 + q) << (m - 3);
            return lo + (hi - lo) / 2; /* the bin's middle */
        }
    }
    return 0;
}

void wp_pending_flush(struct wp_store *s, struct wp_pending *p, uint64_t threshold)
{
    /* One call, one stack: its id is computed once for all its samples. */
    uint64_t id = s->tl && p->n ? wp_tl_stack_id(p->fn, p->ips, p->depth) : 0;
    for (uint32_t i = 0; i < p->n; i++) {
        s->by_estimate += p->weight[i];
        int state = p->off[i] < threshold ? WAITPROF_STATE_STALL : WAITPROF_STATE_WORK;
        wp_store_add_ctr_sig(s, state, p->fn, p->ips, p->depth, p->weight[i],
                             p->ctr ? &p->ctr[(size_t)i * s->nctr] : NULL);
        wp_tl_add_sig(s->tl, wp_ticks_to_ns(p->enter + p->off[i]), state, p->weight[i], id);
    }
    p->n = 0;
}

void wp_pending_flush_held(struct wp_store *s, struct wp_pending *p, uint64_t duration, int sclass, int role)
{
    uint64_t id = s->tl && p->n ? wp_tl_stack_id(p->fn, p->ips, p->depth) : 0;
    for (uint32_t i = 0; i < p->n; i++) {
        s->by_estimate += p->weight[i];
        struct wp_key k = {.state = WAITPROF_STATE_WORK,
                           .fn = p->fn,
                           .held = wp_held_bucket(duration > p->off[i] ? duration - p->off[i] : 0),
                           .sclass = (uint8_t)sclass,
                           .role = (uint8_t)role};
        wp_store_add_key(s, &k, p->ips, p->depth, p->weight[i], p->ctr ? &p->ctr[(size_t)i * s->nctr] : NULL);
        /* Held in the timeline too, by the class of the same time to the
         * call's end, which the writer splits as the store's held entries
         * of that class are classified. */
        uint64_t d = duration > p->off[i] ? duration - p->off[i] : 0;
        wp_tl_add_sig(s->tl, wp_ticks_to_ns(p->enter + p->off[i]), -1 - wp_tl_held_class(wp_ticks_duration_ns(d)),
                      p->weight[i], id);
    }
    p->n = 0;
}

/* Did pending sample i wait?  Taken more than min_ns before now. */
static int wp_pending_waited(const struct wp_pending *p, uint32_t i, uint64_t now, uint64_t min_ns)
{
    uint64_t at = p->enter + p->off[i];
    return min_ns != UINT64_MAX && now > at && wp_ticks_duration_ns(now - at) > min_ns;
}

uint64_t wp_pending_split(const struct wp_pending *p, uint64_t now, uint64_t min_ns, uint64_t *stall)
{
    return wp_pending_split_ctr(p, now, min_ns, 0, -1, stall);
}

uint64_t wp_pending_split_ctr(const struct wp_pending *p, uint64_t now, uint64_t min_ns, uint32_t nctr, int c,
                              uint64_t *stall)
{
    uint64_t all = 0, st = 0;
    uint32_t n = p->n < WP_PENDING_MAX ? p->n : WP_PENDING_MAX;
    if (c >= 0 && (p->ctr == NULL || (uint32_t)c >= nctr))
        n = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t w = c < 0 ? p->weight[i] : p->ctr[(size_t)i * nctr + (uint32_t)c];
        all += w;
        if (wp_pending_waited(p, i, now, min_ns))
            st += w;
    }
    *stall = st;
    return all;
}

void wp_pending_timeline_sig(const struct wp_pending *p, uint64_t now, uint64_t min_ns, struct wp_timeline *t)
{
    uint32_t n = p->n < WP_PENDING_MAX ? p->n : WP_PENDING_MAX;
    uint64_t id = n ? wp_tl_stack_id(p->fn, p->ips, p->depth) : 0;
    for (uint32_t i = 0; i < n; i++)
        wp_tl_add_sig(t, wp_ticks_to_ns(p->enter + p->off[i]),
                      wp_pending_waited(p, i, now, min_ns) ? WAITPROF_STATE_STALL : WAITPROF_STATE_WORK,
                      p->weight[i], id);
}

int wp_entry_state(const struct wp_stack_entry *e, uint64_t min_ns)
{
    if (!e->held)
        return e->state;
    return min_ns != UINT64_MAX && wp_ticks_duration_ns(wp_held_ticks(e->held)) > min_ns ? WAITPROF_STATE_STALL
                                                                                        : WAITPROF_STATE_WORK;
}
