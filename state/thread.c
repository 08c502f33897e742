/* state/thread.c — the per-thread record, the registry and the read API.
 * See state/thread.h for the contract. */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "runtime/log.h"
#include "sampler/sampler.h"
#include "state/clock.h"
#include "state/functions.h"
#include "state/thread.h"
#include "state/wrap.h"

__thread wp_thread_t wp_self __attribute__((tls_model("initial-exec")));

int wp_lean; /* state/wrap.h; set by the MPI_Init hook (runtime/lifecycle.c) */
__thread uintptr_t wp_call_site __attribute__((tls_model("initial-exec")));

/* The datatype-size cache of state/wrap.h.  MPI_DATATYPE_NULL never reaches
 * it (only successful calls are recorded), so it is a safe "empty". */
__thread MPI_Datatype wp_tc_type __attribute__((tls_model("initial-exec"))) = MPI_DATATYPE_NULL;
__thread int wp_tc_size __attribute__((tls_model("initial-exec")));
__thread unsigned wp_tc_gen __attribute__((tls_model("initial-exec")));
unsigned wp_type_gen;

void wp_hook_type_free(int rc)
{
    (void)rc;
    __atomic_fetch_add(&wp_type_gen, 1, __ATOMIC_RELAXED);
}

struct wp_slot wp_slots[WP_MAX_THREADS];
volatile int wp_nslots;

struct wp_slot *wp_registry_claim(void)
{
    int i = __atomic_fetch_add(&wp_nslots, 1, __ATOMIC_ACQ_REL);
    if (i >= WP_MAX_THREADS)
        return NULL;
    wp_slots[i].index = i;
    wp_slots[i].tid = gettid();
    return &wp_slots[i];
}

#define WP_EXPORT __attribute__((visibility("default")))

/* The three functions below read only the calling thread's initial-exec TLS
 * record, constant tables and the clock's globals (wp_ticks_to_ns is plain
 * arithmetic), so they are async-signal-safe. */
WP_EXPORT int waitprof_state(void)
{
    return wp_self.state;
}

WP_EXPORT const char *waitprof_state_name(int state)
{
    switch (state) {
    case WAITPROF_STATE_NOT_IN_MPI: return "Not-in-MPI";
    case WAITPROF_STATE_WORK: return "MPI-Work";
    case WAITPROF_STATE_STALL: return "MPI-Stall";
    default: return "unknown";
    }
}

WP_EXPORT int waitprof_thread_state(struct waitprof_thread_state *out)
{
    const wp_thread_t *t = &wp_self;
    int fn = t->fn;
    out->state = t->state;
    out->function = fn;
    out->function_name = (fn > 0 && fn < WP_FN_COUNT) ? wp_fn_table[fn].name : "none";
    uint64_t ticks = t->enter_ticks;
    out->enter_ns = ticks ? wp_ticks_to_ns(ticks) : 0;
    return WAITPROF_API_VERSION;
}

const char *wp_class_name(enum wp_class c)
{
    static const char *const names[WP_CLASS_COUNT] = {
        "env", "send", "recv", "sendrecv", "probe", "wait", "test", "start",
        "nxn", "barrier", "one2n", "n2one", "rma", "file", "comm"};
    return (c >= 0 && c < WP_CLASS_COUNT) ? names[c] : "unknown";
}

int wp_fn_lookup(const char *symbol)
{
    char base[128];
    /* The lean and full forms of a C wrapper (state/wrap.h). */
    if (strncmp(symbol, "wp_lean_", 8) == 0 || strncmp(symbol, "wp_full_", 8) == 0)
        symbol += 8;
    size_t n = strlen(symbol);
    if (n == 0 || n >= sizeof base)
        return WP_FN_NONE;
    memcpy(base, symbol, n + 1);
    /* Strip the binding decorations: f08 suffix, trailing underscores, _c. */
    if (n > 5 && strcasecmp(base + n - 5, "_f08_") == 0)
        base[n -= 5] = '\0';
    while (n > 0 && base[n - 1] == '_')
        base[--n] = '\0';
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 1; i < WP_FN_COUNT; i++)
            if (strcasecmp(wp_fn_table[i].name, base) == 0)
                return i;
        if (n > 2 && strcmp(base + n - 2, "_c") == 0)
            base[n -= 2] = '\0';
        else
            break;
    }
    return WP_FN_NONE;
}

void *wp_fortran_real(void **cache, const char *symbol)
{
    void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (p)
        return p;
    /* dlsym takes the loader lock: samples are dropped meanwhile (see
     * wp_dl_begin), as for dlopen. */
    wp_dl_begin();
    p = dlsym(RTLD_NEXT, symbol);
    wp_dl_end();
    if (p == NULL) {
        wp_log_always("waitprof: the MPI library defines no %s, yet the program called it; "
                      "rebuild waitprof against the MPI the program uses", symbol);
        abort();
    }
    __atomic_store_n(cache, p, __ATOMIC_RELEASE);
    return p;
}
