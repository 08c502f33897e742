/* tests/unit/test_report.c — the SVG flame graph (report/svg.h) and the text
 * summary (report/summary.h).
 *
 * Checked for the SVG: the document is well-formed XML and valid UTF-8 with
 * names escaped; it needs nothing outside itself; frame widths are the
 * shares of samples, the root is at the bottom and siblings are in name
 * order inside their parent; the three state towers have different,
 * dominant hues and a name always gets the same colour; tooltips carry the
 * counts, the percentages and the stall shares, per tower and per call path
 * over all states; frames under 0.1% are left out; labels are elided to fit;
 * the header has the total and the legend; 100k lines take well under a
 * second.  Checked for the summary: the exact text for a small profile
 * (state shares, top paths in order with their MPI function and stalled
 * share), the MPI function below inner library frames, ties ordered by path,
 * the top limit, shortening of long paths in the middle, the line budget,
 * and an empty profile.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/folded.h"
#include "report/summary.h"
#include "report/svg.h"
#include "tests/unit/unit.h"

struct in_line {
    const char *stack;
    uint64_t count;
};

static struct wp_folded build(const struct in_line *in, size_t n)
{
    struct wp_folded f = {0};
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(wp_folded_add(&f, in[i].stack, strlen(in[i].stack), in[i].count), 0);
    wp_folded_finish(&f);
    return f;
}

static char *render_svg(const struct wp_folded *f, const char *title)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(wp_svg_write(fp, f, title, NULL), 0);
    fclose(fp);
    return buf;
}

static char *render_summary(const struct wp_folded *f, int ranks, int top)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(wp_summary_write(fp, f, ranks, top), 0);
    fclose(fp);
    return buf;
}

/* --- a small XML checker -----------------------------------------------------------
 * Enough XML to catch what a writer can get wrong: tags must nest and close,
 * attributes must be quoted, '<' never appears raw in text or attributes,
 * every '&' starts one of the five entities, there is exactly one root
 * element, and <g> and </g> balance as a consequence. */

static int entity_ok(const char *p)
{
    static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (size_t i = 0; i < 5; i++)
        if (strncmp(p, ents[i], strlen(ents[i])) == 0)
            return 1;
    return 0;
}

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == ':' || c == '.';
}

/* Returns NULL when well-formed, else a description of the first problem. */
static const char *xml_problem(const char *s)
{
    const char *stack[64];
    size_t stack_len[64];
    int depth = 0, roots = 0;
    const char *p = s;
    while (*p) {
        if (*p != '<') {
            if (*p == '&' && !entity_ok(p))
                return "bare & in text";
            if (depth == 0 && *p != '\n' && *p != ' ')
                return "text outside the root element";
            p++;
            continue;
        }
        if (strncmp(p, "<?", 2) == 0) {
            p = strstr(p, "?>");
            if (p == NULL)
                return "unterminated <?";
            p += 2;
        } else if (strncmp(p, "<!--", 4) == 0) {
            p = strstr(p, "-->");
            if (p == NULL)
                return "unterminated comment";
            p += 3;
        } else if (strncmp(p, "<![CDATA[", 9) == 0) {
            p = strstr(p, "]]>");
            if (p == NULL)
                return "unterminated CDATA";
            p += 3;
        } else if (p[1] == '/') {
            const char *n = p + 2;
            size_t l = 0;
            while (is_name_char(n[l]))
                l++;
            if (n[l] != '>')
                return "bad end tag";
            if (depth == 0 || stack_len[depth - 1] != l || strncmp(stack[depth - 1], n, l) != 0)
                return "end tag does not match";
            depth--;
            p = n + l + 1;
        } else {
            const char *n = p + 1;
            size_t l = 0;
            while (is_name_char(n[l]))
                l++;
            if (l == 0)
                return "raw < in text";
            const char *q = n + l;
            for (;;) {
                while (*q == ' ' || *q == '\n')
                    q++;
                if (*q == '>' || (q[0] == '/' && q[1] == '>'))
                    break;
                size_t al = 0;
                while (is_name_char(q[al]))
                    al++;
                if (al == 0 || q[al] != '=' || q[al + 1] != '"')
                    return "bad attribute";
                q += al + 2;
                while (*q && *q != '"') {
                    if (*q == '<')
                        return "raw < in attribute";
                    if (*q == '&' && !entity_ok(q))
                        return "bare & in attribute";
                    q++;
                }
                if (*q != '"')
                    return "unterminated attribute";
                q++;
            }
            if (depth == 0 && roots++ > 0)
                return "more than one root element";
            if (*q == '/') {
                p = q + 2;
            } else {
                if (depth == 64)
                    return "too deep";
                stack[depth] = n;
                stack_len[depth++] = l;
                p = q + 1;
            }
        }
    }
    if (depth != 0)
        return "unclosed element";
    return roots == 1 ? NULL : "no root element";
}

static int utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p >= 0xc2 && *p <= 0xdf) ? 1 : (*p >= 0xe0 && *p <= 0xef) ? 2
                          : (*p >= 0xf0 && *p <= 0xf4) ? 3 : -1;
        if (n < 0)
            return 0;
        for (int i = 1; i <= n; i++)
            if ((p[i] & 0xc0) != 0x80)
                return 0;
        p += n + 1;
    }
    return 1;
}

static size_t count_of(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* --- frames of a rendered SVG --------------------------------------------------- */

struct frame {
    char title[512]; /* as written, escaped */
    double x, w;
    int y, rgb[3];
    char label[256];
};

/* Find the frame whose tooltip starts with "name — ". */
static int find_frame(const char *svg, const char *name, struct frame *fr)
{
    char key[300];
    snprintf(key, sizeof key, "<g class=\"f\"><title>%s \xe2\x80\x94 ", name);
    const char *p = strstr(svg, key);
    if (p == NULL)
        return 0;
    ck_assert_msg(strstr(p + 1, key) == NULL, "frame %s is drawn twice", name);
    p += strlen("<g class=\"f\"><title>");
    const char *e = strstr(p, "</title>");
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_lt((size_t)(e - p), sizeof fr->title);
    memcpy(fr->title, p, (size_t)(e - p));
    fr->title[e - p] = '\0';
    ck_assert_int_eq(sscanf(e, "</title><rect x=\"%lf\" y=\"%d\" width=\"%lf\"", &fr->x, &fr->y, &fr->w), 3);
    const char *fill = strstr(e, "fill=\"rgb(");
    ck_assert_ptr_nonnull(fill);
    ck_assert_int_eq(sscanf(fill, "fill=\"rgb(%d,%d,%d)", &fr->rgb[0], &fr->rgb[1], &fr->rgb[2]), 3);
    const char *t = strstr(fill, "<text");
    t = strchr(t, '>') + 1;
    const char *te = strstr(t, "</text>");
    ck_assert_uint_lt((size_t)(te - t), sizeof fr->label);
    memcpy(fr->label, t, (size_t)(te - t));
    fr->label[te - t] = '\0';
    return 1;
}

static struct frame get_frame(const char *svg, const char *name)
{
    struct frame fr;
    ck_assert_msg(find_frame(svg, name, &fr), "no frame %s", name);
    return fr;
}

static const struct in_line mixed[] = {
    {"Not-in-MPI;main;compute", 50},
    {"MPI-Stall;main;MPI_Recv", 30},
    {"MPI-Work;main;MPI_Recv", 20},
};

START_TEST(test_svg_well_formed)
{
    static const struct in_line in[] = {
        {"Not-in-MPI;main;std::vector<int>::at(unsigned long) const", 5},
        {"Not-in-MPI;main;a&b \"q\" 'x' >y", 5},
        {"MPI-Work;main;caf\xc3\xa9;MPI_Send", 5},
        {"MPI-Stall;main;bad\xff\xfe utf8;MPI_Recv", 5},
    };
    struct wp_folded f = build(in, 4);
    char *svg = render_svg(&f, "t<i>tle & \"more\"");
    const char *why = xml_problem(svg);
    ck_assert_msg(why == NULL, "not well-formed: %s", why);
    ck_assert(utf8_valid(svg));
    ck_assert_uint_eq(count_of(svg, "<g>") + count_of(svg, "<g class=\"f\">"), count_of(svg, "</g>"));
    ck_assert_ptr_nonnull(strstr(svg, "std::vector&lt;int&gt;::at(unsigned long) const \xe2\x80\x94 "));
    ck_assert_ptr_nonnull(strstr(svg, "a&amp;b &quot;q&quot; &apos;x&apos; &gt;y \xe2\x80\x94 "));
    ck_assert_ptr_nonnull(strstr(svg, "caf\xc3\xa9 \xe2\x80\x94 "));
    ck_assert_ptr_nonnull(strstr(svg, "bad?? utf8 \xe2\x80\x94 "));
    ck_assert_ptr_nonnull(strstr(svg, ">t&lt;i&gt;tle &amp; &quot;more&quot;</text>"));
    /* Self-contained: nothing is fetched, and the frames are drawn as
     * plain rectangles that do not need the script. */
    ck_assert_ptr_null(strstr(svg, "href"));
    ck_assert_ptr_null(strstr(svg, "url("));
    ck_assert_ptr_null(strstr(svg, "@import"));
    free(svg);
    wp_folded_free(&f);
}
END_TEST

START_TEST(test_svg_widths_and_layout)
{
    struct wp_folded f = build(mixed, 3);
    char *svg = render_svg(&f, "w");
    struct frame all = get_frame(svg, "all"), nim = get_frame(svg, "Not-in-MPI"),
                 stall = get_frame(svg, "MPI-Stall"), work = get_frame(svg, "MPI-Work"),
                 compute = get_frame(svg, "compute");
    ck_assert_double_eq_tol(all.w, 1180.0, 0.01);
    ck_assert_double_eq_tol(nim.w / all.w, 0.5, 0.001);
    ck_assert_double_eq_tol(compute.w / all.w, 0.5, 0.001);
    ck_assert_double_eq_tol(stall.w / all.w, 0.3, 0.001);
    ck_assert_double_eq_tol(work.w / all.w, 0.2, 0.001);
    /* Root at the bottom: deeper frames are higher up. */
    ck_assert_int_gt(all.y, nim.y);
    ck_assert_int_gt(nim.y, compute.y);
    ck_assert_int_eq(stall.y, nim.y);
    /* Siblings in name order ("MPI-Stall" < "MPI-Work" < "Not-in-MPI"),
     * side by side, filling their parent exactly. */
    ck_assert_double_eq_tol(stall.x, all.x, 0.01);
    ck_assert_double_eq_tol(work.x, stall.x + stall.w, 0.01);
    ck_assert_double_eq_tol(nim.x, work.x + work.w, 0.01);
    ck_assert_double_eq_tol(nim.x + nim.w, all.x + all.w, 0.01);
    ck_assert_double_eq_tol(compute.x, nim.x, 0.01);
    /* Header: the total and a legend entry per state. */
    ck_assert_ptr_nonnull(strstr(svg, ">100 samples in all;"));
    ck_assert_ptr_nonnull(strstr(svg, ">Not-in-MPI 50.0% (50)</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">MPI-Work 20.0% (20)</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">MPI-Stall 30.0% (30)</text>"));
    ck_assert_ptr_null(strstr(svg, ">other "));
    free(svg);
    wp_folded_free(&f);
}
END_TEST

static int dominant(const int rgb[3])
{
    int k = 0;
    for (int i = 1; i < 3; i++)
        if (rgb[i] > rgb[k])
            k = i;
    return k;
}

START_TEST(test_svg_colours)
{
    static const struct in_line in[] = {
        {"Not-in-MPI;main;solve", 10}, {"MPI-Work;main;solve;MPI_Allreduce", 10},
        {"MPI-Stall;main;solve;MPI_Allreduce", 10}, {"Not-in-MPI;main;other", 10}};
    struct wp_folded f = build(in, 4);
    char *svg = render_svg(&f, "c");
    struct frame nim = get_frame(svg, "Not-in-MPI"), work = get_frame(svg, "MPI-Work"),
                 stall = get_frame(svg, "MPI-Stall");
    ck_assert(memcmp(nim.rgb, work.rgb, sizeof nim.rgb) != 0);
    ck_assert(memcmp(nim.rgb, stall.rgb, sizeof nim.rgb) != 0);
    ck_assert(memcmp(work.rgb, stall.rgb, sizeof nim.rgb) != 0);
    ck_assert_int_eq(dominant(nim.rgb), 1);   /* green */
    ck_assert_int_eq(dominant(work.rgb), 2);  /* blue */
    ck_assert_int_eq(dominant(stall.rgb), 0); /* red */
    /* Frames inside a tower keep its hue: "main" appears in every tower. */
    const char *p = svg;
    int hues[3] = {0, 0, 0};
    while ((p = strstr(p, "<title>main \xe2\x80\x94 ")) != NULL) {
        struct frame fr;
        const char *fill = strstr(p, "fill=\"rgb(");
        ck_assert_int_eq(sscanf(fill, "fill=\"rgb(%d,%d,%d)", &fr.rgb[0], &fr.rgb[1], &fr.rgb[2]), 3);
        hues[dominant(fr.rgb)]++;
        p++;
    }
    ck_assert_int_eq(hues[0], 1);
    ck_assert_int_eq(hues[1], 1);
    ck_assert_int_eq(hues[2], 1);
    /* The variation depends on the name only: the same output twice. */
    char *again = render_svg(&f, "c");
    ck_assert_str_eq(svg, again);
    free(again);
    free(svg);
    wp_folded_free(&f);
}
END_TEST

START_TEST(test_svg_tooltips)
{
    struct wp_folded f = build(mixed, 3);
    char *svg = render_svg(&f, "t");
    ck_assert_str_eq(get_frame(svg, "all").title, "all \xe2\x80\x94 100 samples (100.0% of all), stall share 30.0%");
    ck_assert_str_eq(get_frame(svg, "MPI-Stall").title,
                     "MPI-Stall \xe2\x80\x94 30 samples (30.0% of all), stall share 100.0%");
    ck_assert_str_eq(get_frame(svg, "Not-in-MPI").title,
                     "Not-in-MPI \xe2\x80\x94 50 samples (50.0% of all), stall share 0.0%");
    ck_assert_str_eq(get_frame(svg, "compute").title,
                     "compute \xe2\x80\x94 50 samples (50.0% of all), stall share 0.0%\n"
                     "all states at this call path: 50 samples (50.0% of all), stall share 0.0%");
    /* Three "main" and two "MPI_Recv" frames: check each by its tower. */
    static const char *const want[] = {
        "main \xe2\x80\x94 30 samples (30.0% of all), stall share 100.0%\n"
        "all states at this call path: 100 samples (100.0% of all), stall share 30.0%",
        "main \xe2\x80\x94 20 samples (20.0% of all), stall share 0.0%\n"
        "all states at this call path: 100 samples (100.0% of all), stall share 30.0%",
        "main \xe2\x80\x94 50 samples (50.0% of all), stall share 0.0%\n"
        "all states at this call path: 100 samples (100.0% of all), stall share 30.0%",
        "MPI_Recv \xe2\x80\x94 30 samples (30.0% of all), stall share 100.0%\n"
        "all states at this call path: 50 samples (50.0% of all), stall share 60.0%",
        "MPI_Recv \xe2\x80\x94 20 samples (20.0% of all), stall share 0.0%\n"
        "all states at this call path: 50 samples (50.0% of all), stall share 60.0%",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char key[400];
        snprintf(key, sizeof key, "<title>%s</title>", want[i]);
        ck_assert_msg(count_of(svg, key) == 1, "tooltip missing: %s", want[i]);
    }
    free(svg);
    wp_folded_free(&f);
}
END_TEST

START_TEST(test_svg_small_frames_omitted)
{
    static const struct in_line in[] = {
        {"Not-in-MPI;main;big", 1997},
        {"Not-in-MPI;main;at_threshold", 2},
        {"MPI-Work;main;tiny", 1},
    };
    struct wp_folded f = build(in, 3);
    char *svg = render_svg(&f, "s");
    struct frame fr;
    ck_assert(find_frame(svg, "big", &fr));
    ck_assert(find_frame(svg, "at_threshold", &fr)); /* exactly 0.1% */
    ck_assert(!find_frame(svg, "tiny", &fr));        /* 0.05% */
    ck_assert(!find_frame(svg, "MPI-Work", &fr));    /* and its whole tower */
    ck_assert_ptr_null(xml_problem(svg));
    free(svg);
    wp_folded_free(&f);
}
END_TEST

START_TEST(test_svg_labels_elided)
{
    static const struct in_line in[] = {
        {"Not-in-MPI;main;a_function_with_a_rather_long_name_that_cannot_fit", 100},
        {"Not-in-MPI;main;zz_short", 1900},
    };
    struct wp_folded f = build(in, 2);
    char *svg = render_svg(&f, "l");
    struct frame lng = get_frame(svg, "a_function_with_a_rather_long_name_that_cannot_fit");
    size_t l = strlen(lng.label);
    ck_assert_uint_gt(l, 2);
    ck_assert_str_eq(lng.label + l - 2, "..");
    ck_assert(strncmp(lng.label, "a_function", l - 2 < 10 ? l - 2 : 10) == 0);
    ck_assert_double_le((double)l * 6.7, lng.w); /* fits at the monospace width used */
    ck_assert_str_eq(get_frame(svg, "zz_short").label, "zz_short");
    free(svg);
    wp_folded_free(&f);
}
END_TEST

START_TEST(test_svg_empty)
{
    struct wp_folded f = {0};
    char *svg = render_svg(&f, NULL);
    ck_assert_ptr_null(xml_problem(svg));
    ck_assert_ptr_nonnull(strstr(svg, ">0 samples in all;"));
    free(svg);
}
END_TEST

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

START_TEST(test_svg_large)
{
    /* 100k distinct stacks of depth up to 12 over a vocabulary of names, like
     * a big many-rank profile. */
    static const char *const states[3] = {"Not-in-MPI", "MPI-Work", "MPI-Stall"};
    struct wp_folded f = {0};
    char line[1024];
    uint32_t r = 12345;
    for (int i = 0; i < 100000; i++) {
        int len = snprintf(line, sizeof line, "%s;main", states[i % 3]);
        int depth = 3 + (int)((r >> 8) % 10);
        for (int d = 0; d < depth; d++) {
            r = r * 1103515245u + 12345u;
            len += snprintf(line + len, sizeof line - (size_t)len, ";namespace::function_%u", (r >> 16) % 50);
        }
        len += snprintf(line + len, sizeof line - (size_t)len, ";leaf_%d", i);
        ck_assert_int_eq(wp_folded_add(&f, line, (size_t)len, 1 + (uint64_t)(r % 97)), 0);
    }
    wp_folded_finish(&f);
    FILE *fp = fopen("/dev/null", "w");
    ck_assert_ptr_nonnull(fp);
    double t0 = seconds();
    ck_assert_int_eq(wp_svg_write(fp, &f, "large", NULL), 0);
    double t = seconds() - t0;
    fclose(fp);
    /* Reported, not asserted: speed belongs to bench/, not to a test on a
     * noisy machine.  The test asserts the output stays well-formed. */
    printf("test_svg_large: 100000 lines in %.3f s\n", t);
    char *svg = render_svg(&f, "large");
    ck_assert_ptr_null(xml_problem(svg));
    free(svg);
    wp_folded_free(&f);
}
END_TEST

/* --- summary ----------------------------------------------------------------------- */

static const struct in_line app[] = {
    {"Not-in-MPI;main;compute", 40},
    {"Not-in-MPI;main;io", 10},
    {"MPI-Work;main;solve;MPI_Allreduce", 10},
    {"MPI-Stall;main;solve;MPI_Allreduce", 20},
    {"MPI-Stall;main;MPI_Recv", 15},
    {"MPI-Work;main;MPI_Recv", 5},
};

START_TEST(test_summary_exact)
{
    struct wp_folded f = build(app, 6);
    char *s = render_summary(&f, 4, 8);
    ck_assert_str_eq(s, "waitprof summary: 4 ranks, 100 samples\n"
                        "  Not-in-MPI   50.0%       50 samples\n"
                        "  MPI-Work     15.0%       15 samples\n"
                        "  MPI-Stall    35.0%       35 samples\n"
                        "\n"
                        "Top call paths in MPI (MPI-Work + MPI-Stall)\n"
                        "   share  samples  stalled  MPI function   call path (root first)\n"
                        "   30.0%       30    66.7%  MPI_Allreduce  main;solve;MPI_Allreduce\n"
                        "   20.0%       20    75.0%  MPI_Recv       main;MPI_Recv\n"
                        "\n"
                        "Top compute paths (Not-in-MPI)\n"
                        "   share  samples  call path (root first)\n"
                        "   40.0%       40  main;compute\n"
                        "   10.0%       10  main;io\n");
    free(s);
    wp_folded_free(&f);
}
END_TEST

START_TEST(test_summary_order_and_top)
{
    static const struct in_line in[] = {
        {"Not-in-MPI;main;c", 1},  {"Not-in-MPI;main;b", 2}, {"Not-in-MPI;main;a", 2},
        {"Not-in-MPI;main;d", 3},  {"MPI-Stall;main;MPI_Wait;ompi_request_wait;opal_progress", 7},
        {"MPI-Work;main;f;MPI_Bcast", 7}, {"MPI-Work;main;x", 1}, {"MPI-Work", 2},
    };
    struct wp_folded f = build(in, 8);
    char *s = render_summary(&f, 1, 3);
    /* 25 samples. */
    ck_assert_ptr_nonnull(strstr(s, "waitprof summary: 1 rank, 25 samples\n"));
    ck_assert_ptr_nonnull(strstr(s, "  Not-in-MPI   32.0%        8 samples\n"));
    ck_assert_ptr_nonnull(strstr(s, "  MPI-Work     40.0%       10 samples\n"));
    ck_assert_ptr_nonnull(strstr(s, "  MPI-Stall    28.0%        7 samples\n"));
    /* Equal counts are ordered by path; the MPI function is found below
     * the library's own frames; a stack with only its state has no frames. */
    const char *m1 = strstr(s, "   28.0%        7   100.0%  MPI_Wait      main;MPI_Wait;ompi_request_wait;opal_progress\n");
    const char *m2 = strstr(s, "   28.0%        7     0.0%  MPI_Bcast     main;f;MPI_Bcast\n");
    const char *m3 = strstr(s, "    8.0%        2     0.0%  (no frames)\n");
    ck_assert_ptr_null(m3); /* "(no frames)" is the path column, not the function */
    m3 = strstr(s, "    8.0%        2     0.0%                (no frames)\n");
    ck_assert_ptr_nonnull(m1);
    ck_assert_ptr_nonnull(m2);
    ck_assert_ptr_nonnull(m3);
    ck_assert(m1 < m2);
    ck_assert(m2 < m3);
    ck_assert_ptr_nonnull(strstr(m3, "\n  (1 more)\n"));
    const char *c1 = strstr(s, "   12.0%        3  main;d\n");
    const char *c2 = strstr(s, "    8.0%        2  main;a\n");
    const char *c3 = strstr(s, "    8.0%        2  main;b\n");
    ck_assert_ptr_nonnull(c1);
    ck_assert(c1 < c2);
    ck_assert(c2 < c3);
    ck_assert_ptr_null(strstr(s, "main;c\n"));
    ck_assert_ptr_nonnull(strstr(c3, "\n  (1 more)\n"));
    free(s);
    wp_folded_free(&f);
}
END_TEST

static size_t utf8_chars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xc0) != 0x80;
    return n;
}

START_TEST(test_summary_long_paths)
{
    char deep[2048], huge[400], lines[3][2600];
    int n = snprintf(deep, sizeof deep, "main");
    for (int i = 0; i < 40; i++)
        n += snprintf(deep + n, sizeof deep - (size_t)n, ";level_%02d_function", i);
    memset(huge, 'h', 300);
    huge[300] = '\0';
    snprintf(lines[0], sizeof lines[0], "Not-in-MPI;%s;the_leaf", deep);
    snprintf(lines[1], sizeof lines[1], "MPI-Stall;%s;MPI_Recv", deep);
    snprintf(lines[2], sizeof lines[2], "Not-in-MPI;main;%s", huge);
    const struct in_line in[] = {{lines[0], 5}, {lines[1], 4}, {lines[2], 3}};
    struct wp_folded f = build(in, 3);
    char *s = render_summary(&f, 2, 8);
    int seen = 0;
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
        char *path = strstr(line, "main;");
        if (path == NULL)
            continue;
        seen++;
        size_t chars = utf8_chars(path, strlen(path));
        ck_assert_msg(chars <= 100, "path of %zu characters: %s", chars, path);
        ck_assert_ptr_nonnull(strstr(path, "\xe2\x80\xa6"));
        ck_assert(strncmp(path, "main;", 5) == 0);
        if (strstr(line, "MPI_Recv  ")) {
            ck_assert(strlen(path) > 9 && strcmp(path + strlen(path) - 9, ";MPI_Recv") == 0);
            ck_assert_ptr_nonnull(strstr(path, "main;level_00_function;"));
        } else if (strstr(path, "the_leaf")) {
            ck_assert_str_eq(path + strlen(path) - 9, ";the_leaf");
            ck_assert_ptr_nonnull(strstr(path, ";level_39_function;the_leaf"));
        } else {
            ck_assert_str_eq(path + strlen(path) - 5, "hhhhh");
        }
    }
    ck_assert_int_eq(seen, 3);
    free(s);
    wp_folded_free(&f);
}
END_TEST

START_TEST(test_summary_line_budget)
{
    struct wp_folded f = {0};
    char line[128];
    for (int i = 0; i < 40; i++) {
        int l = snprintf(line, sizeof line, "%s;main;f%02d;MPI_Send", i % 2 ? "MPI-Work" : "MPI-Stall", i);
        wp_folded_add(&f, line, (size_t)l, 1 + (uint64_t)i);
        l = snprintf(line, sizeof line, "Not-in-MPI;main;g%02d", i);
        wp_folded_add(&f, line, (size_t)l, 1 + (uint64_t)i);
    }
    wp_folded_finish(&f);
    char *s = render_summary(&f, 64, 8);
    ck_assert_uint_le(count_of(s, "\n"), 30);
    /* Columns line up: in both sections every row has its path where the
     * header says "call path". */
    int sections = 0;
    for (const char *h = strstr(s, "call path (root first)"); h; h = strstr(h + 1, "call path (root first)")) {
        const char *bol = h;
        while (bol > s && bol[-1] != '\n')
            bol--;
        size_t col = (size_t)(h - bol);
        int rows = 0;
        for (const char *row = strchr(h, '\n') + 1; *row && strncmp(row, "  (", 3) != 0;
             row = strchr(row, '\n') + 1, rows++)
            ck_assert_msg(strncmp(row + col, "main;", 5) == 0, "misaligned row: %.80s", row);
        ck_assert_int_eq(rows, 8);
        sections++;
    }
    ck_assert_int_eq(sections, 2);
    free(s);
    wp_folded_free(&f);
}
END_TEST

START_TEST(test_summary_empty)
{
    struct wp_folded f = {0};
    char *s = render_summary(&f, 2, 8);
    ck_assert_str_eq(s, "waitprof summary: 2 ranks, 0 samples\n"
                        "  Not-in-MPI    0.0%        0 samples\n"
                        "  MPI-Work      0.0%        0 samples\n"
                        "  MPI-Stall     0.0%        0 samples\n"
                        "\n"
                        "No samples were taken.\n");
    free(s);
}
END_TEST

static Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("svg");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_svg_well_formed);
    tcase_add_test(tc, test_svg_widths_and_layout);
    tcase_add_test(tc, test_svg_colours);
    tcase_add_test(tc, test_svg_tooltips);
    tcase_add_test(tc, test_svg_small_frames_omitted);
    tcase_add_test(tc, test_svg_labels_elided);
    tcase_add_test(tc, test_svg_empty);
    tcase_add_test(tc, test_svg_large);
    suite_add_tcase(s, tc);
    tc = tcase_create("summary");
    tcase_add_test(tc, test_summary_exact);
    tcase_add_test(tc, test_summary_order_and_top);
    tcase_add_test(tc, test_summary_long_paths);
    tcase_add_test(tc, test_summary_line_budget);
    tcase_add_test(tc, test_summary_empty);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return wp_unit_run(report_suite(), 1);
}
