/* match/clock.h — one time base for the records of all ranks
 * (match/clock.c). */
#ifndef WP_MATCH_CLOCK_H
#define WP_MATCH_CLOCK_H

#include <mpi.h>
#include <stdint.h>

/* The test clock (WAITPROF_TEST_CLOCK) on this rank: before wp_match_init. */
void wp_match_clock_test(int injected, double offset_s, double drift_ppm);
/* Whether all ranks read one clock, decided in a reduction the caller makes
 * anyway (runtime/lifecycle.c, with rank 0's decisions): each rank fills w
 * with wp_match_clock_words (injected: this rank has the test clock), the
 * words are reduced with MPI_MAX, bytewise or as integers, over every rank
 * of the communicator wp_match_init gets, and each rank hands the result to
 * wp_match_clock_agreed before wp_match_init.  Without it, the first
 * wp_match_clock_sync makes that reduction itself. */
void wp_match_clock_words(int injected, unsigned long long w[4]);
void wp_match_clock_agreed(const unsigned long long w[4]);
/* Collective over wcomm: measure this rank's offset to rank 0 (at MPI_Init,
 * then at MPI_Finalize). */
void wp_match_clock_sync(MPI_Comm wcomm, int rank);
/* At MPI_Finalize, before the second sync and the records' conversion:
 * from now on this rank's ticks are converted along the line through the
 * TSC reference pairs of MPI_Init's calibration and of now, not with the
 * rate measured over the start-up.  Ranks of one node compare their times
 * with no offset measured, so each rank's time must be CLOCK_MONOTONIC's
 * over the whole run, where the start-up's rate drifts on each rank its own
 * way (1 to 129 ns after 8 s here, over a 0.3 s start-up: up to about
 * 60 µs an hour). */
void wp_match_clock_line(void);
/* A time stamp (ticks) of this rank in the common base, ns. */
double wp_match_ref_ns(uint64_t ticks);
/* The offsets measured (s), the bound of their error (s: half the shortest
 * ping-pong round trip) and how many times they were measured (0, 1, 2),
 * for the meta file.  Reads memory only. */
void wp_match_clock_offsets(double *o1_s, double *o2_s, double *err_s, int *phases);
void wp_match_clock_end(void);
#endif
