/* tests/unit/test_clock.c — the TSC's reference pairs (state/clock.h).
 *
 * Checked: a calibration whose clock readings are delayed by 2 ms every
 * other time, as a preemption between the TSC read and clock_gettime
 * would delay them, still converts ticks to CLOCK_MONOTONIC within 20 µs
 * (one reading alone would be 2 ms off, on every conversion after it); so
 * do 20 calibrations in a row with the delay on either parity; the anchor
 * wp_clock_anchor() gives converts to itself.  Without a usable TSC
 * (another architecture, or a CPU without constant_tsc and nonstop_tsc)
 * there is nothing to check: exit 77.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "state/clock.h"
#include "tests/unit/unit.h"

static int delayed_parity;
static unsigned long reads;

/* CLOCK_MONOTONIC, read 2 ms late on every other call. */
static uint64_t late_reader(void)
{
    if ((int)(reads++ % 2) == delayed_parity) {
        uint64_t until = wp_clock_ns() + 2000000;
        while (wp_clock_ns() < until)
            ;
    }
    return wp_clock_ns();
}

/* ticks → ns against CLOCK_MONOTONIC now, in ns. */
static long long conversion_error(void)
{
    uint64_t ns, ticks;
    wp_clock_pair(&ns, &ticks);
    return (long long)wp_ticks_to_ns(ticks) - (long long)ns;
}

START_TEST(test_delayed_readings)
{
    usleep(20000);
    for (int i = 0; i < 20; i++) {
        delayed_parity = i % 2;
        reads = 0;
        wp_clock_test_reader(late_reader);
        wp_clock_calibrate();
        wp_clock_test_reader(NULL);
        long long err = conversion_error();
        ck_assert_msg(llabs(err) < 20000, "calibration %d: ticks convert %lld ns off CLOCK_MONOTONIC", i, err);
        usleep(5000);
    }
}
END_TEST

START_TEST(test_anchor)
{
    wp_clock_calibrate();
    uint64_t ns, ticks;
    wp_clock_anchor(&ns, &ticks);
    ck_assert_uint_gt(ticks, 0);
    ck_assert_uint_eq(wp_ticks_to_ns(ticks), ns);
    ck_assert(llabs(conversion_error()) < 20000);
}
END_TEST

int main(void)
{
    if (!wp_clock_tsc) {
        fprintf(stderr, "test_clock: no usable TSC here; the reference pairs are CLOCK_MONOTONIC itself\n");
        return 77;
    }
    Suite *s = suite_create("clock");
    TCase *tc = tcase_create("pairs");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_delayed_readings);
    tcase_add_test(tc, test_anchor);
    suite_add_tcase(s, tc);
    return wp_unit_run(s, 0);
}
