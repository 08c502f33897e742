/* report/waitprof-report.c — `waitprof report`: regenerate a run's
 * cross-rank outputs from its per-rank files (report/report.h), with
 * filters, or compare two runs.
 *
 *   waitprof-report [--ranks LIST] [--state stall|all] [--top N] [--weight EVENT] [--out ODIR] [--quiet] DIR
 *   waitprof-report --diff A B [--top N] [--ranks LIST] [--weight EVENT] [--out FILE]
 *
 * Before it reads a run directory it names the frames that partial
 * profiles (ranks killed by a signal) left as module+offset, from the
 * object files still on disk, rewriting those rank.R.folded files
 * (symbols/offline.h).  That step is this program's, not the report's:
 * the report code is also linked into the application, where the profiles
 * are symbolized before they are written, and reads only files.
 *
 * Exit status: 0 all well; 1 some input file was bad (named on stderr; the
 * outputs were still written); 2 usage or nothing readable; 3 an output
 * could not be written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "symbols/offline.h"

static void usage(FILE *f)
{
    fputs("usage: waitprof report [options] DIR\n"
          "       waitprof report --diff A B [--top N] [--ranks LIST] [--weight EVENT] [--out FILE]\n"
          "Re-reads the per-rank files of the run directory DIR (rank.R.meta, .folded, .waits, .calls,\n"
          ".matrix, .timeline) and writes report.txt, report.json, the CSV tables, all.folded,\n"
          "all.diff.folded, all.svg, timeline.svg and summary.txt; prints the first screen of the report.\n"
          "Frames that ranks killed by a signal left as module+0xOFFSET are first named from the files\n"
          "on disk (rank.R.folded is rewritten, the original kept as rank.R.folded.partial-raw).\n"
          "  --ranks LIST     only these ranks, e.g. 0-3,8\n"
          "  --state stall    only MPI-Stall samples in the call paths, flame graph and folded files\n"
          "                   (the counters' all.<event>.folded too)\n"
          "  --weight EVENT   draw all.svg weighted by a counter of WAITPROF_COUNTERS (e.g. task-clock)\n"
          "                   instead of samples; with --diff, compare that counter per call path\n"
          "  --top N          rows in the top lists (default 10)\n"
          "  --out ODIR       write the outputs there instead of DIR (must exist)\n"
          "  --quiet          do not print the first screen\n"
          "  --diff A B       which call paths gained or lost MPI-Stall samples from run A to run B;\n"
          "                   --out FILE also writes a folded file 'path stallA stallB'\n",
          f);
}

int main(int argc, char **argv)
{
    struct wp_report_opts o = {NULL, 0, 10, NULL};
    const char *out = NULL, *dir = NULL, *da = NULL, *db = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if ((strcmp(a, "--ranks") == 0 || strcmp(a, "--state") == 0 || strcmp(a, "--top") == 0 ||
                    strcmp(a, "--out") == 0 || strcmp(a, "--weight") == 0) && i + 1 >= argc) {
            fprintf(stderr, "waitprof report: option %s needs a value; see waitprof report --help\n", a);
            return 2;
        } else if (strcmp(a, "--ranks") == 0) {
            o.ranks = argv[++i];
        } else if (strcmp(a, "--state") == 0) {
            const char *v = argv[++i];
            if (strcmp(v, "stall") == 0)
                o.stall_only = 1;
            else if (strcmp(v, "all") == 0)
                o.stall_only = 0;
            else {
                fprintf(stderr, "waitprof report: --state %s: give stall or all\n", v);
                return 2;
            }
        } else if (strcmp(a, "--top") == 0) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 1000000) {
                fprintf(stderr, "waitprof report: --top %s: give a whole number from 1 to 1000000\n", argv[i]);
                return 2;
            }
            o.top = (int)n;
        } else if (strcmp(a, "--out") == 0) {
            out = argv[++i];
        } else if (strcmp(a, "--weight") == 0) {
            o.weight = argv[++i];
        } else if (strcmp(a, "--diff") == 0) {
            if (i + 2 >= argc) {
                fprintf(stderr, "waitprof report: --diff needs two run directories\n");
                return 2;
            }
            da = argv[++i];
            db = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "waitprof report: unknown option %s; see waitprof report --help\n", a);
            return 2;
        } else if (dir == NULL) {
            dir = a;
        } else {
            fprintf(stderr, "waitprof report: one run directory only (%s and %s given)\n", dir, a);
            return 2;
        }
    }
    if (da) {
        if (dir) {
            fprintf(stderr, "waitprof report: --diff takes its two directories; %s is one too many\n", dir);
            return 2;
        }
        wp_offline_name_dir(da, stderr);
        wp_offline_name_dir(db, stderr);
        int rc = wp_report_diff(da, db, &o, stdout, out, stderr);
        return rc < 0 ? 2 : rc;
    }
    if (dir == NULL) {
        usage(stderr);
        return 2;
    }
    wp_offline_name_dir(dir, stderr);
    int rc = wp_report_dir(dir, out ? out : dir, &o, quiet ? NULL : stdout, stderr);
    return rc == -1 ? 3 : rc < 0 ? 2 : rc;
}
