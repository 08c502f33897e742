#!/bin/sh
# bench/pairs.sh — two or more builds of libwaitprof.so (or settings of
# one) against each other, run by run in turn, for differences of a
# nanosecond or two that separate invocations of bench/run.sh cannot show:
# on this kind of machine an invocation's figure moves by 1 to 2 ns with
# the vCPUs' placement and load, while runs taken back to back see nearly
# the same conditions.
#
# usage: bench/pairs.sh BUILD_DIR ROUNDS BENCH NAME=LIB [NAME=LIB ...]
#   BENCH  pingpong (bench/pingpong.c 5000 181 1 1, 2 ranks: lat_added_ns,
#          the in-run added ns per one-way trip) or poll_cost
#          (bench/poll_cost.c 200000 9 world, 1 rank: test_added_ns,
#          testany_added_ns, iprobe_added_ns, isendrecv_added_ns)
#   LIB    a libwaitprof.so, "default" (BUILD_DIR's), "lean" (BUILD_DIR's
#          with WAITPROF_LEAN=1) or lean:PATH (that library with
#          WAITPROF_LEAN=1), optionally followed by ,VAR=VALUE settings for
#          that NAME's runs (default,WAITPROF_MATCH=65536)
# Each round runs every NAME once, in an order that rotates between rounds,
# with WAITPROF_HZ=1.  Output: each run's figures, then for every NAME but
# the first the median over rounds of its figure minus the first NAME's
# in the same round, with the quartiles; for pingpong also over the rounds
# whose two runs both had the fast placement (PMPI latency below
# BENCH_PP_SPLIT_US, 0.35 µs) and both the slow one.
set -eu
if [ $# -lt 5 ]; then
    echo "usage: bench/pairs.sh BUILD_DIR ROUNDS pingpong|poll_cost NAME=LIB NAME=LIB [NAME=LIB ...]" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
ROUNDS=$2
BENCH=$3
shift 3
case $ROUNDS in
'' | *[!0-9]* | 0) echo "bench/pairs.sh: rounds must be a positive integer" >&2; exit 2 ;;
esac
case $BENCH in
pingpong) NP=2 ARGS="5000 181 1 1" KEYS="lat_added_ns" ;;
poll_cost) NP=1 ARGS="200000 9 world" KEYS="test_added_ns testany_added_ns iprobe_added_ns isendrecv_added_ns" ;;
*) echo "bench/pairs.sh: BENCH must be pingpong or poll_cost" >&2; exit 2 ;;
esac
[ -r "$BUILD/tests/env.sh" ] || { echo "bench/pairs.sh: $BUILD/tests/env.sh not found (not a configured build dir?)" >&2; exit 2; }
. "$BUILD/tests/env.sh"
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")" && pwd)
SPLIT=${BENCH_PP_SPLIT_US:-0.35}
BIN="$BUILD/bench-out/bin"
mkdir -p "$BIN"
$MPICC -std=c11 -O2 -g -Wall -Wextra -o "$BIN/$BENCH" "$SRC/$BENCH.c" -lm
for spec in "$@"; do
    lib=${spec#*=}
    lib=${lib%%,*}
    case $lib in
    default | lean) [ -r "$WP_LIB" ] || { echo "bench/pairs.sh: $WP_LIB not found; run make in $BUILD first" >&2; exit 2; } ;;
    *) [ -r "${lib#lean:}" ] || { echo "bench/pairs.sh: ${lib#lean:} not found" >&2; exit 2; } ;;
    esac
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
n=$#
r=1
while [ "$r" -le "$ROUNDS" ]; do
    i=0
    while [ "$i" -lt "$n" ]; do
        # The spec at position (i + r) mod n: the order rotates.
        shift_by=$(((i + r) % n))
        spec=$(printf '%s\n' "$@" | sed -n "$((shift_by + 1))p")
        name=${spec%%=*} lib=${spec#*=} lean= extra=
        case $lib in *,*) extra=${lib#*,} lib=${lib%%,*} ;; esac
        case $lib in
        default) lib=$WP_LIB ;;
        lean) lib=$WP_LIB lean=1 ;;
        lean:*) lib=${lib#lean:} lean=1 ;;
        esac
        rm -rf "$out/wp"
        line=$(
            [ -n "$lean" ] && export WAITPROF_LEAN=1
            export WAITPROF_LIB="$lib" WAITPROF_HZ=1 WAITPROF_QUIET=1 WAITPROF_OUT="$out/wp"
            for a in $(printf '%s' "$extra" | tr ',' ' '); do export "$a"; done
            bench_mpirun "$NP" "$WP_LAUNCHER" "$BIN/$BENCH" $ARGS 2>&1 | grep "^$BENCH " | head -n 1
        ) || true
        [ -n "$line" ] || { echo "bench/pairs.sh: round $r, $name: no result line" >&2; exit 1; }
        vals=
        for k in $KEYS lat_pmpi_us; do
            v=$(printf '%s\n' "$line" | tr ' ' '\n' | sed -n "s/^$k=//p")
            vals="$vals ${v:--}"
        done
        echo "$r $name$vals" | tee -a "$out/runs"
        i=$((i + 1))
    done
    r=$((r + 1))
done
first=${1%%=*}
# The paired differences, per figure, against the first NAME of each round.
awk -v first="$first" -v keys="$KEYS" -v cut="$SPLIT" -v bench="$BENCH" '
function median(a, m,   i, j, t) {
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
function report(label, name, k, sel,   r, m, d, i, lo, hi, mid) {
    m = 0
    for (r = 1; r <= rounds; r++) {
        if (!((r, first) in v) || !((r, name) in v)) continue
        if (sel == "fast" && !(p[r, first] < cut && p[r, name] < cut)) continue
        if (sel == "slow" && !(p[r, first] >= cut && p[r, name] >= cut)) continue
        d[++m] = v[r, name, k] - v[r, first, k]
    }
    if (m == 0) return
    mid = median(d, m)
    lo = d[int((m + 3) / 4)]; hi = d[int((3 * m + 3) / 4)]
    printf "%s - %s, %s%s: median %+.2f (quartiles %+.2f to %+.2f, %d rounds)\n", name, first, k, label, mid, lo, hi, m
}
{
    r = $1; name = $2; rounds = r > rounds ? r : rounds
    nk = split(keys, ks, " ")
    for (i = 1; i <= nk; i++) v[r, name, ks[i]] = $(i + 2)
    v[r, name] = 1; p[r, name] = $(nk + 3)
    if (!(name in seen)) { seen[name] = 1; order[++nn] = name }
}
END {
    for (j = 1; j <= nn; j++) {
        if (order[j] == first) continue
        for (i = 1; i <= nk; i++) {
            report("", order[j], ks[i], "all")
            if (bench == "pingpong") { report(", fast placement", order[j], ks[i], "fast"); report(", slow placement", order[j], ks[i], "slow") }
        }
    }
}' "$out/runs"
