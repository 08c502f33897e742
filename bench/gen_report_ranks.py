#!/usr/bin/env python3
"""Write the per-rank files of a synthetic run of N ranks, for timing the
cross-rank report (`waitprof report DIR`, report/report.h) at a scale this
machine cannot run.

  gen_report_ranks.py DIR N

The data follow the ocean-model example of White's multi-resolution timers
("It's About Time"): ranks 0-(N/3-1) and (N/2)-(5N/6-1)
compute little and wait long in MPI_Waitall (their histograms peak at
10-19 ms), ranks N/3-(N/2-1) compute more (peak at 1-1.9 ms), the last sixth
are "extra" ranks that mostly wait in MPI_Allreduce (peak at 30-39 ms).  So
the report must compress rank lists into ranges (0-33332,50000-83332) and
reduce 100 000 histograms to three groups.  Every file is the format the
library writes (rank.R.meta, rank.R.folded, rank.R.calls, rank.R.waits).
"""
import os
import sys


def group(r, n):
    if r < n // 3 or n // 2 <= r < 5 * n // 6:
        return 0
    if r < n // 2:
        return 1
    return 2


FOLDED = [
    ("MPI-Stall;main;run_steps;exchange_halos;MPI_Waitall", (300, 60, 100)),
    ("MPI-Stall;main;run_steps;global_residual;MPI_Allreduce", (40, 20, 500)),
    ("MPI-Work;main;run_steps;exchange_halos;MPI_Isend", (5, 5, 5)),
    ("MPI-Work;main;run_steps;exchange_halos;MPI_Waitall", (10, 10, 10)),
    ("Not-in-MPI;main;run_steps;compute_interior;relax", (600, 880, 350)),
    ("Not-in-MPI;main;run_steps;compute_boundary", (40, 30, 30)),
    ("Not-in-MPI;main;init", (5, 5, 5)),
]
# Histogram bins (fallback/stats.h: ten linear bins per decade of us):
# bin 41 = 10-19 ms, bin 31 = 1-1.9 ms, bin 43 = 30-39 ms.
HIST = {0: "31:20,39:30,41:70,42:8", 1: "29:40,31:80,32:8", 2: "41:10,42:20,43:98"}


def main():
    d, n = sys.argv[1], int(sys.argv[2])
    os.makedirs(d, exist_ok=True)
    for r in range(n):
        g = group(r, n)
        with open(os.path.join(d, "rank.%d.meta" % r), "w") as f:
            f.write("format=waitprof-meta 1\nstatus=complete\nrank=%d\nsize=%d\nhost=node%d\nmpi=synthetic\n"
                    "source=wrappers\nhz=100\nclock=wall\nstart_ns=0\nend_ns=10000000000\nduration_ns=10000000000\n"
                    "threads=1\nsamples=%d\ndropped_full=0\ndropped_loader=0\n"
                    % (r, n, r // 128, sum(c[g] for _, c in FOLDED)))
        with open(os.path.join(d, "rank.%d.folded" % r), "w") as f:
            for stack, counts in sorted(FOLDED):
                f.write("%s %d\n" % (stack, counts[g] + (r % 7)))
        with open(os.path.join(d, "rank.%d.calls" % r), "w") as f:
            f.write("# waitprof-calls 1\nfunction\tcalls\ttime_ns\tmin_ns\tmin_event\tmax_ns\tmax_event\tmax2_ns"
                    "\tmax2_event\tbytes_sent\tbytes_recv\trequests_sent\trequests_recv\thistogram\n")
            f.write("MPI_Isend\t0\t0\t0\t0\t0\t0\t0\t0\t%d\t0\t256\t0\t-\n" % (256 * 8192))
            f.write("MPI_Irecv\t0\t0\t0\t0\t0\t0\t0\t0\t0\t%d\t0\t256\t-\n" % (256 * 8192))
            base = (12000000, 1500000, 25000000)[g]
            f.write("MPI_Waitall\t128\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t0\t0\t0\t0\t%s\n"
                    % (128 * base + r, 900000 + r % 1000, 1 + r % 128, base * 2 + r, 1 + (r * 7) % 128,
                       base * 2 - 1000 + r, 1 + (r * 11) % 128, HIST[g]))
            f.write("MPI_Allreduce\t16\t%d\t%d\t3\t%d\t9\t%d\t12\t0\t0\t0\t0\t%s\n"
                    % (16 * base, base // 2, base * 3, base * 3 - 5, HIST[2 - g if g != 1 else 1]))
        with open(os.path.join(d, "rank.%d.waits" % r), "w") as f:
            f.write("# waitprof-waits 1\nsite\tfunction\tpattern\tsize_class\trole\tcalls\ttime_ns\tmin_ns\tmax_ns"
                    "\tmax2_ns\twait_ns\tearly_calls\tplain_wait_ns\n")
            f.write("exchange_halos (stencil.c:132)\tMPI_Waitall\tlate_sender\t14\tany\t128\t%d\t900000\t%d\t%d\t%d\t3\t%d\n"
                    % (128 * base, base * 2, base * 2 - 1000, 128 * (base - 900000), 128 * (base - 900000)))
            f.write("global_residual (stencil.c:169)\tMPI_Allreduce\twait_nxn\t4\tany\t16\t%d\t%d\t%d\t%d\t%d\t0\t%d\n"
                    % (16 * base, base // 2, base * 3, base * 3 - 5, 8 * base, 8 * base))


if __name__ == "__main__":
    main()
