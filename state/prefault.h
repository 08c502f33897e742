/* state/prefault.h — making memory present before the code that writes it
 * runs.
 *
 * Contract: wp_prefault(p, bytes) asks the kernel to map every page of
 * [p, p + bytes) writable now, with one madvise(MADV_POPULATE_WRITE)
 * (Linux 5.14 and later).  The contents do not change, so it is safe on
 * memory that other threads write at the same time.  It returns 0, or -1
 * where the kernel did not make the whole range present (before Linux
 * 5.14: EINVAL, and nothing was done); the caller decides whether to
 * write the pages itself.
 * Not for signal handlers (it is a system call that may sleep).
 *
 * Why: on the machine of doc/performance.md a first write to a page took
 * about 10.6 us of CPU through the fault path, and 0.67 us per page when
 * the kernel populated a range in one call (1 and 16 MiB, 2026-11-27).
 */
#ifndef WP_STATE_PREFAULT_H
#define WP_STATE_PREFAULT_H

#include <stddef.h>

int wp_prefault(void *p, size_t bytes);

/* malloc and calloc whose memory is present on return: blocks of
 * WP_PREFAULT_MIN bytes or more go through wp_prefault (glibc gives those
 * fresh pages of their own, which a first write faults in one by one);
 * smaller ones mostly reuse pages the allocator has written before.  Freed
 * with free(). */
#define WP_PREFAULT_MIN ((size_t)64 << 10)
void *wp_malloc_ready(size_t bytes);
/* The same for the first bytes of a block allocated otherwise, about to be
 * written: made present when they are WP_PREFAULT_MIN or more. */
void wp_ready(void *p, size_t bytes);
void *wp_calloc_ready(size_t n, size_t size);

#endif
