/* sampler/loader.c — the dynamic loader's calls, interposed: samples are
 * dropped while a thread may hold the loader's lock (state/thread.h,
 * wp_dl_begin), and the unwinder's table of loaded objects is rebuilt after
 * every dlopen and dlclose.  See sampler/internal.h. */
#include "sampler/internal.h"

#define WP_EXPORT __attribute__((visibility("default")))

WP_EXPORT void *dlopen(const char *file, int mode)
{
    if (wp_real_dlopen == NULL)
        wp_sampler_resolve();
    wp_dl_begin();
    void *h = wp_real_dlopen(file, mode);
    /* New objects are unwound by waitprof's unwinder (and named by the
     * partial writer) only once its table lists them; rebuilt before
     * samples are let in again. */
    if (h && wp_smp_started)
        wp_cfi_refresh();
    wp_dl_end();
    return h;
}

/* dl_iterate_phdr holds the loader's write lock while it runs its callback.
 * libunwind calls it from the handler when an address is not yet cached,
 * while holding a lock of its own; if the handler ran on a thread that holds
 * the loader lock, the two would wait for each other.  So a thread in
 * dl_iterate_phdr (the program's, libgcc's, or waitprof's own) counts as
 * busy and its samples are dropped.  The handler's own nested calls pass
 * through here too, harmlessly. */
WP_EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    if (wp_real_dl_iterate_phdr == NULL)
        wp_sampler_resolve();
    wp_dl_begin();
    int rc = wp_real_dl_iterate_phdr(cb, data);
    wp_dl_end();
    return rc;
}

WP_EXPORT int dlclose(void *handle)
{
    if (wp_real_dlclose == NULL)
        wp_sampler_resolve();
    wp_dl_begin();
    int rc = wp_real_dlclose(handle);
    /* An unloaded object's address range may be reused: the table and
     * every thread's rules are renewed before samples come in again. */
    if (wp_smp_started)
        wp_cfi_refresh();
    wp_dl_end();
    return rc;
}
