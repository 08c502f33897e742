/* Unit tests for the choice of matched instances (match/types.h): both
 * sides of a message must choose it alike from its number alone, so the
 * choice is a pure function, and these are the properties the rest of
 * match/ relies on: every number below WP_MATCH_FIRST chosen, blocks taken
 * whole, the choice monotone in the exponent (rate halving drops records
 * by it), exactly one block in every aligned group of 2^e, thinning's
 * count per octave, and wp_match_after giving the next chosen number
 * without skipping one. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "match/types.h"
#include "tests/unit/unit.h"

START_TEST(test_first_and_blocks)
{
    for (unsigned bits = 0; bits < 20; bits++)
        for (uint64_t k = 0; k < WP_MATCH_FIRST; k++)
            ck_assert(wp_match_chosen(k, bits, 14));
    /* The four numbers of a block share its choice. */
    for (unsigned bits = 1; bits < 8; bits++)
        for (uint64_t k = WP_MATCH_FIRST; k < 200000; k++)
            ck_assert_int_eq(wp_match_chosen(k, bits, 14), wp_match_chosen(k & ~(uint64_t)3, bits, 14));
}
END_TEST

START_TEST(test_monotone)
{
    uint64_t x = 12345;
    for (int i = 0; i < 200000; i++) {
        x = wp_mix64(x + 1);
        uint64_t k = x >> (i % 40 + 20);
        for (unsigned bits = 0; bits < 16; bits++)
            if (wp_match_chosen(k, bits + 1, 14))
                ck_assert_msg(wp_match_chosen(k, bits, 14), "k %llu chosen at %u but not at %u",
                              (unsigned long long)k, bits + 1, bits);
    }
}
END_TEST

/* Without thinning, exactly one block of every aligned group of 2^e
 * blocks, and not always in the same place. */
START_TEST(test_one_per_group)
{
    for (unsigned e = 1; e <= 10; e++) {
        unsigned places[1024] = {0};
        unsigned distinct = 0;
        /* The first groups hold blocks below WP_MATCH_FIRST, all chosen. */
        uint64_t g0 = ((WP_MATCH_FIRST >> WP_MATCH_BLOCK_LOG2) + (1u << e) - 1) >> e;
        for (uint64_t g = g0; g < g0 + 512; g++) {
            unsigned n = 0;
            uint64_t where = 0;
            for (uint64_t b = g << e; b < (g + 1) << e; b++)
                if (wp_match_chosen(b << WP_MATCH_BLOCK_LOG2, e, 0)) {
                    n++;
                    where = b - (g << e);
                }
            ck_assert_msg(n == 1, "exponent %u, group %llu: %u chosen blocks", e, (unsigned long long)g, n);
            ck_assert_uint_eq(wp_match_pick(g, e), (g << e) + where);
            if (places[where]++ == 0)
                distinct++;
        }
        /* 512 groups over 2^e places: every place when there are few,
         * else many of them (126, 221, 324 and 403 expected from e = 7
         * to 10; at least 30 % asked). */
        unsigned want = e <= 6 ? 1u << e : (3u << e) / 10;
        ck_assert_msg(distinct >= want, "exponent %u: %u distinct places", e, distinct);
    }
}
END_TEST

/* Thinning: in the octave [2^j, 2^(j+1)) beyond dense, the exponent is
 * bits + j - dense + 1, so it holds 2^(j - 2 - e) chosen blocks exactly
 * (512 numbers at the defaults, one in 16 and 16 384). */
START_TEST(test_thinning_count)
{
    const unsigned bits = 4, dense = 14;
    for (unsigned j = dense; j <= 22; j++) {
        uint64_t n = 0;
        for (uint64_t k = 1ull << j; k < 1ull << (j + 1); k += 4)
            n += wp_match_chosen(k, bits, dense);
        ck_assert_msg(n * 4 == 512, "octave 2^%u: %llu chosen numbers", j, (unsigned long long)(n * 4));
    }
    /* Below dense: one block in 2^bits of every group. */
    uint64_t n = 0;
    for (uint64_t k = 1024; k < 1024 + 4096; k += 4)
        n += wp_match_chosen(k, bits, dense);
    ck_assert_uint_eq(n, 4096 / 4 >> bits);
}
END_TEST

/* wp_match_after against the next chosen number found by testing every
 * block of the first 2^22 numbers, for every number below 40 000 and every
 * 97th above, at several rates and thinnings. */
#define AFTER_LIMIT (1u << 22)
START_TEST(test_after)
{
    const unsigned bitsv[] = {0, 1, 2, 4, 7}, densev[] = {0, 6, 10, 14};
    uint64_t *next = malloc(((AFTER_LIMIT >> WP_MATCH_BLOCK_LOG2) + 1) * sizeof *next);
    ck_assert_ptr_nonnull(next);
    for (size_t a = 0; a < sizeof bitsv / sizeof bitsv[0]; a++)
        for (size_t d = 0; d < sizeof densev / sizeof densev[0]; d++) {
            unsigned bits = bitsv[a], dense = densev[d];
            /* next[b]: the first chosen block at or after block b. */
            uint64_t nb = AFTER_LIMIT >> WP_MATCH_BLOCK_LOG2, none = UINT64_MAX;
            next[nb] = none;
            for (uint64_t b = nb; b-- > 0;)
                next[b] = wp_match_chosen(b << WP_MATCH_BLOCK_LOG2, bits, dense) ? b : next[b + 1];
            for (uint64_t k = 0; k + 1 < AFTER_LIMIT; k += k < 40000 ? 1 : 97) {
                uint64_t n = k + 1, b = n >> WP_MATCH_BLOCK_LOG2, want;
                if (next[b] == b)
                    want = n; /* n's own block is chosen */
                else if (next[b] == none)
                    want = none;
                else
                    want = next[b] << WP_MATCH_BLOCK_LOG2;
                uint64_t got = wp_match_after(k, bits, dense);
                if (want == none)
                    ck_assert_msg(got >= AFTER_LIMIT, "bits %u dense %u: after %llu is %llu, none chosen below %u",
                                  bits, dense, (unsigned long long)k, (unsigned long long)got, AFTER_LIMIT);
                else
                    ck_assert_msg(got == want, "bits %u dense %u: after %llu is %llu, expected %llu", bits, dense,
                                  (unsigned long long)k, (unsigned long long)got, (unsigned long long)want);
            }
        }
    free(next);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("match_choice");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_first_and_blocks);
    tcase_add_test(tc, test_monotone);
    tcase_add_test(tc, test_one_per_group);
    tcase_add_test(tc, test_thinning_count);
    tcase_add_test(tc, test_after);
    suite_add_tcase(s, tc);
    return wp_unit_run(s, 1);
}
