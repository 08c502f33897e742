/* tests/unit/test_store.c — the per-thread sample store (sampler/store.h).
 *
 * Checked: stacks that are the same in state, function and frames merge and
 * their weights add; any difference keeps them apart; the table takes at most
 * 3/4 of its slots and the arena at most its capacity, and a refused sample's
 * weight goes to dropped_full so that samples + dropped_full is always the
 * weight added; the handler-time histogram puts a duration in its
 * power-of-two bin and the median comes out in that bin; held samples (a
 * collective call's) keep their time to the call's end in a bucket within
 * 1/16 of it, and are Stall exactly when that time exceeds the minimum; the
 * samples of a call still in progress are Stall when taken more than the
 * minimum before the end.  The timeline (sampler/timeline.h): a sample
 * lands in the bin of its time; past the last bin pairs merge and the
 * width doubles, with every weight kept; the vote keeps the majority stack
 * across merges; the sum over threads splits held samples in the given
 * proportion; flushed samples land at the time they were taken.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/store.h"
#include "sampler/timeline.h"
#include "state/clock.h"
#include "waitprof.h"
#include "tests/unit/unit.h"

/* The used entry holding exactly (state, fn, ips[0..n)), or NULL. */
static const struct wp_stack_entry *find(const struct wp_store *s, int state, int fn, const uintptr_t *ips,
                                         int n)
{
    const struct wp_stack_entry *hit = NULL;
    for (uint32_t i = 0; i < s->nslots; i++) {
        const struct wp_stack_entry *e = &s->slots[i];
        if (e->used && e->state == state && e->fn == fn && e->depth == n &&
            (n == 0 || memcmp(&s->arena[e->off], ips, (size_t)n * sizeof *ips) == 0)) {
            ck_assert_msg(hit == NULL, "the same stack is stored twice");
            hit = e;
        }
    }
    return hit;
}

/* Invariants that hold after any sequence of adds. */
static void check_invariants(const struct wp_store *s, uint64_t weight_added)
{
    uint64_t sum = 0;
    uint32_t used = 0, frames = 0;
    for (uint32_t i = 0; i < s->nslots; i++)
        if (s->slots[i].used) {
            used++;
            sum += s->slots[i].count;
            frames += s->slots[i].depth;
            ck_assert_uint_le((uint64_t)s->slots[i].off + s->slots[i].depth, s->arena_used);
        }
    ck_assert_uint_eq(used, s->nstacks);
    /* The order list names every used slot once, in the order the entries
     * were made (their frames lie in the arena in that order), and is what
     * the writers read. */
    ck_assert_uint_eq(wp_store_count(s), used);
    uint32_t next_off = 0;
    for (uint32_t k = 0; k < wp_store_count(s); k++) {
        const struct wp_stack_entry *e = wp_store_entry(s, k);
        ck_assert(e->used);
        ck_assert_uint_eq(e->off, next_off);
        next_off += e->depth;
    }
    ck_assert_uint_eq(next_off, s->arena_used);
    ck_assert_uint_le(s->nstacks, s->nslots - s->nslots / 4);
    ck_assert_uint_eq(frames, s->arena_used);
    ck_assert_uint_le(s->arena_used, s->arena_cap);
    ck_assert_uint_eq(sum, s->samples);
    ck_assert_uint_eq(s->samples + s->dropped_full, weight_added);
}

START_TEST(test_create_rounds_up)
{
    static const struct {
        uint32_t ask, want;
    } t[] = {{0, 16}, {1, 16}, {16, 16}, {17, 32}, {100, 128}, {1024, 1024}, {1025, 2048}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        struct wp_store *s = wp_store_create(t[i].ask, 64);
        ck_assert_ptr_nonnull(s);
        ck_assert_uint_eq(s->nslots, t[i].want);
        ck_assert_uint_eq(s->arena_cap, 64);
        ck_assert_uint_eq(s->nstacks, 0);
        ck_assert_uint_eq(s->arena_used, 0);
        ck_assert_uint_eq(s->samples, 0);
        ck_assert_uint_eq(s->dropped_full, 0);
        for (uint32_t k = 0; k < s->nslots; k++)
            ck_assert_uint_eq(s->slots[k].used, 0);
        wp_store_destroy(s);
    }
    wp_store_destroy(NULL); /* allowed, like free(NULL) */
}
END_TEST

START_TEST(test_identical_merge)
{
    struct wp_store *s = wp_store_create(64, 1024);
    const uintptr_t a[] = {0x401000, 0x402000, 0x403000};
    ck_assert_int_eq(wp_store_add(s, 2, 7, a, 3, 1), 0);
    ck_assert_int_eq(wp_store_add(s, 2, 7, a, 3, 3), 0);
    /* A copy of the frames, not the same array: content decides. */
    uintptr_t copy[3];
    memcpy(copy, a, sizeof copy);
    ck_assert_int_eq(wp_store_add(s, 2, 7, copy, 3, 5), 0);
    ck_assert_uint_eq(s->nstacks, 1);
    ck_assert_uint_eq(s->arena_used, 3);
    const struct wp_stack_entry *e = find(s, 2, 7, a, 3);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->count, 9);
    ck_assert_uint_eq(s->samples, 9);
    check_invariants(s, 9);
    wp_store_destroy(s);
}
END_TEST

/* An empty stack (the unwinder failed) is a stack like any other.  The
 * sampler passes its frame buffer even then, so the tests do too. */
static const uintptr_t no_frames[1];

START_TEST(test_empty_stack)
{
    struct wp_store *s = wp_store_create(16, 0);
    ck_assert_int_eq(wp_store_add(s, 1, 0, no_frames, 0, 2), 0);
    ck_assert_int_eq(wp_store_add(s, 1, 0, no_frames, 0, 2), 0);
    ck_assert_int_eq(wp_store_add(s, 2, 0, no_frames, 0, 1), 0);
    ck_assert_uint_eq(s->nstacks, 2);
    ck_assert_uint_eq(find(s, 1, 0, no_frames, 0)->count, 4);
    ck_assert_uint_eq(find(s, 2, 0, no_frames, 0)->count, 1);
    check_invariants(s, 5);
    wp_store_destroy(s);
}
END_TEST

START_TEST(test_differences_separate)
{
    struct wp_store *s = wp_store_create(64, 1024);
    const uintptr_t a[] = {0x10, 0x20, 0x30, 0x40};
    const uintptr_t b[] = {0x10, 0x20, 0x31, 0x40}; /* one frame differs */
    const uintptr_t r[] = {0x40, 0x30, 0x20, 0x10}; /* same frames, other order */
    ck_assert_int_eq(wp_store_add(s, 0, 0, a, 4, 1), 0);
    ck_assert_int_eq(wp_store_add(s, 1, 0, a, 4, 2), 0);  /* state */
    ck_assert_int_eq(wp_store_add(s, 1, 5, a, 4, 3), 0);  /* fn */
    ck_assert_int_eq(wp_store_add(s, 1, 6, a, 4, 4), 0);  /* fn */
    ck_assert_int_eq(wp_store_add(s, 0, 0, a, 3, 5), 0);  /* depth: a prefix */
    ck_assert_int_eq(wp_store_add(s, 0, 0, a, 0, 6), 0);  /* depth 0 */
    ck_assert_int_eq(wp_store_add(s, 0, 0, b, 4, 7), 0);  /* frames */
    ck_assert_int_eq(wp_store_add(s, 0, 0, r, 4, 8), 0);  /* order */
    /* fn values that differ only above 8 bits, where the hash mixes them with state. */
    ck_assert_int_eq(wp_store_add(s, 0, 256, a, 4, 9), 0);
    ck_assert_int_eq(wp_store_add(s, 1, 257, a, 4, 10), 0);
    ck_assert_uint_eq(s->nstacks, 10);
    ck_assert_uint_eq(find(s, 0, 0, a, 4)->count, 1);
    ck_assert_uint_eq(find(s, 1, 0, a, 4)->count, 2);
    ck_assert_uint_eq(find(s, 1, 5, a, 4)->count, 3);
    ck_assert_uint_eq(find(s, 1, 6, a, 4)->count, 4);
    ck_assert_uint_eq(find(s, 0, 0, a, 3)->count, 5);
    ck_assert_uint_eq(find(s, 0, 0, a, 0)->count, 6);
    ck_assert_uint_eq(find(s, 0, 0, b, 4)->count, 7);
    ck_assert_uint_eq(find(s, 0, 0, r, 4)->count, 8);
    ck_assert_uint_eq(find(s, 0, 256, a, 4)->count, 9);
    ck_assert_uint_eq(find(s, 1, 257, a, 4)->count, 10);
    /* Adding each again merges into its own entry. */
    ck_assert_int_eq(wp_store_add(s, 1, 5, a, 4, 100), 0);
    ck_assert_int_eq(wp_store_add(s, 0, 0, a, 3, 100), 0);
    ck_assert_uint_eq(s->nstacks, 10);
    ck_assert_uint_eq(find(s, 1, 5, a, 4)->count, 103);
    ck_assert_uint_eq(find(s, 0, 0, a, 3)->count, 105);
    ck_assert_uint_eq(find(s, 0, 0, a, 4)->count, 1);
    check_invariants(s, 55 + 200);
    wp_store_destroy(s);
}
END_TEST

/* 16 slots hold 12 stacks; the 13th is refused, yet known stacks still merge. */
START_TEST(test_table_three_quarters)
{
    struct wp_store *s = wp_store_create(16, 1000);
    uint64_t added = 0;
    for (uintptr_t k = 0; k < 12; k++) {
        uintptr_t ip = 0x1000 + k;
        ck_assert_int_eq(wp_store_add(s, 1, 0, &ip, 1, k + 1), 0);
        added += k + 1;
    }
    ck_assert_uint_eq(s->nstacks, 12);
    for (uintptr_t k = 12; k < 40; k++) {
        uintptr_t ip = 0x1000 + k;
        ck_assert_int_eq(wp_store_add(s, 1, 0, &ip, 1, 2), -1);
        added += 2;
    }
    ck_assert_uint_eq(s->nstacks, 12);
    ck_assert_uint_eq(s->dropped_full, 28 * 2);
    uintptr_t ip = 0x1000 + 3;
    ck_assert_int_eq(wp_store_add(s, 1, 0, &ip, 1, 10), 0);
    added += 10;
    ck_assert_uint_eq(find(s, 1, 0, &ip, 1)->count, 14);
    check_invariants(s, added);
    wp_store_destroy(s);
}
END_TEST

/* An arena of 10 frames: stacks are kept while their frames fit, then refused,
 * whatever room the table has. */
START_TEST(test_arena_full)
{
    struct wp_store *s = wp_store_create(256, 10);
    const uintptr_t a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8}, c[] = {9, 10, 11, 12}, d[] = {13, 14};
    uint64_t added = 0;
    ck_assert_int_eq(wp_store_add(s, 0, 0, a, 4, 1), 0);
    ck_assert_int_eq(wp_store_add(s, 0, 0, b, 4, 1), 0);
    added += 2;
    ck_assert_int_eq(wp_store_add(s, 0, 0, c, 4, 5), -1); /* 12 > 10 */
    added += 5;
    ck_assert_uint_eq(s->dropped_full, 5);
    ck_assert_uint_eq(s->arena_used, 8);
    ck_assert_int_eq(wp_store_add(s, 0, 0, d, 2, 1), 0); /* exactly full */
    added += 1;
    ck_assert_uint_eq(s->arena_used, 10);
    ck_assert_int_eq(wp_store_add(s, 0, 0, c, 1, 3), -1);
    added += 3;
    /* Known stacks still merge, and so does a new empty stack (no frames). */
    ck_assert_int_eq(wp_store_add(s, 0, 0, a, 4, 4), 0);
    ck_assert_int_eq(wp_store_add(s, 0, 0, no_frames, 0, 6), 0);
    added += 10;
    ck_assert_uint_eq(s->dropped_full, 8);
    ck_assert_uint_eq(find(s, 0, 0, a, 4)->count, 5);
    /* The kept frames were not overwritten by the refused ones. */
    ck_assert_ptr_nonnull(find(s, 0, 0, b, 4));
    ck_assert_ptr_nonnull(find(s, 0, 0, d, 2));
    check_invariants(s, added);
    wp_store_destroy(s);
}
END_TEST

/* A small xorshift generator: reproducible, and no dependence on rand(). */
static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Many random adds drawn from a small set of stacks, into stores of several
 * shapes (table-bound, arena-bound, roomy): nothing counted is ever lost,
 * and each stored entry's count is the weight added for it. */
START_TEST(test_random_accounting)
{
    static const struct {
        uint32_t slots, frames;
    } shapes[] = {{16, 4096}, {64, 40}, {1024, 1 << 16}, {32, 0}};
    enum { NSTACKS = 300, MAXD = 12 };
    static uintptr_t frames[NSTACKS][MAXD];
    static int depth[NSTACKS], state[NSTACKS], fn[NSTACKS];
    static uint64_t want[NSTACKS];
    for (int k = 0; k < NSTACKS; k++) {
        depth[k] = (int)(rng() % (MAXD + 1));
        state[k] = (int)(rng() % 3);
        fn[k] = (int)(rng() % 4);
        for (int j = 0; j < MAXD; j++)
            frames[k][j] = (uintptr_t)(rng() % 64); /* few values: many shared prefixes */
    }
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        struct wp_store *s = wp_store_create(shapes[sh].slots, shapes[sh].frames);
        uint64_t added = 0, dropped = 0;
        memset(want, 0, sizeof want);
        for (int it = 0; it < 20000; it++) {
            int k = (int)(rng() % NSTACKS);
            uint64_t w = 1 + rng() % 5;
            added += w;
            if (wp_store_add(s, state[k], fn[k], frames[k], depth[k], w) == 0)
                want[k] += w;
            else
                dropped += w;
        }
        ck_assert_uint_eq(s->dropped_full, dropped);
        check_invariants(s, added);
        /* Two table stacks can be equal (a random collision of the set). */
        for (int k = 0; k < NSTACKS; k++) {
            uint64_t same = 0;
            for (int m = 0; m < NSTACKS; m++)
                if (state[m] == state[k] && fn[m] == fn[k] && depth[m] == depth[k] &&
                    memcmp(frames[m], frames[k], (size_t)depth[k] * sizeof(uintptr_t)) == 0)
                    same += want[m];
            const struct wp_stack_entry *e = find(s, state[k], fn[k], frames[k], depth[k]);
            ck_assert_uint_eq(e ? e->count : 0, same);
        }
        wp_store_destroy(s);
    }
}
END_TEST

/* --- handler time ---------------------------------------------------------------- */

/* Bin of a duration, by the rule in store.h written the slow way: 0–7
 * exactly; above, eight bins per power of two, found by walking the edges;
 * the top bin open. */
static uint64_t edge(int b) /* lower edge of bin b */
{
    if (b < 8)
        return (uint64_t)b;
    int m = b / 8 + 2;
    return (uint64_t)(8 + b % 8) << (m - 3);
}

static int bin_of(uint64_t ns)
{
    int b = 0;
    while (b < WP_HANDLER_BINS - 1 && edge(b + 1) <= ns)
        b++;
    return b;
}

static const uint64_t durations[] = {
    0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 15, 16, 17, 18, 100, 511, 512, 1000, 1023, 1024, 4096, 4607, 4608,
    4999, 5000, 5119, 5120, 65535, 1000000, 1000000000, (1ull << 31) - 1, 1ull << 31, (1ull << 33) - 1,
    1ull << 33, 5000000000ull, 10000000000ull, UINT64_MAX,
};

START_TEST(test_handler_bin)
{
    uint64_t ns = durations[_i];
    struct wp_store *s = wp_store_create(16, 16);
    wp_store_handler_time_sig(s, ns);
    int b = bin_of(ns);
    for (int k = 0; k < WP_HANDLER_BINS; k++)
        ck_assert_uint_eq(s->handler_hist[k], k == b ? 1 : 0);
    ck_assert_uint_eq(s->handler_calls, 1);
    ck_assert_uint_eq(s->handler_ns, ns);
    uint64_t m = wp_store_handler_median_ns(s);
    ck_assert_msg(bin_of(m) == b, "median %llu of one %llu ns run is in bin %d, want %d",
                  (unsigned long long)m, (unsigned long long)ns, bin_of(m), b);
    /* Inside the bin, and no wider than an eighth of its lower edge. */
    ck_assert_uint_ge(m, edge(b));
    if (b >= 8 && b < WP_HANDLER_BINS - 1) {
        ck_assert_uint_lt(m, edge(b + 1));
        ck_assert_uint_le(edge(b + 1) - edge(b), edge(b) / 8);
    }
    wp_store_destroy(s);
}
END_TEST

START_TEST(test_handler_median)
{
    struct wp_store *s = wp_store_create(16, 16);
    ck_assert_uint_eq(wp_store_handler_median_ns(s), 0); /* no runs, no median */

    /* 3 short runs and 2 long ones: the median is a short one. */
    for (int i = 0; i < 3; i++)
        wp_store_handler_time_sig(s, 100);
    for (int i = 0; i < 2; i++)
        wp_store_handler_time_sig(s, 10000);
    ck_assert_int_eq(bin_of(wp_store_handler_median_ns(s)), bin_of(100));
    ck_assert_uint_eq(s->handler_calls, 5);
    ck_assert_uint_eq(s->handler_ns, 3 * 100 + 2 * 10000);

    /* Two more long runs: now the median is long. */
    wp_store_handler_time_sig(s, 12000);
    wp_store_handler_time_sig(s, 16000);
    ck_assert_int_eq(bin_of(wp_store_handler_median_ns(s)), bin_of(10000));
    wp_store_destroy(s);

    /* Spread over many bins: the median bin is the one holding the middle run. */
    s = wp_store_create(16, 16);
    for (int b = 0; b < 21; b++)
        wp_store_handler_time_sig(s, (1ull << b) + (1ull << b) / 3);
    ck_assert_int_eq(bin_of(wp_store_handler_median_ns(s)), bin_of(1024 + 1024 / 3));
    wp_store_destroy(s);
}
END_TEST

/* A store laid out in a slice of memory fits in it and works like a mapped one. */
START_TEST(test_create_in)
{
    static const size_t sizes[] = {64 * 1024, 256 * 1024, 1u << 20, 4u << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *mem = malloc(sizes[i]);
        ck_assert_ptr_nonnull(mem);
        struct wp_store *s = wp_store_create_in(mem, sizes[i], 0);
        ck_assert_ptr_nonnull(s);
        ck_assert_uint_eq(s->nslots & (s->nslots - 1), 0);
        ck_assert_uint_ge(s->nslots, 16);
        ck_assert((char *)(s->pending + 1) <= mem + sizes[i]);
        ck_assert((char *)s->arena >= (char *)(s->slots + s->nslots));
        ck_assert((char *)s->pending >= (char *)(s->arena + s->arena_cap));
        /* Most of the slice is usable: at least 3/4 of it in table and arena. */
        ck_assert_uint_ge(s->nslots * sizeof(struct wp_stack_entry) + s->arena_cap * sizeof(uintptr_t),
                          sizes[i] - sizes[i] / 4 - sizeof(struct wp_pending));
        const uintptr_t a[] = {1, 2, 3};
        ck_assert_int_eq(wp_store_add_sig(s, 1, 0, a, 3, 2), 0);
        ck_assert_uint_eq(s->samples, 2);
        wp_store_destroy(s); /* a pooled store is not unmapped */
        free(mem);
    }
    char tiny[256];
    ck_assert_ptr_null(wp_store_create_in(tiny, sizeof tiny, 0));
}
END_TEST

/* A bounded store never loses weight while it can shorten stacks: distinct
 * deep stacks sharing their outer frames end under those frames, counted in
 * merged; the total of the entries is the total added. */
START_TEST(test_bounded_exact_weights)
{
    struct wp_store *s = wp_store_create(64, 100000);
    uint64_t added = 0;
    for (uintptr_t k = 0; k < 500; k++) {
        const uintptr_t st[8] = {0x9000 + k, 0x8000 + k % 7, 0x7000 + k % 3, 0x100, 0x200, 0x300, 0x400, 0x500};
        ck_assert_int_eq(wp_store_add_sig(s, 1 + (int)(k % 2), 3, st, 8, k % 5 + 1), 0);
        added += k % 5 + 1;
    }
    ck_assert_uint_eq(s->dropped_full, 0);
    ck_assert_uint_gt(s->merged, 0);
    ck_assert_uint_le(s->nstacks, s->nslots - s->nslots / 4);
    uint64_t sum = 0, whole = 0;
    for (uint32_t i = 0; i < s->nslots; i++)
        if (s->slots[i].used) {
            sum += s->slots[i].count;
            if (s->slots[i].depth == 8)
                whole += s->slots[i].count;
            else
                ck_assert_uint_eq(s->slots[i].depth, 4); /* the four outermost frames */
        }
    ck_assert_uint_eq(sum, added);
    ck_assert_uint_eq(s->samples, added);
    ck_assert_uint_eq(whole + s->merged, added);
    wp_store_destroy(s);
}
END_TEST

/* With distinct outer frames too, the shortened stacks fill the rest of the
 * table; then samples go under no frame at all (one entry per state and
 * function); drops only when even that entry cannot be made. */
START_TEST(test_bounded_fallbacks)
{
    struct wp_store *s = wp_store_create(16, 100000);
    uint64_t added = 0;
    for (uintptr_t k = 0; k < 100; k++) {
        const uintptr_t st[6] = {k, k + 1000, k + 2000, k + 3000, k + 4000, k + 5000};
        wp_store_add_sig(s, 1, 2, st, 6, 1);
        added++;
    }
    ck_assert_uint_eq(s->samples + s->dropped_full, added);
    ck_assert_uint_eq(s->dropped_full, 0); /* the empty stack of (1, 2) exists */
    ck_assert_uint_gt(s->merged, 0);
    /* A new (state, function) with the table at its hard limit: dropped, counted. */
    const uintptr_t st[2] = {1, 2};
    ck_assert_int_eq(wp_store_add_sig(s, 2, 9, st, 2, 5), -1);
    ck_assert_uint_eq(s->dropped_full, 5);
    wp_store_destroy(s);
}
END_TEST

/* Pressure rises as the room left halves, and stops at 5. */
START_TEST(test_pressure_steps)
{
    struct wp_store *s = wp_store_create(1024, 1000000);
    ck_assert_int_eq(wp_store_pressure_sig(s), 0);
    int last = 0, seen[6] = {0};
    for (uintptr_t k = 0; k < 1000; k++) {
        wp_store_add_sig(s, 1, 0, &k, 1, 1);
        int p = wp_store_pressure_sig(s);
        ck_assert_int_ge(p, last);
        ck_assert_int_le(p, 5);
        seen[p] = 1;
        last = p;
    }
    for (int p = 0; p <= 5; p++)
        ck_assert_msg(seen[p], "pressure %d never seen", p);
    /* Half of the soft limit (5/8 of 1024 slots = 640) is 320 entries. */
    wp_store_destroy(s);
    s = wp_store_create(1024, 1000000);
    for (uintptr_t k = 0; k < 319; k++)
        wp_store_add_sig(s, 1, 0, &k, 1, 1);
    ck_assert_int_eq(wp_store_pressure_sig(s), 0);
    uintptr_t k = 319;
    wp_store_add_sig(s, 1, 0, &k, 1, 1);
    ck_assert_int_eq(wp_store_pressure_sig(s), 1);
    wp_store_destroy(s);
}
END_TEST

START_TEST(test_pending_split)
{
    /* A call entered at tick 1000 and not returned at 11000, with samples
     * 10000, 5000 and 1000 ticks (ns here) before now, weights 1, 2, 4. */
    static struct wp_pending p;
    p.enter = 1000;
    uint64_t off[3] = {0, 5000, 9000};
    uint32_t w[3] = {1, 2, 4};
    for (int i = 0; i < 3; i++)
        p.off[i] = off[i], p.weight[i] = w[i];
    p.n = 3;
    uint64_t stall = 99;
    /* Minimum 3000 ns: the two older samples waited whatever the end. */
    ck_assert_uint_eq(wp_pending_split(&p, 11000, 3000, &stall), 7);
    ck_assert_uint_eq(stall, 3);
    /* No minimum (no call of the function returned): Work. */
    ck_assert_uint_eq(wp_pending_split(&p, 11000, UINT64_MAX, &stall), 7);
    ck_assert_uint_eq(stall, 0);
    /* Minimum 0: everything taken before now. */
    ck_assert_uint_eq(wp_pending_split(&p, 11000, 0, &stall), 7);
    ck_assert_uint_eq(stall, 7);
}
END_TEST

START_TEST(test_held_buckets)
{
    uint16_t prev = 0;
    for (uint64_t x = 0; x < (1ull << 40); x = x < 64 ? x + 1 : x + x / 7) {
        uint16_t b = wp_held_bucket(x);
        ck_assert_uint_ge(b, prev); /* monotonic */
        ck_assert_uint_gt(b, 0);    /* 0 means "not held" */
        prev = b;
        uint64_t mid = wp_held_ticks(b);
        if (x < 16)
            ck_assert_uint_eq(mid, x);
        else
            ck_assert_msg(mid + mid / 16 >= x && mid <= x + x / 16, "x=%llu bucket %u middle %llu",
                          (unsigned long long)x, b, (unsigned long long)mid);
    }
    ck_assert_uint_lt(wp_held_bucket(UINT64_MAX), 1024);
}
END_TEST


/* Counters (sampler/counters.h): a store laid out with nctr sums keeps
 * them inside its slice; each entry's sums are those of the samples added
 * to it, and held samples bring their deltas along, to the state their
 * call's end decides (wp_pending_flush) or to the held entry
 * (wp_pending_flush_held).  Without counters an entry has no sums. */
START_TEST(test_counters)
{
    size_t bytes = 1u << 20;
    char *mem = malloc(bytes);
    ck_assert_ptr_nonnull(mem);
    struct wp_store *s = wp_store_create_in(mem, bytes, 2);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->nctr, 2);
    ck_assert_ptr_nonnull(s->pending->ctr);
    ck_assert((char *)(s->ctr + (size_t)s->nslots * 2) <= mem + bytes);
    ck_assert((char *)s->pending->ctr >= (char *)(s->pending + 1));
    ck_assert((char *)s->ctr >= (char *)(s->pending->ctr + (size_t)WP_PENDING_MAX * 2));
    const uintptr_t a[] = {1, 2, 3}, b[] = {4, 5};
    const uint64_t d1[2] = {100, 1}, d2[2] = {50, 0};
    ck_assert_int_eq(wp_store_add_ctr_sig(s, WAITPROF_STATE_NOT_IN_MPI, 0, a, 3, 1, d1), 0);
    ck_assert_int_eq(wp_store_add_ctr_sig(s, WAITPROF_STATE_NOT_IN_MPI, 0, a, 3, 1, d2), 0);
    ck_assert_int_eq(wp_store_add_ctr_sig(s, WAITPROF_STATE_STALL, 0, a, 3, 1, d2), 0);
    ck_assert_int_eq(wp_store_add_sig(s, WAITPROF_STATE_WORK, 0, b, 2, 1), 0); /* no deltas */
    const struct wp_stack_entry *e = find(s, WAITPROF_STATE_NOT_IN_MPI, 0, a, 3);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(wp_entry_ctr(s, e)[0], 150);
    ck_assert_uint_eq(wp_entry_ctr(s, e)[1], 1);
    e = find(s, WAITPROF_STATE_STALL, 0, a, 3);
    ck_assert_uint_eq(wp_entry_ctr(s, e)[0], 50);
    e = find(s, WAITPROF_STATE_WORK, 0, b, 2);
    ck_assert_uint_eq(wp_entry_ctr(s, e)[0], 0);

    /* Held samples of one call: the first two before the threshold
     * (Stall), the last after it (Work), each with its own deltas. */
    struct wp_pending *p = s->pending;
    memcpy(p->ips, b, sizeof b);
    p->depth = 2;
    p->fn = 9;
    for (int i = 0; i < 3; i++) {
        p->off[i] = (uint64_t)(i + 1) * 1000;
        p->weight[i] = 1;
        p->ctr[i * 2] = (uint64_t)(i + 1) * 10;
        p->ctr[i * 2 + 1] = 1;
    }
    p->n = 3;
    wp_pending_flush(s, p, 2500);
    e = find(s, WAITPROF_STATE_STALL, 9, b, 2);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(wp_entry_ctr(s, e)[0], 30);
    ck_assert_uint_eq(wp_entry_ctr(s, e)[1], 2);
    e = find(s, WAITPROF_STATE_WORK, 9, b, 2);
    ck_assert_uint_eq(wp_entry_ctr(s, e)[0], 30);

    /* Held for the global minimum: the deltas sum over the held entries. */
    for (int i = 0; i < 2; i++) {
        p->off[i] = (uint64_t)i * 50000;
        p->weight[i] = 1;
        p->ctr[i * 2] = 7;
        p->ctr[i * 2 + 1] = 0;
    }
    p->n = 2;
    wp_pending_flush_held(s, p, 100000, 1, 0);
    uint64_t held = 0;
    for (uint32_t i = 0; i < s->nslots; i++)
        if (s->slots[i].used && s->slots[i].held)
            held += wp_entry_ctr(s, &s->slots[i])[0];
    ck_assert_uint_eq(held, 14);
    free(mem);

    struct wp_store *plain = wp_store_create(16, 64);
    ck_assert_int_eq(wp_store_add_ctr_sig(plain, 1, 0, a, 3, 1, d1), 0);
    ck_assert_ptr_null(wp_entry_ctr(plain, find(plain, 1, 0, a, 3)));
    wp_store_destroy(plain);
}
END_TEST

START_TEST(test_held_flush)
{
    struct wp_store *s = wp_store_create(64, 1024);
    struct wp_pending *p = s->pending;
    uintptr_t ips[2] = {0x1000, 0x2000};
    memcpy(p->ips, ips, sizeof ips);
    p->depth = 2;
    p->fn = 9;
    /* A call of 100000 ticks (ns here: no TSC calibration in this
     * process) with samples 99000, 50000 and 1000 ticks before its end. */
    uint64_t off[3] = {1000, 50000, 99000};
    for (int i = 0; i < 3; i++)
        p->off[i] = off[i], p->weight[i] = 1;
    p->n = 3;
    wp_pending_flush_held(s, p, 100000, 4, 1);
    ck_assert_uint_eq(p->n, 0);
    ck_assert_uint_eq(s->samples, 3);
    ck_assert_uint_eq(s->by_estimate, 3);
    int stall = 0, work = 0, held = 0;
    for (uint32_t i = 0; i < s->nslots; i++) {
        const struct wp_stack_entry *e = &s->slots[i];
        if (!e->used)
            continue;
        held += e->held != 0;
        ck_assert_int_eq(e->state, WAITPROF_STATE_WORK); /* until classified */
        ck_assert_uint_eq(e->sclass, 4);
        ck_assert_uint_eq(e->role, 1);
        /* Minimum 10000 ns: the samples 99000 and 50000 before the end
         * waited, the one 1000 before it was the call's work. */
        int st = wp_entry_state(e, 10000);
        stall += st == WAITPROF_STATE_STALL;
        work += st == WAITPROF_STATE_WORK;
        /* Unknown minimum: Work, as without the estimate. */
        ck_assert_int_eq(wp_entry_state(e, UINT64_MAX), WAITPROF_STATE_WORK);
    }
    ck_assert_int_eq(held, 3);
    ck_assert_int_eq(stall, 2);
    ck_assert_int_eq(work, 1);
    /* An entry that is not held is what its state says. */
    ck_assert_int_eq(wp_store_add(s, WAITPROF_STATE_STALL, 9, ips, 2, 1), 0);
    const struct wp_stack_entry *e = find(s, WAITPROF_STATE_STALL, 9, ips, 2);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(wp_entry_state(e, 0), WAITPROF_STATE_STALL);
    wp_store_destroy(s);
}
END_TEST

static uint64_t tl_total(const struct wp_timeline *t, int k)
{
    uint64_t n = 0;
    for (int i = 0; i < WP_TL_BINS; i++)
        n += k < 3 ? t->bin[i].w[k] : t->bin[i].held[k - 3];
    return n;
}

START_TEST(test_timeline_bins_merge)
{
    static struct wp_timeline t;
    wp_tl_init(&t, 1000, 10);
    wp_tl_add_sig(&t, 500, WAITPROF_STATE_NOT_IN_MPI, 1, 0); /* before the origin: bin 0 */
    wp_tl_add_sig(&t, 1000 + 10 * 5 + 3, WAITPROF_STATE_WORK, 2, 0);
    wp_tl_add_sig(&t, 1000 + 10 * 1023, WAITPROF_STATE_STALL, 3, 7);
    ck_assert_uint_eq(t.bin[0].w[WAITPROF_STATE_NOT_IN_MPI], 1);
    ck_assert_uint_eq(t.bin[5].w[WAITPROF_STATE_WORK], 2);
    ck_assert_uint_eq(t.bin[1023].w[WAITPROF_STATE_STALL], 3);
    ck_assert_uint_eq(t.nbins, 1024);
    /* One past the last bin: pairs merge once. */
    wp_tl_add_sig(&t, 1000 + 10 * 1024, WAITPROF_STATE_STALL, 4, 7);
    ck_assert_uint_eq(t.width_ns, 20);
    ck_assert_uint_eq(t.merges, 1);
    ck_assert_uint_eq(t.bin[2].w[WAITPROF_STATE_WORK], 2);
    ck_assert_uint_eq(t.bin[511].w[WAITPROF_STATE_STALL], 3);
    ck_assert_uint_eq(t.bin[512].w[WAITPROF_STATE_STALL], 4);
    ck_assert_uint_eq(t.nbins, 513);
    /* Far past: as many merges as needed, nothing lost. */
    wp_tl_add_sig(&t, 1000 + 10ull * 1024 * 1000, -1 - 2, 5, 9);
    ck_assert_uint_eq(t.width_ns, 10 * 1024);
    ck_assert_uint_eq(tl_total(&t, WAITPROF_STATE_STALL), 7);
    ck_assert_uint_eq(tl_total(&t, WAITPROF_STATE_WORK), 2);
    ck_assert_uint_eq(tl_total(&t, 3 + 2), 5);
    ck_assert_uint_eq(t.bin[1000].held[2], 5);
}
END_TEST

START_TEST(test_timeline_vote)
{
    static struct wp_timeline t;
    wp_tl_init(&t, 0, 100);
    /* Bin 0: stack 11 weighs 3, stack 22 weighs 2; bin 1: 22 weighs 2. */
    wp_tl_add_sig(&t, 10, WAITPROF_STATE_STALL, 1, 11);
    wp_tl_add_sig(&t, 20, WAITPROF_STATE_STALL, 2, 22);
    wp_tl_add_sig(&t, 30, WAITPROF_STATE_STALL, 3, 11);
    wp_tl_add_sig(&t, 40, WAITPROF_STATE_NOT_IN_MPI, 9, 0); /* no vote */
    ck_assert_uint_eq(t.bin[0].vote, 11);
    ck_assert_uint_eq(t.bin[0].vote_n, 2);
    wp_tl_add_sig(&t, 150, WAITPROF_STATE_STALL, 2, 22);
    wp_tl_add_sig(&t, 160, -1, 1, 22); /* a held sample votes too */
    /* Merged (3 of 11 against 5 of 22): 22 by a margin of 1. */
    wp_tl_widen_sig(&t, 200);
    ck_assert_uint_eq(t.bin[0].vote, 22);
    ck_assert_uint_eq(t.bin[0].vote_n, 1);
    ck_assert_uint_ne(wp_tl_stack_id(1, (const uintptr_t[]){1, 2}, 2), wp_tl_stack_id(2, (const uintptr_t[]){1, 2}, 2));
    ck_assert_int_eq(wp_tl_held_class(999999), 0);
    ck_assert_int_eq(wp_tl_held_class(1000000), 1);
    ck_assert_int_eq(wp_tl_held_class(300000000), WP_TL_HELD - 1);
}
END_TEST

START_TEST(test_timeline_sum)
{
    static struct wp_timeline a, b, sum;
    wp_tl_init(&a, 0, 10);
    wp_tl_init(&b, 0, 20);
    wp_tl_add_sig(&a, 5, WAITPROF_STATE_NOT_IN_MPI, 1, 0);
    wp_tl_add_sig(&a, 15, -1 - 1, 10, 5);
    wp_tl_add_sig(&b, 25, WAITPROF_STATE_WORK, 4, 0);
    wp_tl_init(&sum, 0, 20);
    uint64_t stall[WP_TL_HELD] = {0, 3}, all[WP_TL_HELD] = {0, 10};
    wp_tl_sum_sig(&sum, &a, stall, all);
    wp_tl_sum_sig(&sum, &b, stall, all);
    /* a's bins 0 and 1 go to bin 0 of the wider sum; 3 of 10 held Stall. */
    ck_assert_uint_eq(sum.bin[0].w[WAITPROF_STATE_NOT_IN_MPI], 1);
    ck_assert_uint_eq(sum.bin[0].w[WAITPROF_STATE_STALL], 3);
    ck_assert_uint_eq(sum.bin[0].w[WAITPROF_STATE_WORK], 7);
    ck_assert_uint_eq(sum.bin[1].w[WAITPROF_STATE_WORK], 4);
    ck_assert_uint_eq(sum.bin[0].vote, 5);
    ck_assert_uint_eq(sum.nbins, 2);
}
END_TEST

START_TEST(test_timeline_flush)
{
    /* Uncalibrated, a tick is a nanosecond (state/clock.h): the timeline
     * starts at the call's entry, so its bins are 1000 ticks from there. */
    struct wp_store *s = wp_store_create(64, 1024);
    static struct wp_timeline t;
    wp_tl_init(&t, wp_ticks_to_ns(5000), 1000);
    s->tl = &t;
    struct wp_pending *p = s->pending;
    p->n = 2;
    p->depth = 1;
    p->fn = 3;
    p->ips[0] = 42;
    p->enter = 5000;
    p->off[0] = 100, p->weight[0] = 1;  /* at 5100: Stall (below the threshold) */
    p->off[1] = 2500, p->weight[1] = 2; /* at 7500: Work */
    wp_pending_flush(s, p, 1000);
    ck_assert_uint_eq(t.bin[0].w[WAITPROF_STATE_STALL], 1);
    ck_assert_uint_eq(t.bin[2].w[WAITPROF_STATE_WORK], 2);
    ck_assert_uint_eq(t.bin[0].vote, wp_tl_stack_id(3, p->ips, 1));
    /* Held: classed by the time to the call's end (duration 3 ms). */
    p->n = 1;
    p->off[0] = 500, p->weight[0] = 4;
    wp_pending_flush_held(s, p, 3000000, 0, 0);
    ck_assert_uint_eq(t.bin[0].held[wp_tl_held_class(wp_ticks_duration_ns(3000000 - 500))], 4);
    s->tl = NULL;
    wp_store_destroy(s);
}
END_TEST

static Suite *store_suite(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("add");
    tcase_add_test(tc, test_create_rounds_up);
    tcase_add_test(tc, test_held_buckets);
    tcase_add_test(tc, test_held_flush);
    tcase_add_test(tc, test_pending_split);
    tcase_add_test(tc, test_identical_merge);
    tcase_add_test(tc, test_empty_stack);
    tcase_add_test(tc, test_differences_separate);
    tcase_add_test(tc, test_table_three_quarters);
    tcase_add_test(tc, test_arena_full);
    tcase_add_test(tc, test_random_accounting);
    tcase_add_test(tc, test_create_in);
    tcase_add_test(tc, test_bounded_exact_weights);
    tcase_add_test(tc, test_bounded_fallbacks);
    tcase_add_test(tc, test_pressure_steps);
    suite_add_tcase(s, tc);
    tc = tcase_create("timeline");
    tcase_add_test(tc, test_timeline_bins_merge);
    tcase_add_test(tc, test_timeline_vote);
    tcase_add_test(tc, test_timeline_sum);
    tcase_add_test(tc, test_timeline_flush);
    suite_add_tcase(s, tc);
    tc = tcase_create("handler_time");
    tcase_add_loop_test(tc, test_handler_bin, 0, (int)(sizeof durations / sizeof durations[0]));
    tcase_add_test(tc, test_handler_median);
    tcase_add_test(tc, test_counters);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return wp_unit_run(store_suite(), 1);
}
