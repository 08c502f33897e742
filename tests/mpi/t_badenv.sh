#!/bin/sh
# Bad configuration never hurts the application: every WAITPROF_* variable
# given garbage, out-of-range or empty values, an unknown variable, and
# missing or unwritable output directories each give one line naming the
# problem and what is accepted; the program's exit code is its own.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/ending
base_code=0
wp_mpirun 2 "$prog" finalize 3 >/dev/null 2>&1 || base_code=$?
wp_note "exit code without waitprof: $base_code"

# run_with EXPECT_REGEX VAR=VALUE... — one line matching the regex, exit code unchanged.
run_with() {
    re=$1; shift
    code=0
    (export WAITPROF_QUIET=1 "$@"; wp_mpirun 2 "$WP_LAUNCHER" "$prog" finalize 3) \
        >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" || code=$?
    [ "$code" = "$base_code" ] || { cat "$WP_TMP/stderr" >&2; wp_fail "$*: exit code $code, expected $base_code"; }
    n=$(grep -c "^waitprof: .*$re" "$WP_TMP/stderr")
    [ "$n" = 1 ] || { cat "$WP_TMP/stderr" >&2; wp_fail "$*: expected one line matching '$re', got $n"; }
    wp_note "$* -> $(grep "^waitprof: .*$re" "$WP_TMP/stderr")"
}
cd "$WP_TMP" || wp_fail "no temp dir"
mkdir -p tmp
o=WAITPROF_OUT=$WP_TMP/o
for v in abc 0 10001 -5 '' 12abc ' 5' 1e3; do
    run_with "WAITPROF_HZ.*1 to 10000.*using 100" "$o-hz" "WAITPROF_HZ=$v"
done
for v in '' foo WALL; do
    run_with 'WAITPROF_CLOCK.*wall or cpu.*using wall' "$o-clk" "WAITPROF_CLOCK=$v"
done
for v in '' free1 TICK; do
    run_with 'WAITPROF_TIMER.*tick or free.*using tick' "$o-tmr" "WAITPROF_TIMER=$v"
done
for v in 0 129 x ''; do
    run_with 'WAITPROF_DEPTH.*1 to 128.*using 128' "$o-depth" "WAITPROF_DEPTH=$v"
done
for var in WAITPROF_RUNTIME_THREADS WAITPROF_QUIET WAITPROF_MATRIX WAITPROF_LEAN; do
    for v in 2 yes ''; do
        run_with "$var.*0 or 1.*using 0" "$o-b" "$var=$v"
    done
done
for v in abc -1 101 '' 1e3; do
    run_with 'WAITPROF_THRESHOLD.*0 to 100.*using 0.5' "$o-th" "WAITPROF_THRESHOLD=$v"
done
for v in 2 yes ''; do
    run_with 'WAITPROF_ESTIMATE.*0 or 1.*using 1' "$o-est" "WAITPROF_ESTIMATE=$v"
done
for v in 0 17 x '' 2.5; do
    run_with 'WAITPROF_CALLPATH_DEPTH.*1 to 16.*using 1' "$o-cp" "WAITPROF_CALLPATH_DEPTH=$v"
done
# Lean wrappers keep no per-call figure: asking for one too is named.
run_with 'WAITPROF_LEAN=1 keeps no per-call figures, so WAITPROF_MATRIX=1 is ignored' "$o-lm" \
    WAITPROF_LEAN=1 WAITPROF_MATRIX=1
run_with 'WAITPROF_LEAN=1 keeps no per-call figures, so WAITPROF_ESTIMATE=1 is ignored' "$o-le" \
    WAITPROF_LEAN=1 WAITPROF_ESTIMATE=1
run_with 'WAITPROF_OUT is empty' WAITPROF_OUT=
run_with 'unknown variable WAITPROF_HERTZ' "$o-u" WAITPROF_HERTZ=100
# A directory that cannot be made: the profile goes to $TMPDIR instead.
run_with "cannot write to /proc/waitprof-test.*writing the profile to $WP_TMP/tmp/waitprof" \
    WAITPROF_OUT=/proc/waitprof-test TMPDIR="$WP_TMP/tmp"
ls "$WP_TMP"/tmp/waitprof.*/all.folded >/dev/null 2>&1 || wp_fail "no profile in the fallback directory"
# Nowhere to write at all: the run still ends as it would have.  (Open MPI
# keeps its session directory in TMPDIR too: point it elsewhere.)
run_with 'no profile will be written' WAITPROF_OUT=/dev/null/x TMPDIR=/proc/nope OMPI_MCA_orte_tmpdir_base=/tmp
# A missing directory several levels deep is created.
# A missing directory is made without a word: the start line and the
# summary name it, and nothing else is said.
run_with "profile in $WP_TMP/a/b/c/ " "WAITPROF_OUT=$WP_TMP/a/b/c" WAITPROF_QUIET=0
[ "$(grep -c '^waitprof: ' "$WP_TMP/stderr")" = 2 ] && grep -q "^waitprof: profiling .* into $WP_TMP/a/b/c/\$" "$WP_TMP/stderr" ||
    { cat "$WP_TMP/stderr" >&2; wp_fail "a missing output directory: more than the start line and the summary"; }
[ -f "$WP_TMP/a/b/c/all.folded" ] || wp_fail "missing output directory not created"

# Rank and time selection, memory budget.  The job has 2 ranks.
for v in abc '' -3 5-2 1,,2 random:0 random:x 0-9:0; do
    run_with 'WAITPROF_RANKS.*all, none, random:N.*using all' "$o-r" "WAITPROF_RANKS=$v"
done
run_with 'WAITPROF_RANKS="0,0-1" has overlapping items; sampling ranks 0-1' "$o-r" WAITPROF_RANKS=0,0-1
run_with 'WAITPROF_RANKS="0-5" names ranks beyond the job.s last rank 1; sampling ranks 0-1' "$o-r" WAITPROF_RANKS=0-5
run_with 'WAITPROF_RANKS="7" names ranks beyond the job.s last rank 1; sampling ranks none' "$o-rn" WAITPROF_RANKS=7
[ -f "$WP_TMP/o-rn/sampling.txt" ] && ! ls "$WP_TMP"/o-rn/rank.* >/dev/null 2>&1 ||
    wp_fail "WAITPROF_RANKS=7 on 2 ranks: expected sampling.txt and no per-rank file"
run_with 'WAITPROF_RANKS="random:5" asks for 5 random ranks of the job.s 2; sampling all ranks' "$o-r" WAITPROF_RANKS=random:5
for var in WAITPROF_START WAITPROF_STOP; do
    for v in abc -1 '' 1e3 ' 2'; do
        run_with "$var.*seconds since MPI_Init.*using 0" "$o-t" "$var=$v"
    done
done
run_with 'WAITPROF_STOP=1 is not after WAITPROF_START=2.*sampling from 2 s to the end' "$o-t" WAITPROF_START=2 WAITPROF_STOP=1
run_with 'WAITPROF_STOP=2 is not after WAITPROF_START=2' "$o-t" WAITPROF_START=2 WAITPROF_STOP=2
for v in '' garbage every:1,for:2 every:0,for:0 every:-1,for:1 every:5 every:1e3,for:1; do
    run_with 'WAITPROF_WINDOW.*every:SECONDS,for:SECONDS.*using no periodic window' "$o-w" "WAITPROF_WINDOW=$v"
done
for v in '' abc 0 10 512K 5G -1M 16X; do
    run_with 'WAITPROF_MEMORY.*1M to 4G.*using 16M' "$o-m" "WAITPROF_MEMORY=$v"
done
exit 0
