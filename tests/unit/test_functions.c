/* tests/unit/test_functions.c — the generated MPI function table and
 * wp_fn_lookup() (state/functions.h).
 *
 * Checked: every binding's spelling of a function maps to its one id, names
 * that are not wrapped map to WP_FN_NONE, the wait classes the analysis relies
 * on are the ones the table says, and every entry is a well-formed MPI name.
 *
 * The test is built from state/thread.c, the generated state/functions.gen.c
 * and state/log.c; the loader-lock brackets that thread.c uses live in the
 * sampler, which a unit test does not want, so they are defined here.
 */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/functions.h"
#include "tests/unit/unit.h"

struct spelling {
    const char *symbol;
    int id;
};

static const struct spelling spellings[] = {
    {"MPI_Send", WP_FN_MPI_Send},
    {"mpi_send", WP_FN_MPI_Send},
    {"mpi_send_", WP_FN_MPI_Send},
    {"mpi_send__", WP_FN_MPI_Send},
    {"MPI_SEND", WP_FN_MPI_Send},
    {"mpi_send_f08_", WP_FN_MPI_Send},
    {"MPI_Send_c", WP_FN_MPI_Send},
    {"mpi_send_c_", WP_FN_MPI_Send},
    {"MPI_Recv", WP_FN_MPI_Recv},
    {"mpi_recv_", WP_FN_MPI_Recv},
    {"MPI_RECV", WP_FN_MPI_Recv},
    {"mpi_allreduce_f08_", WP_FN_MPI_Allreduce},
    {"MPI_Allreduce_c", WP_FN_MPI_Allreduce},
    {"mpi_waitall__", WP_FN_MPI_Waitall},
    {"wp_full_MPI_Recv", WP_FN_MPI_Recv},  /* the forms of a C wrapper */
    {"wp_lean_MPI_Send_c", WP_FN_MPI_Send},
    {"wp_fast_MPI_Ssend", WP_FN_MPI_Ssend},
    {"wp_lean_", WP_FN_NONE},
    {"wp_full_wp_lean_MPI_Send", WP_FN_NONE},
    {"MPI_Nope", WP_FN_NONE},
    {"", WP_FN_NONE},
    {"_", WP_FN_NONE},
    {"___", WP_FN_NONE},
    {"MPI_", WP_FN_NONE},
    {"_c", WP_FN_NONE},
    {"_f08_", WP_FN_NONE},
    {"MPI_Sendx", WP_FN_NONE},
    {"MPI_Sen", WP_FN_NONE},
    {"MPI_Send_c_c", WP_FN_NONE},   /* only one large-count suffix */
    {"MPI_Send_f08", WP_FN_NONE},   /* the f08 symbol has its trailing underscore */
    {"PMPI_Send", WP_FN_NONE},      /* the profiling names are not wrapped */
    {"none", WP_FN_NONE},           /* the name of table slot 0 is not a function */
    {"main", WP_FN_NONE},
};

START_TEST(test_lookup_spellings)
{
    const struct spelling *t = &spellings[_i];
    int id = wp_fn_lookup(t->symbol);
    ck_assert_msg(id == t->id, "\"%s\" -> %d (%s), want %d (%s)", t->symbol, id,
                  id >= 0 && id < WP_FN_COUNT ? wp_fn_table[id].name : "?", t->id, wp_fn_table[t->id].name);
}
END_TEST

/* Names too long for the lookup's buffer are simply unknown. */
START_TEST(test_lookup_long)
{
    char name[1000];
    memset(name, 'x', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    memcpy(name, "MPI_Send", 8);
    ck_assert_int_eq(wp_fn_lookup(name), WP_FN_NONE);
    /* A long run of underscores after a real name. */
    snprintf(name, sizeof name, "mpi_send%0100d", 0);
    for (char *p = name + 8; *p; p++)
        *p = '_';
    ck_assert_int_eq(wp_fn_lookup(name), WP_FN_MPI_Send);
}
END_TEST

/* Every spelling of every table entry, the way the generator names the
 * Fortran symbols and mpi.h the large-count variants, finds that entry. */
START_TEST(test_lookup_every_entry)
{
    char lower[128], upper[128], sym[160];
    for (int i = 1; i < WP_FN_COUNT; i++) {
        const char *name = wp_fn_table[i].name;
        size_t n = strlen(name);
        ck_assert_uint_lt(n, sizeof lower);
        for (size_t k = 0; k <= n; k++) {
            lower[k] = (char)tolower((unsigned char)name[k]);
            upper[k] = (char)toupper((unsigned char)name[k]);
        }
        const char *forms[][2] = {{name, ""}, {name, "_c"}, {lower, ""}, {lower, "_"}, {lower, "__"},
                                  {upper, ""}, {lower, "_f08_"}, {upper, "_"}};
        for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
            snprintf(sym, sizeof sym, "%s%s", forms[f][0], forms[f][1]);
            ck_assert_msg(wp_fn_lookup(sym) == i, "\"%s\" -> %d, want %d (%s)", sym, wp_fn_lookup(sym), i,
                          name);
        }
    }
}
END_TEST

START_TEST(test_table_names)
{
    ck_assert_int_gt(WP_FN_COUNT, 1);
    ck_assert_int_eq(WP_FN_NONE, 0);
    ck_assert_str_eq(wp_fn_table[WP_FN_NONE].name, "none");
    ck_assert_str_eq(wp_fn_table[WP_FN_MPI_Send].name, "MPI_Send");
    for (int i = 1; i < WP_FN_COUNT; i++) {
        const char *name = wp_fn_table[i].name;
        ck_assert_ptr_nonnull(name);
        ck_assert_msg(strncmp(name, "MPI_", 4) == 0 && name[4] != '\0', "entry %d is \"%s\"", i, name);
        /* The C binding's capitalisation: MPI_ then one upper-case letter, then lower case. */
        ck_assert_msg(isupper((unsigned char)name[4]), "entry %d is \"%s\"", i, name);
        for (const char *p = name + 5; *p; p++)
            ck_assert_msg(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_',
                          "entry %d is \"%s\"", i, name);
        ck_assert_msg((int)wp_fn_table[i].wclass >= 0 && (int)wp_fn_table[i].wclass < WP_CLASS_COUNT,
                      "entry %d (%s) has class %d", i, name, (int)wp_fn_table[i].wclass);
        /* Names are unique. */
        for (int j = 1; j < i; j++)
            ck_assert_msg(strcmp(wp_fn_table[j].name, name) != 0, "\"%s\" is listed twice", name);
    }
}
END_TEST

START_TEST(test_table_classes)
{
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Recv].wclass, WP_CLASS_RECV);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Send].wclass, WP_CLASS_SEND);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Sendrecv].wclass, WP_CLASS_SENDRECV);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Probe].wclass, WP_CLASS_PROBE);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Allreduce].wclass, WP_CLASS_NXN);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Bcast].wclass, WP_CLASS_ONE2N);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Reduce].wclass, WP_CLASS_N2ONE);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Barrier].wclass, WP_CLASS_BARRIER);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Waitall].wclass, WP_CLASS_WAIT);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Init].wclass, WP_CLASS_ENV);
    /* The functions every MPI declares are wrapped in this build. */
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Send].wrapped, 1);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Recv].wrapped, 1);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Allreduce].wrapped, 1);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Barrier].wrapped, 1);
    ck_assert_int_eq(wp_fn_table[WP_FN_MPI_Init].wrapped, 1);
}
END_TEST

START_TEST(test_class_names)
{
    for (int c = 0; c < WP_CLASS_COUNT; c++) {
        const char *n = wp_class_name((enum wp_class)c);
        ck_assert_str_ne(n, "unknown");
        for (int d = 0; d < c; d++)
            ck_assert_str_ne(wp_class_name((enum wp_class)d), n);
    }
    ck_assert_str_eq(wp_class_name(WP_CLASS_RECV), "recv");
    ck_assert_str_eq(wp_class_name(WP_CLASS_NXN), "nxn");
    ck_assert_str_eq(wp_class_name(WP_CLASS_COUNT), "unknown");
    ck_assert_str_eq(wp_class_name((enum wp_class)-1), "unknown");
}
END_TEST

static Suite *functions_suite(void)
{
    Suite *s = suite_create("functions");
    TCase *tc = tcase_create("lookup");
    tcase_add_loop_test(tc, test_lookup_spellings, 0, (int)(sizeof spellings / sizeof spellings[0]));
    tcase_add_test(tc, test_lookup_long);
    tcase_add_test(tc, test_lookup_every_entry);
    suite_add_tcase(s, tc);
    tc = tcase_create("table");
    tcase_add_test(tc, test_table_names);
    tcase_add_test(tc, test_table_classes);
    tcase_add_test(tc, test_class_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return wp_unit_run(functions_suite(), 1);
}
