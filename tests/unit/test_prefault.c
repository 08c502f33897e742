/* tests/unit/test_prefault.c — memory made present ahead of its writers
 * (state/prefault.h).
 *
 * Checked, with mincore(2), which tells which pages of a mapping are in
 * memory: a fresh anonymous mapping has none; wp_prefault makes every page
 * of a range present, including the page its unaligned start lies in, and
 * leaves the contents as they were; wp_calloc_ready's blocks are zero and
 * present, wp_malloc_ready's present from WP_PREFAULT_MIN bytes.  On a
 * kernel without MADV_POPULATE_WRITE (before Linux 5.14) wp_prefault
 * returns -1 and the presence checks are skipped, not failed.
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "state/prefault.h"
#include "tests/unit/unit.h"

static size_t page(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

/* The pages [p, p + bytes) lies in. */
static size_t spanned(const void *p, size_t bytes)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(page() - 1), b = (uintptr_t)p + bytes;
    return (b - a + page() - 1) / page();
}

/* The pages of [p, p + bytes) that are in memory. */
static size_t resident(const void *p, size_t bytes)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(page() - 1), b = (uintptr_t)p + bytes;
    size_t n = spanned(p, bytes);
    unsigned char *v = malloc(n);
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(mincore((void *)a, b - a, v), 0);
    size_t in = 0;
    for (size_t i = 0; i < n; i++)
        in += v[i] & 1;
    free(v);
    return in;
}

/* Whether this kernel populates ranges (MADV_POPULATE_WRITE). */
static int kernel_populates(void)
{
    void *m = mmap(NULL, page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(m != MAP_FAILED);
    int ok = wp_prefault(m, 1) == 0;
    munmap(m, page());
    return ok;
}

START_TEST(test_prefault_range)
{
    size_t n = 64;
    char *m = mmap(NULL, n * page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(m != MAP_FAILED);
    ck_assert_uint_eq(resident(m, n * page()), 0);
    /* Written before: the contents must survive. */
    m[5 * page() + 7] = 42;
    ck_assert_uint_eq(resident(m, n * page()), 1);
    if (!kernel_populates()) {
        munmap(m, n * page());
        return;
    }
    /* From the middle of page 3 to the middle of page 20: pages 3..20. */
    ck_assert_int_eq(wp_prefault(m + 3 * page() + 100, 17 * page()), 0);
    ck_assert_uint_eq(resident(m, n * page()), 18);
    ck_assert_uint_eq(resident(m + 3 * page(), 18 * page()), 18);
    ck_assert_int_eq(m[5 * page() + 7], 42);
    ck_assert_int_eq(m[4 * page()], 0);
    /* Nothing to do is not a failure. */
    ck_assert_int_eq(wp_prefault(m, 0), 0);
    ck_assert_int_eq(wp_prefault(NULL, 100), 0);
    munmap(m, n * page());
}
END_TEST

START_TEST(test_ready_allocators)
{
    size_t n = 4 * WP_PREFAULT_MIN / sizeof(uint64_t);
    uint64_t *z = wp_calloc_ready(n, sizeof *z);
    ck_assert_ptr_nonnull(z);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(z[i], 0);
    char *b = wp_malloc_ready(4 * WP_PREFAULT_MIN);
    ck_assert_ptr_nonnull(b);
    if (kernel_populates()) {
        /* Checked before anything here writes b: only the call can have
         * made its pages present (z's were read above, which maps the
         * zero page, so z is checked through its contents alone). */
        ck_assert_uint_eq(resident(b, 4 * WP_PREFAULT_MIN), spanned(b, 4 * WP_PREFAULT_MIN));
    }
    memset(b, 1, 4 * WP_PREFAULT_MIN);
    free(b);
    free(z);
}
END_TEST

static Suite *prefault_suite(void)
{
    Suite *s = suite_create("prefault");
    TCase *tc = tcase_create("prefault");
    tcase_add_test(tc, test_prefault_range);
    tcase_add_test(tc, test_ready_allocators);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return wp_unit_run(prefault_suite(), 1);
}
