/* profile/profile.h — the symbolized outputs written at the end of a run.
 *
 * Contract (normal context, after wp_sampler_stop_sig()):
 * - wp_profile_build() turns every thread's store into folded lines, the MPI
 *   state as the root frame ("Not-in-MPI", "MPI-Work", "MPI-Stall"), sorted
 *   and merged.  Held samples of collective calls are classified here
 *   (fallback/estimate.h), and the samples of calls still in progress (an
 *   abnormal end) are included, not dropped (sampler/store.h,
 *   wp_pending_split).
 * - wp_profile_write_rank() writes rank.R.folded (via a temporary file and a
 *   rename, so a reader never sees half a file).
 */
#ifndef WP_PROFILE_PROFILE_H
#define WP_PROFILE_PROFILE_H

#include "format/folded.h"

/* frames, when not NULL, receives one line per frame name of out with
 * where its function is defined: "frame\tinlined\tfile\tline" (symbols/
 * symbolize.h, wp_symbolizer_frame_locs), as a sorted set. */
int wp_profile_build(struct wp_folded *out, struct wp_folded *frames);
int wp_profile_write_rank(const char *dir, int rank, const struct wp_folded *f);
int wp_profile_write_file(const char *path, const struct wp_folded *f);
/* rank.R.frames: the lines wp_profile_build() collected in frames, under
 * the format line and a header row (format/format.h). */
int wp_profile_write_frames(const char *dir, int rank, const struct wp_folded *frames);
/* rank.R.paths: the call paths (root first, ';'-joined) of this rank's
 * computations that caused waits on other ranks, by the hash the partners'
 * rank.R.causes name them with (match/match.h).  After matching. */
int wp_profile_write_paths(const char *dir, int rank);
/* rank.R.timeline (profile/partial.h, wp_timeline_write_sig) with its
 * stall paths symbolized as in rank.R.folded.  Returns 0 or -1 (logged). */
int wp_profile_write_timeline(const char *dir, int rank);
/* rank.R.<event>.folded for each counter kept (sampler/counters.h): the
 * same lines as rank.R.folded (state frame, symbolized path), weighted by
 * the counts the samples of each line read, in the event's unit.  A
 * line whose count is 0 is left out.  Nothing without counters.
 * Returns 0 or -1 (logged).  Normal context, after wp_sampler_stop_sig(). */
int wp_profile_write_counters(const char *dir, int rank);

#endif
