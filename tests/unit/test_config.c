/* tests/unit/test_config.c — wp_config_load() and wp_config_check_unknown().
 *
 * The configuration is read through a getter, so these tests feed it a table
 * instead of the process environment and capture what would be printed.  The
 * contract checked (state/config.h): loading never fails; every value that
 * cannot be accepted produces exactly one line that names the variable, says
 * what is accepted and which value is used instead, and that value is the
 * default; good values are taken as given.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/config.h"
#include "tests/unit/unit.h"

/* --- the fake environment and the captured report ------------------------- */

#define FAKE_MAX 16
static const char *fake_name[FAKE_MAX];
static const char *fake_value[FAKE_MAX];
static int fake_n;

#define LINES_MAX 32
static char lines[LINES_MAX][1024];
static int nlines;

static void reset(void)
{
    fake_n = 0;
    nlines = 0;
}

static void env_set(const char *name, const char *value)
{
    ck_assert_int_lt(fake_n, FAKE_MAX);
    fake_name[fake_n] = name;
    fake_value[fake_n] = value;
    fake_n++;
}

static const char *fake_getenv(const char *name)
{
    for (int i = 0; i < fake_n; i++)
        if (strcmp(fake_name[i], name) == 0)
            return fake_value[i];
    return NULL;
}

static void capture(const char *line)
{
    /* Record every call, even past the array, so an extra line is never missed. */
    if (nlines < LINES_MAX) {
        ck_assert_uint_lt(strlen(line), sizeof lines[0]);
        strcpy(lines[nlines], line);
    }
    nlines++;
}

/* Does line name var as a whole word (not as the prefix of a longer name)? */
static int names_var(const char *line, const char *var)
{
    size_t n = strlen(var);
    for (const char *p = strstr(line, var); p; p = strstr(p + 1, var)) {
        char after = p[n];
        int word_after = (after >= 'A' && after <= 'Z') || (after >= '0' && after <= '9') || after == '_';
        int word_before = p > line && ((p[-1] >= 'A' && p[-1] <= 'Z') || p[-1] == '_');
        if (!word_after && !word_before)
            return 1;
    }
    return 0;
}

static void assert_defaults_except(const struct wp_config *c, const char *except)
{
    if (strcmp(except, "WAITPROF_HZ") != 0)
        ck_assert_int_eq(c->hz, WP_HZ_DEFAULT);
    if (strcmp(except, "WAITPROF_CLOCK") != 0)
        ck_assert_int_eq(c->cpu_clock, 0);
    if (strcmp(except, "WAITPROF_TIMER") != 0) {
        ck_assert_int_eq(c->free_timer, 0);
        ck_assert_str_eq(c->overflow_event, "");
        ck_assert_uint_eq(c->overflow_period, 0);
    }
    if (strcmp(except, "WAITPROF_DEPTH") != 0)
        ck_assert_int_eq(c->depth, WP_DEPTH_DEFAULT);
    if (strcmp(except, "WAITPROF_RUNTIME_THREADS") != 0)
        ck_assert_int_eq(c->runtime_threads, 0);
    if (strcmp(except, "WAITPROF_QUIET") != 0)
        ck_assert_int_eq(c->quiet, 0);
    if (strcmp(except, "WAITPROF_OUT") != 0)
        ck_assert_str_eq(c->out, "");
}

/* The field a variable sets, as an int (WAITPROF_OUT has none). */
static int field(const struct wp_config *c, const char *var)
{
    if (strcmp(var, "WAITPROF_HZ") == 0)
        return c->hz;
    if (strcmp(var, "WAITPROF_CLOCK") == 0)
        return c->cpu_clock;
    if (strcmp(var, "WAITPROF_TIMER") == 0)
        return c->free_timer;
    if (strcmp(var, "WAITPROF_DEPTH") == 0)
        return c->depth;
    if (strcmp(var, "WAITPROF_RUNTIME_THREADS") == 0)
        return c->runtime_threads;
    if (strcmp(var, "WAITPROF_QUIET") == 0)
        return c->quiet;
    ck_abort_msg("no int field for %s", var);
    return -1;
}

/* --- defaults --------------------------------------------------------------- */

START_TEST(test_defaults)
{
    struct wp_config c;
    reset();
    memset(&c, 0x5a, sizeof c); /* load must not rely on a zeroed struct */
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(nlines, 0);
    assert_defaults_except(&c, "");
    ck_assert_int_eq(c.hz, 100);
    ck_assert_int_eq(c.depth, 128);
}
END_TEST

/* Variables the loader does not read must not disturb it. */
START_TEST(test_unrelated_variables_ignored)
{
    struct wp_config c;
    reset();
    env_set("WAITPROF_LIB", "/nowhere/libwaitprof.so");
    env_set("WAITPROF_BOGUS", "xyz");
    env_set("HZ", "0");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(nlines, 0);
    assert_defaults_except(&c, "");
}
END_TEST

/* --- good values, boundaries included ------------------------------------------ */

struct good {
    const char *var, *value;
    int expect;
};

static const struct good goods[] = {
    {"WAITPROF_HZ", "1", 1},
    {"WAITPROF_HZ", "2", 2},
    {"WAITPROF_HZ", "100", 100},
    {"WAITPROF_HZ", "997", 997},
    {"WAITPROF_HZ", "9999", 9999},
    {"WAITPROF_HZ", "10000", 10000},
    {"WAITPROF_CLOCK", "wall", 0},
    {"WAITPROF_CLOCK", "cpu", 1},
    {"WAITPROF_TIMER", "tick", 0},
    {"WAITPROF_TIMER", "free", 1},
    {"WAITPROF_DEPTH", "1", 1},
    {"WAITPROF_DEPTH", "2", 2},
    {"WAITPROF_DEPTH", "64", 64},
    {"WAITPROF_DEPTH", "127", 127},
    {"WAITPROF_DEPTH", "128", 128},
    {"WAITPROF_RUNTIME_THREADS", "0", 0},
    {"WAITPROF_RUNTIME_THREADS", "1", 1},
    {"WAITPROF_QUIET", "0", 0},
    {"WAITPROF_QUIET", "1", 1},
};

START_TEST(test_good_value)
{
    const struct good *g = &goods[_i];
    struct wp_config c;
    reset();
    env_set(g->var, g->value);
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_msg(nlines == 0, "%s=\"%s\" reported: %s", g->var, g->value, lines[0]);
    ck_assert_msg(field(&c, g->var) == g->expect, "%s=\"%s\" gave %d, want %d", g->var, g->value,
                  field(&c, g->var), g->expect);
    assert_defaults_except(&c, g->var);
}
END_TEST

START_TEST(test_out_good)
{
    static const char *const outs[] = {"/tmp/prof", "prof", ".", "dir with spaces", "./a;b", "/"};
    struct wp_config c;
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        reset();
        env_set("WAITPROF_OUT", outs[i]);
        wp_config_load(&c, fake_getenv, capture);
        ck_assert_int_eq(nlines, 0);
        ck_assert_str_eq(c.out, outs[i]);
        assert_defaults_except(&c, "WAITPROF_OUT");
    }
}
END_TEST

/* Every variable at once, all good. */
START_TEST(test_all_good_together)
{
    struct wp_config c;
    reset();
    env_set("WAITPROF_HZ", "250");
    env_set("WAITPROF_CLOCK", "cpu");
    env_set("WAITPROF_DEPTH", "32");
    env_set("WAITPROF_RUNTIME_THREADS", "1");
    env_set("WAITPROF_QUIET", "1");
    env_set("WAITPROF_OUT", "/tmp/x");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(nlines, 0);
    ck_assert_int_eq(c.hz, 250);
    ck_assert_int_eq(c.cpu_clock, 1);
    ck_assert_int_eq(c.depth, 32);
    ck_assert_int_eq(c.runtime_threads, 1);
    ck_assert_int_eq(c.quiet, 1);
    ck_assert_str_eq(c.out, "/tmp/x");
}
END_TEST

/* --- bad values ------------------------------------------------------------------ */

struct bad {
    const char *var, *value;
};

/* Out of range, negative, garbage and empty, for each variable. */
static const struct bad bads[] = {
    {"WAITPROF_HZ", "0"},
    {"WAITPROF_HZ", "10001"},
    {"WAITPROF_HZ", "100000"},
    {"WAITPROF_HZ", "4294967396"}, /* 2^32 + 100: must not wrap to 100 */
    {"WAITPROF_HZ", "99999999999999999999999"},
    {"WAITPROF_HZ", "-1"},
    {"WAITPROF_HZ", "-100"},
    {"WAITPROF_HZ", "-0"},
    {"WAITPROF_HZ", "12abc"},
    {"WAITPROF_HZ", "abc"},
    {"WAITPROF_HZ", " 5"},
    {"WAITPROF_HZ", "5 "},
    {"WAITPROF_HZ", "0x10"},
    {"WAITPROF_HZ", "1e3"},
    {"WAITPROF_HZ", "1.5"},
    {"WAITPROF_HZ", "-"},
    {"WAITPROF_HZ", "+"},
    {"WAITPROF_HZ", ""},
    {"WAITPROF_CLOCK", "WALL"},
    {"WAITPROF_CLOCK", "Cpu"},
    {"WAITPROF_CLOCK", "cpu "},
    {"WAITPROF_CLOCK", " wall"},
    {"WAITPROF_CLOCK", "walls"},
    {"WAITPROF_CLOCK", "process"},
    {"WAITPROF_CLOCK", "0"},
    {"WAITPROF_CLOCK", "1"},
    {"WAITPROF_CLOCK", "-1"},
    {"WAITPROF_CLOCK", "12abc"},
    {"WAITPROF_CLOCK", ""},
    {"WAITPROF_TIMER", "TICK"},
    {"WAITPROF_TIMER", "ticks"},
    {"WAITPROF_TIMER", "0"},
    {"WAITPROF_TIMER", " free"},
    {"WAITPROF_TIMER", ""},
    {"WAITPROF_TIMER", "overflow:nope@0"},
    {"WAITPROF_TIMER", "overflow:task-clock"},
    {"WAITPROF_DEPTH", "0"},
    {"WAITPROF_DEPTH", "129"},
    {"WAITPROF_DEPTH", "1000"},
    {"WAITPROF_DEPTH", "4294967297"}, /* 2^32 + 1 */
    {"WAITPROF_DEPTH", "-1"},
    {"WAITPROF_DEPTH", "-128"},
    {"WAITPROF_DEPTH", "12abc"},
    {"WAITPROF_DEPTH", "abc"},
    {"WAITPROF_DEPTH", " 5"},
    {"WAITPROF_DEPTH", "0x10"},
    {"WAITPROF_DEPTH", "1e3"},
    {"WAITPROF_DEPTH", ""},
    {"WAITPROF_RUNTIME_THREADS", "2"},
    {"WAITPROF_RUNTIME_THREADS", "-1"},
    {"WAITPROF_RUNTIME_THREADS", "yes"},
    {"WAITPROF_RUNTIME_THREADS", "true"},
    {"WAITPROF_RUNTIME_THREADS", "01"},
    {"WAITPROF_RUNTIME_THREADS", " 1"},
    {"WAITPROF_RUNTIME_THREADS", "1 "},
    {"WAITPROF_RUNTIME_THREADS", "12abc"},
    {"WAITPROF_RUNTIME_THREADS", "0x1"},
    {"WAITPROF_RUNTIME_THREADS", ""},
    {"WAITPROF_QUIET", "2"},
    {"WAITPROF_QUIET", "-1"},
    {"WAITPROF_QUIET", "on"},
    {"WAITPROF_QUIET", "1e0"},
    {"WAITPROF_QUIET", " 0"},
    {"WAITPROF_QUIET", "abc"},
    {"WAITPROF_QUIET", ""},
};

/* What a variable's report must say is accepted, and the default it uses. */
static void expectations(const char *var, const char **accepts, const char **using)
{
    static const struct {
        const char *var, *accepts, *using;
    } t[] = {
        {"WAITPROF_HZ", "1 to 10000", "using 100"},
        {"WAITPROF_CLOCK", "wall or cpu", "using wall"},
        {"WAITPROF_TIMER", "tick or free", "using tick"},
        {"WAITPROF_DEPTH", "1 to 128", "using 128"},
        {"WAITPROF_RUNTIME_THREADS", "0 or 1", "using 0"},
        {"WAITPROF_QUIET", "0 or 1", "using 0"},
        {"WAITPROF_OUT", "directory", "using ./waitprof."},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(t[i].var, var) == 0) {
            *accepts = t[i].accepts;
            *using = t[i].using;
            return;
        }
    ck_abort_msg("no expectations for %s", var);
}

static void assert_one_report(const char *var, const char *value)
{
    const char *accepts, *using;
    expectations(var, &accepts, &using);
    ck_assert_msg(nlines == 1, "%s=\"%s\": %d lines reported, want 1", var, value, nlines);
    const char *l = lines[0];
    ck_assert_msg(strchr(l, '\n') == NULL, "report is not one line: %s", l);
    ck_assert_msg(strncmp(l, "waitprof: ", 10) == 0, "report lacks the prefix: %s", l);
    ck_assert_msg(names_var(l, var), "report does not name %s: %s", var, l);
    ck_assert_msg(strstr(l, accepts) != NULL, "report does not say \"%s\": %s", accepts, l);
    ck_assert_msg(strstr(l, using) != NULL, "report does not say \"%s\": %s", using, l);
}

START_TEST(test_bad_value)
{
    const struct bad *b = &bads[_i];
    struct wp_config c;
    reset();
    env_set(b->var, b->value);
    wp_config_load(&c, fake_getenv, capture);
    assert_one_report(b->var, b->value);
    /* The fallback is the default, and nothing else moved. */
    assert_defaults_except(&c, "");
}
END_TEST

/* A bad value next to good ones: only it is reported, the others still apply. */
START_TEST(test_bad_among_good)
{
    struct wp_config c;
    reset();
    env_set("WAITPROF_HZ", "500");
    env_set("WAITPROF_CLOCK", "cpu");
    env_set("WAITPROF_DEPTH", "999");
    env_set("WAITPROF_QUIET", "1");
    wp_config_load(&c, fake_getenv, capture);
    assert_one_report("WAITPROF_DEPTH", "999");
    ck_assert_int_eq(c.hz, 500);
    ck_assert_int_eq(c.cpu_clock, 1);
    ck_assert_int_eq(c.depth, WP_DEPTH_DEFAULT);
    ck_assert_int_eq(c.quiet, 1);
}
END_TEST

/* Every variable bad at once: one line per variable, each naming its own. */
START_TEST(test_all_bad_together)
{
    static const char *const vars[] = {"WAITPROF_HZ", "WAITPROF_CLOCK", "WAITPROF_DEPTH",
                                       "WAITPROF_RUNTIME_THREADS", "WAITPROF_QUIET", "WAITPROF_OUT"};
    struct wp_config c;
    reset();
    env_set("WAITPROF_HZ", "abc");
    env_set("WAITPROF_CLOCK", "");
    env_set("WAITPROF_DEPTH", "-5");
    env_set("WAITPROF_RUNTIME_THREADS", "yes");
    env_set("WAITPROF_QUIET", "12abc");
    env_set("WAITPROF_OUT", "");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(nlines, 6);
    for (size_t v = 0; v < 6; v++) {
        int hits = 0;
        for (int i = 0; i < nlines; i++)
            hits += names_var(lines[i], vars[v]);
        ck_assert_msg(hits == 1, "%s named by %d lines", vars[v], hits);
    }
    assert_defaults_except(&c, "");
}
END_TEST

/* WAITPROF_OUT: empty is bad; the length limit the message states is the one
 * applied (3999 bytes pass, 4000 do not). */
START_TEST(test_out_bad)
{
    static char path[8192];
    struct wp_config c;

    reset();
    env_set("WAITPROF_OUT", "");
    wp_config_load(&c, fake_getenv, capture);
    assert_one_report("WAITPROF_OUT", "");
    ck_assert_str_eq(c.out, "");

    ck_assert_msg(strstr(lines[0], "4000") != NULL, "limit not stated: %s", lines[0]);

    static const size_t lens[] = {3999, 4000, 4063, 4064, 4095, 4096, 8000};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        memset(path, 'd', lens[i]);
        path[0] = '/';
        path[lens[i]] = '\0';
        reset();
        env_set("WAITPROF_OUT", path);
        wp_config_load(&c, fake_getenv, capture);
        if (lens[i] < 4000) {
            ck_assert_msg(nlines == 0, "%zu-byte path reported", lens[i]);
            ck_assert_str_eq(c.out, path);
        } else {
            assert_one_report("WAITPROF_OUT", "(long)");
            ck_assert_msg(strlen(lines[0]) < 512, "the report quotes all of a %zu-byte value", lens[i]);
            ck_assert_str_eq(c.out, "");
        }
        assert_defaults_except(&c, "WAITPROF_OUT");
    }
}
END_TEST

/* --- unknown variables ------------------------------------------------------------- */

START_TEST(test_unknown_reported_once_each)
{
    char *env[] = {
        "PATH=/usr/bin",
        "WAITPROF_HZ=100",
        "WAITPROF_HX=100",         /* typo */
        "WAITPROF_CLOCK=cpu",
        "WAITPROF_OUTPUT=/tmp/x",  /* a known name is its prefix */
        "WAITPROF_DEPTH=3",
        "WAITPROF_RUNTIME_THREADS=1",
        "WAITPROF_QUIET=1",
        "WAITPROF_OUT=/tmp",
        "WAITPROF_LIB=/x.so",
        "WAITPROF_H=1",            /* a prefix of a known name */
        "XWAITPROF_HZ=1",
        "waitprof_hz=1",
        "MY_WAITPROF_X=1",
        "WAITPROF_FREQ",           /* no '=': still a name */
        NULL,
    };
    static const char *const unknown[] = {"WAITPROF_HX", "WAITPROF_OUTPUT", "WAITPROF_H", "WAITPROF_FREQ"};
    reset();
    wp_config_check_unknown(env, capture);
    ck_assert_int_eq(nlines, 4);
    for (size_t u = 0; u < 4; u++) {
        int hits = 0;
        for (int i = 0; i < nlines; i++)
            hits += names_var(lines[i], unknown[u]);
        ck_assert_msg(hits == 1, "%s named by %d lines", unknown[u], hits);
    }
    for (int i = 0; i < nlines; i++) {
        ck_assert_msg(strncmp(lines[i], "waitprof: ", 10) == 0, "report lacks the prefix: %s", lines[i]);
        ck_assert_ptr_null(strchr(lines[i], '\n'));
    }
}
END_TEST

START_TEST(test_known_silent)
{
    char *env[] = {"WAITPROF_HZ=1", "WAITPROF_CLOCK=wall", "WAITPROF_DEPTH=1", "WAITPROF_RUNTIME_THREADS=0",
                   "WAITPROF_QUIET=0", "WAITPROF_OUT=x", "WAITPROF_LIB=y", "WAITPROF_HZ=", "HOME=/root",
                   "LD_PRELOAD=libwaitprof.so", "=", "", NULL};
    reset();
    wp_config_check_unknown(env, capture);
    ck_assert_int_eq(nlines, 0);

    char *empty[] = {NULL};
    wp_config_check_unknown(empty, capture);
    wp_config_check_unknown(NULL, capture);
    ck_assert_int_eq(nlines, 0);
}
END_TEST

/* WAITPROF_THRESHOLD: a plain decimal percentage from 0 to 100. */
START_TEST(test_threshold)
{
    static const struct {
        const char *v;
        double want;
    } good[] = {{"0", 0}, {"0.5", 0.5}, {"2", 2}, {"12.25", 12.25}, {"100", 100}};
    static const char *const bad[] = {"abc", "-1", "101", "", "1e3", "0x1", " 1", "1%", "nan", "inf"};
    struct wp_config c;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        reset();
        env_set("WAITPROF_THRESHOLD", good[i].v);
        wp_config_load(&c, fake_getenv, capture);
        ck_assert_msg(nlines == 0, "WAITPROF_THRESHOLD=\"%s\" reported: %s", good[i].v, lines[0]);
        ck_assert_double_eq_tol(c.threshold, good[i].want, 1e-12);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        reset();
        env_set("WAITPROF_THRESHOLD", bad[i]);
        wp_config_load(&c, fake_getenv, capture);
        ck_assert_msg(nlines == 1, "WAITPROF_THRESHOLD=\"%s\": %d lines", bad[i], nlines);
        ck_assert_ptr_nonnull(strstr(lines[0], "WAITPROF_THRESHOLD"));
        ck_assert_ptr_nonnull(strstr(lines[0], "from 0 to 100"));
        ck_assert_ptr_nonnull(strstr(lines[0], "using 0.5"));
        ck_assert_double_eq_tol(c.threshold, 0.5, 1e-12);
    }
}
END_TEST

/* WAITPROF_ESTIMATE (0 or 1, default 1) and WAITPROF_CALLPATH_DEPTH (1..16,
 * default 1). */
START_TEST(test_estimate_callpath)
{
    struct wp_config c;
    reset();
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(nlines, 0);
    ck_assert_int_eq(c.estimate, 1);
    ck_assert_int_eq(c.callpath_depth, 1);
    reset();
    env_set("WAITPROF_ESTIMATE", "0");
    env_set("WAITPROF_CALLPATH_DEPTH", "16");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(nlines, 0);
    ck_assert_int_eq(c.estimate, 0);
    ck_assert_int_eq(c.callpath_depth, 16);
    static const char *const bad[] = {"0", "17", "-1", "", "x", "2.5", " 3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        reset();
        env_set("WAITPROF_CALLPATH_DEPTH", bad[i]);
        wp_config_load(&c, fake_getenv, capture);
        ck_assert_msg(nlines == 1, "WAITPROF_CALLPATH_DEPTH=\"%s\": %d lines", bad[i], nlines);
        ck_assert_ptr_nonnull(strstr(lines[0], "from 1 to 16"));
        ck_assert_ptr_nonnull(strstr(lines[0], "using 1"));
        ck_assert_int_eq(c.callpath_depth, 1);
    }
    static const char *const badb[] = {"2", "yes", ""};
    for (size_t i = 0; i < sizeof badb / sizeof badb[0]; i++) {
        reset();
        env_set("WAITPROF_ESTIMATE", badb[i]);
        wp_config_load(&c, fake_getenv, capture);
        ck_assert_msg(nlines == 1, "WAITPROF_ESTIMATE=\"%s\": %d lines", badb[i], nlines);
        ck_assert_ptr_nonnull(strstr(lines[0], "WAITPROF_ESTIMATE"));
        ck_assert_ptr_nonnull(strstr(lines[0], "using 1"));
        ck_assert_int_eq(c.estimate, 1);
    }
}
END_TEST

/* WAITPROF_LEAN (0 or 1, default 0): 1 turns the estimate and the matrix
 * off; asking for either explicitly as well gives one line. */
START_TEST(test_lean)
{
    struct wp_config c;
    reset();
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(c.lean, 0);
    reset();
    env_set("WAITPROF_LEAN", "1");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(nlines, 0);
    ck_assert_int_eq(c.lean, 1);
    ck_assert_int_eq(c.estimate, 0);
    ck_assert_int_eq(c.matrix, 0);
    reset();
    env_set("WAITPROF_LEAN", "1");
    env_set("WAITPROF_ESTIMATE", "0"); /* agrees with lean: silent */
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(nlines, 0);
    static const char *const clash[] = {"WAITPROF_ESTIMATE", "WAITPROF_MATRIX"};
    for (size_t i = 0; i < 2; i++) {
        reset();
        env_set("WAITPROF_LEAN", "1");
        env_set(clash[i], "1");
        wp_config_load(&c, fake_getenv, capture);
        ck_assert_msg(nlines == 1, "LEAN=1 %s=1: %d lines", clash[i], nlines);
        ck_assert_ptr_nonnull(strstr(lines[0], clash[i]));
        ck_assert_ptr_nonnull(strstr(lines[0], "ignored"));
        ck_assert_int_eq(c.lean, 1);
        ck_assert_int_eq(c.estimate, 0);
        ck_assert_int_eq(c.matrix, 0);
    }
    reset();
    env_set("WAITPROF_LEAN", "yes");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(nlines, 1);
    ck_assert_ptr_nonnull(strstr(lines[0], "WAITPROF_LEAN"));
    ck_assert_int_eq(c.lean, 0);
    ck_assert_int_eq(c.estimate, 1);
}
END_TEST

/* The variables are declared once (state/config.h, WP_VARIABLES): README.md's
 * table and waitprof(1) must document each, and waitprof(1) no other. */
static char *slurp_src(const char *rel)
{
    const char *dir = getenv("srcdir");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", rel);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strdup(buf);
}


/* WAITPROF_TIMER=overflow:EVENT@PERIOD: the name and the period as given
 * (the period after the last '@', the largest the kernel takes accepted);
 * anything else is one line that names the variable and the overflow
 * form and falls back to tick, the default, with no event left set. */
START_TEST(test_timer_overflow)
{
    static const struct {
        const char *value, *event;
        unsigned long long period;
    } good[] = {
        {"overflow:task-clock@10000000", "task-clock", 10000000ull},
        {"overflow:cycles@1", "cycles", 1ull},
        {"overflow:cpu/event=0x3c/@250000", NULL, 0}, /* '=' is not in an event name */
        {"overflow:PAPI_TOT_CYC@9223372036854775807", "PAPI_TOT_CYC", 9223372036854775807ull},
        {"overflow:cpu/cycles/@5", "cpu/cycles/", 5ull},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        struct wp_config c;
        reset();
        env_set("WAITPROF_TIMER", good[i].value);
        wp_config_load(&c, fake_getenv, capture);
        if (good[i].event == NULL) {
            assert_one_report("WAITPROF_TIMER", good[i].value);
            continue;
        }
        ck_assert_msg(nlines == 0, "%s: %d lines", good[i].value, nlines);
        ck_assert_str_eq(c.overflow_event, good[i].event);
        ck_assert_uint_eq(c.overflow_period, good[i].period);
        ck_assert_int_eq(c.free_timer, 0);
        assert_defaults_except(&c, "WAITPROF_TIMER");
    }
    static const char *const bad[] = {
        "overflow:nope@0",
        "overflow:task-clock",
        "overflow:task-clock@",
        "overflow:@100",
        "overflow:",
        "overflow:task-clock@-5",
        "overflow:task-clock@+5",
        "overflow:task-clock@10ms",
        "overflow:task-clock@ 5",
        "overflow:task-clock@5 ",
        "overflow:task-clock@0x10",
        "overflow:bad name@5",
        "overflow:a@b@5",
        "overflow:task-clock@9223372036854775808",   /* 2^63: the kernel refuses it */
        "overflow:task-clock@99999999999999999999", /* past 2^64 */
        "overflow:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@5", /* 64 letters */
        "Overflow:task-clock@5",
        "overflow task-clock@5",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct wp_config c;
        reset();
        env_set("WAITPROF_TIMER", bad[i]);
        wp_config_load(&c, fake_getenv, capture);
        assert_one_report("WAITPROF_TIMER", bad[i]);
        ck_assert_msg(strstr(lines[0], "overflow:EVENT@PERIOD") != NULL, "%s: %s", bad[i], lines[0]);
        assert_defaults_except(&c, "");
    }
}
END_TEST

/* WAITPROF_COUNTERS: names kept in order; a bad name, a repeat or a name
 * past the eighth is one line each, and the rest are still kept. */
START_TEST(test_counters)
{
    struct wp_config c;
    reset();
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(c.ncounters, 0);
    ck_assert_int_eq(nlines, 0);

    reset();
    env_set("WAITPROF_COUNTERS", "task-clock,context-switches");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(nlines, 0);
    ck_assert_int_eq(c.ncounters, 2);
    ck_assert_str_eq(c.counters[0], "task-clock");
    ck_assert_str_eq(c.counters[1], "context-switches");

    reset();
    env_set("WAITPROF_COUNTERS", "task-clock,bad name,,task-clock,PAPI_TOT_CYC");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(c.ncounters, 2);
    ck_assert_str_eq(c.counters[1], "PAPI_TOT_CYC");
    ck_assert_int_eq(nlines, 3); /* "bad name", the empty one, the repeat */
    for (int i = 0; i < nlines; i++)
        ck_assert(names_var(lines[i], "WAITPROF_COUNTERS"));

    reset();
    env_set("WAITPROF_COUNTERS", "a,b,c,d,e,f,g,h,i,j");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(c.ncounters, WP_COUNTERS_MAX);
    ck_assert_str_eq(c.counters[7], "h");
    ck_assert_int_eq(nlines, 1);
    ck_assert_ptr_nonnull(strstr(lines[0], "first 8"));

    reset();
    env_set("WAITPROF_COUNTERS", "");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(c.ncounters, 0);
    ck_assert_int_eq(nlines, 1);

    /* WAITPROF_COUNTERS_SPLIT: kept with counters and full wrappers; one
     * line and off without counters, with lean wrappers, or a bad value. */
    reset();
    env_set("WAITPROF_COUNTERS", "task-clock");
    env_set("WAITPROF_COUNTERS_SPLIT", "1");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(nlines, 0);
    ck_assert_int_eq(c.counters_split, 1);

    reset();
    env_set("WAITPROF_COUNTERS_SPLIT", "1");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(c.counters_split, 0);
    ck_assert_int_eq(nlines, 1);
    ck_assert(names_var(lines[0], "WAITPROF_COUNTERS_SPLIT"));
    ck_assert_ptr_nonnull(strstr(lines[0], "without WAITPROF_COUNTERS"));

    reset();
    env_set("WAITPROF_COUNTERS", "task-clock");
    env_set("WAITPROF_COUNTERS_SPLIT", "1");
    env_set("WAITPROF_LEAN", "1");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(c.counters_split, 0);
    ck_assert_int_eq(nlines, 1);
    ck_assert_ptr_nonnull(strstr(lines[0], "WAITPROF_LEAN=1"));

    reset();
    env_set("WAITPROF_COUNTERS", "task-clock");
    env_set("WAITPROF_COUNTERS_SPLIT", "yes");
    wp_config_load(&c, fake_getenv, capture);
    ck_assert_int_eq(c.counters_split, 0);
    ck_assert_int_eq(nlines, 1);
    ck_assert(names_var(lines[0], "WAITPROF_COUNTERS_SPLIT"));
}
END_TEST

START_TEST(test_variables_documented)
{
    char *readme = slurp_src("README.md"), *man = slurp_src("doc/waitprof.1");
    for (int v = 0; v < WP_VAR_COUNT; v++) {
        char row[128];
        const char *name = wp_var_name((enum wp_var)v);
        snprintf(row, sizeof row, "`%s`", name);
        ck_assert_msg(strstr(readme, row) != NULL, "README.md does not document %s", name);
        ck_assert_msg(strstr(man, name) != NULL, "doc/waitprof.1 does not document %s", name);
    }
    for (const char *p = man; (p = strstr(p, "WAITPROF_")) != NULL; p++) {
        size_t n = 9;
        while ((p[n] >= 'A' && p[n] <= 'Z') || p[n] == '_')
            n++;
        if (n == 9)
            continue; /* the prefix itself, "WAITPROF_*" */
        int known = 0;
        for (int v = 0; v < WP_VAR_COUNT; v++)
            known |= strlen(wp_var_name((enum wp_var)v)) == n && strncmp(p, wp_var_name((enum wp_var)v), n) == 0;
        ck_assert_msg(known, "doc/waitprof.1 names %.*s, which state/config.h does not declare", (int)n, p);
    }
    free(readme);
    free(man);
}
END_TEST

/* The manual pages as man(1) shows them.  The roff source can name every
 * variable and still render garbled (a form feed typed for \fR once made
 * "WAITPROF_STARTR, BWAITPROF_STOP" of a heading), so the rendering is
 * checked: man and groff warn about nothing; the text holds no backslash
 * (an escape shown as it is) and no control character but newlines; and
 * in waitprof(1) every variable of WP_VARIABLES appears as a whole word and
 * every WAITPROF_ word is one of them, at 80 and at 100 columns (a name
 * hyphenated at a line's end would be two words). */
static char *run_output(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "cannot run %s", cmd);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    size_t k;
    while (n + 1 < cap && (k = fread(buf + n, 1, cap - 1 - n, p)) > 0)
        n += k;
    buf[n] = '\0';
    pclose(p);
    return buf;
}

static char *man_render(const char *page, int warnings_only, int width)
{
    const char *dir = getenv("srcdir");
    char cmd[8192];
    ck_assert_msg(system("command -v man >/dev/null 2>&1") == 0,
                  "man is not installed (Debian: man-db; ./quickstart installs it)");
    if (warnings_only == 1)
        snprintf(cmd, sizeof cmd, "MANWIDTH=80 man --warnings -l '%s/%s' 2>&1 >/dev/null", dir ? dir : ".", page);
    else if (warnings_only == 2)
        snprintf(cmd, sizeof cmd, "groff -ww -z -man '%s/%s' 2>&1", dir ? dir : ".", page);
    else
        snprintf(cmd, sizeof cmd, "MANWIDTH=%d MANPAGER=cat PAGER=cat man -l '%s/%s' 2>/dev/null", width,
                 dir ? dir : ".", page);
    return run_output(cmd);
}

static int word_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

START_TEST(test_man_pages_render)
{
    static const char *const pages[] = {"doc/waitprof.1", "doc/waitprof.3"};
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        for (int w = 1; w <= 2; w++) {
            char *warn = man_render(pages[i], w, 80);
            ck_assert_msg(warn[0] == '\0', "%s: %s warns: %s", pages[i], w == 1 ? "man --warnings" : "groff -ww",
                          warn);
            free(warn);
        }
        for (int width = 80; width <= 100; width += 20) {
            char *text = man_render(pages[i], 0, width);
            ck_assert_msg(strlen(text) > 1000, "%s renders as %zu bytes", pages[i], strlen(text));
            for (const char *c = text; *c; c++) {
                ck_assert_msg(*c != '\\', "%s renders a backslash: ...%.40s", pages[i], c > text + 20 ? c - 20 : text);
                ck_assert_msg(*c == '\n' || (unsigned char)*c >= 0x20, "%s renders control character 0x%02x: ...%.40s",
                              pages[i], (unsigned)(unsigned char)*c, c > text + 20 ? c - 20 : text);
            }
            if (i == 0) {
                for (int v = 0; v < WP_VAR_COUNT; v++) {
                    const char *name = wp_var_name((enum wp_var)v);
                    size_t n = strlen(name);
                    int found = 0;
                    for (const char *p = text; !found && (p = strstr(p, name)) != NULL; p++)
                        found = (p == text || !word_char(p[-1])) && !word_char(p[n]);
                    ck_assert_msg(found, "waitprof(1) as rendered does not show %s as a word", name);
                }
                for (const char *p = text; (p = strstr(p, "WAITPROF_")) != NULL; p++) {
                    const char *b = p, *e = p + 9;
                    while (b > text && word_char(b[-1]))
                        b--;
                    while (word_char(*e))
                        e++;
                    if (b == p && e == p + 9)
                        continue; /* the prefix itself, "WAITPROF_*" */
                    int known = 0;
                    for (int v = 0; v < WP_VAR_COUNT; v++)
                        known |= b == p && strlen(wp_var_name((enum wp_var)v)) == (size_t)(e - b) &&
                                 strncmp(b, wp_var_name((enum wp_var)v), (size_t)(e - b)) == 0;
                    ck_assert_msg(known, "waitprof(1) as rendered shows %.*s, which state/config.h does not declare",
                                  (int)(e - b), b);
                }
            }
            free(text);
        }
    }
}
END_TEST

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_unrelated_variables_ignored);
    tcase_add_loop_test(tc, test_good_value, 0, (int)(sizeof goods / sizeof goods[0]));
    tcase_add_test(tc, test_out_good);
    tcase_add_test(tc, test_all_good_together);
    tcase_add_loop_test(tc, test_bad_value, 0, (int)(sizeof bads / sizeof bads[0]));
    tcase_add_test(tc, test_bad_among_good);
    tcase_add_test(tc, test_all_bad_together);
    tcase_add_test(tc, test_out_bad);
    tcase_add_test(tc, test_threshold);
    tcase_add_test(tc, test_estimate_callpath);
    tcase_add_test(tc, test_lean);
    suite_add_tcase(s, tc);
    tc = tcase_create("unknown");
    tcase_add_test(tc, test_unknown_reported_once_each);
    tcase_add_test(tc, test_known_silent);
    tcase_add_test(tc, test_counters);
    tcase_add_test(tc, test_timer_overflow);
    tcase_add_test(tc, test_variables_documented);
    tcase_add_test(tc, test_man_pages_render);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return wp_unit_run(config_suite(), 1);
}
