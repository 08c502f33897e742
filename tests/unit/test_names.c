/* tests/unit/test_names.c — Fortran symbol names as source names
 * (symbols/names.h).
 *
 * Checked: module procedures of gfortran (__MOD_MOD_PROC), Intel
 * (MOD_mp_PROC_) and flang (_QMMODPPROC, with submodules, host procedures
 * and blocks) read "module::procedure"; flang's external procedures lose
 * their tag; names that only look alike (C names, upper case, empty parts,
 * flang's variables, types and compiler-internal names) are left alone and
 * the output buffer untouched; a small buffer truncates; the main
 * program's symbols are recognized.
 */
#include <check.h>
#include <string.h>

#include "symbols/names.h"

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

int main(void)
{
    Suite *s = suite_create("names");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_fortran_names, 0, (int)(sizeof nms / sizeof nms[0]));
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_main);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
