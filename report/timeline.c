/* report/timeline.c — timeline.svg: per rank, the MPI states over time.
 *
 * One row per rank that wrote a timeline (so under WAITPROF_RANKS or
 * --ranks only the selected ranks), in rank order; time runs left to right
 * from the earliest rank's MPI_Init (report/aggregate.c, wp_rep_timeline).
 * Each bin is a column stacked by its states' shares of the bin's samples:
 * MPI-Stall at the top, MPI-Work, Not-in-MPI at the bottom, in the flame
 * graph's colours (report/svg.h).  A bin with no sample is left empty.
 * Every column has a <title> tooltip: rank, time range, seconds per state
 * and the call path most of its MPI-Stall samples share.  The document
 * needs no script, font or other file.  The plot's geometry is also given
 * as data- attributes (plot: x0, width, seconds; each row: rank, y, h), so
 * that a test can find a rank's row and a moment in a screenshot.
 *
 * Size: at most about 200 000 columns in all (bins are widened for many
 * ranks), so the document stays renderable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/model.h"
#include "report/svg.h"

enum { TL_W = 1200, TL_X0 = 90, TL_RIGHT = 10, TL_TOP = 70, TL_AXIS = 30, TL_CELLS = 200000 };

int wp_rep_write_timeline_svg(FILE *f, const struct run *R)
{
    size_t nr = 0;
    for (size_t i = 0; i < R->nr; i++)
        nr += R->r[i].tl != NULL;
    uint32_t max_bins = nr ? (uint32_t)(TL_CELLS / nr) : 1024;
    if (max_bins > 1024)
        max_bins = 1024;
    if (max_bins < 16)
        max_bins = 16;
    struct tgrid g;
    wp_rep_timeline(R, max_bins, &g);
    int row_h = g.nrows <= 16 ? 40 : g.nrows <= 160 ? 640 / (int)g.nrows : 3;
    int gap = row_h >= 10 ? 4 : 0;
    int pw = TL_W - TL_X0 - TL_RIGHT;
    int height = TL_TOP + (int)g.nrows * (row_h + gap) + TL_AXIS;
    double seconds = (double)g.nbins * (double)g.bin_ns * 1e-9, cw = g.nbins ? (double)pw / g.nbins : pw;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n"
            "<style>g.b rect{shape-rendering:crispEdges}g.b:hover rect{stroke:#000;stroke-width:0.6}</style>\n"
            "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fbfbf8\"/>\n"
            "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"16\">waitprof timeline: %zu rank%s, "
            "bins of %.1f ms</text>\n",
            TL_W, height, TL_W, height, TL_W, height, TL_W / 2, g.nrows, g.nrows == 1 ? "" : "s",
            g.bin_ns * 1e-6);
    if (g.nrows == 0)
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no rank wrote a timeline "
                   "(rank.R.timeline)</text>\n", TL_W / 2, TL_TOP);
    for (int st = 0, lx = TL_X0; st < WP_STATE_COUNT; st++, lx += 140) {
        int rgb[3];
        wp_svg_state_rgb(st, rgb);
        fprintf(f, "<rect x=\"%d\" y=\"36\" width=\"14\" height=\"14\" rx=\"2\" fill=\"rgb(%d,%d,%d)\"/>"
                   "<text x=\"%d\" y=\"47\" font-size=\"12\">%s</text>\n",
                lx, rgb[0], rgb[1], rgb[2], lx + 20, wp_state_name(st));
    }
    int partial = 0;
    for (size_t k = 0; k < g.nrows; k++)
        partial |= R->r[g.row[k]].partial;
    fprintf(f, "<text x=\"%d\" y=\"47\" font-size=\"12\" text-anchor=\"end\">%scolumn height: share of the "
               "bin's samples; hover for seconds</text>\n",
            TL_W - TL_RIGHT, partial ? "rank*: ended before MPI_Finalize; " : "");
    fprintf(f, "<g id=\"plot\" data-x0=\"%d\" data-width=\"%d\" data-seconds=\"%.9f\" data-origin-ns=\"%llu\">\n",
            TL_X0, pw, seconds, (unsigned long long)g.origin_ns);
    for (size_t k = 0; k < g.nrows; k++) {
        const struct rinfo *ri = &R->r[g.row[k]];
        int y = TL_TOP + (int)k * (row_h + gap);
        fprintf(f, "<g class=\"row\" data-rank=\"%d\" data-y=\"%d\" data-h=\"%d\">", ri->rank, y, row_h);
        if (row_h >= 9)
            fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">rank %d%s</text>", TL_X0 - 6,
                    y + row_h / 2 + 4, ri->rank, ri->partial ? "*" : "");
        fputc('\n', f);
        for (uint32_t b = 0; b < g.nbins; b++) {
            const double *s = g.s[k * g.nbins + b];
            double all = s[0] + s[1] + s[2];
            if (all <= 0)
                continue;
            int32_t p = g.path[k * g.nbins + b];
            fprintf(f, "<g class=\"b\"><title>rank %d, %.3f-%.3f s: Not-in-MPI %.3f s, MPI-Work %.3f s, "
                       "MPI-Stall %.3f s",
                    ri->rank, b * g.bin_ns * 1e-9, (b + 1) * g.bin_ns * 1e-9, s[WP_STATE_NOT_IN_MPI],
                    s[WP_STATE_WORK], s[WP_STATE_STALL]);
            if (p >= 0 && (size_t)p < R->tl_paths.n && s[WP_STATE_STALL] > 0) {
                fputs("\nwaiting mostly in: ", f);
                wp_svg_put(f, R->tl_paths.v[p].path);
            }
            fputs("</title>", f);
            /* Stacked from the top: Stall, Work, Not-in-MPI. */
            double top = y;
            static const int order[WP_STATE_COUNT] = {WP_STATE_STALL, WP_STATE_WORK, WP_STATE_NOT_IN_MPI};
            for (int o = 0; o < WP_STATE_COUNT; o++) {
                int st = order[o];
                if (s[st] <= 0)
                    continue;
                double h = row_h * s[st] / all;
                int rgb[3];
                wp_svg_state_rgb(st, rgb);
                /* A little wider than the column, so that no seam shows
                 * between neighbours. */
                fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"rgb(%d,%d,%d)\"/>",
                        TL_X0 + b * cw, top, cw + 0.3, h, rgb[0], rgb[1], rgb[2]);
                top += h;
            }
            fputs("</g>\n", f);
        }
        fputs("</g>\n", f);
    }
    fputs("</g>\n", f);
    /* The time axis: ten ticks, seconds since the earliest rank's start. */
    int ay = TL_TOP + (int)g.nrows * (row_h + gap) + 4;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n", TL_X0, ay, TL_X0 + pw, ay);
    for (int t = 0; t <= 10 && g.nrows; t++) {
        int x = TL_X0 + pw * t / 10;
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>"
                   "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\">%.2f s</text>\n",
                x, ay, x, ay + 4, x, ay + 16, t == 0 ? "start" : t == 10 ? "end" : "middle", seconds * t / 10);
    }
    fputs("</svg>\n", f);
    wp_rep_tgrid_free(&g);
    return ferror(f) ? -1 : 0;
}
