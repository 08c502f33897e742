/* state/log.h — waitprof's messages to the user.
 *
 * Contract: every message is one line on stderr, starting "waitprof: ", and
 * written with a single write() so lines from many ranks do not interleave.
 * wp_log() speaks for the whole job and prints on rank 0 only (on every
 * process before the rank is known); wp_log_always() prints on any rank.
 * Neither is for signal handlers (they format with vsnprintf).
 */
#ifndef WP_STATE_LOG_H
#define WP_STATE_LOG_H

extern int wp_log_rank; /* -1 until MPI_Init has returned */

void wp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void wp_log_always(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
