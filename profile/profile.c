/* profile/profile.c — see profile/profile.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "fallback/estimate.h"
#include "match/match.h"
#include "state/log.h"
#include "profile/partial.h"
#include "profile/profile.h"
#include "sampler/counters.h"
#include "sampler/store.h"
#include "symbols/symbolize.h"
#include "state/clock.h"
#include "state/thread.h"

/* A frame's definition as a line of rank.R.frames, collected in a folded
 * set so that equal lines merge (wp_symbolizer_frame_locs). */
static void wp_frame_line(void *arg, const char *frame, const char *file, int line, int inlined)
{
    char buf[2400];
    int n = snprintf(buf, sizeof buf, "%s\t%d\t%s\t%d", frame, inlined, file ? file : "", file ? line : 0);
    if (n > 0 && (size_t)n < sizeof buf && strchr(file ? file : "", '\t') == NULL)
        wp_folded_add(arg, buf, (size_t)n, 1);
}

/* One folded line in line[0..cap), state frame first, then the frames
 * ips[0..depth) root first; returns its length (at most cap - 2).  With
 * frames, each frame's definition is added there (rank.R.frames). */
static size_t wp_profile_line(struct wp_symbolizer *sy, struct wp_folded *frames, char *line, size_t cap, int state,
                              int fn, const uintptr_t *ips, int depth)
{
    size_t len = (size_t)snprintf(line, cap, "%s", wp_state_name(state));
    int at_root = 1;
    for (int k = depth - 1; k >= 0; k--) {
        /* Above the leaf a frame is a return address: the call is the
         * instruction before it, and so is the inlined code it belongs to. */
        uintptr_t ip = k > 0 && ips[k] ? ips[k] - 1 : ips[k];
        const char *name = wp_symbolizer_name(sy, ip, fn);
        if (name == NULL)
            continue;
        if (frames)
            wp_symbolizer_frame_locs(sy, ip, wp_frame_line, frames);
        /* glibc's start-up frames have no exported symbol; at the root of a
         * stack they say nothing about the program. */
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
    return len;
}

/* The same line added to out with count. */
static void wp_profile_add(struct wp_folded *out, struct wp_folded *frames, struct wp_symbolizer *sy, char *line,
                           size_t cap, int state, int fn, const uintptr_t *ips, int depth, uint64_t count)
{
    wp_folded_add(out, line, wp_profile_line(sy, frames, line, cap, state, fn, ips, depth), count);
}

int wp_profile_build(struct wp_folded *out, struct wp_folded *frames)
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
    uint64_t now = wp_ticks();
    int n = wp_slots_used();
    for (int i = 0; i < n; i++) {
        const struct wp_store *s = wp_slots[i].store;
        if (s == NULL)
            continue;
        for (uint32_t j = 0, nj = wp_store_count(s); j < nj; j++) {
            const struct wp_stack_entry *e = wp_store_entry(s, j);
            if (e->count == 0)
                continue;
            /* A held sample is classified now, by its category's share
             * of time waited (fallback/estimate.h): an entry in the
             * dividing bucket goes to both states, in the part that makes
             * the share exact. */
            uint64_t stall = e->held ? wp_estimate_entry_stall(e, e->count) : 0;
            int state = e->held ? WAITPROF_STATE_WORK : wp_estimate_entry_state(e);
            if (stall)
                wp_profile_add(out, frames, sy, line, cap, WAITPROF_STATE_STALL, e->fn, &s->arena[e->off], e->depth,
                               stall);
            if (e->count > stall)
                wp_profile_add(out, frames, sy, line, cap, state, e->fn, &s->arena[e->off], e->depth,
                               e->count - stall);
        }
        /* A call still in progress at an abnormal end (its thread's
         * samples were never settled): as the quick writer does
         * (profile/partial.c), rather than lose them. */
        const struct wp_pending *p = s->pending;
        uint64_t stall, all = wp_estimate_pending_split(p, now, &stall);
        if (stall > 0)
            wp_profile_add(out, frames, sy, line, cap, WAITPROF_STATE_STALL, p->fn, p->ips, p->depth, stall);
        if (all > stall)
            wp_profile_add(out, frames, sy, line, cap, WAITPROF_STATE_WORK, p->fn, p->ips, p->depth, all - stall);
    }
    free(line);
    wp_symbolizer_free(sy);
    wp_folded_finish(out);
    if (frames)
        wp_folded_finish(frames);
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
    snprintf(path, sizeof path, "%s/rank.%d.%s", dir, rank, wp_file_suffix(WP_FILE_FOLDED));
    return wp_profile_write_file(path, f);
}

static int wp_output_frames(FILE *fp, const struct wp_output *o)
{
    fprintf(fp, "# %s %d\nframe\tinlined\tfile\tline\n", wp_file_format(WP_FILE_FRAMES),
            wp_file_version(WP_FILE_FRAMES));
    for (size_t i = 0; i < o->f->n; i++)
        fprintf(fp, "%s\n", o->f->lines[i].stack);
    return ferror(fp) ? -1 : 0;
}

int wp_profile_write_frames(const char *dir, int rank, const struct wp_folded *frames)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rank.%d.%s", dir, rank, wp_file_suffix(WP_FILE_FRAMES));
    struct wp_output o = {frames, 0};
    return wp_write_atomic(path, wp_output_frames, &o);
}

int wp_profile_write_paths(const char *dir, int rank)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rank.%d.%s", dir, rank, wp_file_suffix(WP_FILE_PATHS));
    FILE *fp = fopen(path, "w");
    if (fp == NULL) {
        wp_log_always("waitprof: rank %d: cannot write %s (%s)", rank, path, strerror(errno));
        return -1;
    }
    struct wp_symbolizer *sy = wp_symbolizer_new();
    size_t cap = 1 << 16;
    char *line = malloc(cap);
    struct wp_folded one = {0};
    fprintf(fp, "# %s %d\ncause\tpath\n", wp_file_format(WP_FILE_PATHS), wp_file_version(WP_FILE_PATHS));
    struct wp_entries it;
    wp_entries_start(&it);
    for (const struct wp_stack_entry *e; sy && line && (e = wp_entries_next(&it)) != NULL;) {
        if (e->state != WAITPROF_STATE_NOT_IN_MPI || !wp_match_cause_is_used(e->hash))
            continue;
        /* The folded line of the entry, without its state frame. */
        wp_profile_add(&one, NULL, sy, line, cap, e->state, e->fn, &it.s->arena[e->off], e->depth, 1);
        wp_folded_finish(&one);
        const char *text = one.n ? one.lines[0].stack : "";
        const char *semi = strchr(text, ';');
        fprintf(fp, "%016llx\t%s\n", (unsigned long long)e->hash, semi ? semi + 1 : "");
        wp_folded_free(&one);
        memset(&one, 0, sizeof one);
    }
    free(line);
    wp_symbolizer_free(sy);
    if (fclose(fp) != 0) {
        wp_log_always("waitprof: rank %d: cannot write %s (%s)", rank, path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The timeline's namer (profile/partial.h): an entry's folded line without
 * its state frame, in the caller's buffer. */
struct wp_namer {
    struct wp_symbolizer *sy;
    char *line;
    size_t cap;
};

static const char *wp_profile_name_entry(void *arg, const struct wp_store *s, const struct wp_stack_entry *e)
{
    struct wp_namer *nm = arg;
    size_t len = wp_profile_line(nm->sy, NULL, nm->line, nm->cap, e->state, e->fn, &s->arena[e->off], e->depth);
    nm->line[len] = '\0';
    /* A tab or line break in a name would break the file's rows. */
    for (char *c = nm->line; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r')
            *c = ' ';
    const char *semi = strchr(nm->line, ';');
    return semi ? semi + 1 : "";
}

int wp_profile_write_timeline(const char *dir, int rank)
{
    struct wp_namer nm = {wp_symbolizer_new(), NULL, 1 << 16};
    nm.line = malloc(nm.cap);
    /* Without a symbolizer or memory the frames stay unsymbolized. */
    int ok = nm.sy && nm.line;
    int rc = wp_timeline_write_sig(dir, rank, ok ? wp_profile_name_entry : NULL, ok ? &nm : NULL);
    if (rc != 0)
        wp_log_always("waitprof: rank %d: cannot write %s/rank.%d.%s (%s)", rank, dir, rank,
                      wp_file_suffix(WP_FILE_TIMELINE), strerror(errno));
    free(nm.line);
    if (nm.sy)
        wp_symbolizer_free(nm.sy);
    return rc;
}

int wp_profile_write_counters(const char *dir, int rank)
{
    int nc = wp_ctr_count();
    if (nc <= 0)
        return 0;
    struct wp_folded per[WP_CTR_MAX];
    memset(per, 0, sizeof per);
    struct wp_symbolizer *sy = wp_symbolizer_new();
    size_t cap = 1 << 16;
    char *line = malloc(cap);
    int rc = sy && line ? 0 : -1;
    int n = wp_slots_used();
    for (int i = 0; rc == 0 && i < n; i++) {
        const struct wp_store *s = wp_slots[i].store;
        if (s == NULL || s->ctr == NULL)
            continue;
        /* The store was laid out for the counters kept at start-up, so
         * its nctr is nc; the smaller is taken all the same. */
        int k = (int)s->nctr < nc ? (int)s->nctr : nc;
        for (uint32_t j = 0, nj = wp_store_count(s); j < nj; j++) {
            const struct wp_stack_entry *e = wp_store_entry(s, j);
            const uint64_t *sum = wp_entry_ctr(s, e);
            if (sum == NULL)
                continue;
            int any = 0;
            for (int c = 0; c < k; c++)
                any |= sum[c] != 0;
            if (!any)
                continue;
            /* The path as rank.R.folded names it, once per state (held
             * samples split the same way, each counter's sum in the same
             * part), then into each counter's set. */
            uint64_t part[2][WP_CTR_MAX];
            int held = e->held != 0;
            for (int c = 0; c < k; c++) {
                part[0][c] = held ? wp_estimate_entry_stall(e, sum[c]) : 0;
                part[1][c] = sum[c] - part[0][c];
            }
            for (int p = 0; p < 2; p++) {
                int state = p == 0 ? WAITPROF_STATE_STALL : held ? WAITPROF_STATE_WORK : wp_estimate_entry_state(e);
                size_t len = 0;
                for (int c = 0; c < k; c++) {
                    if (part[p][c] == 0)
                        continue;
                    if (len == 0)
                        len = wp_profile_line(sy, NULL, line, cap, state, e->fn, &s->arena[e->off], e->depth);
                    if (wp_folded_add(&per[c], line, len, part[p][c]) != 0)
                        rc = -1;
                }
            }
        }
    }
    /* Without a symbolizer, memory or a whole set, no file: a counter
     * profile with lines missing would mislead. */
    int built = rc;
    for (int c = 0; c < nc; c++) {
        wp_folded_finish(&per[c]);
        char path[4400];
        char file[WP_CTR_NAME_MAX];
        wp_ctr_file_name(wp_ctr_name(c), file, sizeof file);
        snprintf(path, sizeof path, "%s/rank.%d.%s.%s", dir, rank, file, wp_file_suffix(WP_FILE_FOLDED));
        if (built != 0 || wp_profile_write_file(path, &per[c]) != 0) {
            wp_log_always("waitprof: rank %d: cannot write %s (%s)", rank, path,
                          built != 0 ? "out of memory" : strerror(errno));
            rc = -1;
        }
        wp_folded_free(&per[c]);
    }
    free(line);
    if (sy)
        wp_symbolizer_free(sy);
    return rc;
}
