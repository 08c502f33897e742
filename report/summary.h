/* report/summary.h — a plain-text digest of a folded profile for people.
 *
 * Contract: wp_summary_write() reads a finished struct wp_folded (whose first
 * frame is the MPI state: "Not-in-MPI", "MPI-Work" or "MPI-Stall") and writes
 * a report that fits on one screen (about 30 lines for top = 8): the total
 * samples; each state's share (percent with one decimal) and samples; the
 * top `top` call paths in MPI (MPI-Work and MPI-Stall summed per call path
 * without the state frame), each with its share of all samples, the part of
 * it that stalled and its innermost MPI function; and the top `top` compute
 * (Not-in-MPI) paths.  Paths are printed root first; one longer than 100
 * characters keeps its first and last frames around a "…".  Ties are broken
 * by path so the output is deterministic.  ranks <= 0 leaves the rank count
 * out.  Normal context only (allocates).  Returns 0, or -1 with errno set
 * when memory runs out or out reports a write error.
 */
#ifndef WP_REPORT_SUMMARY_H
#define WP_REPORT_SUMMARY_H

#include <stdio.h>

#include "format/folded.h"

int wp_summary_write(FILE *out, const struct wp_folded *f, int ranks, int top);

#endif
