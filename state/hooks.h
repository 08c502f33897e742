/* state/hooks.h — calls from a lower layer into a higher one.
 *
 * Contract: a lower layer never calls up by name (doc/design.md,
 * "Layers"); where it must, it calls through a pointer declared here,
 * which runtime/ sets at MPI_Init before sampling starts and never changes
 * afterwards, so a reader needs no atomics.  NULL means nobody answers.
 */
#ifndef WP_STATE_HOOKS_H
#define WP_STATE_HOOKS_H

/* The stall source's verdict on the calling thread's current MPI call
 * (mpit/source.h, wp_src_stalled_sig): 1 waiting, 0 working, -1 not followed.
 * Called from the SIGPROF handler, and only when wp_self.src_seen says a
 * source follows the call; the function must be async-signal-safe. */
extern int (*wp_hook_stalled)(void);

#endif
