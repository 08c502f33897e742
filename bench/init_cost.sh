#!/bin/sh
# bench/init_cost.sh — what waitprof adds to MPI_Init and MPI_Finalize as the
# program sees them, at 2, 4, 8, 16 and 32 ranks, against runs without
# waitprof in the same invocation.
#
#   bench/init_cost.sh BUILD_DIR [rounds]       (rounds: default 5)
#
# The program is bench/init_cost.c (compiled here with the build's MPICC):
# every rank times MPI_Init and MPI_Finalize with CLOCK_MONOTONIC and does
# 200 ring exchanges and 20 MPI_Allreduce in between, so that waitprof has
# records to match and files to write.  Configurations:
#   none      the program alone
#   default   under the waitprof launcher with default settings
#   lean      WAITPROF_LEAN=1
#   wrappers  WAITPROF_SOURCE=wrappers (no runtime stall source)
#   mpit      WAITPROF_SOURCE=mpit (Open MPI only: MPICH has no variable)
# (BENCH_INIT_CONFIGS overrides the list, BENCH_INIT_RANKS the rank counts.)
# Every round runs every configuration once per rank count, back to back in
# an order rotated each round, as bench/run.sh does, so that a slow spell of
# the shared machine hits all configurations alike.
#
# Per run: init_ms and finalize_ms are the largest over the ranks of each
# rank's own MPI_Init and MPI_Finalize; init_cpu_ms and finalize_cpu_ms the
# mean over the ranks of the process CPU time during each call,
# init_faults and finalize_faults of its minor page faults; wall_s is
# the launcher's whole run (mpiexec start to end).  Per configuration and
# rank count the table gives the median over rounds and its range, and
# "added" is the median over rounds of (configuration - none of the same
# round), "CPU added" and "faults added" the same for the CPU time and the
# page faults.  The raw figures go to
# BUILD_DIR/bench-out/init.<time>/raw.tsv.
#
# Ranks above 2 are oversubscribed on a 2-core machine (Open MPI with
# --oversubscribe and mpi_yield_when_idle 1); MPICH's waiting ranks do not
# yield, so its figures above 4 ranks measure mostly the scheduler.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: bench/init_cost.sh BUILD_DIR [rounds]" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
ROUNDS=${2:-5}
case $ROUNDS in
'' | *[!0-9]* | 0) echo "bench/init_cost.sh: rounds must be a positive integer" >&2; exit 2 ;;
esac
[ -r "$BUILD/tests/env.sh" ] || { echo "bench/init_cost.sh: $BUILD/tests/env.sh not found" >&2; exit 2; }
. "$BUILD/tests/env.sh"
. "$(dirname "$0")/lib.sh"
[ -r "$WP_LIB" ] || { echo "bench/init_cost.sh: $WP_LIB not found; run make in $BUILD first" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")" && pwd)

RANKS=${BENCH_INIT_RANKS:-2 4 8 16 32}
if [ "$MPI_FLAVOR" = openmpi ]; then
    CONFIGS=${BENCH_INIT_CONFIGS:-none default lean wrappers mpit}
else
    CONFIGS=${BENCH_INIT_CONFIGS:-none default lean wrappers}
fi
OUT=$BUILD/bench-out/init.$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/bin"
RAW=$OUT/raw.tsv
printf 'round\tranks\tconfig\tload1\tinit_ms\tfinalize_ms\twall_s\tsource\tinit_cpu_ms\tfinalize_cpu_ms\tinit_faults\tfinalize_faults\n' >"$RAW"
$MPICC -std=c11 -O2 -g -Wall -Wextra -o "$OUT/bin/init_cost" "$SRC/init_cost.c"

BENCH_MPIRUN_OMPI="--mca btl_vader_single_copy_mechanism none"

# run ROUND NP CONFIG — one run; appends its line to raw.tsv.
run() {
    r=$1 np=$2 c=$3
    log=$OUT/np$np.$c.$r.out
    wpdir=$OUT/np$np.$c.$r.wp
    load=$(cut -d' ' -f1 /proc/loadavg)
    t0=$(date +%s%N)
    rc=0
    case $c in
    none) bench_mpirun "$np" "$OUT/bin/init_cost" >"$log" 2>&1 || rc=$? ;;
    default) WAITPROF_LIB=$WP_LIB WAITPROF_OUT=$wpdir WAITPROF_QUIET=1 \
                 bench_mpirun "$np" "$WP_LAUNCHER" "$OUT/bin/init_cost" >"$log" 2>&1 || rc=$? ;;
    lean) WAITPROF_LIB=$WP_LIB WAITPROF_OUT=$wpdir WAITPROF_QUIET=1 WAITPROF_LEAN=1 \
              bench_mpirun "$np" "$WP_LAUNCHER" "$OUT/bin/init_cost" >"$log" 2>&1 || rc=$? ;;
    wrappers | mpit | peruse)
        WAITPROF_LIB=$WP_LIB WAITPROF_OUT=$wpdir WAITPROF_QUIET=1 WAITPROF_SOURCE=$c \
            bench_mpirun "$np" "$WP_LAUNCHER" "$OUT/bin/init_cost" >"$log" 2>&1 || rc=$? ;;
    *) echo "bench/init_cost.sh: unknown configuration $c" >&2; exit 2 ;;
    esac
    t1=$(date +%s%N)
    [ "$rc" = 0 ] || { echo "bench/init_cost.sh: np=$np $c round $r failed ($rc):" >&2; cat "$log" >&2; exit 1; }
    n=$(grep -c '^init_cost ' "$log" || true)
    [ "$n" = "$np" ] || { echo "bench/init_cost.sh: np=$np $c: $n result lines" >&2; cat "$log" >&2; exit 1; }
    src=-
    if [ "$c" != none ]; then
        # A profiled run that wrote no meta file was not profiled.
        [ -r "$wpdir/rank.0.meta" ] || { echo "bench/init_cost.sh: $c wrote no $wpdir/rank.0.meta" >&2; cat "$log" >&2; exit 1; }
        src=$(sed -n 's/^source=//p' "$wpdir/rank.0.meta")
        case $c in wrappers | mpit | peruse)
            [ "$src" = "$c" ] || { echo "bench/init_cost.sh: $c ran with source $src" >&2; exit 1; } ;;
        esac
        rm -rf "$wpdir"
    fi
    grep '^init_cost ' "$log" | awk -v r="$r" -v np="$np" -v c="$c" -v load="$load" -v src="$src" \
        -v wall="$(echo "$t0 $t1" | awk '{printf "%.4f", ($2 - $1) / 1e9}')" '
        { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          if (v["init_ms"] + 0 > im) im = v["init_ms"] + 0
          if (v["finalize_ms"] + 0 > fm) fm = v["finalize_ms"] + 0
          ic += v["init_cpu_ms"]; fc += v["finalize_cpu_ms"]; ip += v["init_faults"]; fp += v["finalize_faults"]
          n++ }
        END { printf "%s\t%s\t%s\t%s\t%.3f\t%.3f\t%s\t%s\t%.3f\t%.3f\t%.1f\t%.1f\n", r, np, c, load, im, fm, wall,
                     src, ic / n, fc / n, ip / n, fp / n }' >>"$RAW"
}

order() {
    rot=$(( ($1 - 1) % $(echo $CONFIGS | wc -w) ))
    echo $CONFIGS | awk -v k="$rot" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + k) % NF + 1) }'
}

{
    echo "start: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); uptime:$(uptime)"
    echo "mpi: $MPI_FLAVOR ($MPIEXEC); library: $WP_LIB"
    if command -v git >/dev/null 2>&1 && git -C "$WP_SRCDIR" rev-parse HEAD >/dev/null 2>&1; then
        dirty=$(git -C "$WP_SRCDIR" status --porcelain -- . ':!bench' ':!doc' 2>/dev/null | wc -l)
        echo "source: $(git -C "$WP_SRCDIR" rev-parse --short HEAD), $dirty files changed or untracked outside bench/ and doc/"
    fi
} | tee "$OUT/header.txt"

r=1
while [ "$r" -le "$ROUNDS" ]; do
    for np in $RANKS; do
        for c in $(order "$r"); do
            run "$r" "$np" "$c"
        done
    done
    echo "round $r done: $(uptime)" >&2
    r=$((r + 1))
done
echo "end: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); uptime:$(uptime)" | tee -a "$OUT/header.txt"

# The table: per rank count and configuration, medians and ranges over
# rounds, and the added time against none of the same round.
awk -F '\t' -v configs="$CONFIGS" -v ranks="$RANKS" '
    function med(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function lo(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]; return m }
    function hi(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] > m) m = a[i]; return m }
    NR > 1 { I[$2, $3, $1] = $5; F[$2, $3, $1] = $6; W[$2, $3, $1] = $7; L[$1] = 1; S[$2, $3] = $8
             IC[$2, $3, $1] = $9; FC[$2, $3, $1] = $10; IP[$2, $3, $1] = $11; FP[$2, $3, $1] = $12
             if ($4 > lmax) lmax = $4; if (lmin == "" || $4 < lmin) lmin = $4 }
    END {
        nc = split(configs, C, " "); nr = split(ranks, R, " ")
        printf "| ranks | config | source | MPI_Init ms | added | CPU added | faults added | MPI_Finalize ms | added | CPU added | faults added | wall s | added |\n"
        printf "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        for (i = 1; i <= nr; i++) for (j = 1; j <= nc; j++) {
            np = R[i]; c = C[j]; n = 0; delete a; delete b; delete w; delete da; delete db; delete dw
            delete ca; delete cb; delete pa; delete pb
            for (r in L) if ((np, c, r) in I) {
                n++; a[n] = I[np, c, r]; b[n] = F[np, c, r]; w[n] = W[np, c, r]
                da[n] = I[np, c, r] - I[np, "none", r]; db[n] = F[np, c, r] - F[np, "none", r]
                dw[n] = W[np, c, r] - W[np, "none", r]
                ca[n] = IC[np, c, r] - IC[np, "none", r]; cb[n] = FC[np, c, r] - FC[np, "none", r]
                pa[n] = IP[np, c, r] - IP[np, "none", r]; pb[n] = FP[np, c, r] - FP[np, "none", r]
            }
            if (n == 0) continue
            ai = sprintf("%.1f (%.1f..%.1f)", med(a, n), lo(a, n), hi(a, n))
            bi = sprintf("%.1f (%.1f..%.1f)", med(b, n), lo(b, n), hi(b, n))
            wi = sprintf("%.2f", med(w, n))
            if (c == "none") { printf "| %s | none | - | %s | | | | %s | | | | %s | |\n", np, ai, bi, wi; continue }
            printf "| %s | %s | %s | %s | %+.1f (%+.1f..%+.1f) | %+.1f | %+.0f | %s | %+.1f (%+.1f..%+.1f) | %+.1f | %+.0f | %s | %+.2f |\n",
                np, c, S[np, c], ai, med(da, n), lo(da, n), hi(da, n), med(ca, n), med(pa, n), bi, med(db, n),
                lo(db, n), hi(db, n), med(cb, n), med(pb, n), wi, med(dw, n)
        }
        printf "\nrounds: %d; load average (1 min) during the runs: %s to %s\n", length(L), lmin, lmax
    }' "$RAW" | tee "$OUT/table.md"
