/* fallback/stats.c — see fallback/stats.h. */
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "fallback/estimate.h"
#include "fallback/stats.h"
#include "state/functions.h"
#include "state/clock.h"

struct wp_table_list wp_stats_list;

/* Per thread: its table.  Initial-exec like the state record: libwaitprof is
 * loaded at start-up. */

/* 2048 categories per thread: a category is a call site of one MPI function
 * with one message-size class, so real codes stay far below. */
#define WP_STATS_SLOTS 2048

_Static_assert(WP_FN_COUNT <= WP_STATS_MAX_FN, "fallback/stats.h: raise WP_STATS_MAX_FN");

static size_t wp_stats_bytes(uint32_t nslots)
{
    return sizeof(struct wp_stats) + (size_t)nslots * sizeof(struct wp_cat) + WP_STATS_MAX_FN * sizeof(uint64_t) +
           (size_t)nslots * sizeof(uint32_t);
}

static void wp_stats_setup(struct wp_stats *st, uint32_t nslots)
{
    st->nslots = nslots;
    st->fn_events = (uint64_t *)&st->cats[nslots];
    st->order = (uint32_t *)&st->fn_events[WP_STATS_MAX_FN];
}

struct wp_stats *wp_stats_create(uint32_t nslots)
{
    void *mem = mmap(NULL, wp_stats_bytes(nslots), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return NULL;
    wp_stats_setup(mem, nslots);
    return mem;
}

uint64_t wp_estimate_wait(uint64_t sum_ns, uint64_t calls, uint64_t early_sum_ns, uint64_t early_calls,
                          uint64_t min_ns)
{
    if (min_ns == UINT64_MAX || early_calls > calls || early_sum_ns > sum_ns)
        return 0;
    uint64_t late_sum = sum_ns - early_sum_ns, late_calls = calls - early_calls;
    unsigned __int128 floor = (unsigned __int128)late_calls * min_ns;
    return late_sum > floor ? late_sum - (uint64_t)floor : 0;
}

void wp_stats_destroy(struct wp_stats *st)
{
    if (st)
        munmap(st, wp_stats_bytes(st->nslots));
}

uint64_t wp_hist_q32 = 1ull << 32;

int wp_stats_on = 1;
int wp_callpath_depth = 1;
int wp_stats_plain = 1;

void wp_stats_configure(int on, int callpath_depth)
{
    /* The clock's rate as wp_ticks_duration_ns() uses it, so that the
     * recording path's conversion gives the same nanoseconds. */
    wp_hist_q32 = wp_ticks_duration_ns(1ull << 32);
    wp_stats_on = on;
    wp_callpath_depth = callpath_depth < 1 ? 1 : callpath_depth > WP_CALLPATH_MAX ? WP_CALLPATH_MAX : callpath_depth;
    wp_stats_plain = on && wp_callpath_depth == 1;
}

int wp_hist_bin(uint64_t us)
{
    /* Decade d holds [10^d, 10^(d+1)) in ten bins of width 10^d; the first
     * decade also holds 0. */
    uint64_t width = 1;
    for (int d = 0; d < WP_DECADES; d++, width *= 10)
        if (us < width * 10)
            return d * 10 + (int)(us / width);
    return WP_HIST_BINS - 1;
}

uint64_t wp_hist_bin_low(int bin)
{
    if (bin < 0)
        bin = 0;
    uint64_t width = 1;
    for (int d = 0; d < bin / 10 && d < WP_DECADES; d++)
        width *= 10;
    return bin >= WP_HIST_BINS - 1 ? width : (uint64_t)(bin % 10) * width;
}

struct wp_cat *wp_stats_slot(struct wp_stats *st, uintptr_t site, int fn, int sclass, int role)
{
    uint64_t h = ((uint64_t)site * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)fn << 16 | (uint64_t)sclass << 8 | (uint64_t)role);
    h ^= h >> 31;
    uint32_t mask = st->nslots - 1;
    for (uint32_t probe = 0, i = (uint32_t)h & mask; probe <= mask; probe++, i = (i + 1) & mask) {
        struct wp_cat *c = &st->cats[i];
        if (c->site == site && c->fn == fn && c->sclass == sclass && c->role == role)
            return c;
        if (c->site == 0) {
            if (st->used + 1 > st->nslots - st->nslots / 4)
                return NULL;
            c->site = site;
            c->fn = (uint16_t)fn;
            c->sclass = (uint8_t)sclass;
            c->role = (uint8_t)role;
            c->min = UINT64_MAX;
            c->fn_events = &st->fn_events[(unsigned)fn % WP_STATS_MAX_FN];
            st->order[st->used] = i;
            __atomic_store_n(&st->used, st->used + 1, __ATOMIC_RELEASE);
            return c;
        }
    }
    return NULL;
}

void wp_cat_add(struct wp_cat *c, uint64_t ticks, uint64_t us, int early)
{
    /* Outside a table (unit tests), the category's own call number. */
    wp_cat_add_bin(c, ticks, wp_hist_bin(us), early, c->fn_events ? ++*c->fn_events : c->count + 1);
}

void wp_stats_weigh(uintptr_t site, int fn, int sclass, int role, unsigned e, uint64_t ticks, uint64_t first)
{
    struct wp_cat *c = wp_stats_cat(site, fn, sclass, role, 1);
    if (c == NULL || c->count <= first)
        return;
    double w = (double)(1ull << (e < 62 ? e : 62)) - 1;
    c->xcount += w;
    c->xsum += w * (double)ticks;
}

void wp_cat_merge(struct wp_cat *into, const struct wp_cat *from)
{
    into->count += from->count;
    into->untimed += from->untimed;
    into->sum += from->sum;
    into->xcount += from->xcount;
    into->xsum += from->xsum;
    if (from->min < into->min)
        into->min = from->min;
    if (from->early_count && (into->early_count == 0 || from->early_min < into->early_min))
        into->early_min = from->early_min;
    into->early_count += from->early_count;
    into->early_sum += from->early_sum;
    into->src_count += from->src_count;
    into->src_sum += from->src_sum;
    /* The two largest of the four. */
    uint64_t a = into->max, b = into->max2, c = from->max, d = from->max2;
    uint64_t hi = a > c ? a : c;
    uint64_t lo = a > c ? (c > b ? c : b) : (a > d ? a : d);
    into->max = hi;
    into->max2 = lo;
    for (int i = 0; i < WP_HIST_BINS; i++)
        into->hist[i] += from->hist[i];
}

__thread struct wp_cat *wp_stats_last[1u << WP_STATS_LAST_LOG2] __attribute__((tls_model("initial-exec")));

static void wp_stats_init(void *m)
{
    wp_stats_setup(m, WP_STATS_SLOTS);
}

/* The slow path of wp_stats_record(): the thread's first call (reserve its
 * table) and a category not in wp_stats_last (probe the table). */
struct wp_cat *wp_stats_find(uintptr_t site, int fn, int sclass, int role)
{
    struct wp_stats *st = wp_table_mine(WP_TABLE_STATS, wp_stats_bytes(WP_STATS_SLOTS), &wp_stats_list, wp_stats_init);
    if (__builtin_expect(st == NULL, 0))
        return NULL;
    struct wp_cat *c = wp_stats_slot(st, site, fn, sclass, role);
    if (__builtin_expect(c == NULL, 0)) {
        st->overflow++;
        return NULL;
    }
    *wp_stats_last_slot(site, fn) = c;
    return c;
}

/* Messages at least this large are assumed to use a rendezvous protocol, in
 * which a blocking send waits for its receiver. */
#define WP_RENDEZVOUS_BYTES 65536

int wp_pattern_of(int fn, int sclass, int role, int *global)
{
    *global = 0;
    switch (wp_fn_table[fn].wclass) {
    case WP_CLASS_RECV:
    case WP_CLASS_PROBE:
    case WP_CLASS_SENDRECV:
        return WP_PAT_LATE_SENDER;
    case WP_CLASS_WAIT:
        /* By what the call completed (the role byte holds the kind of its
         * requests, fallback/stats.h); unknown stays Late Sender. */
        switch (role) {
        case WP_ROLE_ANY:
        case WP_RK_RECV:
            return WP_PAT_LATE_SENDER;
        case WP_RK_NXN:
            *global = 1;
            return WP_PAT_NXN;
        case WP_RK_BARRIER:
            *global = 1;
            return WP_PAT_BARRIER;
        case WP_RK_BCAST:
            *global = 1;
            return WP_PAT_LATE_BCAST;
        case WP_RK_REDUCE:
            *global = 1;
            return WP_PAT_EARLY_REDUCE;
        default: /* sends, other roots, other kinds */
            return WP_PAT_NONE;
        }
    case WP_CLASS_SEND:
        if (fn == WP_FN_MPI_Ssend || sclass >= wp_size_class(WP_RENDEZVOUS_BYTES))
            return WP_PAT_LATE_RECEIVER;
        return WP_PAT_NONE;
    case WP_CLASS_NXN:
        *global = 1;
        return WP_PAT_NXN;
    case WP_CLASS_BARRIER:
        *global = 1;
        return WP_PAT_BARRIER;
    case WP_CLASS_ONE2N:
        *global = 1;
        return role == WP_ROLE_NONROOT ? WP_PAT_LATE_BCAST : WP_PAT_NONE;
    case WP_CLASS_N2ONE:
        *global = 1;
        return role == WP_ROLE_ROOT ? WP_PAT_EARLY_REDUCE : WP_PAT_NONE;
    default:
        return WP_PAT_NONE;
    }
}


/* --- request kinds ---------------------------------------------------------------- */

const char *wp_role_name(int role)
{
    static const char *const names[WP_RK_LAST + 1] = {"any",  "root",    "nonroot", "recv",   "send",
                                                      "nxn",  "barrier", "bcast",   "reduce", "other"};
    return role >= 0 && role <= WP_RK_LAST ? names[role] : "unknown";
}

int wp_req_combine(unsigned mask)
{
    if (mask & (1u << WP_RK_RECV))
        return WP_RK_RECV;
    if (mask & 1u)
        return WP_ROLE_ANY;
    static const int coll[] = {WP_RK_NXN, WP_RK_BARRIER, WP_RK_BCAST, WP_RK_REDUCE};
    int found = 0, n = 0;
    for (int i = 0; i < 4; i++)
        if (mask & (1u << coll[i]))
            found = coll[i], n++;
    if (n == 1)
        return found;
    if (n > 1)
        return WP_RK_OTHER;
    return (mask & (1u << WP_RK_SEND)) ? WP_RK_SEND : WP_RK_OTHER;
}

/* The table (fallback/stats.h).  A completed request's entry keeps its
 * key with kind 0, which reads as unknown, as an absent key does, and is
 * free for any new request: the handle's next request then finds its
 * entry at once instead of scanning all eight ways for a key that is not
 * there (MPI_Irecv, MPI_Isend and MPI_Waitall of the two,
 * bench/poll_cost.c isendrecv: 115 instructions per put before).  A new
 * key takes its own way when that is free, so that the wrappers' inline
 * test (wp_req_put_in, wp_req_kind_in) finds it with one comparison:
 * callgrind, Open MPI, the same loop, 43 instructions per put and 25 per
 * lookup before, when every key was looked for by a scan.  A full set
 * evicts round-robin: the table is a cache, bounded by design.
 * Entries of requests completed by calls that cannot tell which handle they
 * completed (Waitany, Waitsome, the Test family) stay until the handle value
 * is reused for a new request (both MPICH and Open MPI recycle handles) or
 * evicted.  512 sets x 8 = 4096 requests per thread. */
static inline struct wp_req_set *wp_req_set_of(struct wp_req_set *t, uintptr_t key)
{
    return &t[wp_req_set_index(key)];
}

void wp_req_put(uintptr_t key, int kind, int persistent)
{
    struct wp_req_set *t = wp_self.table[WP_TABLE_REQS];
    if (__builtin_expect(t == NULL, 0)) {
        if (key == 0)
            return;
        /* Without a table, completion calls fall back to Late Sender, as
         * without kinds. */
        t = wp_table_claim(WP_TABLE_REQS, WP_REQ_SETS * sizeof *t, NULL, NULL);
        if (t == NULL)
            return;
    }
    if (key == 0)
        return;
    struct wp_req_set *s = wp_req_set_of(t, key);
    uint8_t k = (uint8_t)(kind | (persistent ? WP_RK_PERSISTENT : 0));
    int free_way = -1;
    for (int w = 0; w < WP_REQ_WAYS; w++) {
        if (s->key[w] == key) {
            s->kind[w] = k;
            return;
        }
        if ((s->key[w] == 0 || s->kind[w] == 0) && free_way < 0)
            free_way = w;
    }
    /* Not there: its own way if that is free, where the inline test looks
     * first (wp_req_own). */
    uint32_t own = wp_req_way(key);
    if (s->key[own] == 0 || s->kind[own] == 0)
        free_way = (int)own;
    if (free_way < 0) {
        free_way = s->next;
        s->next = (uint8_t)((s->next + 1) % WP_REQ_WAYS);
    }
    s->key[free_way] = key;
    s->kind[free_way] = k;
}

int wp_req_kind(uintptr_t key, int forget)
{
    struct wp_req_set *t = wp_self.table[WP_TABLE_REQS];
    if (t == NULL || key == 0)
        return 0;
    struct wp_req_set *s = wp_req_set_of(t, key);
    for (int w = 0; w < WP_REQ_WAYS; w++)
        if (s->key[w] == key) {
            int k = s->kind[w];
            if (forget && !(k & WP_RK_PERSISTENT))
                s->kind[w] = 0;
            return k & ~WP_RK_PERSISTENT;
        }
    return 0;
}

void wp_req_forget(uintptr_t key)
{
    struct wp_req_set *t = wp_self.table[WP_TABLE_REQS];
    if (t == NULL || key == 0)
        return;
    struct wp_req_set *s = wp_req_set_of(t, key);
    for (int w = 0; w < WP_REQ_WAYS; w++)
        if (s->key[w] == key)
            s->key[w] = 0;
}
