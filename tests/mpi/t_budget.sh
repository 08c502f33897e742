#!/bin/sh
# The memory budget: 2 ranks at 10000 Hz for 4 s in call paths with 8^12
# distinct stacks, WAITPROF_MEMORY=1M (the smallest budget).
# - Memory: the growth of the peak resident size from MPI_Init's return to
#   just before MPI_Finalize (VmHWM, read by the program), minus the same
#   growth without waitprof, is at most the budget;
# - the rate steps down (rate_halvings >= 1, the summary line says so);
# - weighted totals stay true: samples / 10000 Hz is within 5% of the run
#   time from MPI_Init to MPI_Finalize (rank.R.meta duration_ns), and so is
#   the sum of all.folded's counts for that rank;
# - nothing is lost silently: samples kept under shortened stacks are
#   counted (merged) and said in the summary line, drops are counted.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/select
secs=4
wp_mpirun 2 "$prog" deep "$secs" >"$WP_TMP/plain.stdout" 2>"$WP_TMP/plain.stderr" ||
    { cat "$WP_TMP/plain.stderr" >&2; wp_fail "the program alone failed"; }
out=$WP_TMP/budget
WAITPROF_HZ=10000 WAITPROF_MEMORY=1M wp_profile 2 "$out" "$prog" deep "$secs" >"$out.stdout" 2>"$out.stderr" ||
    { rc=$?; cat "$out.stderr" >&2; wp_fail "exited with $rc"; }
cat "$out.stderr"
growth() { awk -v r="$2" '$1 == "rss" && $2 == "rank=" r { split($3, a, "="); split($4, b, "="); print b[2] - a[2] }' "$1"; }
for r in 0 1; do
    meta=$out/rank.$r.meta
    plain=$(growth "$WP_TMP/plain.stdout" $r) with=$(growth "$out.stdout" $r)
    [ -n "$plain" ] && [ -n "$with" ] || wp_fail "no rss lines from the program"
    extra=$((with - plain))
    [ "$extra" -le 1024 ] || wp_fail "rank $r: peak RSS grew $extra KiB more than without waitprof; the budget is 1024 KiB"
    wp_note "rank $r: peak RSS growth during the run: $with KiB with waitprof, $plain KiB without (budget 1024 KiB)"
    halvings=$(wp_meta "$meta" rate_halvings)
    [ "$halvings" -ge 1 ] || wp_fail "rank $r: the rate was never lowered (rate_halvings=$halvings)"
    wp_note "rank $r: rate halved $halvings times, final rate $(wp_meta "$meta" hz_final) Hz"
    run_s=$(wp_calc "$(wp_meta "$meta" duration_ns) / 1e9")
    samples=$(wp_meta "$meta" samples)
    wp_check_between "rank $r weighted samples / 10000 Hz, s (run $run_s s)" "$(wp_calc "$samples / 10000")" \
        "$(wp_calc "$run_s * 0.95")" "$(wp_calc "$run_s * 1.05")"
    folded=$(wp_folded sum "$out/rank.$r.folded")
    [ "$folded" = "$samples" ] || wp_fail "rank $r: rank.$r.folded sums to $folded, meta says $samples"
    merged=$(wp_meta "$meta" merged) dropped=$(wp_meta "$meta" dropped_full)
    wp_note "rank $r: $merged samples kept under shortened stacks, $dropped dropped (table full)"
done
m=$(wp_meta "$out/sampling.txt" merged)
if [ "$m" -gt 0 ]; then
    grep -q "$m samples kept under shortened stacks" "$out.stderr" || wp_fail "the summary line does not count the merged samples"
fi
grep -q "rate lowered to .* Hz to fit WAITPROF_MEMORY" "$out.stderr" || wp_fail "the summary line does not say the rate was lowered"
exit 0
