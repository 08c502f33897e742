#!/bin/sh
# The sampling error of matched instances (doc/design.md, "Matched
# instances"): tests/mpi/ws_sample.c sends 10 000 messages from rank 1 to
# rank 0, each after 0, 0.25 or 0.5 ms of computing; with WAITPROF_MATCH=64
# waitprof matches the first 16 and then one message in 64 (about 170) and
# scales their waits to all 10 000 calls.  The figure in rank.0.waits must
# lie within the 95 % interval it states (ci_ns) of the wait the program
# measured, plus 2 ms for the clocks read a few instructions apart; the
# interval must be neither empty nor wider than 15 % of the truth; and the
# row must say how many instances it comes from (150 to 200).  The choice
# of instances is a fixed hash and the waits a fixed sequence, so a run
# does not pass by luck one time and fail the next.
. "$(dirname "$0")/../lib.sh"
out=$WP_TMP/sample
WAITPROF_MATCH=64 WAITPROF_SOURCE=wrappers wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/ws_sample" 10000 \
    >"$out.stdout" 2>"$out.stderr" || { cat "$out.stderr" >&2; wp_fail "ws_sample exited with $?"; }
truth=$(wp_truth "$out.stdout" 0 wait)
[ -n "$truth" ] || { cat "$out.stdout" >&2; wp_fail "no truth line"; }
waits=$out/rank.0.waits
[ "$(wp_waits_method "$waits" MPI_Recv late_sender)" = measured ] || { cat "$waits" >&2; wp_fail "MPI_Recv is not measured"; }
matched=$(wp_waits_matched "$waits" MPI_Recv late_sender)
wp_check_between "matched instances of MPI_Recv" "$matched" 150 200
got=$(wp_waits_sum "$waits" MPI_Recv late_sender)
ci=$(awk -F '\t' 'NR == 2 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    NR > 2 && $c["function"] == "MPI_Recv" { s += $c["ci_ns"] } END { printf "%.6f\n", s / 1e9 }' "$waits")
wp_check_between "95% interval half-width, s (truth $truth)" "$ci" 0.000001 "$(wp_calc "$truth * 0.15")"
wp_check_between "rank 0 MPI_Recv wait scaled from $matched instances, s (truth $truth, interval +-$ci)" "$got" \
    "$(awk -v t="$truth" -v c="$ci" 'BEGIN { printf "%.6f", t - c - 0.002 }')" \
    "$(awk -v t="$truth" -v c="$ci" 'BEGIN { printf "%.6f", t + c + 0.002 }')"
