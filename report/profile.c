/* report/profile.c — see report/profile.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/log.h"
#include "report/profile.h"
#include "report/summary.h"
#include "report/svg.h"
#include "sampler/store.h"
#include "sampler/symbolize.h"
#include "state/thread.h"

int wp_profile_build(struct wp_folded *out)
{
    struct wp_symbolizer *sy = wp_symbolizer_new();
    if (sy == NULL)
        return -1;
    size_t cap = 1 << 16;
    char *line = malloc(cap);
    if (line == NULL) {
        wp_symbolizer_free(sy);
        return -1;
    }
    int n = __atomic_load_n(&wp_nslots, __ATOMIC_ACQUIRE);
    if (n > WP_MAX_THREADS)
        n = WP_MAX_THREADS;
    for (int i = 0; i < n; i++) {
        const struct wp_store *s = wp_slots[i].store;
        if (s == NULL)
            continue;
        for (uint32_t j = 0; j < s->nslots; j++) {
            const struct wp_stack_entry *e = &s->slots[j];
            if (!e->used || e->count == 0)
                continue;
            size_t len = (size_t)snprintf(line, cap, "%s", waitprof_state_name(e->state));
            int at_root = 1;
            for (int k = e->depth - 1; k >= 0; k--) {
                const char *name = wp_symbolizer_name(sy, s->arena[e->off + (uint32_t)k], e->fn);
                if (name == NULL)
                    continue;
                /* glibc's start-up frames have no exported symbol; at the
                 * root of a stack they say nothing about the program. */
                if (at_root && strncmp(name, "libc.so.", 8) == 0)
                    continue;
                at_root = 0;
                size_t l = strlen(name);
                if (len + l + 2 >= cap)
                    break; /* 64 KiB of frame names: keep the root part */
                line[len++] = ';';
                memcpy(line + len, name, l);
                len += l;
            }
            wp_folded_add(out, line, len, e->count);
        }
    }
    free(line);
    wp_symbolizer_free(sy);
    wp_folded_finish(out);
    return 0;
}

/* What one output file holds; the writers share the temporary-file dance. */
struct wp_output {
    const struct wp_folded *f;
    int ranks;
};

static int wp_output_folded(FILE *fp, const struct wp_output *o)
{
    return wp_folded_write(fp, o->f);
}

static int wp_output_svg(FILE *fp, const struct wp_output *o)
{
    char title[64];
    snprintf(title, sizeof title, "waitprof: %d rank%s", o->ranks, o->ranks == 1 ? "" : "s");
    return wp_svg_write(fp, o->f, title);
}

/* About 30 lines: what someone reads first. */
static int wp_output_summary(FILE *fp, const struct wp_output *o)
{
    return wp_summary_write(fp, o->f, o->ranks, 8);
}

/* Write path through path.tmp and a rename, so a reader never sees half a
 * file.  On failure errno says why (the clean-up must not overwrite it). */
static int wp_write_atomic(const char *path, int (*emit)(FILE *, const struct wp_output *),
                           const struct wp_output *o)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *fp = fopen(tmp, "w");
    if (fp == NULL)
        return -1;
    int rc = emit(fp, o);
    int err = errno;
    if (fclose(fp) != 0 && rc == 0)
        rc = -1, err = errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1, err = errno;
    if (rc != 0) {
        remove(tmp);
        errno = err;
    }
    return rc;
}

int wp_profile_write_file(const char *path, const struct wp_folded *f)
{
    struct wp_output o = {f, 0};
    return wp_write_atomic(path, wp_output_folded, &o);
}

int wp_profile_write_rank(const char *dir, int rank, const struct wp_folded *f)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rank.%d.folded", dir, rank);
    return wp_profile_write_file(path, f);
}

/* Serialize to the folded text form that is also the file format. */
static char *wp_to_text(const struct wp_folded *f, size_t *len)
{
    size_t cap = 1024, n = 0;
    for (size_t i = 0; i < f->n; i++)
        cap += strlen(f->lines[i].stack) + 24;
    char *buf = malloc(cap);
    if (buf == NULL)
        return NULL;
    for (size_t i = 0; i < f->n; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s %llu\n", f->lines[i].stack,
                              (unsigned long long)f->lines[i].count);
    *len = n;
    return buf;
}

int wp_profile_merge(MPI_Comm comm, int rank, int size, const struct wp_folded *mine, const char *dir,
                     int have_dir)
{
    size_t len = 0;
    char *text = wp_to_text(mine, &len);
    /* Every rank must take part even when it has nothing to send. */
    int mylen = (text && len <= (size_t)1 << 30) ? (int)len : 0;
    int *lens = NULL, *displs = NULL;
    char *all = NULL;
    long long total = 0;
    if (rank == 0) {
        lens = calloc((size_t)size, sizeof *lens);
        displs = calloc((size_t)size, sizeof *displs);
    }
    PMPI_Gather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
    if (rank == 0 && lens && displs) {
        for (int r = 0; r < size; r++) {
            displs[r] = (int)total;
            total += lens[r];
        }
        if (total < ((long long)1 << 31) - 1)
            all = malloc((size_t)total + 1);
        if (all == NULL)
            for (int r = 0; r < size; r++)
                lens[r] = 0, displs[r] = 0;
    }
    /* Ranks send nothing if rank 0 could not take it; it tells them so. */
    int ok = rank != 0 || all != NULL;
    PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    PMPI_Gatherv(text, ok ? mylen : 0, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, comm);
    int rc = 0;
    if (rank == 0) {
        if (!ok) {
            wp_log("waitprof: not enough memory to merge %lld bytes of profiles; the per-rank files are complete",
                   total);
            rc = -1;
        } else if (have_dir) {
            struct wp_folded merged = {0};
            wp_folded_add_text(&merged, all, (size_t)total);
            wp_folded_finish(&merged);
            char path[4200];
            snprintf(path, sizeof path, "%s/all.folded", dir);
            rc = wp_profile_write_file(path, &merged);
            if (rc != 0)
                wp_log("waitprof: cannot write %s (%s)", path, strerror(errno));
            /* The picture and the digest are tried even when all.folded was
             * not written: each failure is reported on its own. */
            struct wp_output o = {&merged, size};
            snprintf(path, sizeof path, "%s/all.svg", dir);
            if (wp_write_atomic(path, wp_output_svg, &o) != 0) {
                wp_log("waitprof: cannot write %s (%s)", path, strerror(errno));
                rc = -1;
            }
            snprintf(path, sizeof path, "%s/summary.txt", dir);
            if (wp_write_atomic(path, wp_output_summary, &o) != 0) {
                wp_log("waitprof: cannot write %s (%s)", path, strerror(errno));
                rc = -1;
            }
            wp_folded_free(&merged);
        }
    }
    free(all);
    free(lens);
    free(displs);
    free(text);
    return rc;
}
