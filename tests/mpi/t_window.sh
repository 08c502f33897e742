#!/bin/sh
# Time selection changes the sampled time by the expected amount (±10%):
# the weighted samples of each rank divided by the rate are compared with
# the time the selection covers, computed from the run's own clock
# (rank.R.meta duration_ns) and the program's measured phases.
# - MPI_Pcontrol(0) ... MPI_Pcontrol(1) around the middle phase: sampled =
#   first phase + last phase;
# - WAITPROF_START=0.4 WAITPROF_STOP=1.2 on a 1.8 s run: sampled = 0.8 s;
# - WAITPROF_WINDOW=every:0.4,for:0.1: sampled = the pieces of [0, duration)
#   with (t mod 0.4) < 0.1.
# Each run also checks that rank.R.meta's sampled_ns and sampled_intervals
# say the same and that sampling.txt lists the intervals, and that the
# unselected time cost few signals (meta unselected_signals: the timer
# skips each unselected stretch, so at most 3 per stretch, where a timer
# running through them would give 500 per second of them).
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/select
hz=500

# check_sampled DIR LABEL EXPECTED_S_FOR_RANK0 EXPECTED_S_FOR_RANK1
check_sampled() {
    r=0
    for want in "$3" "$4"; do
        meta=$1/rank.$r.meta
        got=$(wp_calc "$(wp_meta "$meta" samples) / $hz")
        wp_check_between "$2: rank $r sampled s (samples / rate)" "$got" "$(wp_calc "$want * 0.9")" "$(wp_calc "$want * 1.1")"
        ns=$(wp_calc "$(wp_meta "$meta" sampled_ns) / 1e9")
        wp_check_between "$2: rank $r sampled_ns in meta, s" "$ns" "$(wp_calc "$want * 0.97 - 0.002")" "$(wp_calc "$want * 1.03 + 0.002")"
        r=$((r + 1))
    done
    iv=$(wp_meta "$1/sampling.txt" intervals)
    [ -n "$iv" ] && [ "$iv" != none ] || wp_fail "$2: sampling.txt lists no intervals"
    wp_note "$2: intervals $iv"
}

run() { # NAME ARGS... (env set by the caller)
    name=$1; shift
    out=$WP_TMP/$name
    WAITPROF_HZ=$hz wp_profile 2 "$out" "$prog" phases "$@" >"$out.stdout" 2>"$out.stderr" ||
        { rc=$?; cat "$out.stderr" >&2; wp_fail "$name: exited with $rc"; }
    grep -q "^waitprof: 2 ranks.*sampled .* s per rank" "$out.stderr" ||
        { cat "$out.stderr" >&2; wp_fail "$name: the summary line does not state the sampled time"; }
}

phase() { sed -n "s/^phase rank=$2 .* $3=\([0-9.]*\).*/\1/p" "$1.stdout"; }
dur() { wp_calc "$(wp_meta "$1/rank.$2.meta" duration_ns) / 1e9"; }

# 1. MPI_Pcontrol around the middle phase.
run pcontrol 0.6 0.6 0.6
w0=$(wp_calc "$(phase "$out" 0 a) + $(phase "$out" 0 c)")
w1=$(wp_calc "$(phase "$out" 1 a) + $(phase "$out" 1 c)")
check_sampled "$out" "Pcontrol(0) over 0.6 of 1.8 s" "$w0" "$w1"
wp_check_between "Pcontrol: paused part of the run, s" "$(wp_calc "$(dur "$out" 0) - $(wp_meta "$out/rank.0.meta" samples) / $hz")" 0.5 0.75

# check_unselected DIR LABEL STRETCHES — signals in unselected time, per rank.
check_unselected() {
    for r in 0 1; do
        wp_check_between "$2: rank $r signals in unselected time ($3 stretches)" \
            "$(wp_meta "$1/rank.$r.meta" unselected_signals)" 0 $((3 * $3))
    done
}
check_unselected "$out" "Pcontrol" 0

# 2. START and STOP.
WAITPROF_START=0.4 WAITPROF_STOP=1.2 run startstop 0.9 0 0.9
check_sampled "$out" "START=0.4 STOP=1.2" 0.8 0.8
check_unselected "$out" "START=0.4 STOP=1.2" 2

# 3. A periodic window.
WAITPROF_WINDOW=every:0.4,for:0.1 run window 0.9 0 0.9
want() { awk -v d="$1" 'BEGIN { s = 0; for (t = 0; t < d; t += 0.4) { e = t + 0.1; if (e > d) e = d; s += e - t } printf "%.4f", s }'; }
check_sampled "$out" "WINDOW every:0.4,for:0.1" "$(want "$(dur "$out" 0)")" "$(want "$(dur "$out" 1)")"
check_unselected "$out" "WINDOW every:0.4,for:0.1" "$(awk -v d="$(dur "$out" 0)" 'BEGIN { printf "%d", d / 0.4 + 1 }')"
exit 0
