/* Unit tests for the estimator's pure parts: size classes, histogram bins,
 * per-category statistics and their merge, the wait formula (plain and with
 * the early-call remedy) and the pattern of each kind of call; and the
 * report's per-function rows (profile/calls.h), which are summed from the
 * categories. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fallback/estimate.h"
#include "fallback/stats.h"
#include "profile/calls.h"
#include "state/clock.h"
#include "state/functions.h"
#include "tests/unit/unit.h"

START_TEST(test_size_class)
{
    ck_assert_int_eq(wp_size_class(0), 0);
    ck_assert_int_eq(wp_size_class(1), 1);
    ck_assert_int_eq(wp_size_class(2), 2);
    ck_assert_int_eq(wp_size_class(3), 2);
    ck_assert_int_eq(wp_size_class(4), 3);
    ck_assert_int_eq(wp_size_class(8), 4);
    ck_assert_int_eq(wp_size_class(65535), 16);
    ck_assert_int_eq(wp_size_class(65536), 17);
    ck_assert_int_eq(wp_size_class(1ull << 39), 40);
    ck_assert_int_eq(wp_size_class(1ull << 40), WP_SIZE_CLASSES - 1);
    ck_assert_int_eq(wp_size_class(UINT64_MAX), WP_SIZE_CLASSES - 1);
    /* Every power of two starts a new class; the class below ends at it. */
    for (int k = 1; k < 40; k++) {
        ck_assert_int_eq(wp_size_class(1ull << k), k + 1);
        ck_assert_int_eq(wp_size_class((1ull << k) - 1), k);
    }
}
END_TEST

START_TEST(test_hist_bins)
{
    /* Ten linear bins per decade of microseconds. */
    ck_assert_int_eq(wp_hist_bin(0), 0);
    ck_assert_int_eq(wp_hist_bin(9), 9);
    ck_assert_int_eq(wp_hist_bin(10), 11);
    ck_assert_int_eq(wp_hist_bin(19), 11);
    ck_assert_int_eq(wp_hist_bin(20), 12);
    ck_assert_int_eq(wp_hist_bin(99), 19);
    ck_assert_int_eq(wp_hist_bin(100), 21);
    ck_assert_int_eq(wp_hist_bin(999), 29);
    ck_assert_int_eq(wp_hist_bin(1000), 31);
    ck_assert_int_eq(wp_hist_bin(UINT64_MAX), WP_HIST_BINS - 1);
    /* Each bin's lower bound falls in the bin, and bins are ordered. */
    for (int b = 0; b < WP_HIST_BINS - 1; b++) {
        if (b >= 10 && b % 10 == 0)
            continue; /* x0 bins of a decade hold nothing (10..19 is bin 11) */
        uint64_t lo = wp_hist_bin_low(b);
        ck_assert_msg(wp_hist_bin(lo) == b, "bin %d: low %llu lands in %d", b, (unsigned long long)lo,
                      wp_hist_bin(lo));
    }
    uint64_t prev = 0;
    for (uint64_t us = 0; us < 200000; us += 7) {
        int b = wp_hist_bin(us);
        ck_assert_uint_ge(b, prev);
        prev = b;
    }
}
END_TEST

START_TEST(test_cat_stats)
{
    struct wp_cat c = {.min = UINT64_MAX};
    uint64_t d[] = {50, 10, 70, 30, 60};
    for (int i = 0; i < 5; i++)
        wp_cat_add(&c, d[i], d[i], 0);
    ck_assert_uint_eq(c.count, 5);
    ck_assert_uint_eq(c.sum, 220);
    ck_assert_uint_eq(c.min, 10);
    ck_assert_uint_eq(c.max, 70);
    ck_assert_uint_eq(c.max2, 60);
    ck_assert_uint_eq(c.hist[wp_hist_bin(50)], 1);
    ck_assert_uint_eq(c.hist[wp_hist_bin(60)] + c.hist[wp_hist_bin(70)], 2);
    /* An early call counts in the totals but not in the minimum. */
    wp_cat_add(&c, 2, 2, 1);
    ck_assert_uint_eq(c.count, 6);
    ck_assert_uint_eq(c.min, 10);
    ck_assert_uint_eq(c.early_count, 1);
    ck_assert_uint_eq(c.early_sum, 2);
    ck_assert_uint_eq(c.early_min, 2);

    struct wp_cat other = {.min = UINT64_MAX};
    wp_cat_add(&other, 5, 5, 0);
    wp_cat_add(&other, 65, 65, 0);
    wp_cat_add(&other, 1, 1, 1);
    wp_cat_merge(&c, &other);
    ck_assert_uint_eq(c.count, 9);
    ck_assert_uint_eq(c.sum, 220 + 2 + 71);
    ck_assert_uint_eq(c.min, 5);
    ck_assert_uint_eq(c.max, 70);
    ck_assert_uint_eq(c.max2, 65);
    ck_assert_uint_eq(c.early_count, 2);
    ck_assert_uint_eq(c.early_min, 1);
}
END_TEST

/* The hint that sends untimed receives through a polling source
 * (struct wp_cat's long_recent): renewed by a long call, worn down by
 * WP_CAT_LONG_KEEP shorter ones, never by a call that was not timed. */
START_TEST(test_cat_long_recent)
{
    ck_assert_int_eq(wp_hist_bin(WP_CAT_LONG_US), WP_CAT_LONG_BIN);
    ck_assert_int_lt(wp_hist_bin(WP_CAT_LONG_US - 1), WP_CAT_LONG_BIN);
    struct wp_cat c = {.min = UINT64_MAX};
    for (int i = 0; i < 16; i++)
        wp_cat_add(&c, 5, 5, 0);
    ck_assert_uint_eq(c.long_recent, 0);
    wp_cat_add(&c, WP_CAT_LONG_US, WP_CAT_LONG_US, 0);
    ck_assert_uint_eq(c.long_recent, WP_CAT_LONG_KEEP);
    for (int i = 0; i < WP_CAT_LONG_KEEP - 1; i++)
        wp_cat_add(&c, 19, 19, 0);
    ck_assert_uint_eq(c.long_recent, 1);
    wp_cat_add(&c, 19, 19, 0);
    ck_assert_uint_eq(c.long_recent, 0);
    /* A sample's dating of an untimed call: only renews.  The clock's
     * calibration is 1 ns per tick here (wp_hist_q32 unset). */
    uint64_t q = wp_hist_q32;
    wp_hist_q32 = 1ull << 32;
    wp_cat_saw(&c, 5000);
    ck_assert_uint_eq(c.long_recent, 0);
    wp_cat_saw(&c, WP_CAT_LONG_US * 1000);
    ck_assert_uint_eq(c.long_recent, WP_CAT_LONG_KEEP);
    wp_cat_saw(&c, 1000);
    ck_assert_uint_eq(c.long_recent, WP_CAT_LONG_KEEP);
    wp_hist_q32 = q;
}
END_TEST

/* Timed calls that stand for more calls than themselves (struct wp_cat,
 * xcount and xsum): the time of all calls is the weighed ratio estimate,
 * other timed figures scale alike, and merging keeps the weights. */
START_TEST(test_cat_weighed)
{
    struct wp_cat c = {.count = 10, .untimed = 90, .sum = 1000, .min = UINT64_MAX};
    ck_assert_uint_eq(wp_cat_scaled(&c, 1000), 10000);
    ck_assert_uint_eq(wp_cat_scaled(&c, 500), 5000);
    /* Two of the ten, 300 ticks each, were chosen at one in 8. */
    c.xcount = 2 * 7;
    c.xsum = 2 * 7 * 300.0;
    ck_assert_uint_eq(wp_cat_scaled(&c, c.sum), 21667); /* 5200 x 100 / 24 */
    ck_assert_uint_eq(wp_cat_scaled(&c, 500), 10833);   /* 500 x 5.2 x 100 / 24 */
    struct wp_cat m = {.min = UINT64_MAX};
    wp_cat_merge(&m, &c);
    wp_cat_merge(&m, &c);
    ck_assert_uint_eq(wp_cat_scaled(&m, m.sum), 43333); /* 10400 x 200 / 48 */
    /* Every call timed: nothing to scale, whatever the weights. */
    c.untimed = 0;
    ck_assert_uint_eq(wp_cat_scaled(&c, 1000), 1000);
}
END_TEST

START_TEST(test_stats_table)
{
    struct wp_stats *st = wp_stats_create(16);
    ck_assert_ptr_nonnull(st);
    struct wp_cat *a = wp_stats_slot(st, 0x1000, WP_FN_MPI_Recv, 3, WP_ROLE_ANY);
    struct wp_cat *b = wp_stats_slot(st, 0x1000, WP_FN_MPI_Recv, 4, WP_ROLE_ANY);
    struct wp_cat *c = wp_stats_slot(st, 0x2000, WP_FN_MPI_Recv, 3, WP_ROLE_ANY);
    struct wp_cat *d = wp_stats_slot(st, 0x1000, WP_FN_MPI_Bcast, 3, WP_ROLE_ROOT);
    ck_assert_ptr_nonnull(a);
    ck_assert(a != b && a != c && a != d && b != c && b != d && c != d);
    ck_assert_ptr_eq(wp_stats_slot(st, 0x1000, WP_FN_MPI_Recv, 3, WP_ROLE_ANY), a);
    /* The used slots, in the order they were taken, once each: what the
     * writers at MPI_Finalize read instead of every slot. */
    ck_assert_uint_eq(st->used, 4);
    ck_assert_ptr_eq(wp_stats_used(st, 0), a);
    ck_assert_ptr_eq(wp_stats_used(st, 1), b);
    ck_assert_ptr_eq(wp_stats_used(st, 2), c);
    ck_assert_ptr_eq(wp_stats_used(st, 3), d);
    /* At most 3/4 full: 12 categories, then NULL. */
    int made = 4;
    for (uintptr_t s = 0x3000; made < 12; s += 0x10, made++)
        ck_assert_ptr_nonnull(wp_stats_slot(st, s, WP_FN_MPI_Recv, 3, WP_ROLE_ANY));
    ck_assert_ptr_null(wp_stats_slot(st, 0x9000, WP_FN_MPI_Recv, 3, WP_ROLE_ANY));
    ck_assert_ptr_eq(wp_stats_slot(st, 0x2000, WP_FN_MPI_Recv, 3, WP_ROLE_ANY), c);
    ck_assert_uint_eq(st->used, 12);
    for (uint32_t k = 0; k < st->used; k++)
        for (uint32_t j = k + 1; j < st->used; j++)
            ck_assert(st->order[k] != st->order[j]);
    wp_stats_destroy(st);
}
END_TEST

START_TEST(test_wait_formula)
{
    /* The minimum-duration method's plain formula: sum - n x min. */
    ck_assert_uint_eq(wp_estimate_wait(1000, 10, 0, 0, 20), 800);
    ck_assert_uint_eq(wp_estimate_wait(100, 10, 0, 0, 20), 0); /* never negative */
    ck_assert_uint_eq(wp_estimate_wait(1000, 10, 0, 0, UINT64_MAX), 0);
    /* Remedy: 4 early calls took 8 in all and wait zero; the 6 others
     * (992) wait their excess over the late minimum 100. */
    ck_assert_uint_eq(wp_estimate_wait(1000, 10, 8, 4, 100), 992 - 600);
    /* The plain method on the same data, with the early calls' minimum 2
     * as its minimum, estimates more. */
    ck_assert_uint_gt(wp_estimate_wait(1000, 10, 0, 0, 2), wp_estimate_wait(1000, 10, 8, 4, 100));
    /* All calls early: no wait at all. */
    ck_assert_uint_eq(wp_estimate_wait(50, 5, 50, 5, UINT64_MAX), 0);
    ck_assert_uint_eq(wp_estimate_wait(50, 5, 50, 5, 3), 0);
    /* Inconsistent input is refused rather than wrapped around. */
    ck_assert_uint_eq(wp_estimate_wait(50, 5, 60, 5, 3), 0);
    ck_assert_uint_eq(wp_estimate_wait(50, 5, 10, 6, 3), 0);
}
END_TEST

/* The recording path's bin from ticks (a multiply and comparisons)
 * is the same bin as the one from the duration in microseconds. */
START_TEST(test_hist_bin_ticks)
{
    wp_stats_configure(1, 1);
    uint64_t t = 0;
    for (int i = 0; i < 60000; i++) {
        ck_assert_int_eq(wp_hist_bin_ticks(t), wp_hist_bin(wp_ticks_to_us(t)));
        /* Dense near 0, then geometric up to beyond the last edge. */
        t = t < 100000 ? t + 7 : t + t / 512 + 1;
    }
    for (int b = 1; b < WP_HIST_BINS; b++) {
        /* Around each edge: the first and last tick of the bin. */
        uint64_t us = wp_hist_bin_low(b);
        for (uint64_t d = 0; d < 3000; d += 97) {
            uint64_t x = us * 1000 + d;
            ck_assert_int_eq(wp_hist_bin_ticks(x), wp_hist_bin(wp_ticks_to_us(x)));
            if (x > 2 * d) {
                x -= 2 * d;
                ck_assert_int_eq(wp_hist_bin_ticks(x), wp_hist_bin(wp_ticks_to_us(x)));
            }
        }
    }
    ck_assert_int_eq(wp_hist_bin_ticks(UINT64_MAX), WP_HIST_BINS - 1);
}
END_TEST

/* Completion calls: the kinds of the pending requests combined. */
START_TEST(test_req_combine)
{
#define B(k) (1u << (k))
    ck_assert_int_eq(wp_req_combine(B(WP_RK_RECV)), WP_RK_RECV);
    ck_assert_int_eq(wp_req_combine(B(WP_RK_RECV) | B(WP_RK_SEND)), WP_RK_RECV);
    ck_assert_int_eq(wp_req_combine(B(WP_RK_RECV) | B(WP_RK_NXN) | 1u), WP_RK_RECV);
    ck_assert_int_eq(wp_req_combine(B(WP_RK_SEND)), WP_RK_SEND);
    ck_assert_int_eq(wp_req_combine(B(WP_RK_SEND) | 1u), WP_ROLE_ANY);
    ck_assert_int_eq(wp_req_combine(1u), WP_ROLE_ANY);
    ck_assert_int_eq(wp_req_combine(B(WP_RK_NXN) | B(WP_RK_SEND)), WP_RK_NXN);
    ck_assert_int_eq(wp_req_combine(B(WP_RK_BCAST)), WP_RK_BCAST);
    ck_assert_int_eq(wp_req_combine(B(WP_RK_REDUCE)), WP_RK_REDUCE);
    ck_assert_int_eq(wp_req_combine(B(WP_RK_BARRIER)), WP_RK_BARRIER);
    ck_assert_int_eq(wp_req_combine(B(WP_RK_NXN) | B(WP_RK_BARRIER)), WP_RK_OTHER);
    ck_assert_int_eq(wp_req_combine(B(WP_RK_OTHER) | B(WP_RK_SEND)), WP_RK_SEND);
    ck_assert_int_eq(wp_req_combine(0), WP_RK_OTHER);
    /* The pattern of each kind of MPI_Waitall. */
    int g;
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Waitall, 0, WP_RK_RECV, &g), WP_PAT_LATE_SENDER);
    ck_assert_int_eq(g, 0);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Waitall, 0, WP_RK_SEND, &g), WP_PAT_NONE);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Wait, 0, WP_RK_NXN, &g), WP_PAT_NXN);
    ck_assert_int_eq(g, 1);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Wait, 0, WP_RK_BARRIER, &g), WP_PAT_BARRIER);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Wait, 0, WP_RK_BCAST, &g), WP_PAT_LATE_BCAST);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Waitsome, 0, WP_RK_REDUCE, &g), WP_PAT_EARLY_REDUCE);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Waitany, 0, WP_RK_OTHER, &g), WP_PAT_NONE);
    ck_assert_str_eq(wp_role_name(WP_RK_NXN), "nxn");
    ck_assert_str_eq(wp_role_name(WP_ROLE_NONROOT), "nonroot");
#undef B
}
END_TEST

/* The per-thread request table: put, look up, forget; persistent entries
 * survive a completion; a full set evicts instead of failing. */
START_TEST(test_req_table)
{
    ck_assert_int_eq(wp_req_kind(0x1234, 0), 0);
    wp_req_put(0x1234, WP_RK_RECV, 0);
    wp_req_put(0x5678, WP_RK_SEND, 1);
    ck_assert_int_eq(wp_req_kind(0x1234, 0), WP_RK_RECV);
    ck_assert_int_eq(wp_req_kind(0x1234, 1), WP_RK_RECV); /* completed: forgotten */
    ck_assert_int_eq(wp_req_kind(0x1234, 0), 0);
    ck_assert_int_eq(wp_req_kind(0x5678, 1), WP_RK_SEND); /* persistent: kept */
    ck_assert_int_eq(wp_req_kind(0x5678, 0), WP_RK_SEND);
    wp_req_forget(0x5678); /* MPI_Request_free */
    ck_assert_int_eq(wp_req_kind(0x5678, 0), 0);
    /* A reused handle takes its new kind. */
    wp_req_put(0x9999, WP_RK_RECV, 0);
    wp_req_put(0x9999, WP_RK_NXN, 0);
    ck_assert_int_eq(wp_req_kind(0x9999, 0), WP_RK_NXN);
    /* Many more live requests than the table holds: no failure, and the
     * newest are still known. */
    for (uintptr_t k = 1; k <= 100000; k++)
        wp_req_put(k * 64, (int)(WP_RK_RECV + k % 2), 0);
    int known = 0;
    for (uintptr_t k = 100000 - 63; k <= 100000; k++)
        known += wp_req_kind(k * 64, 0) == (int)(WP_RK_RECV + k % 2);
    ck_assert_int_ge(known, 56);
}
END_TEST

/* A completed request's entry stays as a key of kind 0: unknown to a
 * lookup, found again by the handle's next request, and free for any
 * other, so that a new request takes it rather than evicting a live one. */
START_TEST(test_req_table_completed)
{
    /* A full set and one key more of it. */
    uintptr_t keys[WP_REQ_WAYS + 1];
    int n = 0;
    uint32_t set = wp_req_set_index(0x77770000u);
    for (uintptr_t k = 0x77770000u; n < WP_REQ_WAYS + 1; k += 8)
        if (wp_req_set_index(k) == set)
            keys[n++] = k;
    for (int i = 0; i < WP_REQ_WAYS; i++)
        wp_req_put(keys[i], WP_RK_RECV, 0);
    /* The last completes; a new request in the same set must take its
     * entry, leaving the others live. */
    const int last = WP_REQ_WAYS - 1, extra = WP_REQ_WAYS;
    ck_assert_int_eq(wp_req_kind(keys[last], 1), WP_RK_RECV);
    ck_assert_int_eq(wp_req_kind(keys[last], 0), 0);
    wp_req_put(keys[extra], WP_RK_SEND, 0);
    for (int i = 0; i < last; i++)
        ck_assert_int_eq(wp_req_kind(keys[i], 0), WP_RK_RECV);
    ck_assert_int_eq(wp_req_kind(keys[extra], 0), WP_RK_SEND);
    ck_assert_int_eq(wp_req_kind(keys[last], 0), 0);
    /* The completed handle's next request. */
    ck_assert_int_eq(wp_req_kind(keys[0], 1), WP_RK_RECV);
    wp_req_put(keys[0], WP_RK_NXN, 0);
    ck_assert_int_eq(wp_req_kind(keys[0], 0), WP_RK_NXN);
    for (int i = 1; i < last; i++)
        ck_assert_int_eq(wp_req_kind(keys[i], 0), WP_RK_RECV);
}
END_TEST

/* A new key takes its own way of its set when that is free, where the
 * wrappers' inline test finds it (wp_req_put_in, wp_req_kind_in); a key
 * whose own way is taken lives elsewhere in the set, and both the inline
 * and the out-of-line calls find it there, once. */
START_TEST(test_req_table_own_way)
{
    uintptr_t a = 0, b = 0, c = 0;
    for (uintptr_t k = 0x55550000u; c == 0; k += 8) {
        if (a == 0)
            a = k;
        else if (wp_req_set_index(k) == wp_req_set_index(a) && wp_req_way(k) == wp_req_way(a))
            b == 0 ? (b = k) : (c = k);
    }
    uint32_t w;
    wp_req_put_in(a, WP_RK_RECV, 0);
    ck_assert_ptr_nonnull(wp_req_own(a, &w)); /* in its own way */
    wp_req_put_in(b, WP_RK_SEND, 0);
    ck_assert_ptr_null(wp_req_own(b, &w)); /* a holds the way */
    ck_assert_int_eq(wp_req_kind_in(a, 0), WP_RK_RECV);
    ck_assert_int_eq(wp_req_kind_in(b, 0), WP_RK_SEND);
    /* a completes; b's handle comes back: updated where it is, not copied
     * into the way a left free. */
    ck_assert_int_eq(wp_req_kind_in(a, 1), WP_RK_RECV);
    wp_req_put_in(b, WP_RK_NXN, 0);
    ck_assert_ptr_null(wp_req_own(b, &w));
    ck_assert_int_eq(wp_req_kind_in(b, 1), WP_RK_NXN);
    ck_assert_int_eq(wp_req_kind_in(b, 0), 0); /* forgotten: no stale copy */
    /* A new key of the same way takes the way a left free. */
    wp_req_put_in(c, WP_RK_SEND, 1);
    ck_assert_ptr_nonnull(wp_req_own(c, &w));
    ck_assert_int_eq(wp_req_kind_in(c, 1), WP_RK_SEND); /* persistent: kept */
    ck_assert_int_eq(wp_req_kind(c, 0), WP_RK_SEND);
    ck_assert_int_eq(wp_req_kind_in(a, 0), 0);
}
END_TEST

START_TEST(test_patterns)
{
    int g;
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Recv, 3, WP_ROLE_ANY, &g), WP_PAT_LATE_SENDER);
    ck_assert_int_eq(g, 0);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Probe, 0, WP_ROLE_ANY, &g), WP_PAT_LATE_SENDER);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Sendrecv, 3, WP_ROLE_ANY, &g), WP_PAT_LATE_SENDER);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Waitall, 0, WP_ROLE_ANY, &g), WP_PAT_LATE_SENDER);
    ck_assert_int_eq(g, 0);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Ssend, 3, WP_ROLE_ANY, &g), WP_PAT_LATE_RECEIVER);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Send, wp_size_class(65536), WP_ROLE_ANY, &g), WP_PAT_LATE_RECEIVER);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Send, wp_size_class(65535), WP_ROLE_ANY, &g), WP_PAT_NONE);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Allreduce, 3, WP_ROLE_ANY, &g), WP_PAT_NXN);
    ck_assert_int_eq(g, 1);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Alltoallv, 0, WP_ROLE_ANY, &g), WP_PAT_NXN);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Barrier, 0, WP_ROLE_ANY, &g), WP_PAT_BARRIER);
    ck_assert_int_eq(g, 1);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Bcast, 3, WP_ROLE_NONROOT, &g), WP_PAT_LATE_BCAST);
    ck_assert_int_eq(g, 1);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Bcast, 3, WP_ROLE_ROOT, &g), WP_PAT_NONE);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Scatterv, 3, WP_ROLE_NONROOT, &g), WP_PAT_LATE_BCAST);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Reduce, 3, WP_ROLE_ROOT, &g), WP_PAT_EARLY_REDUCE);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Gather, 3, WP_ROLE_NONROOT, &g), WP_PAT_NONE);
    ck_assert_int_eq(wp_pattern_of(WP_FN_MPI_Isend, 3, WP_ROLE_ANY, &g), WP_PAT_NONE);
    ck_assert_str_eq(wp_pattern_name(WP_PAT_EARLY_REDUCE), "early_reduce");
}
END_TEST

/* The report's per-function figures come from the categories: event
 * numbers count the function's calls on the thread across call sites and
 * size classes, and the shortest call may be one complete on entry. */
START_TEST(test_calls_from_categories)
{
    /* Ticks are nanoseconds here (no TSC calibration in this process). */
    struct {
        int fn;
        uintptr_t site;
        uint64_t bytes, ticks;
        int early;
    } calls[] = {
        {WP_FN_MPI_Recv, 0x1000, 8, 5000, 0},   /* Recv event 1 */
        {WP_FN_MPI_Recv, 0x1000, 8, 1000, 0},   /* 2 */
        {WP_FN_MPI_Recv, 0x2000, 8, 9000, 0},   /* 3: longest, other site */
        {WP_FN_MPI_Bcast, 0x1000, 8, 100, 0},   /* Bcast event 1 */
        {WP_FN_MPI_Recv, 0x1000, 4096, 7000, 0}, /* 4: second longest, other size class */
        {WP_FN_MPI_Recv, 0x2000, 8, 500, 1},    /* 5: shortest, complete on entry */
    };
    uint64_t t = 1000000;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        wp_stats_record(calls[i].fn, calls[i].bytes, WP_ROLE_ANY, calls[i].site, t, t + calls[i].ticks,
                        calls[i].early);
        t += 2 * calls[i].ticks;
    }
    /* Four categories (two sites of 8-byte receives, one of 4 KiB, one
     * broadcast), each once through the iterator the writers use. */
    struct wp_stats_iter it = {0};
    int ncat = 0;
    for (const struct wp_cat *c; (c = wp_stats_next(&it)) != NULL;)
        ncat++;
    ck_assert_int_eq(ncat, 4);
    char dir[] = "/tmp/wp_test_stats.XXXXXX", path[128], line[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(wp_calls_write(dir, 0), 0);
    snprintf(path, sizeof path, "%s/rank.0.calls", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    int recv = 0, bcast = 0, rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || strncmp(line, "function\t", 9) == 0)
            continue;
        rows++;
        if (strncmp(line, "MPI_Recv\t", 9) == 0) {
            ck_assert_str_eq(line + 9, "5\t22500\t500\t5\t9000\t3\t7000\t4\t0\t0\t0\t0\t0:1,1:1,5:1,7:1,9:1\n");
            recv = 1;
        } else if (strncmp(line, "MPI_Bcast\t", 10) == 0) {
            ck_assert_str_eq(line + 10, "1\t100\t100\t1\t100\t1\t0\t0\t0\t0\t0\t0\t0:1\n");
            bcast = 1;
        }
    }
    fclose(f);
    ck_assert_int_eq(recv + bcast, 2);
    ck_assert_int_eq(rows, 2);
    unlink(path);
    rmdir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stats");
    TCase *tc = tcase_create("estimator");
    tcase_add_test(tc, test_size_class);
    tcase_add_test(tc, test_hist_bins);
    tcase_add_test(tc, test_cat_stats);
    tcase_add_test(tc, test_cat_long_recent);
    tcase_add_test(tc, test_cat_weighed);
    tcase_add_test(tc, test_stats_table);
    tcase_add_test(tc, test_wait_formula);
    tcase_add_test(tc, test_patterns);
    tcase_add_test(tc, test_hist_bin_ticks);
    tcase_add_test(tc, test_req_combine);
    tcase_add_test(tc, test_req_table);
    tcase_add_test(tc, test_req_table_completed);
    tcase_add_test(tc, test_req_table_own_way);
    tcase_add_test(tc, test_calls_from_categories);
    suite_add_tcase(s, tc);
    return wp_unit_run(s, 1);
}
