/* tests/unit/test_folded.c — folded stacks (format/folded.h).
 *
 * Checked: frame names are made safe (no ';', no control characters, no
 * space-digit tail a reader would take for a count, no flamegraph.pl "_[k]"
 * annotation, never empty); collections are sorted and merged with counts
 * summed; the line parser takes exactly "STACK COUNT" with one space and a
 * positive count; text input keeps good lines and counts bad ones; what is
 * written reads back the same.  Fortran symbols read as source names
 * (symbols/names.h): module procedures of gfortran (__MOD_MOD_PROC), Intel
 * (MOD_mp_PROC_) and flang (_QMMODPPROC, with submodules, host procedures
 * and blocks) as "module::procedure"; flang's external procedures lose
 * their tag; names that only look alike (C names, upper case, empty parts,
 * flang's variables, types and compiler-internal names) are left alone and
 * the output buffer untouched; a small buffer truncates; the main
 * program's symbols are recognized.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/folded.h"
#include "symbols/names.h"
#include "tests/unit/unit.h"

/* --- wp_frame_sanitize --------------------------------------------------------- */

struct san {
    const char *in, *out;
};

static const struct san sans[] = {
    {"main", "main"},
    {"MPI_Recv", "MPI_Recv"},
    {"std::vector<int>::push_back(int const&)", "std::vector<int>::push_back(int const&)"},
    {"a;b", "a:b"},
    {";;", "::"},
    {"a\nb", "a?b"},
    {"a\tb\rc", "a?b?c"},
    {"\x01x\x1f", "?x?"},
    {"del\x7f", "del?"},
    {"f 123", "f_123"},
    {"operator new 4", "operator new_4"},
    {"f 12 34", "f 12_34"},
    {" 7", "_7"},
    {"f 12a", "f 12a"},            /* not all digits: no count to mistake */
    {"f12", "f12"},
    {"f_[k]", "f-[k]"},
    {"f_[j]", "f-[j]"},
    {"f_[i]", "f-[i]"},
    {"f_[w]", "f-[w]"},
    {"_[k]", "-[k]"},
    {"f ", "f_"},                   /* a trailing space would double the separator */
    {"f 1 ", "f 1_"},
    {"  ", "__"},
    {"f_[k]x", "f_[k]x"},           /* not at the end: harmless */
    {"f[k]", "f[k]"},
    {"f;_[k]", "f:-[k]"},
    {"", "??"},
    {"??", "??"},
    {"caf\xc3\xa9", "caf\xc3\xa9"}, /* UTF-8 passes untouched */
};

START_TEST(test_sanitize_table)
{
    char out[256];
    wp_frame_sanitize(out, sizeof out, sans[_i].in);
    ck_assert_str_eq(out, sans[_i].out);
}
END_TEST

/* The properties the contract promises, for each name in a set of nasty ones,
 * and the one that matters downstream: the name as the leaf of a line parses
 * back to exactly itself. */
static const char *const nasty[] = {
    "", " ", "  ", "f ", "f  ", "f 1 ", " 1", "1", "12", "f 1", "f\t1", "f\n1", "a;b 3", "f_[k]",
    "f_[k] 12", "f 12_[k]", "\x01", "x\x7f 9", "x y z 00", ";", "f_[", "f]", "_[]",
};

static int ends_in_count(const char *s)
{
    const char *sp = strrchr(s, ' ');
    return sp && sp[1] && strspn(sp + 1, "0123456789") == strlen(sp + 1);
}

START_TEST(test_sanitize_properties)
{
    const char *in = nasty[_i];
    char name[128], line[256];
    wp_frame_sanitize(name, sizeof name, in);
    size_t n = strlen(name);
    ck_assert_msg(n > 0, "\"%s\" became empty", in);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        ck_assert_msg(c != ';' && c >= 0x20 && c != 0x7f, "\"%s\" kept byte 0x%02x", name, c);
    }
    ck_assert_msg(!ends_in_count(name), "\"%s\" ends like a count", name);
    ck_assert_msg(!(n >= 4 && name[n - 4] == '_' && name[n - 3] == '[' && name[n - 1] == ']'),
                  "\"%s\" ends in an annotation", name);

    snprintf(line, sizeof line, "root;%s 5", name);
    size_t sl;
    uint64_t count;
    ck_assert_msg(wp_folded_parse(line, strlen(line), &sl, &count) == 0,
                  "the line \"%s\" does not parse", line);
    ck_assert_uint_eq(sl, strlen("root;") + n);
    ck_assert_uint_eq(count, 5);
}
END_TEST

/* The output never overruns cap and is always terminated. */
START_TEST(test_sanitize_capacity)
{
    char buf[40];
    for (size_t cap = 1; cap <= 16; cap++) {
        memset(buf, '#', sizeof buf);
        wp_frame_sanitize(buf, cap, "a_long_function_name 12345");
        ck_assert_msg(memchr(buf, '\0', cap) != NULL, "cap %zu: not terminated", cap);
        for (size_t i = cap; i < sizeof buf; i++)
            ck_assert_msg(buf[i] == '#', "cap %zu: byte %zu written", cap, i);
        ck_assert_uint_lt(strlen(buf), cap);
    }
    /* Truncation may expose a count-like tail; it is still joined. */
    wp_frame_sanitize(buf, 8, "f 123456789");
    ck_assert_str_eq(buf, "f_12345");
    /* A long C++ name cut after a comma ends in a space: not left there. */
    wp_frame_sanitize(buf, 10, "map<int, long>");
    ck_assert_str_eq(buf, "map<int,_");
    wp_frame_sanitize(buf, 3, "");
    ck_assert_str_eq(buf, "??");
}
END_TEST

/* --- collections ------------------------------------------------------------- */

static void add(struct wp_folded *f, const char *stack, uint64_t count)
{
    ck_assert_int_eq(wp_folded_add(f, stack, strlen(stack), count), 0);
}

START_TEST(test_add_finish)
{
    struct wp_folded f = {0};
    add(&f, "main;b;c", 2);
    add(&f, "main", 1);
    add(&f, "main;b;c", 3);
    add(&f, "main;a", 4);
    add(&f, "main;b", 6);
    add(&f, "main", 10);
    add(&f, "main;b;c", 5);
    /* Only len bytes are taken, not the whole string. */
    ck_assert_int_eq(wp_folded_add(&f, "main;axxxx", 6, 7), 0);
    ck_assert_uint_eq(f.n, 8);
    ck_assert_uint_eq(wp_folded_total(&f), 38);
    wp_folded_finish(&f);
    ck_assert_uint_eq(f.n, 4);
    ck_assert_str_eq(f.lines[0].stack, "main");
    ck_assert_uint_eq(f.lines[0].count, 11);
    ck_assert_str_eq(f.lines[1].stack, "main;a");
    ck_assert_uint_eq(f.lines[1].count, 11);
    ck_assert_str_eq(f.lines[2].stack, "main;b");
    ck_assert_uint_eq(f.lines[2].count, 6);
    ck_assert_str_eq(f.lines[3].stack, "main;b;c");
    ck_assert_uint_eq(f.lines[3].count, 10);
    ck_assert_uint_eq(wp_folded_total(&f), 38);
    /* Finishing again changes nothing. */
    wp_folded_finish(&f);
    ck_assert_uint_eq(f.n, 4);
    ck_assert_uint_eq(wp_folded_total(&f), 38);
    wp_folded_free(&f);
    ck_assert_uint_eq(f.n, 0);
    ck_assert_ptr_null(f.lines);
}
END_TEST

START_TEST(test_finish_edges)
{
    struct wp_folded f = {0};
    wp_folded_finish(&f); /* empty */
    ck_assert_uint_eq(f.n, 0);
    ck_assert_uint_eq(wp_folded_total(&f), 0);

    for (int i = 0; i < 1000; i++)
        add(&f, "x;y", 1); /* all the same, past the first growth */
    wp_folded_finish(&f);
    ck_assert_uint_eq(f.n, 1);
    ck_assert_uint_eq(f.lines[0].count, 1000);
    wp_folded_free(&f);

    /* Many distinct stacks in reverse order come out sorted, none lost. */
    char s[32];
    for (int i = 999; i >= 0; i--) {
        snprintf(s, sizeof s, "main;f%04d", i);
        add(&f, s, (uint64_t)i + 1);
        add(&f, s, 1);
    }
    wp_folded_finish(&f);
    ck_assert_uint_eq(f.n, 1000);
    for (size_t i = 0; i < f.n; i++) {
        snprintf(s, sizeof s, "main;f%04zu", i);
        ck_assert_str_eq(f.lines[i].stack, s);
        ck_assert_uint_eq(f.lines[i].count, i + 2);
        if (i)
            ck_assert_int_lt(strcmp(f.lines[i - 1].stack, f.lines[i].stack), 0);
    }
    wp_folded_free(&f);
    wp_folded_free(&f); /* a freed collection can be freed again */
}
END_TEST

/* --- wp_folded_parse ----------------------------------------------------------- */

struct parse_ok {
    const char *line;
    size_t stack_len;
    uint64_t count;
};

static const struct parse_ok parse_oks[] = {
    {"a 1", 1, 1},
    {"main;MPI_Recv 42", 13, 42},
    {"a;b;c 7", 5, 7},
    {"f 12_3 9", 6, 9},                     /* a sanitized space-digit name */
    {"main;f(int, char) 3", 17, 3},         /* spaces inside the stack are fine */
    {"1 2", 1, 2},
    {"a 9999999999999999999", 1, 9999999999999999999ull}, /* 19 digits: the longest */
};

START_TEST(test_parse_ok)
{
    const struct parse_ok *t = &parse_oks[_i];
    size_t sl = 12345;
    uint64_t c = 12345;
    ck_assert_msg(wp_folded_parse(t->line, strlen(t->line), &sl, &c) == 0, "\"%s\" refused", t->line);
    ck_assert_uint_eq(sl, t->stack_len);
    ck_assert_uint_eq(c, t->count);
}
END_TEST

static const char *const parse_bad[] = {
    "",
    "a",                          /* missing count */
    "main;MPI_Recv",              /* missing count */
    "5",                          /* a count with no stack */
    " 5",                         /* an empty stack */
    "a  5",                       /* two spaces */
    "a;b   5",
    "a 0",                        /* zero count */
    "a 000",
    "a 5 ",                       /* trailing space */
    "a ",
    "a 5x",                       /* non-digit count */
    "a x5",
    "a -5",
    "a +5",
    "a 1.5",
    "a 1e3",
    "a 0x10",
    "a\t5",                       /* not a space */
    "a 12345678901234567890",     /* 20 digits: over-long */
    "a 99999999999999999999999999",
    "a 5\r",                      /* CRLF input */
};

START_TEST(test_parse_bad)
{
    const char *l = parse_bad[_i];
    size_t sl = 777;
    uint64_t c = 777;
    ck_assert_msg(wp_folded_parse(l, strlen(l), &sl, &c) == -1, "\"%s\" accepted", l);
    /* A refused line leaves the outputs alone. */
    ck_assert_uint_eq(sl, 777);
    ck_assert_uint_eq(c, 777);
}
END_TEST

/* len bounds the line: bytes after it are not read, a NUL or newline inside is bad. */
START_TEST(test_parse_len)
{
    size_t sl;
    uint64_t c;
    ck_assert_int_eq(wp_folded_parse("a 123456", 5, &sl, &c), 0);
    ck_assert_uint_eq(c, 123);
    ck_assert_int_eq(wp_folded_parse("a 5 junk", 3, &sl, &c), 0);
    ck_assert_uint_eq(c, 5);
    ck_assert_int_eq(wp_folded_parse("a\0b 5", 5, &sl, &c), -1);
    ck_assert_int_eq(wp_folded_parse("a\nb 5", 5, &sl, &c), -1);
    ck_assert_int_eq(wp_folded_parse("a 5", 0, &sl, &c), -1);
}
END_TEST

/* --- wp_folded_add_text ---------------------------------------------------------- */

START_TEST(test_add_text)
{
    static const char text[] = "main;a 5\n"
                               "garbage\n"
                               "main;a 3\n"
                               "\n"
                               "main 1\n"
                               "main;b  2\n"
                               "main;c 0\n"
                               "main;d 4 \n"
                               "main;b 9"; /* no final newline */
    struct wp_folded f = {0};
    size_t bad = wp_folded_add_text(&f, text, sizeof text - 1);
    ck_assert_uint_eq(bad, 4);
    wp_folded_finish(&f);
    ck_assert_uint_eq(f.n, 3);
    ck_assert_str_eq(f.lines[0].stack, "main");
    ck_assert_uint_eq(f.lines[0].count, 1);
    ck_assert_str_eq(f.lines[1].stack, "main;a");
    ck_assert_uint_eq(f.lines[1].count, 8);
    ck_assert_str_eq(f.lines[2].stack, "main;b");
    ck_assert_uint_eq(f.lines[2].count, 9);
    wp_folded_free(&f);
}
END_TEST

START_TEST(test_add_text_edges)
{
    struct wp_folded f = {0};
    ck_assert_uint_eq(wp_folded_add_text(&f, "", 0), 0);
    ck_assert_uint_eq(wp_folded_add_text(&f, "\n\n\n", 3), 0);
    ck_assert_uint_eq(f.n, 0);
    /* The text is bounded by len, not by a NUL: "b 12" is cut to "b 1". */
    ck_assert_uint_eq(wp_folded_add_text(&f, "a 5\nb 12", 7), 0);
    ck_assert_uint_eq(f.n, 2);
    ck_assert_str_eq(f.lines[1].stack, "b");
    ck_assert_uint_eq(f.lines[1].count, 1);
    /* A text cut inside its last line counts that line as bad, once. */
    ck_assert_uint_eq(wp_folded_add_text(&f, "c 5\nd", 5), 1);
    ck_assert_uint_eq(f.n, 3);
    wp_folded_free(&f);
}
END_TEST

/* --- wp_folded_write ------------------------------------------------------------- */

START_TEST(test_write_round_trip)
{
    struct wp_folded f = {0}, g = {0};
    char name[64], stack[256];
    static const char *const frames[] = {"main", "solve;x", "f 12", "g_[k]", "", "MPI_Allreduce", "h\tz"};
    for (int i = 0; i < 200; i++) {
        size_t k = 0;
        for (int d = 0; d <= i % 5; d++) {
            wp_frame_sanitize(name, sizeof name, frames[(size_t)(i * 5 + d * 3) % 7]);
            k += (size_t)snprintf(stack + k, sizeof stack - k, "%s%s", d ? ";" : "", name);
        }
        ck_assert_int_eq(wp_folded_add(&f, stack, k, (uint64_t)(i % 13) + 1), 0);
    }
    add(&f, "main;big", UINT64_C(1) << 62);
    wp_folded_finish(&f);

    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    ck_assert_int_eq(wp_folded_write(tmp, &f), 0);
    long size = ftell(tmp);
    ck_assert_int_gt(size, 0);
    rewind(tmp);
    char *text = malloc((size_t)size + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(fread(text, 1, (size_t)size, tmp), (size_t)size);
    fclose(tmp);
    text[size] = '\0';
    ck_assert_int_eq(text[size - 1], '\n');

    ck_assert_uint_eq(wp_folded_add_text(&g, text, (size_t)size), 0);
    wp_folded_finish(&g);
    ck_assert_uint_eq(g.n, f.n);
    for (size_t i = 0; i < f.n; i++) {
        ck_assert_str_eq(g.lines[i].stack, f.lines[i].stack);
        ck_assert_uint_eq(g.lines[i].count, f.lines[i].count);
    }
    /* The file was already sorted and merged: reading it needs no merging. */
    struct wp_folded h = {0};
    ck_assert_uint_eq(wp_folded_add_text(&h, text, (size_t)size), 0);
    ck_assert_uint_eq(h.n, f.n);
    free(text);
    wp_folded_free(&f);
    wp_folded_free(&g);
    wp_folded_free(&h);
}
END_TEST

/* A line with count 0 (a merged-away or empty entry) is not written, since no
 * reader would accept it; an empty collection writes nothing. */
START_TEST(test_write_skips_zero)
{
    struct wp_folded f = {0};
    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    ck_assert_int_eq(wp_folded_write(tmp, &f), 0);
    ck_assert_int_eq(ftell(tmp), 0);
    add(&f, "a", 0);
    add(&f, "b", 2);
    ck_assert_int_eq(wp_folded_write(tmp, &f), 0);
    rewind(tmp);
    char buf[64] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, tmp);
    buf[n] = '\0';
    ck_assert_str_eq(buf, "b 2\n");
    fclose(tmp);
    wp_folded_free(&f);
}
END_TEST

/* --- Fortran symbols as source names (symbols/names.h) ------------------------- */

struct nm {
    const char *sym, *out; /* out NULL: not a Fortran procedure name */
};

static const struct nm nms[] = {
    {"__work_MOD_compute_loop", "work::compute_loop"},
    {"__my_mod_MOD_exchange_halos", "my_mod::exchange_halos"},
    {"__halo2d_MOD_x", "halo2d::x"},
    {"work_mp_compute_loop_", "work::compute_loop"},
    {"my_mod_mp_exchange_", "my_mod::exchange"},
    {"_QMworkPcompute_loop", "work::compute_loop"},
    {"_QMmodSs1modSs2modFsubPfun", "mod::s1mod::s2mod::sub::fun"},
    {"_QMmodFhostB2Pinner", "mod::host::inner"},
    {"_QPsolve", "solve"},
    {"_QFmainPhelper", "main::helper"},
    {"main", NULL},
    {"MPI_Recv", NULL},
    {"compute_", NULL},
    {"__libc_start_main", NULL},
    {"__work_MOD_", NULL},
    {"___MOD_x", NULL},
    {"__Work_MOD_x", NULL},
    {"_mp_x_", NULL},
    {"work_mp__", NULL},
    {"work_mp_x", NULL},
    {"Work_mp_x_", NULL},
    {"_QMmodEintvar", NULL},
    {"_QMmodTmytype", NULL},
    {"_QQmain", NULL},
    {"_QQclX9a37c0", NULL},
    {"_QMmodPfunPx", NULL},
    {"_QMmodBxPf", NULL},
    {"_QMmod", NULL},
    {"_Q", NULL},
    {"_ZN4demo9Exchanger7receiveEPi", NULL},
};

START_TEST(test_fortran_names)
{
    const struct nm *t = &nms[_i];
    char out[64] = "untouched";
    int r = wp_name_fortran(t->sym, out, sizeof out);
    if (t->out) {
        ck_assert_msg(r == 1, "%s: not taken for a Fortran procedure", t->sym);
        ck_assert_str_eq(out, t->out);
    } else {
        ck_assert_msg(r == 0, "%s: taken for a Fortran procedure (%s)", t->sym, out);
        ck_assert_str_eq(out, "untouched");
    }
}
END_TEST

START_TEST(test_truncated)
{
    char out[8];
    ck_assert_int_eq(wp_name_fortran("__work_MOD_compute_loop", out, sizeof out), 1);
    ck_assert_str_eq(out, "work::c");
    ck_assert_int_eq(wp_name_fortran("_QMworkPcompute_loop", out, sizeof out), 1);
    ck_assert_str_eq(out, "work::c");
}
END_TEST

START_TEST(test_main)
{
    ck_assert(wp_name_is_fortran_main("MAIN__"));
    ck_assert(wp_name_is_fortran_main("_QQmain"));
    ck_assert(!wp_name_is_fortran_main("main"));
    ck_assert(!wp_name_is_fortran_main("MAIN_"));
    ck_assert(!wp_name_is_fortran_main(NULL));
}
END_TEST

static Suite *folded_suite(void)
{
    Suite *s = suite_create("folded");
    TCase *tc = tcase_create("sanitize");
    tcase_add_loop_test(tc, test_sanitize_table, 0, (int)(sizeof sans / sizeof sans[0]));
    tcase_add_loop_test(tc, test_sanitize_properties, 0, (int)(sizeof nasty / sizeof nasty[0]));
    tcase_add_test(tc, test_sanitize_capacity);
    suite_add_tcase(s, tc);
    tc = tcase_create("collection");
    tcase_add_test(tc, test_add_finish);
    tcase_add_test(tc, test_finish_edges);
    suite_add_tcase(s, tc);
    tc = tcase_create("parse");
    tcase_add_loop_test(tc, test_parse_ok, 0, (int)(sizeof parse_oks / sizeof parse_oks[0]));
    tcase_add_loop_test(tc, test_parse_bad, 0, (int)(sizeof parse_bad / sizeof parse_bad[0]));
    tcase_add_test(tc, test_parse_len);
    tcase_add_test(tc, test_add_text);
    tcase_add_test(tc, test_add_text_edges);
    suite_add_tcase(s, tc);
    tc = tcase_create("write");
    tcase_add_test(tc, test_write_round_trip);
    tcase_add_test(tc, test_write_skips_zero);
    suite_add_tcase(s, tc);
    tc = tcase_create("fortran names");
    tcase_add_loop_test(tc, test_fortran_names, 0, (int)(sizeof nms / sizeof nms[0]));
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_main);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return wp_unit_run(folded_suite(), 1);
}
