/* sampler/ctr_papi.c — the PAPI backend of the counters (see
 * sampler/ctr_backend.h).  libpapi is never linked: it is opened with
 * dlopen the first time a PAPI name is asked for, so the library runs
 * where PAPI is absent, and only papi.h (its types and constants) is
 * needed at build time (configure's --with-papi; without it every call
 * here says PAPI was not built).
 *
 * PAPI's rules, which decide the shape of this file: PAPI_library_init
 * and PAPI_thread_init (with the kernel's thread id, which is what PAPI's
 * perf_event component attaches its counters to) once, in normal context;
 * every thread registered (PAPI_register_thread) and its EventSet created,
 * filled and started by the thread itself outside any signal handler; no
 * multiplexing (it would need PAPI's own timer signal); in the handler
 * only PAPI_read, on the thread's own EventSet; the set stopped, emptied
 * and destroyed, and the thread unregistered, by the thread itself.
 * One EventSet per thread, so the PAPI events kept must belong to one PAPI
 * component (the first one kept decides): an event of another component
 * is refused at setup like any event PAPI cannot add, and falls back or
 * is left out with its line. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sampler/counters.h"
#include "sampler/ctr_backend.h"
#include "state/thread.h"

#ifdef HAVE_PAPI

#include <dlfcn.h>
#include <papi.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The functions used, resolved by name from the loaded library. */
static struct {
    int (*library_init)(int);
    int (*thread_init)(unsigned long (*)(void));
    int (*register_thread)(void);
    int (*unregister_thread)(void);
    int (*create_eventset)(int *);
    int (*add_named_event)(int, const char *);
    int (*event_name_to_code)(const char *, int *);
    int (*query_event)(int);
    int (*enum_event)(int *, int);
    int (*num_components)(void);
    const PAPI_component_info_t *(*get_component_info)(int);
    int (*get_opt)(int, PAPI_option_t *);
    int (*start)(int);
    int (*stop)(int, long long *);
    int (*read)(int, long long *);
    int (*cleanup_eventset)(int);
    int (*destroy_eventset)(int *);
    char *(*strerror)(int);
} wp_papi;

/* 0: not tried; 1: started; -1: failed, wp_papi_why says why. */
static int wp_papi_state;
static char wp_papi_why[256];
static char wp_papi_ver[32];
static int wp_papi_avail = -1;

/* The kept events' names, in EventSet order, and the trial set. */
static char wp_papi_kept[WP_CTR_MAX][WP_CTR_NAME_MAX];
static int wp_papi_n;
static int wp_papi_trial = PAPI_NULL;

/* Per thread, by registry index: the EventSet the handler may read
 * (PAPI_NULL: none) and the one the thread owns until it tears it down.
 * They differ after wp_papi_close_all, which can only take a set out of
 * the handler's reach: tearing it down frees memory and must be done by
 * the owning thread.  Static, so the handler touches no memory that a
 * registration could still be allocating. */
static int wp_papi_live[WP_MAX_THREADS];
static int wp_papi_owned[WP_MAX_THREADS];
static int wp_papi_ready;

static unsigned long wp_papi_tid(void)
{
    return (unsigned long)syscall(SYS_gettid);
}

/* Where the library is looked for: the prefix configure was given first,
 * then the loader's path by the names Debian (7.0), upstream (7) and a
 * development install give it. */
static const char *const wp_papi_libs[] = {
#ifdef WP_PAPI_LIBDIR
    WP_PAPI_LIBDIR "/libpapi.so",
#endif
    "libpapi.so.7.0", "libpapi.so.7", "libpapi.so",
};

static int wp_papi_load(void)
{
    void *h = NULL;
    char err[200] = "";
    for (size_t i = 0; i < sizeof wp_papi_libs / sizeof wp_papi_libs[0] && h == NULL; i++) {
        h = dlopen(wp_papi_libs[i], RTLD_NOW | RTLD_LOCAL);
        /* The first name's error says the most (the others are the
         * same library by other names); it names the file or not. */
        const char *e = h == NULL && i == 0 ? dlerror() : NULL;
        if (e != NULL)
            snprintf(err, sizeof err, "%s%s%.150s", strstr(e, wp_papi_libs[i]) ? "" : wp_papi_libs[i],
                     strstr(e, wp_papi_libs[i]) ? "" : ": ", e);
    }
    if (h == NULL) {
        snprintf(wp_papi_why, sizeof wp_papi_why, "PAPI cannot be loaded (%s)", err);
        return -1;
    }
#define WP_SYM(f)                                                                                        \
    if ((*(void **)&wp_papi.f = dlsym(h, "PAPI_" #f)) == NULL) {                                         \
        snprintf(wp_papi_why, sizeof wp_papi_why, "the loaded libpapi has no PAPI_%s (not PAPI 7?)", #f); \
        return -1;                                                                                       \
    }
    WP_SYM(library_init) WP_SYM(thread_init) WP_SYM(register_thread) WP_SYM(unregister_thread)
    WP_SYM(create_eventset) WP_SYM(add_named_event) WP_SYM(event_name_to_code) WP_SYM(query_event)
    WP_SYM(enum_event) WP_SYM(num_components) WP_SYM(get_component_info) WP_SYM(get_opt) WP_SYM(start)
    WP_SYM(stop) WP_SYM(read) WP_SYM(cleanup_eventset) WP_SYM(destroy_eventset) WP_SYM(strerror)
#undef WP_SYM
    return 0;
}

/* How many events PAPI offers here: the presets it can count and the
 * native events of its enabled components.  Only said in a message, where
 * 0 explains itself (no component found a PMU). */
static int wp_papi_count_events(void)
{
    int n = 0, code = PAPI_PRESET_MASK;
    if (wp_papi.enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK)
        do
            n += wp_papi.query_event(code) == PAPI_OK;
        while (wp_papi.enum_event(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
    int nc = wp_papi.num_components();
    for (int c = 0; c < nc; c++) {
        const PAPI_component_info_t *ci = wp_papi.get_component_info(c);
        if (ci != NULL && !ci->disabled && ci->num_native_events > 0)
            n += ci->num_native_events;
    }
    return n;
}

/* PAPI keeps its EventSets in one table that PAPI_read indexes without a
 * lock, and that PAPI_create_eventset doubles with realloc when it is
 * full (PAPI_INIT_SLOTS, 64, at first; it never shrinks).  A handler
 * reading it while another thread's registration grows it could read
 * freed memory.  So it is grown here, before any set is published, to
 * hold a set for every thread waitprof can sample and the trial set:
 * that many sets are created, then destroyed (about a millisecond). */
static void wp_papi_grow_table(void)
{
    static int sets[WP_MAX_THREADS + 2];
    int n = 0;
    while (n < WP_MAX_THREADS + 2) {
        sets[n] = PAPI_NULL;
        if (wp_papi.create_eventset(&sets[n]) != PAPI_OK)
            break;
        n++;
    }
    while (n > 0)
        wp_papi.destroy_eventset(&sets[--n]);
}

int wp_papi_start(char *why, size_t cap)
{
    if (wp_papi_state == 0) {
        wp_papi_state = -1;
        if (wp_papi_load() == 0) {
            int v = wp_papi.library_init(PAPI_VER_CURRENT);
            if (v != PAPI_VER_CURRENT) {
                if (v > 0)
                    snprintf(wp_papi_why, sizeof wp_papi_why,
                             "the loaded PAPI is version %d.%d, waitprof was built for %d.%d", PAPI_VERSION_MAJOR(v),
                             PAPI_VERSION_MINOR(v), PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION));
                else
                    snprintf(wp_papi_why, sizeof wp_papi_why, "PAPI did not start (PAPI_library_init: %.120s)",
                             wp_papi.strerror(v) ? wp_papi.strerror(v) : "error");
            } else if ((v = wp_papi.thread_init(wp_papi_tid)) != PAPI_OK) {
                snprintf(wp_papi_why, sizeof wp_papi_why, "PAPI did not start (PAPI_thread_init: %.120s)",
                         wp_papi.strerror(v) ? wp_papi.strerror(v) : "error");
            } else {
                int full = wp_papi.get_opt(PAPI_LIB_VERSION, NULL);
                if (full <= 0)
                    full = PAPI_VERSION;
                snprintf(wp_papi_ver, sizeof wp_papi_ver, "%d.%d.%d", PAPI_VERSION_MAJOR(full),
                         PAPI_VERSION_MINOR(full), PAPI_VERSION_REVISION(full));
                wp_papi_avail = wp_papi_count_events();
                wp_papi_grow_table();
                for (int i = 0; i < WP_MAX_THREADS; i++)
                    wp_papi_live[i] = wp_papi_owned[i] = PAPI_NULL;
                wp_papi_ready = 1;
                wp_papi_state = 1;
            }
        }
    }
    if (wp_papi_state < 0)
        snprintf(why, cap, "%s", wp_papi_why);
    return wp_papi_state > 0 ? 0 : -1;
}

const char *wp_papi_version(void)
{
    return wp_papi_ver;
}

void wp_papi_reset(void)
{
    wp_papi_n = 0;
}

int wp_papi_add(const char *name, char *why, size_t cap)
{
    if (wp_papi_state <= 0 || wp_papi_n >= WP_CTR_MAX) {
        snprintf(why, cap, "PAPI is not started");
        return -1;
    }
    int code = 0;
    if (wp_papi.event_name_to_code(name, &code) != PAPI_OK || wp_papi.query_event(code) != PAPI_OK) {
        snprintf(why, cap, "PAPI %s offers no event %s here (%d events available%s)", wp_papi_ver, name,
                 wp_papi_avail, wp_papi_avail == 0 ? ": no hardware PMU?" : "");
        return -1;
    }
    int rc = PAPI_OK;
    if (wp_papi_trial == PAPI_NULL)
        rc = wp_papi.create_eventset(&wp_papi_trial);
    /* Added beside the events kept before it, as every thread's set will
     * be: an event that does not fit with them (too few counters, and no
     * multiplexing) is refused here, not in a thread's registration. */
    if (rc == PAPI_OK)
        rc = wp_papi.add_named_event(wp_papi_trial, name);
    if (rc != PAPI_OK) {
        snprintf(why, cap, "PAPI %s cannot count %s here (PAPI_add_named_event: %.100s)", wp_papi_ver, name,
                 wp_papi.strerror(rc) ? wp_papi.strerror(rc) : "error");
        return -1;
    }
    snprintf(wp_papi_kept[wp_papi_n++], WP_CTR_NAME_MAX, "%s", name);
    return 0;
}

void wp_papi_trial_end(void)
{
    if (wp_papi_trial == PAPI_NULL)
        return;
    wp_papi.cleanup_eventset(wp_papi_trial);
    wp_papi.destroy_eventset(&wp_papi_trial);
    wp_papi_trial = PAPI_NULL;
}

int wp_papi_count(void)
{
    return wp_papi_n;
}

/* The EventSet of a thread that failed half way, or that is closed. */
static void wp_papi_teardown(int set, int registered)
{
    long long drop[WP_CTR_MAX];
    if (set != PAPI_NULL) {
        wp_papi.stop(set, drop);
        wp_papi.cleanup_eventset(set);
        wp_papi.destroy_eventset(&set);
    }
    if (registered)
        wp_papi.unregister_thread();
}

int wp_papi_thread_open(int index)
{
    if (wp_papi_n == 0)
        return 0;
    if (index < 0 || index >= WP_MAX_THREADS || !wp_papi_ready)
        return -1;
    int set = PAPI_NULL;
    int rc = wp_papi.register_thread();
    int registered = rc == PAPI_OK;
    if (rc == PAPI_OK)
        rc = wp_papi.create_eventset(&set);
    for (int k = 0; rc == PAPI_OK && k < wp_papi_n; k++)
        rc = wp_papi.add_named_event(set, wp_papi_kept[k]);
    if (rc == PAPI_OK)
        rc = wp_papi.start(set);
    if (rc != PAPI_OK) {
        /* All or nothing, as the perf_event group: the handler expects
         * every kept event or none. */
        int err = rc == PAPI_ESYS ? errno : ENODEV;
        wp_papi_teardown(set, registered);
        errno = err;
        return -1;
    }
    wp_papi_owned[index] = set;
    __atomic_store_n(&wp_papi_live[index], set, __ATOMIC_RELEASE);
    return 0;
}

void wp_papi_thread_close(int index)
{
    if (index < 0 || index >= WP_MAX_THREADS || !wp_papi_ready)
        return;
    /* Out of the handler's reach before anything is freed. */
    __atomic_store_n(&wp_papi_live[index], PAPI_NULL, __ATOMIC_RELEASE);
    int set = wp_papi_owned[index];
    if (set == PAPI_NULL)
        return;
    wp_papi_owned[index] = PAPI_NULL;
    wp_papi_teardown(set, 1);
}

/* Stores only: async-signal-safe.  The sets stay allocated (and counting,
 * at no cost to anyone) until their threads close them or the process
 * ends; a thread that never closes its own (the main thread) leaves it to
 * the exit, which closes the descriptors. */
void wp_papi_close_all(void)
{
    for (int i = 0; i < WP_MAX_THREADS && wp_papi_ready; i++)
        __atomic_store_n(&wp_papi_live[i], PAPI_NULL, __ATOMIC_RELEASE);
}

/* PAPI_read is not documented async-signal-safe, but what it does on a
 * started EventSet of the calling thread, without multiplexing or
 * overflow, is: find the set in PAPI's table (an index, no lock; the
 * table never moves once sets are published, wp_papi_grow_table), read
 * the counts with read() on the perf_event descriptors PAPI's perf_event
 * component opened for this thread (or rdpmc), and copy them, derived
 * presets combined, into values[].  No allocation, no lock, nothing
 * another thread changes while the set is published: it is created,
 * filled and started before it is published, and taken out of reach
 * before it is stopped.  HPCToolkit and Caliper call it from their
 * sampling handlers for the same reasons (shared/DESIGN.md, counters). */
int wp_papi_read_sig(int index, uint64_t *val)
{
    if (index < 0 || index >= WP_MAX_THREADS || wp_papi_n == 0 || !wp_papi_ready)
        return -1;
    int set = __atomic_load_n(&wp_papi_live[index], __ATOMIC_ACQUIRE);
    if (set == PAPI_NULL)
        return -1;
    long long v[WP_CTR_MAX];
    if (wp_papi.read(set, v) != PAPI_OK)
        return -1;
    for (int k = 0; k < wp_papi_n; k++)
        val[k] = v[k] > 0 ? (uint64_t)v[k] : 0;
    return 0;
}

#else /* !HAVE_PAPI: the same calls, saying PAPI was not built. */

int wp_papi_start(char *why, size_t cap)
{
    snprintf(why, cap, "this waitprof was built without PAPI (configure --with-papi)");
    return -1;
}

const char *wp_papi_version(void)
{
    return "";
}

void wp_papi_reset(void)
{
}

int wp_papi_add(const char *name, char *why, size_t cap)
{
    snprintf(why, cap, "%s is a PAPI name, and this waitprof was built without PAPI (configure --with-papi)", name);
    return -1;
}

void wp_papi_trial_end(void)
{
}

int wp_papi_count(void)
{
    return 0;
}

int wp_papi_thread_open(int index)
{
    (void)index;
    return 0;
}

void wp_papi_thread_close(int index)
{
    (void)index;
}

void wp_papi_close_all(void)
{
}

int wp_papi_read_sig(int index, uint64_t *val)
{
    (void)index;
    (void)val;
    return -1;
}

#endif
