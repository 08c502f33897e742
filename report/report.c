/* report/report.c — see report/report.h.
 *
 * One pass over the ranks' files builds every reduction that fits in
 * O(ranks x functions + call paths): the merged call paths (one hash table
 * keyed by the path without its state frame, with a count per state), the
 * per-rank state counts, the seed-003 statistics per MPI function with the
 * histograms grouped by their max bin, and the wait-state sums per call
 * site.  A second pass over the folded files finds, per rank, the samples at
 * the main waiting call path (known only after the first pass).  Matrix rows
 * are copied from the ranks' files while the CSVs are written.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/folded.h"
#include "report/report.h"
#include "report/summary.h"
#include "report/svg.h"

#define REPORT_FORMAT "waitprof-report 1"
#define JSON_SCHEMA_VERSION 1
#define NBINS 101 /* fallback/stats.h WP_HIST_BINS */

enum { S_NIM, S_WORK, S_STALL, S_N };
static const char *const state_names[S_N] = {"Not-in-MPI", "MPI-Work", "MPI-Stall"};

/* --- small helpers ------------------------------------------------------------ */

struct ctx {
    const char *dir;
    FILE *errs;
    int bad;            /* some input was bad */
    char **problems;    /* the same lines, for the report */
    size_t nproblems;
};

static void problem(struct ctx *c, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    c->bad = 1;
    if (c->errs)
        fprintf(c->errs, "waitprof report: %s\n", line);
    char **p = realloc(c->problems, (c->nproblems + 1) * sizeof *p);
    if (p) {
        c->problems = p;
        c->problems[c->nproblems++] = strdup(line);
    }
}

/* Out of memory: back to wp_report_dir()/wp_report_diff(), which return -1
 * (what was allocated so far is lost; inside a profiled program that is
 * better than ending it). */
static jmp_buf *oom_jmp;

static void oom(size_t n)
{
    fprintf(stderr, "waitprof report: out of memory (%zu bytes); the report is not written\n", n);
    if (oom_jmp)
        longjmp(*oom_jmp, 1);
    abort();
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL) {
        fprintf(stderr, "waitprof report: out of memory (%zu bytes); the report is not written\n", n);
        if (oom_jmp)
            longjmp(*oom_jmp, 1);
        abort();
    }
    return q;
}

/* The whole file, NUL-terminated; NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = xrealloc(NULL, cap);
    for (;;) {
        if (n + 1 >= cap)
            buf = xrealloc(buf, cap *= 2);
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Ranks as ranges, appended in increasing order. */
struct ranges {
    int *lo, *hi;
    size_t n, cap;
};

static void ranges_add(struct ranges *r, int rank)
{
    if (r->n && r->hi[r->n - 1] + 1 == rank) {
        r->hi[r->n - 1] = rank;
        return;
    }
    if (r->n && r->hi[r->n - 1] >= rank)
        return;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 4;
        r->lo = xrealloc(r->lo, r->cap * sizeof *r->lo);
        r->hi = xrealloc(r->hi, r->cap * sizeof *r->hi);
    }
    r->lo[r->n] = r->hi[r->n] = rank;
    r->n++;
}

static void ranges_print(FILE *f, const struct ranges *r)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->lo[i] == r->hi[i])
            fprintf(f, "%s%d", i ? "," : "", r->lo[i]);
        else
            fprintf(f, "%s%d-%d", i ? "," : "", r->lo[i], r->hi[i]);
    }
    if (r->n == 0)
        fputs("none", f);
}

void wp_rank_ranges(const int *ranks, size_t n, char *buf, size_t cap)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && k < cap;) {
        size_t j = i;
        while (j + 1 < n && ranks[j + 1] == ranks[j] + 1)
            j++;
        int w = ranks[i] == ranks[j] ? snprintf(buf + k, cap - k, "%s%d", i ? "," : "", ranks[i])
                                     : snprintf(buf + k, cap - k, "%s%d-%d", i ? "," : "", ranks[i], ranks[j]);
        k += (size_t)w;
        i = j + 1;
    }
    if (k >= cap && cap > 4)
        memcpy(buf + cap - 4, "...", 4);
}

/* Parse "0-3,7,9-12" into a sorted list of ranges; -1 on a syntax error. */
static int ranks_parse(const char *s, struct ranges *r)
{
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b;
        if (end == s || a < 0)
            return -1;
        b = a;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            if (end == s + 1 || b < a)
                return -1;
            s = end;
        }
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
        for (long k = a; k <= b && k < (1L << 30); k++)
            ranges_add(r, (int)k);
    }
    return 0;
}

static int ranges_has(const struct ranges *r, int rank)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (rank < r->lo[m])
            hi = m;
        else if (rank > r->hi[m])
            lo = m + 1;
        else
            return 1;
    }
    return 0;
}

/* JSON string. */
static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* CSV field: quoted when it holds a comma, quote or newline. */
static void cstr(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* Lower bound in microseconds of a histogram bin (fallback/stats.c). */
static uint64_t bin_low(int bin)
{
    uint64_t width = 1;
    for (int d = 0; d < bin / 10 && d < 10; d++)
        width *= 10;
    return bin >= NBINS - 1 ? width : (uint64_t)(bin % 10) * width;
}

static uint64_t bin_high(int bin)
{
    if (bin >= NBINS - 1)
        return UINT64_MAX;
    uint64_t width = 1;
    for (int d = 0; d < bin / 10; d++)
        width *= 10;
    return bin_low(bin) + width;
}

/* --- call paths ------------------------------------------------------------------ */

struct path {
    char *path; /* without the state frame */
    uint64_t c[S_N];
};

struct pmap {
    struct path *v;
    size_t n, cap;
    uint32_t *slot;
    size_t nslots; /* power of two */
};

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static struct path *pmap_get(struct pmap *m, const char *s, size_t n)
{
    if (m->n * 2 >= m->nslots) {
        size_t ns = m->nslots ? m->nslots * 2 : 1024;
        uint32_t *sl = xrealloc(NULL, ns * sizeof *sl);
        memset(sl, 0xff, ns * sizeof *sl);
        for (size_t i = 0; i < m->n; i++) {
            size_t k = hash(m->v[i].path, strlen(m->v[i].path)) & (ns - 1);
            while (sl[k] != UINT32_MAX)
                k = (k + 1) & (ns - 1);
            sl[k] = (uint32_t)i;
        }
        free(m->slot);
        m->slot = sl;
        m->nslots = ns;
    }
    size_t k = hash(s, n) & (m->nslots - 1);
    while (m->slot[k] != UINT32_MAX) {
        struct path *p = &m->v[m->slot[k]];
        if (strncmp(p->path, s, n) == 0 && p->path[n] == '\0')
            return p;
        k = (k + 1) & (m->nslots - 1);
    }
    if (m->n == m->cap)
        m->v = xrealloc(m->v, (m->cap = m->cap ? 2 * m->cap : 1024) * sizeof *m->v);
    struct path *p = &m->v[m->n];
    memset(p, 0, sizeof *p);
    p->path = xrealloc(NULL, n + 1);
    memcpy(p->path, s, n);
    p->path[n] = '\0';
    m->slot[k] = (uint32_t)m->n++;
    return p;
}

static void pmap_free(struct pmap *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].path);
    free(m->v);
    free(m->slot);
}

static int state_of(const char *s, size_t n)
{
    for (int i = 0; i < S_N; i++)
        if (strlen(state_names[i]) == n && memcmp(state_names[i], s, n) == 0)
            return i;
    return -1;
}

/* --- per rank ---------------------------------------------------------------------- */

struct rinfo {
    int rank;
    unsigned has_meta : 1, has_folded : 1, partial : 1;
    unsigned files; /* which rank.R.* files the directory lists (F_* bits) */
    uint64_t st[S_N];
    uint64_t samples, dropped, duration_ns, hz;
    uint64_t main_stall, main_all; /* at the main waiting call path */
};

/* Per MPI function, the seed-003 statistics over ranks. */
struct hgroup {
    struct ranges ranks;
    uint64_t nranks;
    uint32_t max[NBINS], min[NBINS];
    int maxr[NBINS], minr[NBINS];
    uint64_t sum[NBINS];
};

struct fnagg {
    char name[64];
    struct ranges ranks;
    uint64_t nranks, events;
    uint64_t ev_max, ev_min;
    int ev_max_r, ev_min_r;
    uint64_t longest, longest_ev, second, second_ev, shortest, shortest_ev;
    int longest_r, second_r, shortest_r;
    double avg_max, avg_min;
    int avg_max_r, avg_min_r;
    uint64_t avg_max_n, avg_min_n;
    uint64_t tot_max, tot_min, tot_max_n, tot_min_n, total;
    int tot_max_r, tot_min_r;
    uint64_t bytes_sent, bytes_recv, req_sent, req_recv;
    struct hgroup *groups[NBINS];
};

struct rfn { /* one rank's figures for one function, for the CSVs and JSON */
    int rank, fn;
    uint64_t calls, time_ns, bytes_sent, bytes_recv, req_sent, req_recv;
};

struct site {
    char *site;
    char fn[64], pattern[24];
    uint64_t calls, time_ns, wait_ns, nranks;
    uint64_t cur_wait, cur_time;
    int last_rank;
    uint64_t wmax, wmin, tmax;
    int wmax_r, wmin_r, tmax_r;
};

struct run {
    struct ctx c;
    struct ranges want;
    int have_want;
    struct rinfo *r;
    size_t nr, rcap;
    struct pmap paths;
    struct fnagg *fns;
    size_t nfns;
    struct rfn *rf;
    size_t nrf, rfcap;
    struct site *sites, *isites; /* per (site, function, pattern); per (site, function) */
    size_t nsites, nisites;
    int size;              /* from meta */
    char source[64], mpi[256], clock[16];
    uint64_t hz;
    int mixed_source, have_matrix, nmeta_partial;
    int lean; /* a rank's meta says wrappers=lean: no call was timed */
    char **extra;          /* meta keys not known here, "key=value" from the first meta */
    size_t nextra;
    uint64_t duration_max, samples, dropped;
    const struct path *main; /* the main waiting call path */
    int cause_rank;
};

enum { F_META = 1, F_FOLDED = 2, F_CALLS = 4, F_WAITS = 8, F_MATRIX = 16 };
static const char *const file_suffix[5] = {"meta", "folded", "calls", "waits", "matrix"};

static int rank_cmp(const void *a, const void *b)
{
    const struct rinfo *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The ranks that have a meta or folded file, sorted. */
static int list_ranks(struct run *R, const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int rank, n = 0;
        if (sscanf(e->d_name, "rank.%d.%n", &rank, &n) != 1 || n == 0 || rank < 0)
            continue;
        const char *suf = e->d_name + n;
        unsigned bit = 0;
        for (int b = 0; b < 5; b++)
            if (strcmp(suf, file_suffix[b]) == 0)
                bit = 1u << b;
        if (bit == 0)
            continue;
        if (R->have_want && !ranges_has(&R->want, rank))
            continue;
        if (R->nr == R->rcap)
            R->r = xrealloc(R->r, (R->rcap = R->rcap ? 2 * R->rcap : 64) * sizeof *R->r);
        memset(&R->r[R->nr], 0, sizeof *R->r);
        R->r[R->nr].rank = rank;
        R->r[R->nr++].files = bit;
    }
    closedir(d);
    /* One entry per rank with the union of its files.  A rank with only a
     * calls, waits or matrix file is listed too: its missing meta and
     * folded files are then named. */
    qsort(R->r, R->nr, sizeof *R->r, rank_cmp);
    size_t k = 0;
    for (size_t i = 0; i < R->nr; i++) {
        if (k && R->r[k - 1].rank == R->r[i].rank)
            R->r[k - 1].files |= R->r[i].files;
        else
            R->r[k++] = R->r[i];
    }
    R->nr = k;
    return 0;
}

/* A text file: no NUL byte.  A binary file is foreign. */
static int is_text(const char *buf, size_t len)
{
    return memchr(buf, '\0', len) == NULL;
}

/* The first line "# NAME V" (or "format=NAME V" for meta); the version or
 * -1 when the file is not of that format. */
static long format_version(const char *buf, const char *prefix, const char *name)
{
    size_t pl = strlen(prefix), nl = strlen(name);
    if (strncmp(buf, prefix, pl) != 0 || strncmp(buf + pl, name, nl) != 0 || buf[pl + nl] != ' ')
        return -1;
    char *end;
    long v = strtol(buf + pl + nl + 1, &end, 10);
    return (end == buf + pl + nl + 1 || (*end != '\n' && *end != '\0')) ? -1 : v;
}

static const char *const meta_known[] = {"format", "status", "rank", "size", "host", "mpi", "source", "hz",
                                         "clock", "start_ns", "end_ns", "duration_ns", "threads", "samples",
                                         "dropped_full", "dropped_loader", "unwind_failures", "truncated",
                                         "libunwind_unwinds", "slow_unwinds", "handler_calls", "handler_ns_total",
                                         "handler_ns_median", NULL};

static void read_meta(struct run *R, struct rinfo *ri, const char *path, const char *name)
{
    size_t len;
    char *buf = slurp(path, &len);
    if (buf == NULL) {
        if (errno != ENOENT)
            problem(&R->c, "%s: cannot read (%s)", name, strerror(errno));
        else
            problem(&R->c, "%s: missing; the rank's run figures are unknown", name);
        return;
    }
    long v = is_text(buf, len) ? format_version(buf, "format=", "waitprof-meta") : -1;
    if (v < 0) {
        problem(&R->c, "%s: not a waitprof meta file (first line is not \"format=waitprof-meta N\"); skipped",
                name);
        free(buf);
        return;
    }
    if (v > 1) {
        problem(&R->c, "%s: format waitprof-meta %ld is newer than this report tool reads (1); skipped", name, v);
        free(buf);
        return;
    }
    if (len == 0 || buf[len - 1] != '\n')
        problem(&R->c, "%s: truncated (no newline at the end); the last line is ignored", name);
    ri->has_meta = 1;
    int first = R->nextra == 0 && ri == &R->r[0];
    for (char *line = buf, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (nl == NULL)
            break;
        *nl = '\0';
        char *eq = strchr(line, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        const char *k = line, *val = eq + 1;
        if (strcmp(k, "status") == 0)
            ri->partial = strncmp(val, "complete", 8) != 0;
        else if (strcmp(k, "size") == 0 && atoi(val) > R->size)
            R->size = atoi(val);
        else if (strcmp(k, "samples") == 0)
            ri->samples = strtoull(val, NULL, 10);
        else if (strcmp(k, "dropped_full") == 0 || strcmp(k, "dropped_loader") == 0)
            ri->dropped += strtoull(val, NULL, 10);
        else if (strcmp(k, "duration_ns") == 0)
            ri->duration_ns = strtoull(val, NULL, 10);
        else if (strcmp(k, "hz") == 0)
            ri->hz = strtoull(val, NULL, 10), R->hz = R->hz ? R->hz : ri->hz;
        else if (strcmp(k, "clock") == 0 && !R->clock[0])
            snprintf(R->clock, sizeof R->clock, "%s", val);
        else if (strcmp(k, "mpi") == 0 && !R->mpi[0])
            snprintf(R->mpi, sizeof R->mpi, "%s", val);
        else if (strcmp(k, "wrappers") == 0 && strcmp(val, "lean") == 0)
            R->lean = 1;
        else if (strcmp(k, "source") == 0) {
            if (!R->source[0])
                snprintf(R->source, sizeof R->source, "%s", val);
            else if (strcmp(R->source, val) != 0)
                R->mixed_source = 1;
        }
        int known = 0;
        for (int i = 0; meta_known[i]; i++)
            known |= strcmp(meta_known[i], k) == 0;
        /* Keys added by other parts of waitprof (or later versions) are
         * shown as they are, from the first rank's file. */
        if (!known && first && strncmp(k, "thread.", 7) != 0) {
            R->extra = xrealloc(R->extra, (R->nextra + 1) * sizeof *R->extra);
            size_t n = strlen(k) + strlen(val) + 2;
            R->extra[R->nextra] = xrealloc(NULL, n);
            snprintf(R->extra[R->nextra++], n, "%s=%s", k, val);
        }
    }
    if (ri->partial)
        R->nmeta_partial++;
    free(buf);
}

/* Read a folded file: each line into the path table (pass 1), or only the
 * samples at the main path (pass 2, main != NULL). */
static void read_folded(struct run *R, struct rinfo *ri, const char *path, const char *name, int stall_only,
                        const struct path *main)
{
    size_t len;
    char *buf = slurp(path, &len);
    if (buf == NULL) {
        if (main == NULL)
            problem(&R->c, "%s: %s; the rank's samples are left out", name,
                    errno == ENOENT ? "missing" : strerror(errno));
        return;
    }
    if (!is_text(buf, len)) {
        if (main == NULL)
            problem(&R->c, "%s: not a folded-stack file (binary data); skipped", name);
        free(buf);
        return;
    }
    size_t bad = 0, first_bad = 0, lineno = 0, good = 0;
    int truncated = len > 0 && buf[len - 1] != '\n';
    size_t mainlen = main ? strlen(main->path) : 0;
    for (char *p = buf, *end = buf + len; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            break; /* the truncated last line */
        size_t l = (size_t)(nl - p), sl;
        uint64_t count;
        lineno++;
        if (l == 0) {
            p = nl + 1;
            continue;
        }
        const char *semi = memchr(p, ';', l);
        int st = -1;
        if (wp_folded_parse(p, l, &sl, &count) == 0)
            st = state_of(p, semi && (size_t)(semi - p) < sl ? (size_t)(semi - p) : sl);
        if (st < 0) {
            if (bad++ == 0)
                first_bad = lineno;
            p = nl + 1;
            continue;
        }
        good++;
        const char *ps = semi && (size_t)(semi - p) < sl ? semi + 1 : p + sl;
        size_t pl = (size_t)(p + sl - ps);
        if (main) {
            if (pl == mainlen && memcmp(ps, main->path, pl) == 0) {
                ri->main_all += count;
                if (st == S_STALL)
                    ri->main_stall += count;
            }
        } else {
            ri->st[st] += count;
            if (!stall_only || st == S_STALL)
                pmap_get(&R->paths, ps, pl)->c[st] += count;
        }
        p = nl + 1;
    }
    if (main == NULL) {
        ri->has_folded = good > 0 || len == 0;
        if (bad && good == 0)
            problem(&R->c, "%s: not a folded-stack file (no line is \"state;frames count\"); skipped", name);
        else if (bad)
            problem(&R->c, "%s: %zu line(s) are not \"state;frames count\" (corrupted), the first is line %zu; "
                           "they are left out", name, bad, first_bad);
        if (truncated)
            problem(&R->c, "%s: truncated (the last line has no newline); that line is left out", name);
    }
    free(buf);
}

static struct fnagg *fn_get(struct run *R, const char *name)
{
    for (size_t i = 0; i < R->nfns; i++)
        if (strcmp(R->fns[i].name, name) == 0)
            return &R->fns[i];
    R->fns = xrealloc(R->fns, (R->nfns + 1) * sizeof *R->fns);
    struct fnagg *f = &R->fns[R->nfns++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->ev_min = f->shortest = f->tot_min = UINT64_MAX;
    f->avg_min = 1e300;
    return f;
}

/* Split a TSV line in place into at most n fields; the number found. */
static int split_tab(char *line, char **f, int n)
{
    int k = 0;
    f[k++] = line;
    for (char *p = line; *p && k < n; p++)
        if (*p == '\t') {
            *p = '\0';
            f[k++] = p + 1;
        }
    return k;
}

static int all_digits(const char *s)
{
    return *s && strspn(s, "0123456789") == strlen(s);
}

/* One data line of a rank.R.calls file into the per-function aggregates;
 * 0 when it is malformed. */
static int calls_row(struct run *R, struct rinfo *ri, char *line)
{
    char *f[15];
    int n = split_tab(line, f, 15);
    int ok = n == 14 && f[0][0] == 'M';
    for (int i = 1; ok && i < 13; i++)
        ok = all_digits(f[i]);
    if (!ok)
        return 0;
    uint64_t x[13];
    for (int i = 1; i < 13; i++)
        x[i] = strtoull(f[i], NULL, 10);
    uint64_t calls = x[1], time = x[2], mn = x[3], mn_ev = x[4], mx = x[5], mx_ev = x[6], mx2 = x[7],
             mx2_ev = x[8];
    struct fnagg *a = fn_get(R, f[0]);
    a->bytes_sent += x[9], a->bytes_recv += x[10], a->req_sent += x[11], a->req_recv += x[12];
    if (R->nrf == R->rfcap)
        R->rf = xrealloc(R->rf, (R->rfcap = R->rfcap ? 2 * R->rfcap : 256) * sizeof *R->rf);
    R->rf[R->nrf++] = (struct rfn){ri->rank, (int)(a - R->fns), calls, time, x[9], x[10], x[11], x[12]};
    if (calls == 0)
        return 1;
    ranges_add(&a->ranks, ri->rank);
    a->nranks++;
    a->events += calls;
    a->total += time;
    if (calls > a->ev_max || a->nranks == 1)
        a->ev_max = calls, a->ev_max_r = ri->rank;
    if (calls < a->ev_min)
        a->ev_min = calls, a->ev_min_r = ri->rank;
    if (mx > a->longest || a->nranks == 1) {
        a->longest = mx, a->longest_r = ri->rank, a->longest_ev = mx_ev;
    }
    if (mx2_ev && (mx2 > a->second || a->second_ev == 0))
        a->second = mx2, a->second_r = ri->rank, a->second_ev = mx2_ev;
    if (mn < a->shortest)
        a->shortest = mn, a->shortest_r = ri->rank, a->shortest_ev = mn_ev;
    double avg = (double)time / (double)calls;
    if (avg > a->avg_max || a->nranks == 1)
        a->avg_max = avg, a->avg_max_r = ri->rank, a->avg_max_n = calls;
    if (avg < a->avg_min)
        a->avg_min = avg, a->avg_min_r = ri->rank, a->avg_min_n = calls;
    if (time > a->tot_max || a->nranks == 1)
        a->tot_max = time, a->tot_max_r = ri->rank, a->tot_max_n = calls;
    if (time < a->tot_min)
        a->tot_min = time, a->tot_min_r = ri->rank, a->tot_min_n = calls;
    /* The histogram: grouped with the ranks whose fullest bin is the same. */
    uint32_t h[NBINS];
    memset(h, 0, sizeof h);
    int hb = 1;
    if (strcmp(f[13], "-") != 0)
        for (char *p = f[13]; *p;) {
            char *e1, *e2;
            long b = strtol(p, &e1, 10);
            if (*e1 != ':' || b < 0 || b >= NBINS) {
                hb = 0;
                break;
            }
            unsigned long cnt = strtoul(e1 + 1, &e2, 10);
            h[b] += (uint32_t)cnt;
            p = *e2 == ',' ? e2 + 1 : e2;
            if (*e2 != ',' && *e2 != '\0') {
                hb = 0;
                break;
            }
        }
    if (!hb)
        return 0;
    int mb = 0;
    for (int b = 1; b < NBINS; b++)
        if (h[b] > h[mb])
            mb = b;
    struct hgroup *g = a->groups[mb];
    if (g == NULL) {
        g = a->groups[mb] = xrealloc(NULL, sizeof *g);
        memset(g, 0, sizeof *g);
        for (int b = 0; b < NBINS; b++)
            g->min[b] = UINT32_MAX;
    }
    ranges_add(&g->ranks, ri->rank);
    g->nranks++;
    for (int b = 0; b < NBINS; b++) {
        if (h[b] > g->max[b] || g->nranks == 1)
            g->max[b] = h[b], g->maxr[b] = ri->rank;
        if (h[b] < g->min[b])
            g->min[b] = h[b], g->minr[b] = ri->rank;
        g->sum[b] += h[b];
    }
    return 1;
}

static struct site *site_get(struct site **v, size_t *n, const char *site, const char *fn, const char *pat)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i].site, site) == 0 && strcmp((*v)[i].fn, fn) == 0 && strcmp((*v)[i].pattern, pat) == 0)
            return &(*v)[i];
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    struct site *s = &(*v)[(*n)++];
    memset(s, 0, sizeof *s);
    s->site = strdup(site);
    snprintf(s->fn, sizeof s->fn, "%s", fn);
    snprintf(s->pattern, sizeof s->pattern, "%s", pat);
    s->last_rank = -1;
    s->wmin = UINT64_MAX;
    return s;
}

/* One data line of a rank.R.waits file into the site aggregates; 0 when it
 * is malformed. */
static int waits_row(struct run *R, struct rinfo *ri, char *line)
{
    char *f[32];
    int n = split_tab(line, f, 32);
    /* site function pattern size_class role calls time_ns min max max2 wait early plain, then
     * any columns a later writer of version 1 added at the end (completes, ...): the format
     * grows only there, so the first 13 keep their meaning. */
    if (n < 13 || !all_digits(f[5]) || !all_digits(f[6]) || !all_digits(f[10]))
        return 0;
    uint64_t calls = strtoull(f[5], NULL, 10), t = strtoull(f[6], NULL, 10), w = strtoull(f[10], NULL, 10);
    /* Per (site, function, pattern) for the wait states, and per (site,
     * function) for the imbalance of the time in the call. */
    for (int k = 0; k < 2; k++) {
        struct site *s = k ? site_get(&R->isites, &R->nisites, f[0], f[1], "")
                           : site_get(&R->sites, &R->nsites, f[0], f[1], f[2]);
        if (s->last_rank != ri->rank) {
            s->last_rank = ri->rank;
            s->cur_wait = s->cur_time = 0;
            s->nranks++;
        }
        s->calls += calls, s->time_ns += t, s->wait_ns += w;
        s->cur_wait += w, s->cur_time += t;
    }
    return 1;
}

/* This rank's figure per site, once all its rows are in (a site may have
 * rows per size class). */
static void waits_rank_done(struct run *R, struct rinfo *ri)
{
    for (size_t i = 0; i < R->nsites + R->nisites; i++) {
        struct site *s = i < R->nsites ? &R->sites[i] : &R->isites[i - R->nsites];
        if (s->last_rank != ri->rank)
            continue;
        if (s->cur_wait > s->wmax || s->nranks == 1)
            s->wmax = s->cur_wait, s->wmax_r = ri->rank;
        if (s->cur_wait < s->wmin)
            s->wmin = s->cur_wait, s->wmin_r = ri->rank;
        if (s->cur_time > s->tmax || s->nranks == 1)
            s->tmax = s->cur_time, s->tmax_r = ri->rank;
    }
}

/* A TSV file of one rank (rank.R.calls, rank.R.waits): its first line must be
 * "# <format> 1"; from the third line on (after the header), each line is
 * handed to row(), which returns 0 for a malformed one; lines starting with
 * '#' are skipped when comments is set.  A missing file is not a problem
 * (older runs, ranks that ended early); a foreign, newer, truncated or partly
 * malformed one is reported once.  Returns 1 when the file was read. */
static int read_rank_tsv(struct run *R, struct rinfo *ri, const char *path, const char *name, const char *format,
                         const char *what, int comments, int (*row)(struct run *, struct rinfo *, char *))
{
    size_t len;
    char *buf = slurp(path, &len);
    if (buf == NULL)
        return 0;
    long v = is_text(buf, len) ? format_version(buf, "# ", format) : -1;
    if (v != 1) {
        if (v > 1)
            problem(&R->c, "%s: format %s %ld is newer than this report tool reads (1); skipped", name, format, v);
        else
            problem(&R->c, "%s: not a waitprof %s file (first line is not \"# %s 1\"); skipped", name, what, format);
        free(buf);
        return 0;
    }
    size_t lineno = 0, bad = 0, first_bad = 0;
    for (char *line = buf, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (nl == NULL) {
            problem(&R->c, "%s: truncated (the last line has no newline); that line is left out", name);
            break;
        }
        *nl = '\0';
        lineno++;
        if (lineno <= 2 || (comments && line[0] == '#'))
            continue; /* format line, header */
        if (!row(R, ri, line) && bad++ == 0)
            first_bad = lineno;
    }
    if (bad)
        problem(&R->c, "%s: %zu line(s) are malformed (corrupted), the first is line %zu; they are left out",
                name, bad, first_bad);
    free(buf);
    return 1;
}

static void read_calls(struct run *R, struct rinfo *ri, const char *path, const char *name)
{
    read_rank_tsv(R, ri, path, name, "waitprof-calls", "calls", 0, calls_row);
}

static void read_waits(struct run *R, struct rinfo *ri, const char *path, const char *name)
{
    if (read_rank_tsv(R, ri, path, name, "waitprof-waits", "waits", 1, waits_row))
        waits_rank_done(R, ri);
}

static int path_stall_cmp(const void *a, const void *b)
{
    const struct path *x = *(const struct path *const *)a, *y = *(const struct path *const *)b;
    if (x->c[S_STALL] != y->c[S_STALL])
        return x->c[S_STALL] < y->c[S_STALL] ? 1 : -1;
    return strcmp(x->path, y->path);
}

static void load(struct run *R, const char *dir, const struct wp_report_opts *o)
{
    char path[4400], name[4400];
    for (size_t i = 0; i < R->nr; i++) {
        struct rinfo *ri = &R->r[i];
        snprintf(path, sizeof path, "%s/rank.%d.meta", dir, ri->rank);
        snprintf(name, sizeof name, "%s", path);
        read_meta(R, ri, path, name);
        snprintf(path, sizeof path, "%s/rank.%d.folded", dir, ri->rank);
        snprintf(name, sizeof name, "%s", path);
        read_folded(R, ri, path, name, o->stall_only, NULL);
        /* Older runs and ranks that ended early have no calls or waits
         * file: only the files the directory lists are opened. */
        snprintf(path, sizeof path, "%s/rank.%d.calls", dir, ri->rank);
        snprintf(name, sizeof name, "%s", path);
        if (ri->files & F_CALLS)
            read_calls(R, ri, path, name);
        snprintf(path, sizeof path, "%s/rank.%d.waits", dir, ri->rank);
        snprintf(name, sizeof name, "%s", path);
        if (ri->files & F_WAITS)
            read_waits(R, ri, path, name);
        if (ri->files & F_MATRIX)
            R->have_matrix = 1;
        if (ri->duration_ns > R->duration_max)
            R->duration_max = ri->duration_ns;
        R->samples += ri->samples ? ri->samples : ri->st[0] + ri->st[1] + ri->st[2];
        R->dropped += ri->dropped;
    }
    /* The main waiting call path, then who causes it: the rank that stalls
     * least there and, among those, computes most. */
    R->main = NULL;
    R->cause_rank = -1;
    for (size_t i = 0; i < R->paths.n; i++) {
        const struct path *p = &R->paths.v[i];
        if (p->c[S_STALL] && (R->main == NULL || p->c[S_STALL] > R->main->c[S_STALL] ||
                              (p->c[S_STALL] == R->main->c[S_STALL] && strcmp(p->path, R->main->path) < 0)))
            R->main = p;
    }
    if (R->main) {
        double best_stall = 2, best_nim = -1;
        for (size_t i = 0; i < R->nr; i++) {
            struct rinfo *ri = &R->r[i];
            if (!ri->has_folded)
                continue;
            snprintf(path, sizeof path, "%s/rank.%d.folded", dir, ri->rank);
            read_folded(R, ri, path, path, 0, R->main);
            uint64_t all = ri->st[0] + ri->st[1] + ri->st[2];
            double s = all ? (double)ri->main_stall / (double)all : 1, nim = all ? (double)ri->st[0] / all : 0;
            if (s < best_stall - 1e-12 || (s < best_stall + 1e-12 && nim > best_nim))
                best_stall = s, best_nim = nim, R->cause_rank = ri->rank;
        }
    }
}

/* --- state shares per rank ------------------------------------------------------------ */

struct mm {
    double min, max, sum;
    int rmin, rmax;
    size_t n;
};

static void state_mm(const struct run *R, int st, struct mm *m)
{
    memset(m, 0, sizeof *m);
    m->min = 1e300;
    m->max = -1;
    for (size_t i = 0; i < R->nr; i++) {
        const struct rinfo *ri = &R->r[i];
        uint64_t all = ri->st[0] + ri->st[1] + ri->st[2];
        if (!ri->has_folded || all == 0)
            continue;
        double v = pct(ri->st[st], all);
        if (v < m->min)
            m->min = v, m->rmin = ri->rank;
        if (v > m->max)
            m->max = v, m->rmax = ri->rank;
        m->sum += v;
        m->n++;
    }
    if (m->n == 0)
        m->min = m->max = 0;
}

static uint64_t total_samples(const struct run *R, int st)
{
    uint64_t t = 0;
    for (size_t i = 0; i < R->nr; i++)
        t += R->r[i].st[st];
    return t;
}

static void put_path(FILE *f, const char *p, size_t max)
{
    size_t n = strlen(p);
    if (n <= max) {
        fputs(p, f);
        return;
    }
    /* Keep the root and the leaf end: the leaf is the MPI call. */
    fprintf(f, "%.*s...%s", (int)(max / 3), p, p + n - (max - max / 3 - 3));
}

static int site_cmp(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    if (x->wait_ns != y->wait_ns)
        return x->wait_ns < y->wait_ns ? 1 : -1;
    return strcmp(x->site, y->site);
}

/* Largest imbalance (max over ranks minus average) first; qsort has no
 * context argument, so the number of ranks is passed through this. */
static size_t imb_nr = 1;

static int imb_cmp(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    double ix = (double)x->tmax - (double)x->time_ns / (double)imb_nr;
    double iy = (double)y->tmax - (double)y->time_ns / (double)imb_nr;
    if (ix != iy)
        return ix < iy ? 1 : -1;
    return site_cmp(a, b);
}

static int rinfo_stall_cmp(const void *a, const void *b)
{
    const struct rinfo *x = *(const struct rinfo *const *)a, *y = *(const struct rinfo *const *)b;
    uint64_t ax = x->st[0] + x->st[1] + x->st[2], ay = y->st[0] + y->st[1] + y->st[2];
    double sx = pct(x->st[S_STALL], ax), sy = pct(y->st[S_STALL], ay);
    if (sx != sy)
        return sx < sy ? 1 : -1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static const struct path **top_stall(const struct run *R, size_t *n)
{
    const struct path **v = xrealloc(NULL, (R->paths.n + 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < R->paths.n; i++)
        if (R->paths.v[i].c[S_STALL])
            v[k++] = &R->paths.v[i];
    qsort(v, k, sizeof *v, path_stall_cmp);
    *n = k;
    return v;
}

static void write_run(FILE *f, const struct run *R, int short_form)
{
    struct ranges sampled = {0};
    for (size_t i = 0; i < R->nr; i++)
        if (R->r[i].has_meta || R->r[i].has_folded)
            ranges_add(&sampled, R->r[i].rank);
    fprintf(f, "run: %d rank%s, %zu sampled (", R->size, R->size == 1 ? "" : "s", R->nr);
    ranges_print(f, &sampled);
    fprintf(f, "), %.3f s, stall source %s%s, %llu Hz %s clock\n", R->duration_max * 1e-9,
            R->source[0] ? R->source : "unknown", R->mixed_source ? " (differs between ranks)" : "",
            (unsigned long long)R->hz, R->clock[0] ? R->clock : "wall");
    fprintf(f, "samples: %llu, dropped %llu", (unsigned long long)R->samples, (unsigned long long)R->dropped);
    if (R->nmeta_partial)
        fprintf(f, "; %d rank%s wrote a partial profile", R->nmeta_partial, R->nmeta_partial == 1 ? "" : "s");
    fputc('\n', f);
    if (!short_form) {
        if (R->mpi[0])
            fprintf(f, "mpi: %s\n", R->mpi);
        for (size_t i = 0; i < R->nextra; i++)
            fprintf(f, "%s\n", R->extra[i]);
    }
    free(sampled.lo);
    free(sampled.hi);
}

static void write_states(FILE *f, const struct run *R)
{
    uint64_t all = total_samples(R, 0) + total_samples(R, 1) + total_samples(R, 2);
    fprintf(f, "%-11s %8s   %-16s %8s   %-16s\n", "state", "overall", "min (rank)", "avg", "max (rank)");
    for (int s = 0; s < S_N; s++) {
        struct mm m;
        state_mm(R, s, &m);
        char a[32], b[32];
        snprintf(a, sizeof a, "%.1f%% (%d)", m.min, m.rmin);
        snprintf(b, sizeof b, "%.1f%% (%d)", m.max, m.rmax);
        fprintf(f, "%-11s %7.1f%%   %-16s %7.1f%%   %-16s\n", state_names[s], pct(total_samples(R, s), all), a,
                m.n ? m.sum / (double)m.n : 0, b);
    }
}

static void write_main(FILE *f, const struct run *R)
{
    uint64_t all = total_samples(R, 0) + total_samples(R, 1) + total_samples(R, 2);
    if (R->main == NULL) {
        fprintf(f, "main waiting call path: none (no MPI-Stall samples)\n");
        return;
    }
    fprintf(f, "main waiting call path (%.1f%% of all samples stalled here):\n  ",
            pct(R->main->c[S_STALL], all));
    put_path(f, R->main->path, 150);
    fputc('\n', f);
    for (size_t i = 0; i < R->nr; i++) {
        const struct rinfo *ri = &R->r[i];
        if (ri->rank != R->cause_rank)
            continue;
        uint64_t a = ri->st[0] + ri->st[1] + ri->st[2];
        fprintf(f, "caused by rank %d: it stalls least there (%.1f%% of its samples) and computes most "
                   "(%.1f%% Not-in-MPI); the others wait for it\n",
                ri->rank, pct(ri->main_stall, a), pct(ri->st[S_NIM], a));
    }
}

static void write_top_paths(FILE *f, const struct run *R, int top)
{
    size_t n;
    const struct path **v = top_stall(R, &n);
    uint64_t all = total_samples(R, 0) + total_samples(R, 1) + total_samples(R, 2);
    fprintf(f, "%8s %7s %8s  %s\n", "stall", "% all", "stall/in", "call path (root first)");
    for (size_t i = 0; i < n && i < (size_t)top; i++) {
        uint64_t here = v[i]->c[0] + v[i]->c[1] + v[i]->c[2];
        fprintf(f, "%8llu %6.1f%% %7.1f%%  ", (unsigned long long)v[i]->c[S_STALL], pct(v[i]->c[S_STALL], all),
                pct(v[i]->c[S_STALL], here));
        put_path(f, v[i]->path, 110);
        fputc('\n', f);
    }
    if (n == 0)
        fprintf(f, "(no MPI-Stall samples)\n");
    free(v);
}

static double run_total_s(const struct run *R)
{
    double t = 0;
    for (size_t i = 0; i < R->nr; i++)
        t += R->r[i].duration_ns * 1e-9;
    return t;
}

static void write_waits(FILE *f, const struct run *R, int top)
{
    double tot = run_total_s(R);
    size_t nr = R->nr ? R->nr : 1;
    fprintf(f, "%-36s %-14s %-14s %8s %9s %7s  %s\n", "call site", "function", "pattern", "calls", "wait s",
            "wait %", "wait per rank s: min (rank) / avg / max (rank)");
    size_t shown = 0;
    for (size_t i = 0; i < R->nsites && shown < (size_t)top; i++) {
        const struct site *s = &R->sites[i];
        if (strcmp(s->pattern, "none") == 0 || s->wait_ns == 0)
            continue;
        int all = s->nranks >= R->nr;
        char mn[32];
        if (all)
            snprintf(mn, sizeof mn, "%.3f (%d)", s->wmin * 1e-9, s->wmin_r);
        else
            snprintf(mn, sizeof mn, "0 (others)");
        fprintf(f, "%-36.36s %-14s %-14s %8llu %9.3f %6.2f%%  %s / %.3f / %.3f (%d)\n", s->site, s->fn,
                s->pattern, (unsigned long long)s->calls, s->wait_ns * 1e-9,
                tot > 0 ? 100.0 * s->wait_ns * 1e-9 / tot : 0, mn, s->wait_ns * 1e-9 / (double)nr,
                s->wmax * 1e-9, s->wmax_r);
        shown++;
    }
    if (shown == 0 && R->lean)
        fprintf(f, "(not estimated: the run used lean wrappers, WAITPROF_LEAN=1, which time no call)\n");
    else if (shown == 0)
        fprintf(f, "(no estimated wait: no rank.R.waits files, or no waiting calls)\n");
}

static void write_imbalance(FILE *f, const struct run *R, int top)
{
    size_t nr = R->nr ? R->nr : 1;
    fprintf(f, "%-36s %-14s %12s %12s %12s  %s\n", "call site", "function", "max s", "avg s", "max-avg s",
            "rank at max");
    size_t shown = 0;
    for (size_t i = 0; i < R->nisites && shown < (size_t)top; i++) {
        const struct site *s = &R->isites[i];
        double avg = s->time_ns * 1e-9 / (double)nr;
        fprintf(f, "%-36.36s %-14s %12.3f %12.3f %12.3f  %d\n", s->site, s->fn, s->tmax * 1e-9, avg,
                s->tmax * 1e-9 - avg, s->tmax_r);
        shown++;
    }
    if (shown == 0)
        fprintf(f, "(no call sites: no rank.R.waits files)\n");
}

static void put_secs(FILE *f, uint64_t ns)
{
    fprintf(f, "%.6f s", ns * 1e-9);
}

static void write_functions(FILE *f, const struct run *R)
{
    if (R->nfns == 0)
        fprintf(f, "(no rank.R.calls files)\n");
    for (size_t i = 0; i < R->nfns; i++) {
        const struct fnagg *a = &R->fns[i];
        if (a->nranks == 0 && a->req_sent + a->req_recv == 0)
            continue;
        fprintf(f, "*** %s\n", a->name);
        if (a->nranks) {
            fprintf(f, "ranks: ");
            ranges_print(f, &a->ranks);
            fputc('\n', f);
        } else {
            /* Started operations (MPI_Isend): their time is in the wait. */
            fprintf(f, "ranks: none record its calls' times (an operation that only starts)\n");
        }
        if (a->nranks) {
            fprintf(f, "events per rank: %llu max (rank %d), %llu min (rank %d), %.1f avg (%llu ranks)\n",
                    (unsigned long long)a->ev_max, a->ev_max_r, (unsigned long long)a->ev_min, a->ev_min_r,
                    (double)a->events / (double)a->nranks, (unsigned long long)a->nranks);
            fprintf(f, "longest event: "), put_secs(f, a->longest);
            fprintf(f, ", rank %d, event %llu\n", a->longest_r, (unsigned long long)a->longest_ev);
            if (a->second_ev) {
                fprintf(f, "max 2nd longest: "), put_secs(f, a->second);
                fprintf(f, ", rank %d, event %llu\n", a->second_r, (unsigned long long)a->second_ev);
            }
            fprintf(f, "shortest event: "), put_secs(f, a->shortest);
            fprintf(f, ", rank %d, event %llu\n", a->shortest_r, (unsigned long long)a->shortest_ev);
            fprintf(f, "longest avg event: "), put_secs(f, (uint64_t)a->avg_max);
            fprintf(f, ", rank %d, %llu event(s)\n", a->avg_max_r, (unsigned long long)a->avg_max_n);
            fprintf(f, "shortest avg event: "), put_secs(f, (uint64_t)a->avg_min);
            fprintf(f, ", rank %d, %llu event(s)\n", a->avg_min_r, (unsigned long long)a->avg_min_n);
            fprintf(f, "avg event: "), put_secs(f, a->total / a->events);
            fprintf(f, ", %llu event(s)\n", (unsigned long long)a->events);
            fprintf(f, "max total: "), put_secs(f, a->tot_max);
            fprintf(f, ", rank %d, %llu event(s)\n", a->tot_max_r, (unsigned long long)a->tot_max_n);
            fprintf(f, "min total: "), put_secs(f, a->tot_min);
            fprintf(f, ", rank %d, %llu event(s)\n", a->tot_min_r, (unsigned long long)a->tot_min_n);
            fprintf(f, "avg total: "), put_secs(f, a->total / a->nranks);
            fprintf(f, ", %llu ranks\n", (unsigned long long)a->nranks);
            fprintf(f, "aggregate total: "), put_secs(f, a->total);
            fputc('\n', f);
        }
        if (a->req_sent || a->req_recv)
            fprintf(f, "sent: %llu bytes in %llu requests; received: %llu bytes in %llu requests (posted sizes)\n",
                    (unsigned long long)a->bytes_sent, (unsigned long long)a->req_sent,
                    (unsigned long long)a->bytes_recv, (unsigned long long)a->req_recv);
        /* Groups in order of their fullest bin, longest first. */
        for (int mb = NBINS - 1; mb >= 0; mb--) {
            const struct hgroup *g = a->groups[mb];
            if (g == NULL)
                continue;
            fprintf(f, "event histogram for rank%s: ", g->nranks == 1 ? "" : "s");
            ranges_print(f, &g->ranks);
            fputc('\n', f);
            for (int b = NBINS - 1; b >= 0; b--) {
                if (g->max[b] == 0)
                    continue;
                if (b == NBINS - 1)
                    fprintf(f, "  >= %llu us: ", (unsigned long long)bin_low(b));
                else if (bin_high(b) - bin_low(b) == 1)
                    fprintf(f, "  %llu us: ", (unsigned long long)bin_low(b));
                else
                    fprintf(f, "  %llu-%llu us: ", (unsigned long long)bin_low(b),
                            (unsigned long long)bin_high(b) - 1);
                fprintf(f, "%u max (rank %d), %u min (rank %d), %.1f avg\n", g->max[b], g->maxr[b], g->min[b],
                        g->minr[b], (double)g->sum[b] / (double)g->nranks);
            }
        }
        fputc('\n', f);
    }
}

static void write_text(FILE *f, const struct run *R, const struct wp_report_opts *o)
{
    fprintf(f, "%s\n", REPORT_FORMAT);
    fprintf(f, "waitprof report of %s%s\n\n", R->c.dir, o->stall_only ? " (MPI-Stall samples only)" : "");
    if (o->ranks)
        fprintf(f, "ranks selected: %s\n\n", o->ranks);
    fprintf(f, "== the run\n");
    write_run(f, R, 0);
    fprintf(f, "\n== where the time went: share of samples, overall and per rank\n");
    write_states(f, R);
    fprintf(f, "\n== the main waiting call path\n");
    write_main(f, R);
    fprintf(f, "\n== ranks by MPI-Stall share (max first; top %d)\n", o->top);
    fprintf(f, "%6s %8s %8s %11s %10s  %s\n", "rank", "stall", "work", "not-in-mpi", "samples", "status");
    const struct rinfo **v = xrealloc(NULL, (R->nr + 1) * sizeof *v);
    for (size_t i = 0; i < R->nr; i++)
        v[i] = &R->r[i];
    qsort(v, R->nr, sizeof *v, rinfo_stall_cmp);
    for (size_t i = 0; i < R->nr && i < (size_t)o->top; i++) {
        uint64_t a = v[i]->st[0] + v[i]->st[1] + v[i]->st[2];
        fprintf(f, "%6d %7.1f%% %7.1f%% %10.1f%% %10llu  %s\n", v[i]->rank, pct(v[i]->st[S_STALL], a),
                pct(v[i]->st[S_WORK], a), pct(v[i]->st[S_NIM], a), (unsigned long long)a,
                !v[i]->has_meta ? "no meta" : v[i]->partial ? "partial" : "complete");
    }
    free(v);
    fprintf(f, "\n== top MPI-Stall call paths (samples)\n");
    write_top_paths(f, R, o->top);
    fprintf(f, "\n== wait states (minimum-duration estimate, per call site)\n");
    write_waits(f, R, o->top);
    fprintf(f, "\n== imbalance per call site: time in the call, max over ranks minus average\n");
    write_imbalance(f, R, o->top);
    fprintf(f, "\n== MPI functions (calls that may wait), reduced over ranks\n");
    write_functions(f, R);
    fprintf(f, "== problems with the input\n");
    for (size_t i = 0; i < R->c.nproblems; i++)
        fprintf(f, "%s\n", R->c.problems[i]);
    if (R->c.nproblems == 0)
        fprintf(f, "none\n");
}

static void write_short(FILE *f, const struct run *R, const struct wp_report_opts *o)
{
    fprintf(f, "waitprof report: ");
    write_run(f, R, 1);
    write_states(f, R);
    write_main(f, R);
    fprintf(f, "top MPI-Stall call paths:\n");
    struct wp_report_opts s = *o;
    s.top = 5;
    write_top_paths(f, R, s.top);
    fprintf(f, "wait states (estimate):\n");
    write_waits(f, R, 3);
}

/* --- JSON -------------------------------------------------------------------------------- */

static void json_ranges(FILE *f, const struct ranges *r)
{
    fputc('"', f);
    ranges_print(f, r);
    fputc('"', f);
}

static void write_json(FILE *f, const struct run *R, const struct wp_report_opts *o)
{
    uint64_t all = total_samples(R, 0) + total_samples(R, 1) + total_samples(R, 2);
    fprintf(f, "{\"format\":\"waitprof-report-json\",\"schema_version\":%d,\n\"directory\":", JSON_SCHEMA_VERSION);
    jstr(f, R->c.dir);
    fprintf(f, ",\n\"filters\":{\"ranks\":");
    if (o->ranks)
        jstr(f, o->ranks);
    else
        fputs("null", f);
    fprintf(f, ",\"state\":\"%s\",\"top\":%d},\n", o->stall_only ? "stall" : "all", o->top);
    fprintf(f, "\"run\":{\"ranks\":%d,\"sampled_ranks\":%zu,\"duration_s\":%.9f,\"source\":", R->size, R->nr,
            R->duration_max * 1e-9);
    jstr(f, R->source[0] ? R->source : "unknown");
    fprintf(f, ",\"hz\":%llu,\"clock\":", (unsigned long long)R->hz);
    jstr(f, R->clock[0] ? R->clock : "wall");
    fprintf(f, ",\"samples\":%llu,\"dropped\":%llu,\"partial_ranks\":%d,\"mpi\":", (unsigned long long)R->samples,
            (unsigned long long)R->dropped, R->nmeta_partial);
    jstr(f, R->mpi);
    fprintf(f, ",\"meta_extra\":{");
    for (size_t i = 0; i < R->nextra; i++) {
        char *eq = strchr(R->extra[i], '=');
        *eq = '\0';
        fputs(i ? "," : "", f);
        jstr(f, R->extra[i]);
        fputc(':', f);
        jstr(f, eq + 1);
        *eq = '=';
    }
    fprintf(f, "}},\n\"states\":[");
    for (int s = 0; s < S_N; s++) {
        struct mm m;
        state_mm(R, s, &m);
        fprintf(f, "%s{\"state\":\"%s\",\"samples\":%llu,\"share\":%.6f,\"min\":%.6f,\"min_rank\":%d,"
                   "\"avg\":%.6f,\"max\":%.6f,\"max_rank\":%d}",
                s ? "," : "", state_names[s], (unsigned long long)total_samples(R, s),
                pct(total_samples(R, s), all) / 100, m.min / 100, m.rmin, m.n ? m.sum / (double)m.n / 100 : 0,
                m.max / 100, m.rmax);
    }
    fprintf(f, "],\n\"main_wait\":");
    if (R->main) {
        fprintf(f, "{\"path\":");
        jstr(f, R->main->path);
        fprintf(f, ",\"stall_samples\":%llu,\"cause_rank\":%d}", (unsigned long long)R->main->c[S_STALL],
                R->cause_rank);
    } else {
        fputs("null", f);
    }
    fprintf(f, ",\n\"top_stall_paths\":[");
    size_t n;
    const struct path **v = top_stall(R, &n);
    for (size_t i = 0; i < n && i < (size_t)o->top; i++) {
        fprintf(f, "%s\n {\"path\":", i ? "," : "");
        jstr(f, v[i]->path);
        fprintf(f, ",\"stall\":%llu,\"work\":%llu,\"not_in_mpi\":%llu}", (unsigned long long)v[i]->c[S_STALL],
                (unsigned long long)v[i]->c[S_WORK], (unsigned long long)v[i]->c[S_NIM]);
    }
    free(v);
    fprintf(f, "],\n\"wait_states\":[");
    size_t nr = R->nr ? R->nr : 1;
    for (size_t i = 0, k = 0; i < R->nsites; i++) {
        const struct site *s = &R->sites[i];
        int allr = s->nranks >= R->nr;
        fprintf(f, "%s\n {\"site\":", k++ ? "," : "");
        jstr(f, s->site);
        fprintf(f, ",\"function\":");
        jstr(f, s->fn);
        fprintf(f, ",\"pattern\":");
        jstr(f, s->pattern);
        fprintf(f, ",\"calls\":%llu,\"time_s\":%.9f,\"wait_s\":%.9f,\"wait_min_s\":%.9f,\"wait_min_rank\":%d,"
                   "\"wait_avg_s\":%.9f,\"wait_max_s\":%.9f,\"wait_max_rank\":%d,\"time_max_s\":%.9f,"
                   "\"time_max_rank\":%d,\"imbalance_s\":%.9f}",
                (unsigned long long)s->calls, s->time_ns * 1e-9, s->wait_ns * 1e-9, allr ? s->wmin * 1e-9 : 0,
                allr ? s->wmin_r : -1, s->wait_ns * 1e-9 / (double)nr, s->wmax * 1e-9, s->wmax_r, s->tmax * 1e-9,
                s->tmax_r, s->tmax * 1e-9 - s->time_ns * 1e-9 / (double)nr);
    }
    fprintf(f, "],\n\"imbalance\":[");
    for (size_t i = 0; i < R->nisites; i++) {
        const struct site *s = &R->isites[i];
        fprintf(f, "%s\n {\"site\":", i ? "," : "");
        jstr(f, s->site);
        fprintf(f, ",\"function\":");
        jstr(f, s->fn);
        fprintf(f, ",\"time_s\":%.9f,\"time_max_s\":%.9f,\"time_max_rank\":%d,\"time_avg_s\":%.9f,"
                   "\"imbalance_s\":%.9f}",
                s->time_ns * 1e-9, s->tmax * 1e-9, s->tmax_r, s->time_ns * 1e-9 / (double)nr,
                s->tmax * 1e-9 - s->time_ns * 1e-9 / (double)nr);
    }
    fprintf(f, "],\n\"functions\":[");
    for (size_t i = 0; i < R->nfns; i++) {
        const struct fnagg *a = &R->fns[i];
        fprintf(f, "%s\n {\"function\":", i ? "," : "");
        jstr(f, a->name);
        fprintf(f, ",\"ranks\":");
        json_ranges(f, &a->ranks);
        fprintf(f, ",\"nranks\":%llu,\"events\":%llu,\"events_max\":%llu,\"events_max_rank\":%d,"
                   "\"events_min\":%llu,\"events_min_rank\":%d,"
                   "\"longest_s\":%.9f,\"longest_rank\":%d,\"longest_event\":%llu,"
                   "\"second_longest_s\":%.9f,\"second_longest_rank\":%d,\"second_longest_event\":%llu,"
                   "\"shortest_s\":%.9f,\"shortest_rank\":%d,\"shortest_event\":%llu,"
                   "\"total_s\":%.9f,\"total_max_s\":%.9f,\"total_max_rank\":%d,\"total_min_s\":%.9f,"
                   "\"total_min_rank\":%d,\"bytes_sent\":%llu,\"bytes_recv\":%llu,\"requests_sent\":%llu,"
                   "\"requests_recv\":%llu,\"histograms\":[",
                (unsigned long long)a->nranks, (unsigned long long)a->events, (unsigned long long)a->ev_max,
                a->ev_max_r, (unsigned long long)(a->nranks ? a->ev_min : 0), a->ev_min_r, a->longest * 1e-9,
                a->longest_r, (unsigned long long)a->longest_ev, a->second * 1e-9, a->second_r,
                (unsigned long long)a->second_ev, (a->nranks ? a->shortest : 0) * 1e-9, a->shortest_r,
                (unsigned long long)a->shortest_ev, a->total * 1e-9, a->tot_max * 1e-9, a->tot_max_r,
                (a->nranks ? a->tot_min : 0) * 1e-9, a->tot_min_r, (unsigned long long)a->bytes_sent,
                (unsigned long long)a->bytes_recv, (unsigned long long)a->req_sent,
                (unsigned long long)a->req_recv);
        int first = 1;
        for (int mb = NBINS - 1; mb >= 0; mb--) {
            const struct hgroup *g = a->groups[mb];
            if (g == NULL)
                continue;
            fprintf(f, "%s{\"ranks\":", first ? "" : ",");
            first = 0;
            json_ranges(f, &g->ranks);
            fprintf(f, ",\"bins\":[");
            int fb = 1;
            for (int b = NBINS - 1; b >= 0; b--) {
                if (g->max[b] == 0)
                    continue;
                fprintf(f, "%s{\"low_us\":%llu,\"max\":%u,\"max_rank\":%d,\"min\":%u,\"min_rank\":%d,\"avg\":%.3f}",
                        fb ? "" : ",", (unsigned long long)bin_low(b), g->max[b], g->maxr[b], g->min[b],
                        g->minr[b], (double)g->sum[b] / (double)g->nranks);
                fb = 0;
            }
            fprintf(f, "]}");
        }
        fprintf(f, "]}");
    }
    fprintf(f, "],\n\"ranks\":[");
    size_t j = 0;
    for (size_t i = 0; i < R->nr; i++) {
        const struct rinfo *ri = &R->r[i];
        fprintf(f, "%s\n {\"rank\":%d,\"status\":\"%s\",\"samples\":%llu,\"not_in_mpi\":%llu,\"work\":%llu,"
                   "\"stall\":%llu,\"duration_s\":%.9f,\"main_wait_stall\":%llu,\"functions\":{",
                i ? "," : "", ri->rank, !ri->has_meta ? "unknown" : ri->partial ? "partial" : "complete",
                (unsigned long long)(ri->st[0] + ri->st[1] + ri->st[2]), (unsigned long long)ri->st[S_NIM],
                (unsigned long long)ri->st[S_WORK], (unsigned long long)ri->st[S_STALL], ri->duration_ns * 1e-9,
                (unsigned long long)ri->main_stall);
        /* R->rf is in rank order: the rows of this rank follow each other. */
        int first = 1;
        for (; j < R->nrf && R->rf[j].rank <= ri->rank; j++) {
            if (R->rf[j].rank != ri->rank)
                continue;
            const struct rfn *x = &R->rf[j];
            fprintf(f, "%s", first ? "" : ",");
            first = 0;
            jstr(f, R->fns[x->fn].name);
            fprintf(f, ":{\"calls\":%llu,\"time_s\":%.9f,\"bytes_sent\":%llu,\"bytes_recv\":%llu,"
                       "\"requests_sent\":%llu,\"requests_recv\":%llu}",
                    (unsigned long long)x->calls, x->time_ns * 1e-9, (unsigned long long)x->bytes_sent,
                    (unsigned long long)x->bytes_recv, (unsigned long long)x->req_sent,
                    (unsigned long long)x->req_recv);
        }
        fputs("}}", f);
    }
    fprintf(f, "],\n\"problems\":[");
    for (size_t i = 0; i < R->c.nproblems; i++) {
        fputs(i ? "," : "", f);
        jstr(f, R->c.problems[i]);
    }
    fprintf(f, "]}\n");
}

/* --- CSV (seed 004's per-rank tables) -------------------------------------------------------- */

enum { T_TIME, T_CALLS, T_BSENT, T_RSENT, T_BRECV, T_RRECV, T_N };
static const char *const table_files[T_N] = {"mpi_time.csv", "mpi_calls.csv", "mpi_bytes_sent.csv",
                                             "mpi_requests_sent.csv", "mpi_bytes_recv.csv",
                                             "mpi_requests_recv.csv"};

static void write_table(FILE *f, const struct run *R, int t)
{
    fprintf(f, "# waitprof-csv 1 %s\nrank", table_files[t]);
    if (t == T_TIME)
        fputs(",not_in_mpi_s", f);
    for (size_t i = 0; i < R->nfns; i++) {
        fputc(',', f);
        cstr(f, R->fns[i].name);
    }
    fputc('\n', f);
    uint64_t *row = xrealloc(NULL, (R->nfns + 1) * sizeof *row);
    size_t j = 0;
    for (size_t i = 0; i < R->nr; i++) {
        const struct rinfo *ri = &R->r[i];
        memset(row, 0, (R->nfns + 1) * sizeof *row);
        for (; j < R->nrf && R->rf[j].rank <= ri->rank; j++) {
            const struct rfn *x = &R->rf[j];
            if (x->rank != ri->rank)
                continue;
            row[x->fn] = t == T_TIME ? x->time_ns : t == T_CALLS ? x->calls : t == T_BSENT ? x->bytes_sent
                       : t == T_RSENT ? x->req_sent : t == T_BRECV ? x->bytes_recv : x->req_recv;
        }
        fprintf(f, "%d", ri->rank);
        if (t == T_TIME) {
            /* Time outside MPI: the Not-in-MPI share of the samples times
             * the rank's duration (an estimate from sampling). */
            uint64_t a = ri->st[0] + ri->st[1] + ri->st[2];
            fprintf(f, ",%.6f", a ? ri->duration_ns * 1e-9 * (double)ri->st[S_NIM] / (double)a : 0);
        }
        for (size_t k = 0; k < R->nfns; k++) {
            if (t == T_TIME)
                fprintf(f, ",%.6f", row[k] * 1e-9);
            else
                fprintf(f, ",%llu", (unsigned long long)row[k]);
        }
        fputc('\n', f);
    }
    free(row);
}

static void write_ranks_csv(FILE *f, const struct run *R)
{
    fprintf(f, "# waitprof-csv 1 ranks.csv\nrank,status,samples,not_in_mpi,mpi_work,mpi_stall,"
               "not_in_mpi_share,mpi_work_share,mpi_stall_share,duration_s,dropped\n");
    for (size_t i = 0; i < R->nr; i++) {
        const struct rinfo *ri = &R->r[i];
        uint64_t a = ri->st[0] + ri->st[1] + ri->st[2];
        fprintf(f, "%d,%s,%llu,%llu,%llu,%llu,%.6f,%.6f,%.6f,%.9f,%llu\n", ri->rank,
                !ri->has_meta ? "unknown" : ri->partial ? "partial" : "complete", (unsigned long long)a,
                (unsigned long long)ri->st[0], (unsigned long long)ri->st[1], (unsigned long long)ri->st[2],
                pct(ri->st[0], a) / 100, pct(ri->st[1], a) / 100, pct(ri->st[2], a) / 100,
                ri->duration_ns * 1e-9, (unsigned long long)ri->dropped);
    }
}

/* Matrix rows, streamed from the ranks' files: one row per sampled rank,
 * one column per rank of the run. */
static void write_matrix(FILE *f, struct run *R, int col)
{
    static const char *const names[3] = {"SIZE", "REQUEST", "TIME"};
    int size = R->size;
    for (size_t i = 0; i < R->nr; i++)
        if (R->r[i].rank + 1 > size)
            size = R->r[i].rank + 1;
    fprintf(f, "# waitprof-csv 1 matrix %s(i,j)%s\nrank", names[col],
            col == 0 ? ": bytes sent from i to j" : col == 1 ? ": send calls from i to j"
                                                              : ": seconds i spent in blocking receives from j");
    for (int j = 0; j < size; j++)
        fprintf(f, ",%d", j);
    fputc('\n', f);
    uint64_t *row = xrealloc(NULL, (size_t)size * sizeof *row);
    char path[4400];
    for (size_t i = 0; i < R->nr; i++) {
        memset(row, 0, (size_t)size * sizeof *row);
        snprintf(path, sizeof path, "%s/rank.%d.matrix", R->c.dir, R->r[i].rank);
        const char *name = path;
        size_t len;
        char *buf = slurp(path, &len);
        if (buf && format_version(buf, "# ", "waitprof-matrix") == 1) {
            size_t bad = 0;
            for (char *line = strchr(buf, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
                unsigned long long x[4];
                if (strncmp(line + 1, "peer", 4) == 0)
                    continue;
                if (sscanf(line + 1, "%llu\t%llu\t%llu\t%llu", &x[0], &x[1], &x[2], &x[3]) != 4 ||
                    x[0] >= (unsigned long long)size) {
                    bad++;
                    continue;
                }
                row[x[0]] = x[1 + col];
            }
            if (bad && col == 0)
                problem(&R->c, "%s: %zu malformed line(s) left out", name, bad);
        } else if (buf && col == 0) {
            problem(&R->c, "%s: not a waitprof matrix file (first line is not \"# waitprof-matrix 1\"); skipped",
                    name);
        }
        free(buf);
        fprintf(f, "%d", R->r[i].rank);
        for (int j = 0; j < size; j++) {
            if (col == 2)
                fprintf(f, ",%.6f", row[j] * 1e-9);
            else
                fprintf(f, ",%llu", (unsigned long long)row[j]);
        }
        fputc('\n', f);
    }
    free(row);
}

/* --- folded outputs -------------------------------------------------------------------------------- */

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The merged profile as a wp_folded (state frame first), sorted. */
static void to_folded(const struct run *R, struct wp_folded *out)
{
    size_t cap = 256;
    char *line = xrealloc(NULL, cap);
    for (size_t i = 0; i < R->paths.n; i++) {
        const struct path *p = &R->paths.v[i];
        for (int s = 0; s < S_N; s++) {
            if (p->c[s] == 0)
                continue;
            size_t n = strlen(state_names[s]) + strlen(p->path) + 2;
            if (n > cap)
                line = xrealloc(line, cap = 2 * n);
            int l = p->path[0] ? snprintf(line, cap, "%s;%s", state_names[s], p->path)
                               : snprintf(line, cap, "%s", state_names[s]);
            if (wp_folded_add(out, line, (size_t)l, p->c[s]) != 0)
                oom((size_t)l);
        }
    }
    free(line);
    wp_folded_finish(out);
}

static void write_diff_folded(FILE *f, const struct run *R)
{
    /* Path, MPI-Work samples, MPI-Stall samples: difffolded.pl's layout, so
     * flamegraph.pl colours the paths that stall more than they work red. */
    char **v = xrealloc(NULL, (R->paths.n + 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < R->paths.n; i++)
        if ((R->paths.v[i].c[S_WORK] || R->paths.v[i].c[S_STALL]) && R->paths.v[i].path[0])
            v[k++] = R->paths.v[i].path;
    qsort(v, k, sizeof *v, str_cmp);
    for (size_t i = 0; i < k; i++) {
        const struct path *p = pmap_get((struct pmap *)&R->paths, v[i], strlen(v[i]));
        fprintf(f, "%s %llu %llu\n", p->path, (unsigned long long)p->c[S_WORK], (unsigned long long)p->c[S_STALL]);
    }
    free(v);
}

/* --- driver ---------------------------------------------------------------------------------------------- */

struct emit_arg {
    struct run *R;
    const struct wp_report_opts *o;
    const struct wp_folded *fold;
    int which;
};

typedef int (*emit_fn)(FILE *, struct emit_arg *);

static int e_text(FILE *f, struct emit_arg *a) { write_text(f, a->R, a->o); return 0; }
static int e_json(FILE *f, struct emit_arg *a) { write_json(f, a->R, a->o); return 0; }
static int e_ranks(FILE *f, struct emit_arg *a) { write_ranks_csv(f, a->R); return 0; }
static int e_table(FILE *f, struct emit_arg *a) { write_table(f, a->R, a->which); return 0; }
static int e_matrix(FILE *f, struct emit_arg *a) { write_matrix(f, a->R, a->which); return 0; }
static int e_folded(FILE *f, struct emit_arg *a) { return wp_folded_write(f, a->fold); }
static int e_diff(FILE *f, struct emit_arg *a) { write_diff_folded(f, a->R); return 0; }
static int e_svg(FILE *f, struct emit_arg *a)
{
    char title[128];
    snprintf(title, sizeof title, "waitprof: %zu rank%s%s", a->R->nr, a->R->nr == 1 ? "" : "s",
             a->o->stall_only ? ", MPI-Stall only" : "");
    return wp_svg_write(f, a->fold, title);
}
static int e_summary(FILE *f, struct emit_arg *a) { return wp_summary_write(f, a->fold, (int)a->R->nr, 8); }

/* Write outdir/name through a temporary file and a rename. */
static int emit(struct ctx *c, const char *outdir, const char *name, emit_fn fn, struct emit_arg *a)
{
    char path[4400], tmp[4500];
    snprintf(path, sizeof path, "%s/%s", outdir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        if (c->errs)
            fprintf(c->errs, "waitprof report: cannot write %s (%s)\n", path, strerror(errno));
        return -1;
    }
    int rc = fn(f, a);
    if (ferror(f))
        rc = -1;
    if (fclose(f) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0) {
        if (c->errs)
            fprintf(c->errs, "waitprof report: cannot write %s (%s)\n", path, strerror(errno));
        remove(tmp);
    }
    return rc;
}

static void run_free(struct run *R)
{
    pmap_free(&R->paths);
    for (size_t i = 0; i < R->nfns; i++) {
        free(R->fns[i].ranks.lo);
        free(R->fns[i].ranks.hi);
        for (int b = 0; b < NBINS; b++)
            if (R->fns[i].groups[b]) {
                free(R->fns[i].groups[b]->ranks.lo);
                free(R->fns[i].groups[b]->ranks.hi);
                free(R->fns[i].groups[b]);
            }
    }
    free(R->fns);
    for (size_t i = 0; i < R->nsites; i++)
        free(R->sites[i].site);
    free(R->sites);
    for (size_t i = 0; i < R->nisites; i++)
        free(R->isites[i].site);
    free(R->isites);
    free(R->rf);
    free(R->r);
    for (size_t i = 0; i < R->nextra; i++)
        free(R->extra[i]);
    free(R->extra);
    for (size_t i = 0; i < R->c.nproblems; i++)
        free(R->c.problems[i]);
    free(R->c.problems);
    free(R->want.lo);
    free(R->want.hi);
}

static int open_run(struct run *R, const char *dir, const struct wp_report_opts *o, FILE *errs)
{
    memset(R, 0, sizeof *R);
    R->c.dir = dir;
    R->c.errs = errs;
    if (o->ranks) {
        if (ranks_parse(o->ranks, &R->want) != 0) {
            if (errs)
                fprintf(errs, "waitprof report: --ranks %s: give ranks and ranges, e.g. 0-3,7\n", o->ranks);
            return -1;
        }
        R->have_want = 1;
    }
    if (list_ranks(R, dir) != 0) {
        if (errs)
            fprintf(errs, "waitprof report: cannot read the directory %s (%s)\n", dir, strerror(errno));
        return -1;
    }
    if (R->nr == 0) {
        if (errs)
            fprintf(errs, "waitprof report: %s holds no rank.R.meta or rank.R.folded file%s\n", dir,
                    o->ranks ? " of the selected ranks" : "");
        return -1;
    }
    load(R, dir, o);
    qsort(R->sites, R->nsites, sizeof *R->sites, site_cmp);
    imb_nr = R->nr ? R->nr : 1;
    qsort(R->isites, R->nisites, sizeof *R->isites, imb_cmp);
    if (R->size == 0)
        R->size = R->r[R->nr - 1].rank + 1;
    return 0;
}

static int report_dir(const char *dir, const char *outdir, const struct wp_report_opts *opts, FILE *short_out,
                      FILE *errs)
{
    struct wp_report_opts o = *opts;
    if (o.top <= 0)
        o.top = 10;
    struct run R;
    if (open_run(&R, dir, &o, errs) != 0) {
        run_free(&R);
        return -2;
    }
    struct wp_folded fold = {0};
    to_folded(&R, &fold);
    struct emit_arg a = {&R, &o, &fold, 0};
    int rc = 0;
    rc |= emit(&R.c, outdir, "all.folded", e_folded, &a);
    rc |= emit(&R.c, outdir, "all.diff.folded", e_diff, &a);
    rc |= emit(&R.c, outdir, "all.svg", e_svg, &a);
    rc |= emit(&R.c, outdir, "summary.txt", e_summary, &a);
    rc |= emit(&R.c, outdir, "ranks.csv", e_ranks, &a);
    for (int t = 0; t < T_N; t++) {
        a.which = t;
        rc |= emit(&R.c, outdir, table_files[t], e_table, &a);
    }
    if (R.have_matrix) {
        static const char *const mf[3] = {"matrix_size.csv", "matrix_request.csv", "matrix_time.csv"};
        for (int t = 0; t < 3; t++) {
            a.which = t;
            rc |= emit(&R.c, outdir, mf[t], e_matrix, &a);
        }
    }
    /* Last, so that they list every problem found above. */
    rc |= emit(&R.c, outdir, "report.json", e_json, &a);
    rc |= emit(&R.c, outdir, "report.txt", e_text, &a);
    if (short_out)
        write_short(short_out, &R, &o);
    wp_folded_free(&fold);
    int bad = R.c.bad;
    run_free(&R);
    return rc ? -1 : bad ? 1 : 0;
}

static int diff_cmp(const void *a, const void *b)
{
    const double *x = a, *y = b;
    double dx = x[1] < 0 ? -x[1] : x[1], dy = y[1] < 0 ? -y[1] : y[1];
    return dx < dy ? 1 : dx > dy ? -1 : (x[0] > y[0]) - (x[0] < y[0]);
}

static int report_diff(const char *da, const char *db, const struct wp_report_opts *opts, FILE *out,
                       const char *diff_folded, FILE *errs)
{
    struct wp_report_opts o = *opts;
    if (o.top <= 0)
        o.top = 10;
    struct run A, B;
    if (open_run(&A, da, &o, errs) != 0) {
        run_free(&A);
        return -1;
    }
    if (open_run(&B, db, &o, errs) != 0) {
        run_free(&A);
        run_free(&B);
        return -1;
    }
    uint64_t ta = total_samples(&A, 0) + total_samples(&A, 1) + total_samples(&A, 2);
    uint64_t tb = total_samples(&B, 0) + total_samples(&B, 1) + total_samples(&B, 2);
    /* One table of the paths of both runs: B's stall counts are added to
     * A's table in the Not-in-MPI slot of a second map. */
    struct pmap u = {0};
    for (size_t i = 0; i < A.paths.n; i++)
        if (A.paths.v[i].c[S_STALL])
            pmap_get(&u, A.paths.v[i].path, strlen(A.paths.v[i].path))->c[0] = A.paths.v[i].c[S_STALL];
    for (size_t i = 0; i < B.paths.n; i++)
        if (B.paths.v[i].c[S_STALL])
            pmap_get(&u, B.paths.v[i].path, strlen(B.paths.v[i].path))->c[1] = B.paths.v[i].c[S_STALL];
    /* Sorted by the change in stall share of all samples. */
    double *v = xrealloc(NULL, (u.n + 1) * 2 * sizeof *v);
    for (size_t i = 0; i < u.n; i++) {
        v[2 * i] = (double)i;
        v[2 * i + 1] = pct(u.v[i].c[1], tb) - pct(u.v[i].c[0], ta);
    }
    qsort(v, u.n, 2 * sizeof *v, diff_cmp);
    fprintf(out, "%s\nwaitprof report --diff: MPI-Stall per call path, A = %s (%llu samples), B = %s (%llu samples)\n",
            REPORT_FORMAT, da, (unsigned long long)ta, db, (unsigned long long)tb);
    fprintf(out, "%9s %9s %9s %9s  %s\n", "A stall", "B stall", "A % all", "B % all", "call path (largest change first)");
    for (size_t i = 0; i < u.n && i < (size_t)o.top; i++) {
        const struct path *p = &u.v[(size_t)v[2 * i]];
        fprintf(out, "%9llu %9llu %8.1f%% %8.1f%%  %s ", (unsigned long long)p->c[0], (unsigned long long)p->c[1],
                pct(p->c[0], ta), pct(p->c[1], tb), v[2 * i + 1] > 0 ? "gained" : "lost");
        put_path(out, p->path, 110);
        fputc('\n', out);
    }
    if (u.n == 0)
        fprintf(out, "(no MPI-Stall samples in either run)\n");
    int rc = 0;
    if (diff_folded) {
        FILE *f = fopen(diff_folded, "w");
        if (f == NULL) {
            if (errs)
                fprintf(errs, "waitprof report: cannot write %s (%s)\n", diff_folded, strerror(errno));
            rc = -1;
        } else {
            char **s = xrealloc(NULL, (u.n + 1) * sizeof *s);
            size_t k = 0;
            for (size_t i = 0; i < u.n; i++)
                if (u.v[i].path[0])
                    s[k++] = u.v[i].path;
            qsort(s, k, sizeof *s, str_cmp);
            for (size_t i = 0; i < k; i++) {
                const struct path *p = pmap_get(&u, s[i], strlen(s[i]));
                fprintf(f, "%s %llu %llu\n", p->path, (unsigned long long)p->c[0], (unsigned long long)p->c[1]);
            }
            free(s);
            if (fclose(f) != 0)
                rc = -1;
        }
    }
    free(v);
    pmap_free(&u);
    int bad = A.c.bad || B.c.bad;
    run_free(&A);
    run_free(&B);
    return rc ? -1 : bad ? 1 : 0;
}

int wp_report_dir(const char *dir, const char *outdir, const struct wp_report_opts *opts, FILE *short_out,
                  FILE *errs)
{
    jmp_buf env;
    if (setjmp(env) != 0) {
        oom_jmp = NULL;
        return -1;
    }
    oom_jmp = &env;
    int rc = report_dir(dir, outdir, opts, short_out, errs);
    oom_jmp = NULL;
    return rc;
}

int wp_report_diff(const char *a, const char *b, const struct wp_report_opts *opts, FILE *out,
                   const char *diff_folded, FILE *errs)
{
    jmp_buf env;
    if (setjmp(env) != 0) {
        oom_jmp = NULL;
        return -1;
    }
    oom_jmp = &env;
    int rc = report_diff(a, b, opts, out, diff_folded, errs);
    oom_jmp = NULL;
    return rc;
}
