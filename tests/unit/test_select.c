/* tests/unit/test_select.c — the rank-list and time-window parsers
 * (format/select.h) and how wp_config_load() reports bad WAITPROF_RANKS,
 * _START, _STOP, _WINDOW and _MEMORY values (one line, the fallback used).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/config.h"
#include "format/select.h"
#include "tests/unit/unit.h"

static char why[256], note[512], text[512];

/* The selected ranks of 0..size-1 as text, after parsing and fitting. */
static const char *sel(const char *spec, long size)
{
    struct wp_ranks r;
    ck_assert_msg(wp_ranks_parse(spec, &r, why, sizeof why) == 0, "%s: %s", spec, why);
    wp_ranks_fit(&r, size, note, sizeof note);
    wp_ranks_format(&r, size, text, sizeof text);
    return text;
}

START_TEST(test_lists)
{
    ck_assert_str_eq(sel("all", 8), "0-7");
    ck_assert_str_eq(sel("none", 8), "none");
    ck_assert_str_eq(sel("1,5-6", 8), "1,5-6");
    ck_assert_str_eq(sel("0-15,1024,2048-4095:64", 4096), "0-15,1024,2048,2112,2176,2240,2304,2368,2432,2496,2560,"
                                                         "2624,2688,2752,2816,2880,2944,3008,3072,3136,3200,3264,"
                                                         "3328,3392,3456,3520,3584,3648,3712,3776,3840,3904,3968,4032");
    ck_assert_str_eq(sel("0-9:3", 10), "0,3,6,9");
    ck_assert_str_eq(sel("7", 8), "7");
    ck_assert_str_eq(sel("3,1", 8), "1,3");
}
END_TEST

START_TEST(test_list_counts_and_membership)
{
    struct wp_ranks r;
    ck_assert_int_eq(wp_ranks_parse("2048-4095:64", &r, why, sizeof why), 0);
    ck_assert_int_eq(wp_ranks_fit(&r, 100000, note, sizeof note), 0);
    ck_assert_int_eq(wp_ranks_count(&r, 100000), 32);
    ck_assert(wp_ranks_has(&r, 2048));
    ck_assert(wp_ranks_has(&r, 4032));
    ck_assert(!wp_ranks_has(&r, 4095));
    ck_assert(!wp_ranks_has(&r, 2049));
    ck_assert_int_eq(wp_ranks_first(&r, 100000), 2048);
    /* Counting by items and by walking agree, with and without overlap. */
    static const char *const lists[] = {"1,5-6", "0-15,1024,2048-4095:64", "7-99:3,3", "0-3,2-5", "0-9:2,4-9:4",
                                        "90-200"};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        ck_assert_int_eq(wp_ranks_parse(lists[i], &r, why, sizeof why), 0);
        wp_ranks_fit(&r, 100, note, sizeof note);
        long walk = 0, first = -1;
        for (long x = 0; x < 100; x++)
            if (wp_ranks_has(&r, x)) {
                walk++;
                if (first < 0)
                    first = x;
            }
        ck_assert_msg(wp_ranks_count(&r, 100) == walk, "%s: %ld vs %ld", lists[i], wp_ranks_count(&r, 100), walk);
        ck_assert_int_eq(wp_ranks_first(&r, 100), first);
    }
    ck_assert_int_eq(wp_ranks_parse("none", &r, why, sizeof why), 0);
    ck_assert_int_eq(wp_ranks_first(&r, 100), -1);
    ck_assert_int_eq(wp_ranks_parse("random:4:9", &r, why, sizeof why), 0);
    wp_ranks_fit(&r, 1000, note, sizeof note);
    long f = wp_ranks_first(&r, 1000);
    ck_assert(f >= 0 && wp_ranks_has(&r, f));
    for (long x = 0; x < f; x++)
        ck_assert(!wp_ranks_has(&r, x));
}
END_TEST

START_TEST(test_syntax_errors)
{
    static const char *const bad[] = {"", "abc", "1-", "-3", "5-2", "1,,2", "1,", "0-9:0", "0-9:x", "random:",
                                      "random:0", "random:x", "random:3:", "random:3:x", "random:3x", "1 2",
                                      " 1", "1.5", "all,1"};
    struct wp_ranks r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        ck_assert_msg(wp_ranks_parse(bad[i], &r, why, sizeof why) == -1, "\"%s\" accepted", bad[i]);
        ck_assert_msg(why[0] != '\0', "\"%s\": no reason", bad[i]);
    }
}
END_TEST

START_TEST(test_fit_beyond_and_overlap)
{
    struct wp_ranks r;
    ck_assert_int_eq(wp_ranks_parse("0-15", &r, why, sizeof why), 0);
    ck_assert_int_eq(wp_ranks_fit(&r, 8, note, sizeof note), 1);
    ck_assert_ptr_nonnull(strstr(note, "beyond the job's last rank 7"));
    ck_assert_ptr_nonnull(strstr(note, "sampling ranks 0-7"));

    ck_assert_int_eq(wp_ranks_parse("20,30-40", &r, why, sizeof why), 0);
    ck_assert_int_eq(wp_ranks_fit(&r, 8, note, sizeof note), 1);
    ck_assert_ptr_nonnull(strstr(note, "sampling ranks none"));
    ck_assert_int_eq(wp_ranks_count(&r, 8), 0);

    ck_assert_int_eq(wp_ranks_parse("0-3,2-5", &r, why, sizeof why), 0);
    ck_assert_int_eq(wp_ranks_fit(&r, 8, note, sizeof note), 1);
    ck_assert_ptr_nonnull(strstr(note, "overlapping"));
    ck_assert_ptr_nonnull(strstr(note, "sampling ranks 0-5"));
    ck_assert_int_eq(wp_ranks_count(&r, 8), 6);

    /* Interleaved strides share no rank: not an overlap. */
    ck_assert_int_eq(wp_ranks_parse("0-15:2,1-15:2", &r, why, sizeof why), 0);
    ck_assert_int_eq(wp_ranks_fit(&r, 16, note, sizeof note), 0);
    ck_assert_str_eq(note, "");
    ck_assert_int_eq(wp_ranks_count(&r, 16), 16);
}
END_TEST

START_TEST(test_random)
{
    static const long sizes[] = {2, 3, 8, 32, 1000, 100000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        long size = sizes[k];
        for (unsigned long long seed = 0; seed < 5; seed++) {
            struct wp_ranks r;
            ck_assert_int_eq(wp_ranks_parse("random:2", &r, why, sizeof why), 0);
            r.seed = seed;
            wp_ranks_fit(&r, size, note, sizeof note);
            long n = 0;
            for (long x = 0; x < size; x++)
                n += wp_ranks_has(&r, x);
            ck_assert_int_eq(n, 2 < size ? 2 : size);
            ck_assert_int_eq(wp_ranks_count(&r, size), n);
        }
    }
    /* The seed decides: the same seed gives the same set, and some other
     * seed a different one. */
    struct wp_ranks a, b;
    ck_assert_int_eq(wp_ranks_parse("random:3:42", &a, why, sizeof why), 0);
    ck_assert(a.has_seed && a.seed == 42);
    b = a;
    wp_ranks_fit(&a, 32, note, sizeof note);
    wp_ranks_fit(&b, 32, note, sizeof note);
    char ta[64], tb[64];
    wp_ranks_format(&a, 32, ta, sizeof ta);
    wp_ranks_format(&b, 32, tb, sizeof tb);
    ck_assert_str_eq(ta, tb);
    int differs = 0;
    for (unsigned long long seed = 43; seed < 60 && !differs; seed++) {
        b.seed = seed;
        wp_ranks_format(&b, 32, tb, sizeof tb);
        differs = strcmp(ta, tb) != 0;
    }
    ck_assert(differs);
    /* More than the job: all ranks, said in the note. */
    ck_assert_int_eq(wp_ranks_parse("random:9", &a, why, sizeof why), 0);
    ck_assert_int_eq(wp_ranks_fit(&a, 8, note, sizeof note), 1);
    ck_assert_ptr_nonnull(strstr(note, "sampling all ranks"));
    ck_assert_int_eq(wp_ranks_count(&a, 8), 8);
}
END_TEST

START_TEST(test_format_cut)
{
    struct wp_ranks r;
    ck_assert_int_eq(wp_ranks_parse("0-99:2", &r, why, sizeof why), 0);
    wp_ranks_fit(&r, 100, note, sizeof note);
    char small[20];
    wp_ranks_format(&r, 100, small, sizeof small);
    ck_assert_msg(strlen(small) < sizeof small, "%s", small);
    ck_assert_ptr_nonnull(strstr(small, ",..."));
}
END_TEST

START_TEST(test_window_parse)
{
    double e = 0, d = 0;
    ck_assert_int_eq(wp_window_parse("every:300,for:30", &e, &d, why, sizeof why), 0);
    ck_assert_double_eq_tol(e, 300, 1e-9);
    ck_assert_double_eq_tol(d, 30, 1e-9);
    ck_assert_int_eq(wp_window_parse("every:0.4,for:0.1", &e, &d, why, sizeof why), 0);
    ck_assert_double_eq_tol(d, 0.1, 1e-12);
    ck_assert_int_eq(wp_window_parse("every:5,for:5", &e, &d, why, sizeof why), 0);
    static const char *const bad[] = {"", "every:300", "for:30,every:300", "every:30,for:300", "every:0,for:0",
                                      "every:-1,for:1", "every:x,for:1", "every:10,for:", "every:10,for:1s",
                                      "every:10, for:1", "every:1e3,for:1", "garbage"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(wp_window_parse(bad[i], &e, &d, why, sizeof why) == -1, "\"%s\" accepted", bad[i]);
}
END_TEST

static uint64_t pieces[64][2];
static int npieces;
static void piece(uint64_t a, uint64_t b, void *arg)
{
    (void)arg;
    pieces[npieces][0] = a;
    pieces[npieces][1] = b;
    npieces++;
}

START_TEST(test_window_pieces)
{
    struct wp_timesel t = {100, 1000, 0, 0};
    npieces = 0;
    ck_assert_uint_eq(wp_window_pieces_sig(&t, 0, 2000, piece, NULL), 900);
    ck_assert_int_eq(npieces, 1);
    ck_assert_uint_eq(pieces[0][0], 100);
    ck_assert_uint_eq(pieces[0][1], 1000);
    ck_assert(!wp_window_on_sig(&t, 99) && wp_window_on_sig(&t, 100) && wp_window_on_sig(&t, 999) &&
              !wp_window_on_sig(&t, 1000));
    /* every 400 for 100 from 100, stopped at 1000: [100,200) [500,600) [900,1000). */
    struct wp_timesel w = {100, 1000, 400, 100};
    npieces = 0;
    ck_assert_uint_eq(wp_window_pieces_sig(&w, 0, 5000, piece, NULL), 300);
    ck_assert_int_eq(npieces, 3);
    ck_assert_uint_eq(pieces[1][0], 500);
    ck_assert_uint_eq(pieces[2][1], 1000);
    /* A sub-range cuts pieces. */
    npieces = 0;
    ck_assert_uint_eq(wp_window_pieces_sig(&w, 150, 550, piece, NULL), 100);
    ck_assert(wp_window_on_sig(&w, 150) && !wp_window_on_sig(&w, 200) && wp_window_on_sig(&w, 599) &&
              !wp_window_on_sig(&w, 950 + 100));
    /* No selection at all: everything. */
    struct wp_timesel all = {0, 0, 0, 0};
    ck_assert_uint_eq(wp_window_pieces_sig(&all, 10, 20, NULL, NULL), 10);
    /* The first selected instant from a given time on. */
    ck_assert_uint_eq(wp_window_next_sig(&t, 0), 100);
    ck_assert_uint_eq(wp_window_next_sig(&t, 500), 500);
    ck_assert_uint_eq(wp_window_next_sig(&t, 1000), UINT64_MAX);
    ck_assert_uint_eq(wp_window_next_sig(&w, 0), 100);
    ck_assert_uint_eq(wp_window_next_sig(&w, 150), 150);
    ck_assert_uint_eq(wp_window_next_sig(&w, 200), 500);
    ck_assert_uint_eq(wp_window_next_sig(&w, 899), 900);
    ck_assert_uint_eq(wp_window_next_sig(&w, 950), 950);
    ck_assert_uint_eq(wp_window_next_sig(&w, 1000), UINT64_MAX);
    struct wp_timesel open_end = {0, 0, 400, 100};
    ck_assert_uint_eq(wp_window_next_sig(&open_end, 100), 400);
    ck_assert_uint_eq(wp_window_next_sig(&all, 7), 7);
}
END_TEST

/* --- bad values through wp_config_load: one line each, the fallback used --- */

static const char *env_name, *env_value, *env_name2, *env_value2;
static char lines[8][1024];
static int nlines;

static const char *fake_getenv(const char *name)
{
    if (env_name && strcmp(name, env_name) == 0)
        return env_value;
    if (env_name2 && strcmp(name, env_name2) == 0)
        return env_value2;
    return NULL;
}

static void capture(const char *line)
{
    if (nlines < 8)
        snprintf(lines[nlines], sizeof lines[0], "%s", line);
    nlines++;
}

static void load1(struct wp_config *c, const char *n, const char *v, const char *n2, const char *v2)
{
    env_name = n, env_value = v, env_name2 = n2, env_value2 = v2;
    nlines = 0;
    wp_config_load(c, fake_getenv, capture);
}

START_TEST(test_config_bad_values)
{
    static const struct {
        const char *var, *val, *must;
    } bad[] = {
        {"WAITPROF_RANKS", "abc", "using all"},        {"WAITPROF_RANKS", "", "using all"},
        {"WAITPROF_RANKS", "-3", "using all"},         {"WAITPROF_RANKS", "5-2", "backwards"},
        {"WAITPROF_RANKS", "random:0", "using all"},   {"WAITPROF_START", "abc", "using 0"},
        {"WAITPROF_START", "-1", "using 0"},           {"WAITPROF_STOP", "x", "using 0"},
        {"WAITPROF_STOP", "-2", "using 0"},            {"WAITPROF_WINDOW", "every:1,for:2", "no periodic window"},
        {"WAITPROF_WINDOW", "", "no periodic window"}, {"WAITPROF_MEMORY", "abc", "using 16M"},
        {"WAITPROF_MEMORY", "10", "using 16M"},        {"WAITPROF_MEMORY", "5G", "using 16M"},
        {"WAITPROF_MEMORY", "-1M", "using 16M"},       {"WAITPROF_MEMORY", "", "using 16M"},
    };
    struct wp_config c;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        load1(&c, bad[i].var, bad[i].val, NULL, NULL);
        ck_assert_msg(nlines == 1, "%s=\"%s\": %d lines", bad[i].var, bad[i].val, nlines);
        ck_assert_msg(strstr(lines[0], bad[i].var) && strstr(lines[0], bad[i].must), "%s", lines[0]);
        ck_assert_str_eq(c.ranks_spec, "all");
        ck_assert_int_eq(c.ranks.kind, WP_RANKS_ALL);
        ck_assert_double_eq_tol(c.start_s + c.stop_s + c.every_s + c.for_s, 0, 1e-12);
        ck_assert_uint_eq(c.memory, 16u << 20);
    }
    /* STOP before START: one line, the stop is dropped, the start kept. */
    load1(&c, "WAITPROF_START", "2", "WAITPROF_STOP", "1");
    ck_assert_int_eq(nlines, 1);
    ck_assert_ptr_nonnull(strstr(lines[0], "WAITPROF_STOP=1 is not after WAITPROF_START=2"));
    ck_assert_double_eq_tol(c.start_s, 2, 1e-12);
    ck_assert_double_eq_tol(c.stop_s, 0, 1e-12);
}
END_TEST

START_TEST(test_config_good_values)
{
    struct wp_config c;
    load1(&c, "WAITPROF_RANKS", "0-15,1024,2048-4095:64", "WAITPROF_MEMORY", "512K");
    ck_assert_int_eq(nlines, 1); /* 512K is below the 1M minimum */
    load1(&c, "WAITPROF_RANKS", "0-15,1024,2048-4095:64", "WAITPROF_MEMORY", "2M");
    ck_assert_int_eq(nlines, 0);
    ck_assert_str_eq(c.ranks_spec, "0-15,1024,2048-4095:64");
    ck_assert_int_eq(c.ranks.nitems, 3);
    ck_assert_uint_eq(c.memory, 2u << 20);
    load1(&c, "WAITPROF_START", "1.5", "WAITPROF_STOP", "3");
    ck_assert_int_eq(nlines, 0);
    ck_assert_double_eq_tol(c.stop_s - c.start_s, 1.5, 1e-12);
    load1(&c, "WAITPROF_WINDOW", "every:300,for:30", "WAITPROF_MEMORY", "1GiB");
    ck_assert_int_eq(nlines, 0);
    ck_assert_double_eq_tol(c.every_s, 300, 1e-12);
    ck_assert_uint_eq(c.memory, 1u << 30);
    load1(&c, "WAITPROF_RANKS", "random:3:7", NULL, NULL);
    ck_assert_int_eq(nlines, 0);
    ck_assert_int_eq(c.ranks.kind, WP_RANKS_RANDOM);
    ck_assert_int_eq(c.ranks.nrandom, 3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("select");
    TCase *tc = tcase_create("ranks");
    tcase_add_test(tc, test_lists);
    tcase_add_test(tc, test_list_counts_and_membership);
    tcase_add_test(tc, test_syntax_errors);
    tcase_add_test(tc, test_fit_beyond_and_overlap);
    tcase_add_test(tc, test_random);
    tcase_add_test(tc, test_format_cut);
    suite_add_tcase(s, tc);
    tc = tcase_create("time");
    tcase_add_test(tc, test_window_parse);
    tcase_add_test(tc, test_window_pieces);
    suite_add_tcase(s, tc);
    tc = tcase_create("config");
    tcase_add_test(tc, test_config_bad_values);
    tcase_add_test(tc, test_config_good_values);
    suite_add_tcase(s, tc);
    return wp_unit_run(s, 1);
}
