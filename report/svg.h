/* report/svg.h — a self-contained SVG flame graph of a folded profile.
 *
 * Contract: wp_svg_write() reads a finished struct wp_folded (format/folded.h;
 * the first frame of every line is the MPI state: "Not-in-MPI", "MPI-Work" or
 * "MPI-Stall") and writes one SVG document to out.  The document needs no
 * other file, font or script to render: the root ("all") is at the bottom,
 * each frame is as wide as its share of the samples, siblings are ordered by
 * name, frames under 0.1% of the samples are left out and labels are elided
 * to fit.  Each state's tower has its own hue (Not-in-MPI green, MPI-Work
 * blue, MPI-Stall red) with a small variation per frame name that depends on
 * the name only.  Every frame has a <title> tooltip
 *   "name — N samples (P% of all), stall share S%"
 * and, below the state frame, a second line with the same call path summed
 * over the three states and its stall share.  A small inline script adds
 * click-to-zoom; without it the picture is complete.  Names are escaped for
 * XML and made valid UTF-8.  Time O(n log n), memory O(lines + frames).
 * Normal context only (allocates).  Returns 0, or -1 with errno set when
 * memory runs out or out reports a write error.
 */
#ifndef WP_REPORT_SVG_H
#define WP_REPORT_SVG_H

#include <stdio.h>

#include "format/folded.h"

/* unit: what the lines' weights count, in the tooltips and the subtitle
 * ("samples" when NULL; a counter's unit, e.g. "ns", for --weight). */
int wp_svg_write(FILE *out, const struct wp_folded *f, const char *title, const char *unit);

/* What the timeline (report/timeline.c) shares with the flame graph: a
 * state's colour (Not-in-MPI, MPI-Work, MPI-Stall; grey for any other
 * value), and a string escaped for XML, invalid UTF-8 as '?'. */
void wp_svg_state_rgb(int state, int rgb[3]);
void wp_svg_put(FILE *out, const char *s);

#endif
