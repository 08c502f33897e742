/* tests/unit/test_crossrank.c — the cross-rank reductions of report/
 * on small hand-written run directories whose every figure is known:
 * rank lists as ranges, the multi-resolution timers' detail block (events, longest and
 * second-longest event with rank and event number, shortest, averages,
 * totals), histograms grouped by their fullest bin, the state shares, the
 * main waiting call path and its cause, the wait-state sums and the
 * --ranks and --state filters; call sites fitted to the report's column
 * keep their file:line. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/select.h"
#include "report/model.h"
#include "report/report.h"
#include "tests/unit/unit.h"

static char dir[64];

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static char *get(const char *name)
{
    static char buf[1 << 16];
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s not written", name);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

#define META(r) "format=waitprof-meta 1\nstatus=complete\nrank=" #r "\nsize=4\nsource=wrappers\nhz=100\nduration_ns=2000000000\n"
#define CALLS_HDR "# waitprof-calls 1\nfunction\tcalls\ttime_ns\tmin_ns\tmin_event\tmax_ns\tmax_event\tmax2_ns\tmax2_event\tbytes_sent\tbytes_recv\trequests_sent\trequests_recv\thistogram\n"
#define WAITS_HDR "# waitprof-waits 1\nsite\tfunction\tpattern\tsize_class\trole\tcalls\ttime_ns\tmin_ns\tmax_ns\tmax2_ns\twait_ns\tearly_calls\tplain_wait_ns\n"

#define WAITS_FULL_HDR "# waitprof-waits 1\nsite\tfunction\tpattern\tsize_class\trole\tcalls\ttime_ns\tmin_ns\tmax_ns\tmax2_ns\twait_ns\tearly_calls\tplain_wait_ns\tcompletes\tmethod\tmatched\tci_ns\n"

/* Ranks 0, 1 and 3 (2 is not sampled).  Rank 3 computes; 0 and 1 wait in
 * f;MPI_Recv.  Histograms: ranks 0 and 3 peak at bin 41, rank 1 at bin 31. */
static void make_run(void)
{
    snprintf(dir, sizeof dir, "/tmp/wp-crossrank.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    put("rank.0.meta", META(0));
    put("rank.1.meta", META(1));
    put("rank.3.meta", META(3));
    put("rank.0.folded", "MPI-Stall;main;f;MPI_Recv 60\nMPI-Work;main;f;MPI_Recv 10\nNot-in-MPI;main;g 30\n");
    put("rank.1.folded", "MPI-Stall;main;f;MPI_Recv 50\nNot-in-MPI;main;g 50\n");
    put("rank.3.folded", "MPI-Work;main;f;MPI_Recv 5\nNot-in-MPI;main;g 95\n");
    put("rank.0.calls", CALLS_HDR "MPI_Recv\t4\t400000000\t10000000\t2\t200000000\t3\t150000000\t1\t0\t4000\t0\t4\t41:3,31:1\n");
    put("rank.1.calls", CALLS_HDR "MPI_Recv\t2\t300000000\t100000000\t1\t250000000\t2\t0\t0\t0\t2000\t0\t2\t31:2\n");
    put("rank.3.calls", CALLS_HDR "MPI_Recv\t8\t80000000\t1000000\t5\t20000000\t8\t19000000\t4\t8000\t0\t8\t0\t41:5,42:1\n");
    put("rank.0.waits", WAITS_HDR "f (a.c:3)\tMPI_Recv\tlate_sender\t4\tany\t4\t400000000\t10000000\t200000000\t150000000\t360000000\t0\t360000000\n");
    put("rank.1.waits", WAITS_HDR "f (a.c:3)\tMPI_Recv\tlate_sender\t4\tany\t2\t300000000\t100000000\t250000000\t0\t100000000\t0\t100000000\n");
}

START_TEST(test_ranges)
{
    char buf[64];
    int a[] = {0, 1, 2, 3, 5, 7, 8, 122};
    wp_rank_ranges(a, 8, buf, sizeof buf);
    ck_assert_str_eq(buf, "0-3,5,7-8,122");
    wp_rank_ranges(a, 1, buf, sizeof buf);
    ck_assert_str_eq(buf, "0");
    wp_rank_ranges(a, 0, buf, sizeof buf);
    ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(test_detail_block)
{
    make_run();
    struct wp_report_opts o = {NULL, 0, 10, NULL};
    FILE *devnull = fopen("/dev/null", "w");
    ck_assert_int_eq(wp_report_dir(dir, dir, &o, NULL, devnull), 0);
    char *t = get("report.txt");
    ck_assert_msg(strncmp(t, "waitprof-report 1\n", 18) == 0, "first line");
    ck_assert_ptr_nonnull(strstr(t, "run: 4 ranks, 3 sampled (0-1,3), 2.000 s, stall source wrappers, 100 Hz"));
    ck_assert_ptr_nonnull(strstr(t, "*** MPI_Recv\nranks: 0-1,3\n"));
    ck_assert_ptr_nonnull(strstr(t, "events per rank: 8 max (rank 3), 2 min (rank 1), 4.7 avg (3 ranks)"));
    ck_assert_ptr_nonnull(strstr(t, "longest event: 0.250000 s, rank 1, event 2"));
    ck_assert_ptr_nonnull(strstr(t, "max 2nd longest: 0.150000 s, rank 0, event 1"));
    ck_assert_ptr_nonnull(strstr(t, "shortest event: 0.001000 s, rank 3, event 5"));
    ck_assert_ptr_nonnull(strstr(t, "longest avg event: 0.150000 s, rank 1, 2 event(s)"));
    ck_assert_ptr_nonnull(strstr(t, "shortest avg event: 0.010000 s, rank 3, 8 event(s)"));
    ck_assert_ptr_nonnull(strstr(t, "avg event: 0.055714 s, 14 event(s)"));
    ck_assert_ptr_nonnull(strstr(t, "max total: 0.400000 s, rank 0, 4 event(s)"));
    ck_assert_ptr_nonnull(strstr(t, "min total: 0.080000 s, rank 3, 8 event(s)"));
    ck_assert_ptr_nonnull(strstr(t, "aggregate total: 0.780000 s"));
    /* Ranks 0 and 3 share their fullest bin (41); rank 1 is alone (31). */
    ck_assert_ptr_nonnull(strstr(t, "event histogram for ranks: 0,3\n  20000-29999 us: 1 max (rank 3), 0 min (rank 0), 0.5 avg\n"
                                    "  10000-19999 us: 5 max (rank 3), 3 min (rank 0), 4.0 avg\n"
                                    "  1000-1999 us: 1 max (rank 0), 0 min (rank 3), 0.5 avg\n"));
    ck_assert_ptr_nonnull(strstr(t, "event histogram for rank: 1\n  1000-1999 us: 2 max (rank 1)"));
    /* Shares: stall 60/100, 50/100, 0/100; seconds: each rank's 2 s
     * times its share, 1.2 + 1.0 + 0 = 2.2 s, 0.733 s per rank. */
    ck_assert_ptr_nonnull(strstr(t, "MPI-Stall       2.200    0.733    36.7%   0.0% (3)           36.7%   60.0% (0)\n"));
    /* The first section: the states before the run line, the meta's
     * key=value lines only after the tables. */
    ck_assert_ptr_nonnull(strstr(t, "== where the time went\nstate "));
    ck_assert_msg(strstr(t, "MPI-Stall ") < strstr(t, "run: 4 ranks"), "the states come after the run line");
    ck_assert_msg(strstr(t, "== ranks by MPI-Stall share") < strstr(t, "== how the run was measured"),
                  "the meta's lines come before the tables");
    ck_assert_ptr_nonnull(strstr(t, "main waiting call path (36.7% of all samples stalled here):\n  main;f;MPI_Recv\n"
                                    "caused by rank 3:"));
    /* Wait states: 0.36 + 0.1 s; ranks without a row waited zero there. */
    ck_assert_ptr_nonnull(strstr(t, "late_sender           6     0.460"));
    /* Files of a version without the method column: the estimate. */
    ck_assert_ptr_nonnull(strstr(t, "\n  estimated; wait per rank s: 0 (others) / 0.153 / 0.360 (0)\n"));
    ck_assert_ptr_nonnull(strstr(t, "== problems with the input\nnone\n"));
    char *c = get("mpi_bytes_recv.csv");
    ck_assert_str_eq(c, "rank,MPI_Recv\n0,4000\n1,2000\n3,0\n");
    /* The CSVs' format and version are in report.json; no matrix files
     * here, so no matrix CSVs are named. */
    c = get("report.json");
    ck_assert_ptr_nonnull(strstr(c, "\"mpi_bytes_recv.csv\":{\"format\":\"waitprof-csv\",\"version\":2,"));
    ck_assert_ptr_null(strstr(c, "matrix_size.csv"));
    c = get("all.folded");
    ck_assert_str_eq(c, "MPI-Stall;main;f;MPI_Recv 110\nMPI-Work;main;f;MPI_Recv 15\nNot-in-MPI;main;g 175\n");
    c = get("all.diff.folded");
    ck_assert_str_eq(c, "main;f;MPI_Recv 15 110\n");

    /* How the wait was had, from the method and matched columns: rank 0
     * measured 3 of its 4 calls, rank 1 kept the estimate, then both
     * measured.  Every line of the table within 100 columns. */
    put("rank.0.waits", WAITS_FULL_HDR "f (a.c:3)\tMPI_Recv\tlate_sender\t4\tany\t4\t400000000\t10000000\t200000000\t150000000"
                                       "\t360000000\t0\t360000000\t-\tmeasured\t3\t1000\n");
    put("rank.1.waits", WAITS_FULL_HDR "f (a.c:3)\tMPI_Recv\tlate_sender\t4\tany\t2\t300000000\t100000000\t250000000\t0"
                                       "\t100000000\t0\t100000000\t-\testimated\t0\t0\n");
    ck_assert_int_eq(wp_report_dir(dir, dir, &o, NULL, devnull), 0);
    t = get("report.txt");
    ck_assert_ptr_nonnull(strstr(t, "\n  partly measured 3/6; wait per rank s: 0 (others) / 0.153 / 0.360 (0)\n"));
    put("rank.1.waits", WAITS_FULL_HDR "f (a.c:3)\tMPI_Recv\tlate_sender\t4\tany\t2\t300000000\t100000000\t250000000\t0"
                                       "\t100000000\t0\t100000000\t-\tmeasured\t2\t0\n");
    ck_assert_int_eq(wp_report_dir(dir, dir, &o, NULL, devnull), 0);
    t = get("report.txt");
    ck_assert_ptr_nonnull(strstr(t, "\n  measured 5/6; wait per rank s: 0 (others) / 0.153 / 0.360 (0)\n"));
    /* The runtime stall source gave rank 0's waits, rank 1 estimated. */
    put("rank.0.waits", WAITS_FULL_HDR "f (a.c:3)\tMPI_Recv\tlate_sender\t4\tany\t4\t400000000\t10000000\t200000000\t150000000"
                                       "\t360000000\t0\t360000000\t-\tsource\t0\t0\n");
    put("rank.1.waits", WAITS_FULL_HDR "f (a.c:3)\tMPI_Recv\tlate_sender\t4\tany\t2\t300000000\t100000000\t250000000\t0"
                                       "\t100000000\t0\t100000000\t-\testimated\t0\t0\n");
    ck_assert_int_eq(wp_report_dir(dir, dir, &o, NULL, devnull), 0);
    t = get("report.txt");
    ck_assert_ptr_nonnull(strstr(t, "\n  partly source 4/6; wait per rank s: 0 (others) / 0.153 / 0.360 (0)\n"));
    const char *ws = strstr(t, "== wait states per call site");
    ck_assert_ptr_nonnull(ws);
    ws = strchr(ws, '\n') + 1;
    for (const char *e = ws; *e && *e != '\n'; e = strchr(e, '\n') + 1) {
        const char *nl = strchr(e, '\n');
        ck_assert_msg(nl - e <= 100, "a wait-state line of %d columns", (int)(nl - e));
    }

    /* Filters: ranks 1 and 3, stall only. */
    struct wp_report_opts f = {"1-3", 1, 10, NULL};
    ck_assert_int_eq(wp_report_dir(dir, dir, &f, NULL, devnull), 0);
    c = get("all.folded");
    ck_assert_str_eq(c, "MPI-Stall;main;f;MPI_Recv 50\n");
    c = get("ranks.csv");
    ck_assert_ptr_null(strstr(c, "\n0,"));
    ck_assert_ptr_nonnull(strstr(c, "\n3,complete,100,95,5,0,"));

    /* A partial rank (ended before MPI_Finalize) is read and counted. */
    put("rank.3.meta", "format=waitprof-meta 1\nstatus=partial: terminated by SIGTERM\nrank=3\nsize=4\n");
    ck_assert_int_eq(wp_report_dir(dir, dir, &o, NULL, devnull), 0);
    t = get("report.txt");
    ck_assert_ptr_nonnull(strstr(t, "samples: 300, dropped 0; 1 rank wrote a partial profile\n"));
    ck_assert_ptr_nonnull(strstr(t, "     3     0.0%     5.0%       95.0%        100  partial\n"));

    /* A newer format is refused by name; the rest is still reported. */
    put("rank.1.calls", "# waitprof-calls 7\n");
    ck_assert_int_eq(wp_report_dir(dir, dir, &o, NULL, devnull), 1);
    t = get("report.txt");
    ck_assert_ptr_nonnull(strstr(t, "rank.1.calls: format waitprof-calls 7 is newer than this report tool reads (1)"));
    ck_assert_ptr_nonnull(strstr(t, "ranks: 0,3\n"));
    fclose(devnull);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A site too long for its column gives up its parameters, then its
 * qualifiers (not those inside a template's <>), then its end; never its
 * file:line, unless the location leaves no room.  A site that fits, or
 * whose first frame fits, is cut at the column as it is. */
START_TEST(test_site_fit)
{
    static const struct {
        const char *site;
        size_t w;
        const char *out;
    } t[] = {
        {"main (a.c:3)", 36, "main (a.c:3)"},
        {"work::receive (late_sender.F90:23)", 36, "work::receive (late_sender.F90:23)"},
        {"demo::Exchanger::receive(int*) (late_sender.cpp:14)", 36, "...receive (late_sender.cpp:14)"},
        {"demo::Exchanger::receive(int*) (late_sender.cpp:14)", 45, "demo::Exchanger::receive (late_sender.cpp:14)"},
        {"demo::Exchanger::receive(int*) (late_sender.cpp:14)", 42, "...Exchanger::receive (late_sender.cpp:14)"},
        {"ns::Foo<a::b>::run(int) (f.cpp:9)", 20, "...run (f.cpp:9)"},
        {"averyveryveryverylongfunctionname_without_qualifiers (x.c:1)", 36,
         "averyveryveryverylongfunc... (x.c:1)"},
        {"helper (a.c:13) < solve (a.c:40)", 20, "helper (a.c:13) < so"},
        {"long::qualified::helper(double) (a.c:13) < solve (a.c:40)", 30, "...qualified::helper (a.c:13)"},
        {"libfoo.so+0x1234567890abcdef0123456789", 20, "libfoo.so+0x12345678"},
        {"f (a_very_long_file_name_for_this.c:12345)", 20, "f (a_very_long_file_"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char out[64];
        wp_rep_site_fit(out, sizeof out, t[i].site, t[i].w);
        ck_assert_msg(strcmp(out, t[i].out) == 0, "%s in %zu columns: \"%s\", expected \"%s\"", t[i].site, t[i].w,
                      out, t[i].out);
        ck_assert_uint_le(strlen(out), t[i].w);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("crossrank");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_ranges);
    tcase_add_test(tc, test_detail_block);
    tcase_add_test(tc, test_site_fit);
    suite_add_tcase(s, tc);
    return wp_unit_run(s, 1);
}
