/* report/counters.c — the counter profiles of a run (WAITPROF_COUNTERS):
 * every rank.R.<event>.folded of the ranks read merged into
 * all.<event>.folded.  The events are those the files name; a rank that
 * could not count one simply has no file for it. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/folded.h"
#include "report/model.h"

/* The event of a directory entry "rank.R.<event>.folded" of a rank the
 * report reads, into ev (capacity cap); 0, or -1 when it is no such file.
 * An event is a name of letters, digits and - _ : (state/config.c allows
 * '.' and '/' too, which never make a file name here). */
static int wp_rep_counter_file(const struct run *R, const char *name, char *ev, size_t cap, int *rank)
{
    int n = 0;
    if (sscanf(name, "rank.%d.%n", rank, &n) != 1 || n == 0 || *rank < 0)
        return -1;
    const char *p = name + n;
    size_t len = strlen(p), sfx = strlen(".folded");
    if (len <= sfx || strcmp(p + len - sfx, ".folded") != 0 || len - sfx >= cap)
        return -1;
    len -= sfx;
    for (size_t i = 0; i < len; i++)
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9') ||
              p[i] == '-' || p[i] == '_' || p[i] == ':'))
            return -1;
    int listed = 0;
    for (size_t i = 0; i < R->nr && !listed; i++)
        listed = R->r[i].rank == *rank;
    if (!listed)
        return -1;
    memcpy(ev, p, len);
    ev[len] = '\0';
    return 0;
}

size_t wp_rep_counter_events(const struct run *R, const char *dir, char (*ev)[64], size_t max)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    size_t n = 0;
    struct dirent *e;
    char one[64];
    int rank;
    while ((e = readdir(d)) != NULL) {
        if (wp_rep_counter_file(R, e->d_name, one, sizeof one, &rank) != 0)
            continue;
        int seen = 0;
        for (size_t i = 0; i < n && !seen; i++)
            seen = strcmp(ev[i], one) == 0;
        if (!seen && n < max)
            memcpy(ev[n++], one, sizeof one);
    }
    closedir(d);
    return n;
}

void wp_rep_counter_merge(struct run *R, const char *dir, const char *event, struct wp_folded *out)
{
    char path[4400];
    for (size_t i = 0; i < R->nr; i++) {
        snprintf(path, sizeof path, "%s/rank.%d.%s.folded", dir, R->r[i].rank, event);
        size_t len = 0;
        char *text = wp_rep_slurp(path, &len);
        if (text == NULL)
            continue;
        size_t bad = wp_folded_add_text(out, text, len);
        if (bad)
            wp_rep_problem(&R->c, "rank.%d.%s.folded: %zu malformed line%s skipped", R->r[i].rank, event, bad,
                           bad == 1 ? "" : "s");
        free(text);
    }
    wp_folded_finish(out);
}
