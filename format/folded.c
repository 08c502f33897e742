/* format/folded.c — see format/folded.h. */
#include <stdlib.h>
#include <string.h>

#include "format/folded.h"

void wp_frame_sanitize(char *dst, size_t cap, const char *src)
{
    size_t k = 0;
    for (const char *p = src; *p && k + 1 < cap; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == ';')
            c = ':';
        else if (c < 0x20 || c == 0x7f)
            c = '?';
        dst[k++] = (char)c;
    }
    dst[k] = '\0';
    if (k == 0 && cap > 2) {
        memcpy(dst, "??", 3);
        return;
    }
    /* A trailing space (a long C++ name cut at cap ends in one easily) would
     * put two spaces before the count, a line wp_folded_parse() refuses. */
    for (size_t t = k; t > 0 && dst[t - 1] == ' '; t--)
        dst[t - 1] = '_';
    /* A trailing " 123" would read as a count: join the digits to the name. */
    char *sp = strrchr(dst, ' ');
    if (sp && sp[1] && strspn(sp + 1, "0123456789") == strlen(sp + 1))
        *sp = '_';
    /* flamegraph.pl colours frames ending in _[k], _[j], _[i], _[w]. */
    size_t n = strlen(dst);
    if (n >= 4 && dst[n - 4] == '_' && dst[n - 3] == '[' && dst[n - 1] == ']')
        dst[n - 4] = '-';
}

int wp_folded_add(struct wp_folded *f, const char *stack, size_t len, uint64_t count)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 256;
        struct wp_folded_line *l = realloc(f->lines, cap * sizeof *l);
        if (l == NULL)
            return -1;
        f->lines = l;
        f->cap = cap;
    }
    char *s = malloc(len + 1);
    if (s == NULL)
        return -1;
    memcpy(s, stack, len);
    s[len] = '\0';
    f->lines[f->n].stack = s;
    f->lines[f->n].count = count;
    f->n++;
    return 0;
}

static int wp_line_cmp(const void *a, const void *b)
{
    return strcmp(((const struct wp_folded_line *)a)->stack, ((const struct wp_folded_line *)b)->stack);
}

void wp_folded_finish(struct wp_folded *f)
{
    if (f->n == 0)
        return;
    qsort(f->lines, f->n, sizeof *f->lines, wp_line_cmp);
    size_t k = 0;
    for (size_t i = 1; i < f->n; i++) {
        if (strcmp(f->lines[i].stack, f->lines[k].stack) == 0) {
            f->lines[k].count += f->lines[i].count;
            free(f->lines[i].stack);
        } else {
            f->lines[++k] = f->lines[i];
        }
    }
    f->n = k + 1;
}

int wp_folded_write(FILE *out, const struct wp_folded *f)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->lines[i].count && fprintf(out, "%s %llu\n", f->lines[i].stack,
                                         (unsigned long long)f->lines[i].count) < 0)
            return -1;
    return 0;
}

int wp_folded_parse(const char *line, size_t len, size_t *stack_len, uint64_t *count)
{
    size_t i = len;
    while (i > 0 && line[i - 1] >= '0' && line[i - 1] <= '9')
        i--;
    if (i == len || i < 2 || line[i - 1] != ' ' || line[i - 2] == ' ' || len - i > 19)
        return -1;
    uint64_t c = 0;
    for (size_t j = i; j < len; j++)
        c = c * 10 + (uint64_t)(line[j] - '0');
    if (c == 0)
        return -1;
    for (size_t j = 0; j < i - 1; j++)
        if (line[j] == '\n' || line[j] == '\0')
            return -1;
    *stack_len = i - 1;
    *count = c;
    return 0;
}

size_t wp_folded_add_text(struct wp_folded *f, const char *text, size_t len)
{
    size_t bad = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        size_t sl;
        uint64_t c;
        if (l > 0) {
            if (wp_folded_parse(p, l, &sl, &c) == 0)
                wp_folded_add(f, p, sl, c);
            else
                bad++;
        }
        p += l + 1;
    }
    return bad;
}

uint64_t wp_folded_total(const struct wp_folded *f)
{
    uint64_t t = 0;
    for (size_t i = 0; i < f->n; i++)
        t += f->lines[i].count;
    return t;
}

void wp_folded_free(struct wp_folded *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->lines[i].stack);
    free(f->lines);
    f->lines = NULL;
    f->n = f->cap = 0;
}
