/* match/clock.h — one time base for the records of all ranks
 * (match/clock.c). */
#ifndef WP_MATCH_CLOCK_H
#define WP_MATCH_CLOCK_H

#include <mpi.h>
#include <stdint.h>

/* The test clock (WAITPROF_TEST_CLOCK) on this rank: before wp_match_init. */
void wp_match_clock_test(int injected, double offset_s, double drift_ppm);
/* Collective over wcomm: measure this rank's offset to rank 0 (at MPI_Init,
 * then at MPI_Finalize). */
void wp_match_clock_sync(MPI_Comm wcomm, int rank);
/* A time stamp (ticks) of this rank in the common base, ns. */
double wp_match_ref_ns(uint64_t ticks);
/* The offsets measured (s), the bound of their error (s: half the shortest
 * ping-pong round trip) and how many times they were measured (0, 1, 2),
 * for the meta file.  Reads memory only. */
void wp_match_clock_offsets(double *o1_s, double *o2_s, double *err_s, int *phases);
void wp_match_clock_end(void);
#endif
