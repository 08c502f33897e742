/* wrap/wrap.c — the wrappers' own state: the call-site and datatype-size
 * caches and the Fortran bindings' lookup of the MPI library's
 * definitions.  See wrap/wrap.h. */
#include <dlfcn.h>
#include <stdlib.h>

#include "state/log.h"
#include "wrap/wrap.h"

__thread uintptr_t wp_call_site __attribute__((tls_model("initial-exec")));

/* The datatype-size cache of wrap/wrap.h.  MPI_DATATYPE_NULL never reaches
 * it (only successful calls are recorded), so it is a safe "empty". */
__thread MPI_Datatype wp_tc_type __attribute__((tls_model("initial-exec"))) = MPI_DATATYPE_NULL;
__thread int wp_tc_size __attribute__((tls_model("initial-exec")));
__thread unsigned wp_tc_gen __attribute__((tls_model("initial-exec")));
unsigned wp_type_gen;

void wp_hook_errhandler(void)
{
    __atomic_store_n(&wp_errors_may_return, 1, __ATOMIC_RELAXED);
}

void wp_hook_type_free(int rc)
{
    (void)rc;
    __atomic_fetch_add(&wp_type_gen, 1, __ATOMIC_RELAXED);
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
