/* sampler/counters.c — see sampler/counters.h.  The dispatch between the
 * backends (sampler/ctr_backend.h): which backend a name goes to, the
 * fallback from a PAPI name to its exact perf_event equivalent, the kept
 * list {backend, name, unit}, and the deltas, which are the same
 * arithmetic whatever counted. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sampler/counters.h"
#include "sampler/ctr_backend.h"
#include "state/thread.h"

/* --- names ------------------------------------------------------------------- */

/* PAPI presets whose definition is the one perf_event hardware event
 * (the cycles, the instructions, the branches): counted the same by
 * either, so either may count them.  Presets that PAPI derives or maps to
 * model-specific events (the caches, the stalls) have no such twin. */
static const struct {
    const char *papi, *perf;
} wp_ctr_twins[] = {
    {"PAPI_TOT_CYC", "cycles"},   {"PAPI_TOT_INS", "instructions"}, {"PAPI_BR_INS", "branches"},
    {"PAPI_BR_MSP", "branch-misses"}, {"PAPI_REF_CYC", "ref-cycles"},
};

enum wp_ctr_be wp_ctr_backend_of(const char *name)
{
    if (strncmp(name, "PAPI_", 5) == 0 || strstr(name, "::") != NULL)
        return WP_CTR_BE_PAPI;
    return wp_perf_lookup(name, 0) >= 0 ? WP_CTR_BE_PERF : WP_CTR_BE_NONE;
}

const char *wp_ctr_perf_equivalent(const char *name)
{
    for (size_t i = 0; i < sizeof wp_ctr_twins / sizeof wp_ctr_twins[0]; i++)
        if (strcmp(name, wp_ctr_twins[i].papi) == 0)
            return wp_ctr_twins[i].perf;
    /* libpfm4's perf:: PMU is perf_event's generic events by name: the
     * same type and config, so the same count.  A name with modifiers
     * after the event (perf::CYCLES:u) counts something else and has no
     * twin here. */
    if (strncmp(name, "perf::", 6) == 0) {
        int ev = wp_perf_lookup(name + 6, 1);
        if (ev >= 0)
            return wp_perf_event_name(ev);
    }
    return NULL;
}

const char *wp_ctr_unit_of(const char *name)
{
    int ev = wp_perf_lookup(name, 0);
    if (ev < 0) {
        const char *twin = wp_ctr_perf_equivalent(name);
        ev = twin ? wp_perf_lookup(twin, 0) : -1;
    }
    return wp_perf_event_is_clock(ev) ? "ns" : "events";
}

void wp_ctr_file_name(const char *name, char *out, size_t cap)
{
    size_t i = 0;
    for (; cap > 0 && name[i] && i + 1 < cap; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                 c == ':';
        out[i] = ok ? c : '_';
    }
    if (cap > 0)
        out[i] = '\0';
}

const char *wp_ctr_backend_name(enum wp_ctr_be be)
{
    return be == WP_CTR_BE_PAPI ? "papi" : be == WP_CTR_BE_PERF ? "perf_event" : "none";
}

/* --- the kept counters ------------------------------------------------------------ */

/* The kept counters in the user's order: the name the user gave (the
 * files are named after it), its unit, the backend that counts it and its
 * slot in that backend's group or EventSet. */
static struct {
    char name[WP_CTR_NAME_MAX];
    const char *unit;
    enum wp_ctr_be be;
    int slot;
} wp_ctr_kept[WP_CTR_MAX];
static int wp_ctr_n;

/* Per thread, by registry index: the counts of the previous read, in kept
 * order.  Written by the thread's own reads only (the handler, or a
 * normal-context caller that keeps the handler out meanwhile), after the
 * open cleared them. */
static uint64_t wp_ctr_last[WP_MAX_THREADS][WP_CTR_MAX];

static void wp_ctr_keep(const char *name, enum wp_ctr_be be, int slot)
{
    snprintf(wp_ctr_kept[wp_ctr_n].name, WP_CTR_NAME_MAX, "%s", name);
    wp_ctr_kept[wp_ctr_n].unit = wp_ctr_unit_of(name);
    wp_ctr_kept[wp_ctr_n].be = be;
    wp_ctr_kept[wp_ctr_n].slot = slot;
    wp_ctr_n++;
}

/* Why perf_event_open refused an event, for a message. */
static void wp_ctr_perf_why(char *out, size_t cap, int ev, int err)
{
    snprintf(out, cap, "perf_event_open: %s%s", strerror(err),
             wp_perf_event_is_hw(ev) && (err == ENOENT || err == EOPNOTSUPP) ? ", no hardware PMU (a virtual machine?)"
                                                                             : "");
}

/* A PAPI name: PAPI first, then its perf_event twin with one line saying
 * what PAPI lacked, else one line saying it is not counted. */
static void wp_ctr_setup_papi(const char *name, void (*report)(const char *line))
{
    char why[320], line[768];
    if (wp_papi_start(why, sizeof why) == 0) {
        if (wp_papi_add(name, why, sizeof why) == 0) {
            wp_ctr_keep(name, WP_CTR_BE_PAPI, wp_papi_count() - 1);
            return;
        }
    } else {
        /* The reason is PAPI's as a whole; the line names the event. */
        char whole[320];
        snprintf(whole, sizeof whole, "%s", why);
        snprintf(why, sizeof why, "%.63s is a PAPI name, and %s", name, whole);
    }
    const char *twin = wp_ctr_perf_equivalent(name);
    if (twin == NULL) {
        snprintf(line, sizeof line,
                 "waitprof: WAITPROF_COUNTERS: %s, and Linux perf_event has no exact equivalent; %s is not counted, "
                 "the run goes on",
                 why, name);
        report(line);
        return;
    }
    int ev = wp_perf_lookup(twin, 0);
    if (wp_perf_add(ev) != 0) {
        char pw[160];
        wp_ctr_perf_why(pw, sizeof pw, ev, errno);
        snprintf(line, sizeof line,
                 "waitprof: WAITPROF_COUNTERS: %s, nor can Linux perf_event count its equivalent %s (%s); %s is not "
                 "counted, the run goes on",
                 why, twin, pw, name);
        report(line);
        return;
    }
    wp_ctr_keep(name, WP_CTR_BE_PERF, wp_perf_count() - 1);
    snprintf(line, sizeof line, "waitprof: WAITPROF_COUNTERS: %s; counted %s with Linux perf_event instead", why,
             twin);
    report(line);
}

int wp_ctr_setup(const char (*names)[WP_CTR_NAME_MAX], int n, void (*report)(const char *line))
{
    char line[768];
    wp_ctr_n = 0;
    wp_perf_reset();
    wp_papi_reset();
    for (int i = 0; i < n && i < WP_CTR_MAX; i++) {
        const char *name = names[i];
        enum wp_ctr_be be = wp_ctr_backend_of(name);
        if (be == WP_CTR_BE_NONE) {
            snprintf(line, sizeof line,
                     "waitprof: WAITPROF_COUNTERS: unknown event \"%.63s\" not counted; known: %s (perf names), "
                     "PAPI presets (PAPI_TOT_CYC...) and PAPI native names (perf::TASK-CLOCK...)",
                     name, wp_perf_known());
            report(line);
            continue;
        }
        int dup = 0, clash = -1;
        char file[WP_CTR_NAME_MAX], kfile[WP_CTR_NAME_MAX];
        wp_ctr_file_name(name, file, sizeof file);
        for (int k = 0; k < wp_ctr_n; k++) {
            dup |= strcmp(wp_ctr_kept[k].name, name) == 0 ||
                   (be == WP_CTR_BE_PERF && wp_ctr_kept[k].be == WP_CTR_BE_PERF &&
                    wp_perf_lookup(wp_ctr_kept[k].name, 0) == wp_perf_lookup(name, 0));
            wp_ctr_file_name(wp_ctr_kept[k].name, kfile, sizeof kfile);
            if (strcmp(file, kfile) == 0)
                clash = k;
        }
        if (dup) {
            snprintf(line, sizeof line, "waitprof: WAITPROF_COUNTERS: \"%.63s\" is given twice; counted once", name);
            report(line);
            continue;
        }
        /* Two names that differ only in '.' or '/' against '_' would
         * write the same file: the first keeps it. */
        if (clash >= 0) {
            snprintf(line, sizeof line,
                     "waitprof: WAITPROF_COUNTERS: \"%.63s\" would be written to the file of \"%.63s\" "
                     "(rank.R.%.63s.folded); it is left out",
                     name, wp_ctr_kept[clash].name, file);
            report(line);
            continue;
        }
        if (be == WP_CTR_BE_PAPI) {
            wp_ctr_setup_papi(name, report);
            continue;
        }
        int ev = wp_perf_lookup(name, 0);
        if (wp_perf_add(ev) != 0) {
            int err = errno;
            char pw[160];
            wp_ctr_perf_why(pw, sizeof pw, ev, err);
            snprintf(line, sizeof line,
                     "waitprof: WAITPROF_COUNTERS: event %s cannot be counted here (%s); the run goes on without it%s",
                     name, pw,
                     err == EACCES || err == EPERM ? "; lower /proc/sys/kernel/perf_event_paranoid to count it"
                                                   : "; leave it out of the list");
            report(line);
            continue;
        }
        wp_ctr_keep(name, WP_CTR_BE_PERF, wp_perf_count() - 1);
    }
    wp_perf_trial_end();
    wp_papi_trial_end();
    if (n > WP_CTR_MAX) {
        snprintf(line, sizeof line, "waitprof: WAITPROF_COUNTERS names %d events; only the first %d are counted",
                 n, WP_CTR_MAX);
        report(line);
    }
    return wp_ctr_n;
}

int wp_ctr_count(void)
{
    return wp_ctr_n;
}

const char *wp_ctr_name(int i)
{
    return i >= 0 && i < wp_ctr_n ? wp_ctr_kept[i].name : "";
}

const char *wp_ctr_unit(int i)
{
    return i >= 0 && i < wp_ctr_n ? wp_ctr_kept[i].unit : "";
}

const char *wp_ctr_backend(int i)
{
    return i >= 0 && i < wp_ctr_n ? wp_ctr_backend_name(wp_ctr_kept[i].be) : "";
}

int wp_ctr_thread_open(int index)
{
    if (wp_ctr_n == 0 || index < 0 || index >= WP_MAX_THREADS)
        return -1;
    /* The base of the first delta: counting starts with the group, so the
     * thread's first sample gets the counts since its registration.
     * Cleared before either backend publishes its group. */
    memset(wp_ctr_last[index], 0, sizeof wp_ctr_last[index]);
    if (wp_perf_thread_open(index) != 0)
        return -1;
    if (wp_papi_thread_open(index) != 0) {
        /* Both or neither, so that a thread's counts are all there or
         * all zero. */
        int err = errno;
        wp_perf_thread_close(index);
        errno = err;
        return -1;
    }
    return 0;
}

void wp_ctr_thread_close(int index)
{
    wp_papi_thread_close(index);
    wp_perf_thread_close(index);
}

void wp_ctr_close_all(void)
{
    wp_papi_close_all();
    wp_perf_close_all();
}

/* Each backend's read is async-signal-safe (ctr_perf.c: one read();
 * ctr_papi.c: PAPI_read, which is a table lookup and read() on the
 * thread's own descriptors); the values are on this stack.  A counter
 * whose backend could not be read is WP_CTR_UNREAD: its baselines stay. */
int wp_ctr_read_abs_sig(int index, uint64_t *abs)
{
    if (index < 0 || index >= WP_MAX_THREADS || wp_ctr_n == 0)
        return -1;
    uint64_t v[2][WP_CTR_MAX];
    int ok[2];
    ok[WP_CTR_BE_PERF] = wp_perf_count() > 0 && wp_perf_read_sig(index, v[WP_CTR_BE_PERF]) == 0;
    ok[WP_CTR_BE_PAPI] = wp_papi_count() > 0 && wp_papi_read_sig(index, v[WP_CTR_BE_PAPI]) == 0;
    if (!ok[WP_CTR_BE_PERF] && !ok[WP_CTR_BE_PAPI])
        return -1;
    for (int k = 0; k < wp_ctr_n; k++) {
        int be = wp_ctr_kept[k].be;
        abs[k] = ok[be] ? v[be][wp_ctr_kept[k].slot] : WP_CTR_UNREAD;
    }
    return 0;
}

void wp_ctr_since_sig(uint64_t *last, const uint64_t *abs, uint64_t *delta)
{
    for (int k = 0; k < wp_ctr_n; k++) {
        uint64_t v = abs[k];
        if (v == WP_CTR_UNREAD) {
            delta[k] = 0;
            continue;
        }
        /* Counts only grow; a smaller value would be a reset we did not
         * make, and then the new count is the delta. */
        delta[k] = v >= last[k] ? v - last[k] : v;
        last[k] = v;
    }
}

/* The samples' baseline is static memory only this thread writes: its
 * handler, or its wrapper while the handler leaves the counters alone
 * (sampler/ctr_split.h). */
void wp_ctr_delta_sig(int index, const uint64_t *abs, uint64_t *delta)
{
    if (index < 0 || index >= WP_MAX_THREADS) {
        for (int k = 0; k < wp_ctr_n; k++)
            delta[k] = 0;
        return;
    }
    wp_ctr_since_sig(wp_ctr_last[index], abs, delta);
}

void wp_ctr_times_sig(uint64_t *enabled, uint64_t *running)
{
    wp_perf_times_sum(enabled, running);
}

void wp_ctr_read_sig(int index, uint64_t *delta)
{
    uint64_t abs[WP_CTR_MAX];
    if (wp_ctr_read_abs_sig(index, abs) != 0) {
        for (int k = 0; k < wp_ctr_n; k++)
            delta[k] = 0;
        return;
    }
    wp_ctr_delta_sig(index, abs, delta);
}
