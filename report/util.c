/* report/util.c — the helpers of the report's files (report/model.h): the
 * problem list, the out-of-memory exit, whole-file reading, rank ranges,
 * string escapers for JSON and CSV, shortened call paths, percentages,
 * histogram bin bounds and the call-path table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/select.h"
#include "report/model.h"


/* --- problems, memory, files ------------------------------------------------------ */

void wp_rep_problem(struct ctx *c, const char *fmt, ...)
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
jmp_buf *wp_rep_oom_jmp;

void wp_rep_oom(size_t n)
{
    fprintf(stderr, "waitprof report: out of memory (%zu bytes); the report is not written\n", n);
    if (wp_rep_oom_jmp)
        longjmp(*wp_rep_oom_jmp, 1);
    abort();
}

void *wp_rep_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL) {
        fprintf(stderr, "waitprof report: out of memory (%zu bytes); the report is not written\n", n);
        if (wp_rep_oom_jmp)
            longjmp(*wp_rep_oom_jmp, 1);
        abort();
    }
    return q;
}

/* The whole file, NUL-terminated; NULL when it cannot be read. */
char *wp_rep_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = wp_rep_xrealloc(NULL, cap);
    for (;;) {
        if (n + 1 >= cap)
            buf = wp_rep_xrealloc(buf, cap *= 2);
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

/* --- rank ranges ---------------------------------------------------------------------
 * Lists of ranks the report builds as it reads (which ranks share a
 * figure), printed with the one spelling of format/select.h. */

void wp_rep_ranges_add(struct ranges *r, int rank)
{
    if (r->n && r->hi[r->n - 1] + 1 == rank) {
        r->hi[r->n - 1] = rank;
        return;
    }
    if (r->n && r->hi[r->n - 1] >= rank)
        return;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 4;
        r->lo = wp_rep_xrealloc(r->lo, r->cap * sizeof *r->lo);
        r->hi = wp_rep_xrealloc(r->hi, r->cap * sizeof *r->hi);
    }
    r->lo[r->n] = r->hi[r->n] = rank;
    r->n++;
}

void wp_rep_ranges_print(FILE *f, const struct ranges *r)
{
    char item[48];
    for (size_t i = 0; i < r->n; i++) {
        wp_range_put(item, sizeof item, r->lo[i], r->hi[i], i == 0);
        fputs(item, f);
    }
    if (r->n == 0)
        fputs("none", f);
}


/* --- strings and figures ------------------------------------------------------------ */

/* JSON string. */
void wp_rep_jstr(FILE *f, const char *s)
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
void wp_rep_cstr(FILE *f, const char *s)
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

double wp_rep_pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

void wp_rep_put_path(FILE *f, const char *p, size_t max)
{
    size_t n = strlen(p);
    if (n <= max) {
        fputs(p, f);
        return;
    }
    /* Keep the root and the leaf end: the leaf is the MPI call. */
    fprintf(f, "%.*s...%s", (int)(max / 3), p, p + n - (max - max / 3 - 3));
}

/* The end of a function name's parameter list when the name ends with
 * one ("f(int*)", "g(int) const"): the '(' that opens it, or NULL. */
static const char *params_start(const char *name, size_t len)
{
    const char *close = NULL;
    for (size_t i = len; i > 0 && close == NULL; i--)
        if (name[i - 1] == ')')
            close = name + i - 1;
    if (close == NULL)
        return NULL;
    int depth = 0;
    for (const char *p = close; p >= name; p--) {
        depth += *p == ')' ? 1 : *p == '(' ? -1 : 0;
        if (depth == 0)
            return p > name ? p : NULL;
    }
    return NULL;
}

/* A function name in at most avail (>= 4) columns: whole; without its
 * parameter list; without its leading qualifiers ("...receive"); or its
 * start and "...". */
static void fit_name(char *out, const char *name, size_t len, size_t avail)
{
    if (len > avail) {
        const char *ps = params_start(name, len);
        if (ps)
            len = (size_t)(ps - name);
    }
    if (len <= avail) {
        memcpy(out, name, len);
        out[len] = '\0';
        return;
    }
    /* The qualifiers at nesting depth 0 (not inside a template's <> or
     * "(anonymous namespace)"), outermost first. */
    int depth = 0;
    for (size_t i = 0; i + 1 < len; i++) {
        char c = name[i];
        depth += (c == '<' || c == '(') ? 1 : (c == '>' || c == ')') ? -1 : 0;
        if (depth == 0 && c == ':' && name[i + 1] == ':' && len - (i + 2) + 3 <= avail) {
            snprintf(out, avail + 1, "...%.*s", (int)(len - (i + 2)), name + i + 2);
            return;
        }
    }
    snprintf(out, avail + 1, "%.*s...", (int)(avail - 3), name);
}

void wp_rep_site_fit(char *out, size_t cap, const char *site, size_t w)
{
    size_t n = strlen(site);
    if (w + 1 > cap)
        w = cap - 1;
    /* The first frame ends at the call path's first joint (" < ", after its
     * location's ')') or at the end. */
    const char *joint = strstr(site, ") < ");
    const char *fe = joint ? joint + 1 : site + n;
    /* Its location: the last " (" of the frame, a parenthesis-free
     * "file:line" up to the frame's closing ')'. */
    const char *loc = NULL;
    for (const char *p = site; p + 1 < fe; p++)
        if (p[0] == ' ' && p[1] == '(')
            loc = p;
    if (loc && (fe[-1] != ')' || memchr(loc + 2, '(', (size_t)(fe - 1 - loc - 2)) ||
                memchr(loc + 2, ')', (size_t)(fe - 1 - loc - 2)) || !memchr(loc + 2, ':', (size_t)(fe - loc - 2))))
        loc = NULL;
    size_t nl = loc ? (size_t)(fe - loc) : 0;
    if (n <= w || (size_t)(fe - site) <= w || loc == NULL || nl + 4 > w) {
        /* It fits, or its first frame does (the rest of the path is cut),
         * or there is no location to keep. */
        snprintf(out, w + 1, "%s", site);
        return;
    }
    fit_name(out, site, (size_t)(loc - site), w - nl);
    size_t k = strlen(out);
    memcpy(out + k, loc, nl);
    out[k + nl] = '\0';
}

/* Lower bound in microseconds of a histogram bin (fallback/stats.c). */
uint64_t wp_rep_bin_low(int bin)
{
    uint64_t width = 1;
    for (int d = 0; d < bin / 10 && d < 10; d++)
        width *= 10;
    return bin >= NBINS - 1 ? width : (uint64_t)(bin % 10) * width;
}

uint64_t wp_rep_bin_high(int bin)
{
    if (bin >= NBINS - 1)
        return UINT64_MAX;
    uint64_t width = 1;
    for (int d = 0; d < bin / 10; d++)
        width *= 10;
    return wp_rep_bin_low(bin) + width;
}

/* --- the call-path table --------------------------------------------------------------- */

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

struct path *wp_rep_pmap_get(struct pmap *m, const char *s, size_t n)
{
    if (m->n * 2 >= m->nslots) {
        size_t ns = m->nslots ? m->nslots * 2 : 1024;
        uint32_t *sl = wp_rep_xrealloc(NULL, ns * sizeof *sl);
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
        m->v = wp_rep_xrealloc(m->v, (m->cap = m->cap ? 2 * m->cap : 1024) * sizeof *m->v);
    struct path *p = &m->v[m->n];
    memset(p, 0, sizeof *p);
    p->path = wp_rep_xrealloc(NULL, n + 1);
    memcpy(p->path, s, n);
    p->path[n] = '\0';
    m->slot[k] = (uint32_t)m->n++;
    return p;
}

const struct path *wp_rep_pmap_find(const struct pmap *m, const char *s, size_t n)
{
    if (m->nslots == 0)
        return NULL;
    for (size_t k = hash(s, n) & (m->nslots - 1); m->slot[k] != UINT32_MAX; k = (k + 1) & (m->nslots - 1)) {
        const struct path *p = &m->v[m->slot[k]];
        if (strncmp(p->path, s, n) == 0 && p->path[n] == '\0')
            return p;
    }
    return NULL;
}

void wp_rep_pmap_free(struct pmap *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].path);
    free(m->v);
    free(m->slot);
}
