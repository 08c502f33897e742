/* report/summary.c — see report/summary.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "report/summary.h"

/* Paths longer than this many characters are shortened in the middle. */
enum { SUM_PATH_MAX = 100, SUM_TAIL_MAX = 60, SUM_FN_MAX = 28 };

/* The MPI states of format/format.h, then "other" for a root frame that is
 * none of them. */
enum sum_state { SUM_OTHER = WP_STATE_COUNT, SUM_COUNT };

static const char *sum_state_name(int s)
{
    return s < WP_STATE_COUNT ? wp_state_name(s) : "other";
}

/* One call path without its state frame; path points into a folded line. */
struct sum_path {
    const char *path;
    size_t len;
    uint64_t count, stall;
};

struct sum_list {
    struct sum_path *p;
    size_t n;
};

static enum sum_state sum_classify(const char *s, size_t len)
{
    int st = wp_state_parse(s, len);
    return st < 0 ? SUM_OTHER : (enum sum_state)st;
}

static int sum_cmp_path(const void *a, const void *b)
{
    const struct sum_path *x = a, *y = b;
    size_t l = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->path, y->path, l);
    if (c != 0)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

static int sum_cmp_heavy(const void *a, const void *b)
{
    const struct sum_path *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return sum_cmp_path(a, b);
}

/* Sum equal paths, then order the heaviest first. */
static void sum_rank(struct sum_list *l)
{
    if (l->n == 0)
        return;
    qsort(l->p, l->n, sizeof *l->p, sum_cmp_path);
    size_t k = 0;
    for (size_t i = 1; i < l->n; i++) {
        if (sum_cmp_path(&l->p[i], &l->p[k]) == 0) {
            l->p[k].count += l->p[i].count;
            l->p[k].stall += l->p[i].stall;
        } else {
            l->p[++k] = l->p[i];
        }
    }
    l->n = k + 1;
    qsort(l->p, l->n, sizeof *l->p, sum_cmp_heavy);
}

/* --- characters ------------------------------------------------------------------
 * Names are UTF-8 (or arbitrary bytes); widths count characters, and cuts
 * are made only where a character starts, so a name is never split inside
 * a multi-byte sequence. */

static int sum_starts_char(unsigned char c)
{
    return (c & 0xc0) != 0x80;
}

static size_t sum_chars(const char *s, size_t a, size_t b)
{
    size_t n = 0;
    for (size_t i = a; i < b; i++)
        n += sum_starts_char((unsigned char)s[i]);
    return n;
}

/* Byte offset after the first n characters of s[a, b). */
static size_t sum_skip(const char *s, size_t a, size_t b, size_t n)
{
    size_t i = a;
    while (i < b) {
        if (sum_starts_char((unsigned char)s[i]) && n-- == 0)
            break;
        i++;
    }
    return i;
}

/* Byte offset where the last n characters of s[a, b) start. */
static size_t sum_last(const char *s, size_t a, size_t b, size_t n)
{
    size_t i = b;
    while (i > a && n > 0) {
        i--;
        if (sum_starts_char((unsigned char)s[i]))
            n--;
    }
    return i;
}

/* Write s[0, len) in at most max characters (a cut one ends in "…") and pad
 * it with spaces to width characters. */
static void sum_put_padded(FILE *out, const char *s, size_t len, size_t max, size_t width)
{
    size_t chars = sum_chars(s, 0, len);
    if (chars > max) {
        fwrite(s, 1, sum_skip(s, 0, len, max - 1), out);
        fputs("\xe2\x80\xa6", out);
        chars = max;
    } else {
        fwrite(s, 1, len, out);
    }
    for (; chars < width; chars++)
        putc(' ', out);
}

/* Root first; a long path keeps its outermost frames and its innermost
 * ones (which say where the time goes) and drops the middle. */
static void sum_put_path(FILE *out, const char *s, size_t len)
{
    if (len == 0) {
        fputs("(no frames)", out);
        return;
    }
    if (sum_chars(s, 0, len) <= SUM_PATH_MAX) {
        fwrite(s, 1, len, out);
        return;
    }
    /* The tail: whole frames from the leaf within SUM_TAIL_MAX characters,
     * never the root frame; a leaf longer than that keeps only its end. */
    size_t tail = len, tail_chars = 0, end = len;
    int tail_whole = 1;
    for (;;) {
        size_t start = end;
        while (start > 0 && s[start - 1] != ';')
            start--;
        size_t add = sum_chars(s, start, end) + (end < len);
        if (end == len && add > SUM_TAIL_MAX) {
            tail = sum_last(s, 0, len, SUM_TAIL_MAX);
            tail_chars = SUM_TAIL_MAX;
            tail_whole = 0;
            break;
        }
        if (end < len && (start == 0 || tail_chars + add > SUM_TAIL_MAX))
            break;
        tail = start;
        tail_chars += add;
        if (start == 0)
            break;
        end = start - 1;
    }
    /* The head: whole frames from the root, each with its ';', while
     * "head…;tail" stays within SUM_PATH_MAX characters. */
    size_t room = SUM_PATH_MAX - tail_chars - 1 - (size_t)tail_whole;
    size_t head = 0, head_chars = 0;
    for (;;) {
        const char *semi = head < tail ? memchr(s + head, ';', tail - head) : NULL;
        if (semi == NULL)
            break;
        size_t add = sum_chars(s, head, (size_t)(semi - s)) + 1;
        if (head_chars + add > room)
            break;
        head_chars += add;
        head = (size_t)(semi - s) + 1;
    }
    if (head_chars == 0)
        head = sum_skip(s, 0, tail, room); /* not even the root fits: keep its beginning */
    fwrite(s, 1, head, out);
    fputs(tail_whole ? "\xe2\x80\xa6;" : "\xe2\x80\xa6", out);
    fwrite(s + tail, 1, len - tail, out);
}

/* The innermost frame of the path that is an MPI function (the profiler
 * names wrapper frames by the MPI function); the leaf if there is none. */
static void sum_mpi_fn(const char *s, size_t len, size_t *off, size_t *fn_len)
{
    size_t end = len;
    for (;;) {
        size_t start = end;
        while (start > 0 && s[start - 1] != ';')
            start--;
        size_t l = end - start;
        if ((l >= 4 && memcmp(s + start, "MPI_", 4) == 0) || (l >= 5 && memcmp(s + start, "PMPI_", 5) == 0) ||
            (l == 3 && memcmp(s + start, "MPI", 3) == 0)) {
            *off = start, *fn_len = l;
            return;
        }
        if (start == 0)
            break;
        end = start - 1;
    }
    size_t start = len;
    while (start > 0 && s[start - 1] != ';')
        start--;
    *off = start, *fn_len = len - start;
}

static double sum_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int sum_digits(uint64_t v)
{
    int d = 1;
    while (v >= 10)
        v /= 10, d++;
    return d;
}

static void sum_section(FILE *out, const char *heading, const struct sum_list *l, size_t top, uint64_t all,
                        int cw, int in_mpi)
{
    fprintf(out, "\n%s\n", heading);
    if (l->n == 0) {
        fputs("  (none)\n", out);
        return;
    }
    size_t shown = l->n < top ? l->n : top;
    size_t fn_w = 12; /* strlen("MPI function") */
    for (size_t i = 0; in_mpi && i < shown; i++) {
        size_t off, fl;
        sum_mpi_fn(l->p[i].path, l->p[i].len, &off, &fl);
        size_t c = sum_chars(l->p[i].path, off, off + fl);
        if (c > fn_w)
            fn_w = c < SUM_FN_MAX ? c : SUM_FN_MAX;
    }
    if (in_mpi)
        fprintf(out, "   share  %*s  stalled  %-*s  call path (root first)\n", cw, "samples", (int)fn_w,
                "MPI function");
    else
        fprintf(out, "   share  %*s  call path (root first)\n", cw, "samples");
    for (size_t i = 0; i < shown; i++) {
        const struct sum_path *p = &l->p[i];
        fprintf(out, "  %5.1f%%  %*llu  ", sum_pct(p->count, all), cw, (unsigned long long)p->count);
        if (in_mpi) {
            size_t off, fl;
            sum_mpi_fn(p->path, p->len, &off, &fl);
            fprintf(out, " %5.1f%%  ", sum_pct(p->stall, p->count));
            sum_put_padded(out, p->path + off, fl, SUM_FN_MAX, fn_w);
            fputs("  ", out);
        }
        sum_put_path(out, p->path, p->len);
        putc('\n', out);
    }
    if (l->n > shown)
        fprintf(out, "  (%zu more)\n", l->n - shown);
}

int wp_summary_write(FILE *out, const struct wp_folded *f, int ranks, int top)
{
    uint64_t per_state[SUM_COUNT] = {0}, all = 0;
    struct sum_list mpi = {0}, compute = {0};
    mpi.p = malloc((f->n ? f->n : 1) * sizeof *mpi.p);
    compute.p = malloc((f->n ? f->n : 1) * sizeof *compute.p);
    int rc = -1;
    if (mpi.p == NULL || compute.p == NULL)
        goto done;
    for (size_t i = 0; i < f->n; i++) {
        const char *s = f->lines[i].stack;
        uint64_t c = f->lines[i].count;
        if (c == 0)
            continue;
        size_t len = strlen(s);
        const char *semi = memchr(s, ';', len);
        size_t root = semi ? (size_t)(semi - s) : len;
        int st = sum_classify(s, root);
        per_state[st] += c;
        all += c;
        struct sum_path p = {semi ? semi + 1 : s + len, semi ? len - root - 1 : 0, c, st == WP_STATE_STALL ? c : 0};
        if (st == WP_STATE_WORK || st == WP_STATE_STALL)
            mpi.p[mpi.n++] = p;
        else if (st == WP_STATE_NOT_IN_MPI)
            compute.p[compute.n++] = p;
    }
    sum_rank(&mpi);
    sum_rank(&compute);

    errno = 0;
    int cw = sum_digits(all) > 7 ? sum_digits(all) : 7;
    if (ranks > 0)
        fprintf(out, "waitprof summary: %d rank%s, %llu samples\n", ranks, ranks == 1 ? "" : "s",
                (unsigned long long)all);
    else
        fprintf(out, "waitprof summary: %llu samples\n", (unsigned long long)all);
    for (int st = 0; st < SUM_COUNT; st++) {
        if (st == SUM_OTHER && per_state[st] == 0)
            break;
        fprintf(out, "  %-10s  %5.1f%%  %*llu samples\n", sum_state_name(st), sum_pct(per_state[st], all), cw,
                (unsigned long long)per_state[st]);
    }
    if (all == 0)
        fputs("\nNo samples were taken.\n", out);
    else if (top > 0) {
        sum_section(out, "Top call paths in MPI (MPI-Work + MPI-Stall)", &mpi, (size_t)top, all, cw, 1);
        sum_section(out, "Top compute paths (Not-in-MPI)", &compute, (size_t)top, all, cw, 0);
    }
    rc = fflush(out) == 0 && !ferror(out) ? 0 : -1;
    if (rc != 0 && errno == 0)
        errno = EIO;
done:
    free(mpi.p);
    free(compute.p);
    return rc;
}
