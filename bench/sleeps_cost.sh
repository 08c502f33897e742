#!/bin/sh
# bench/sleeps_cost.sh BUILD_DIR [rounds] — the cost of sampler/sleeps.c on a
# call that does not wait (bench/sleeps_cost.c), under waitprof at 100 Hz and
# without it, one rank; prints the added ns per call, medians over rounds.
set -eu
BUILD=$(cd "$1" && pwd)
ROUNDS=${2:-5}
. "$BUILD/tests/env.sh"
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")" && pwd)
BIN=$BUILD/bench-out/bin
mkdir -p "$BIN"
"$MPICC" -O2 -o "$BIN/sleeps_cost" "$SRC/sleeps_cost.c"
run() {
    bench_mpirun 1 "$@"
}
out=$(mktemp -d)
for r in $(seq 1 "$ROUNDS"); do
    run "$BIN/sleeps_cost" >>"$out/none"
    WAITPROF_LIB=$WP_LIB WAITPROF_QUIET=1 WAITPROF_OUT="$out/wp$r" run "$WP_LAUNCHER" "$BIN/sleeps_cost" >>"$out/wp"
done
# Per round: wrapped minus raw, in the same process.
for call in poll ppoll recv; do
    for cfg in none wp; do
        awk -v c=$call '$1 == c { print $2 - $3 }' "$out/$cfg" | sort -g |
            awk -v c=$call -v k=$cfg '{ v[NR] = $1 } END { printf "%s %s: +%.1f ns per call (median of %d rounds, %.1f to %.1f)\n", c, k, v[int((NR + 1) / 2)], NR, v[1], v[NR] }'
    done
done
rm -rf "$out"
