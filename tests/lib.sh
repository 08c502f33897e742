# tests/lib.sh — shared by the integration test scripts (sourced).
# Each script is run by 'make check' in a build directory; it sources the
# build's tests/env.sh for the MPI it was configured with.
# Exit codes: 0 pass, 1 fail, 77 skip (never 0 for a skip).
set -u
. "${WP_ENV:-./tests/env.sh}"
export WAITPROF_LIB="$WP_LIB"
WP_TEST=$(basename "$0" .sh)
WP_TMP=$(mktemp -d "${TMPDIR:-/tmp}/wp-$WP_TEST.XXXXXX")
trap 'rm -rf "$WP_TMP"' EXIT

wp_fail() { echo "FAIL [$WP_TEST, $MPI_FLAVOR]: $*" >&2; exit 1; }
wp_skip() { echo "SKIP [$WP_TEST, $MPI_FLAVOR]: $*" >&2; exit 77; }
wp_note() { echo "[$WP_TEST, $MPI_FLAVOR] $*"; }

[ -n "$MPIEXEC" ] && command -v "$MPIEXEC" >/dev/null 2>&1 || wp_skip "no MPI launcher"

# wp_mpirun NP program args... — run under the build's MPI launcher, with
# the flags a 2-core root container needs.  The environment is inherited by
# the local ranks.  A hung run is killed after WP_TIMEOUT seconds.
wp_mpirun() {
    np=$1; shift
    case $MPI_FLAVOR in
    openmpi)
        timeout -k 10 "${WP_TIMEOUT:-300}" "$MPIEXEC" --allow-run-as-root --oversubscribe \
            --mca mpi_yield_when_idle 1 --mca btl_vader_single_copy_mechanism none \
            -np "$np" "$@" ;;
    *)
        timeout -k 10 "${WP_TIMEOUT:-300}" "$MPIEXEC" -n "$np" "$@" ;;
    esac
}

# wp_profile NP OUTDIR program args... — the same under the waitprof launcher.
wp_profile() {
    np=$1; out=$2; shift 2
    WAITPROF_OUT="$out" wp_mpirun "$np" "$WP_LAUNCHER" "$@"
}

# wp_meta FILE KEY — a value from a rank.R.meta file.
wp_meta() { sed -n "s/^$2=//p" "$1" | head -n 1; }

# wp_meta_counter FILE EVENT — "UNIT BACKEND" of EVENT in a rank.R.meta
# file's counters= line (entries NAME:UNIT:BACKEND, the name possibly
# holding ':' itself); nothing when the line does not list EVENT.
wp_meta_counter() {
    wp_meta "$1" counters | tr ',' '\n' |
        awk -v n="$2" 'substr($0, 1, length(n) + 1) == n ":" { r = substr($0, length(n) + 2); sub(/:/, " ", r); print r }'
}

# wp_folded ARGS... — tests/folded.py (checks the format, answers queries).
wp_folded() { "$PYTHON" "$WP_SRCDIR/tests/folded.py" "$@"; }

# wp_truth FILE RANK KEY — a value from a test program's "truth rank=R k=v" line.
wp_truth() { sed -n "s/^truth rank=$2 .*$3=\([0-9.eE+-]*\).*/\1/p" "$1" | head -n 1; }

# wp_ge A B — succeed when A >= B (decimals allowed).
wp_ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

# wp_calc EXPR — evaluate an arithmetic expression with awk.
wp_calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }

# wp_check_between NAME VALUE LOW HIGH — fail unless LOW <= VALUE <= HIGH.
wp_check_between() {
    wp_ge "$2" "$3" && wp_ge "$4" "$2" || wp_fail "$1 = $2, expected between $3 and $4"
    wp_note "$1 = $2 (accepted $3 .. $4)"
}

# wp_check_samples_follow_hz DIR — every rank's samples within ±15% of
# rate × duration × threads, give or take 2 samples for the ends of the
# interval (weighted samples count missed timer expirations).  A rank that
# lived less than 20 periods (an idle rank that went straight to
# MPI_Finalize: a few ms, much of it the sampler's own set-up before its
# timer's first expiry, longer on a loaded machine) is held to the upper
# bound only: its count cannot follow the rate from below.
wp_check_samples_follow_hz() {
    for meta in "$1"/rank.*.meta; do
        hz=$(wp_meta "$meta" hz); ns=$(wp_meta "$meta" duration_ns)
        th=$(wp_meta "$meta" threads); got=$(wp_meta "$meta" samples)
        want=$(wp_calc "$hz * $ns / 1e9 * $th")
        lo=$(wp_calc "$want * 0.85 - 2")
        wp_ge "$(wp_calc "$hz * $ns / 1e9")" 20 || lo=0
        wp_check_between "samples of $(basename "$meta" .meta) at $hz Hz" "$got" \
            "$lo" "$(wp_calc "$want * 1.15 + 2")"
    done
}

# wp_check_late_sender NP PROGRAM RECV_REGEX COMPUTE_REGEX [HZ] — run a
# late-sender program (rank 1 computes 0.2 s five times while rank 0 waits
# in MPI_Recv) and check where the samples land:
# - rank 0: samples whose path matches RECV_REGEX, in an MPI state, are at
#   least 90% of (time rank 0 measured inside the receive) x rate;
# - rank 1: Not-in-MPI samples matching COMPUTE_REGEX are at least 90% of
#   (time rank 1 measured computing) x rate;
# - every folded file follows the format rules; samples follow the rate.
wp_check_late_sender() {
    np=$1; prog=$2; recv_re=$3; comp_re=$4; hz=${5:-200}
    out="$WP_TMP/out-$hz"
    # A second program checked by the same script must not find the first
    # one's profile here (waitprof would write to out-$hz.1 instead).
    rm -rf "$out"
    WAITPROF_HZ=$hz wp_profile "$np" "$out" "$prog" 0.2 5 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
        { cat "$WP_TMP/stderr" >&2; wp_fail "$prog exited with $?"; }
    grep -q "^waitprof: $np ranks.*profile in $out" "$WP_TMP/stderr" ||
        { cat "$WP_TMP/stderr" >&2; wp_fail "no summary line on stderr"; }
    wp_folded check "$out"/rank.*.folded "$out/all.folded" || wp_fail "folded format"
    in_recv=$(wp_truth "$WP_TMP/stdout" 0 in_recv)
    in_comp=$(wp_truth "$WP_TMP/stdout" 1 in_compute)
    [ -n "$in_recv" ] && [ -n "$in_comp" ] || wp_fail "no truth lines from $prog"
    got=$(wp_folded sum "$out/rank.0.folded" --path "^MPI-(Work|Stall)(;.*)?$recv_re")
    want=$(wp_calc "$in_recv * $hz")
    wp_check_between "rank 0 samples in MPI under /$recv_re/ (truth $in_recv s)" "$got" \
        "$(wp_calc "$want * 0.9")" "$(wp_calc "$want * 1.15 + 2")"
    got=$(wp_folded sum "$out/rank.1.folded" --state Not-in-MPI --path "$comp_re")
    want=$(wp_calc "$in_comp * $hz")
    wp_check_between "rank 1 Not-in-MPI samples under /$comp_re/ (truth $in_comp s)" "$got" \
        "$(wp_calc "$want * 0.9")" "$(wp_calc "$want * 1.15 + 2")"
    wp_check_samples_follow_hz "$out"
}

# wp_waits_sum FILE FUNCTION PATTERN — the wait_ns of the rows of a
# rank.R.waits file whose function and pattern columns match, summed and
# printed in seconds.  Columns are found by their names in the header (line
# 2), so a column added later does not shift the ones read here.  Fails
# (status 2) unless line 1 is "# waitprof-waits 1" and line 2 names the
# columns, and (status 3) when no row matches: a category that was called
# must have a row.
wp_waits_sum() {
    awk -F '\t' -v fn="$2" -v pat="$3" '
        NR == 1 { if ($0 != "# waitprof-waits 1") { bad = 2; exit } next }
        NR == 2 { for (i = 1; i <= NF; i++) col[$i] = i
                  if (!col["function"] || !col["pattern"] || !col["wait_ns"]) { bad = 2; exit }
                  next }
        $col["function"] == fn && $col["pattern"] == pat { sum += $col["wait_ns"]; rows++ }
        END { if (bad || NR < 2) exit 2
              if (!rows) exit 3
              printf "%.6f\n", sum / 1e9 }' "$1"
}

# wp_waits_method FILE FUNCTION PATTERN — the method column of the rows of a
# rank.R.waits file whose function and pattern match, printed once:
# "measured" (the wait comes from matched message or collective instances),
# "source" (the runtime stall source dated every call's stall: mpit/requests.h)
# or "estimated" (the minimum-duration estimate).  Columns are found by name
# as in wp_waits_sum.  Fails with status 2 unless line 1 is
# "# waitprof-waits 1" and line 2 names function, pattern and method, 3 when
# no row matches, 4 when the matching rows name different methods.
wp_waits_method() {
    awk -F '\t' -v fn="$2" -v pat="$3" '
        NR == 1 { if ($0 != "# waitprof-waits 1") { bad = 2; exit } next }
        NR == 2 { for (i = 1; i <= NF; i++) col[$i] = i
                  if (!col["function"] || !col["pattern"] || !col["method"]) { bad = 2; exit }
                  next }
        $col["function"] == fn && $col["pattern"] == pat {
            if (rows++ && $col["method"] != m) { bad = 4; exit }
            m = $col["method"] }
        END { if (bad) exit bad
              if (NR < 2) exit 2
              if (!rows) exit 3
              print m }' "$1"
}

# wp_waits_matched FILE FUNCTION PATTERN — the matched column (instances
# whose wait was measured by matching both sides) of the rows of a
# rank.R.waits file whose function and pattern match, summed.  Fails like
# wp_waits_method: status 2 for the format or a missing column, 3 when no
# row matches.
wp_waits_matched() {
    awk -F '\t' -v fn="$2" -v pat="$3" '
        NR == 1 { if ($0 != "# waitprof-waits 1") { bad = 2; exit } next }
        NR == 2 { for (i = 1; i <= NF; i++) col[$i] = i
                  if (!col["function"] || !col["pattern"] || !col["matched"]) { bad = 2; exit }
                  next }
        $col["function"] == fn && $col["pattern"] == pat { sum += $col["matched"]; rows++ }
        END { if (bad) exit bad
              if (NR < 2) exit 2
              if (!rows) exit 3
              print sum + 0 }' "$1"
}

# wp_waits_site FILE SITE FUNCTION PATTERN — one call site's figures in a
# rank.R.waits file: the rows whose site is the function SITE (the site
# column reads "SITE (file:line)", or "SITE < caller ..." with call paths)
# and whose function and pattern columns match, printed as
# "wait_s matched method ci_s time_s" (wait, interval and time summed and in
# seconds, matched summed, method the rows' common one, "mixed" if they
# differ).
# Columns are found by name as in wp_waits_sum.  Fails with status 2 for the
# format or a missing column, 3 when no row matches.
wp_waits_site() {
    awk -F '\t' -v site="$2" -v fn="$3" -v pat="$4" '
        NR == 1 { if ($0 != "# waitprof-waits 1") { bad = 2; exit } next }
        NR == 2 { for (i = 1; i <= NF; i++) col[$i] = i
                  if (!col["site"] || !col["function"] || !col["pattern"] || !col["wait_ns"] ||
                      !col["matched"] || !col["method"] || !col["ci_ns"] || !col["time_ns"]) { bad = 2; exit }
                  next }
        $col["function"] == fn && $col["pattern"] == pat &&
        (substr($col["site"], 1, length(site) + 2) == site " (" ||
         substr($col["site"], 1, length(site) + 3) == site " < ") {
            w += $col["wait_ns"]; m += $col["matched"]; ci += $col["ci_ns"]; t += $col["time_ns"]
            how = rows++ && how != $col["method"] ? "mixed" : $col["method"] }
        END { if (bad) exit bad
              if (NR < 2) exit 2
              if (!rows) exit 3
              printf "%.6f %d %s %.6f %.6f\n", w / 1e9, m, how, ci / 1e9, t / 1e9 }' "$1"
}

# wp_check_waits NP DIR STDOUT NTRUTH [soft] — check a run's wait-state
# estimate against the truth its program printed: every rank 0..NP-1 wrote
# DIR/rank.R.waits whose first line is "# waitprof-waits 1"; STDOUT holds
# NTRUTH lines "truth rank=R pattern=P function=F wait=S"; and for each, the
# wait_ns summed over rank R's rows of function F and pattern P is within 10%
# of S or 5 ms, whichever is larger (5 ms: where the truth is near 0, the
# estimate still counts each call's time in excess of the fastest call);
# WP_WAITS_REL and WP_WAITS_ABS (seconds) change the 0.10 and 0.005.
# A missing file, format or row always fails; with "soft", estimates outside
# the tolerance are noted and make the function return 1 instead.
wp_check_waits() {
    _wn=$1 _wd=$2 _wt=$3 _wbad=0
    _wr=0
    while [ "$_wr" -lt "$_wn" ]; do
        [ -f "$_wd/rank.$_wr.waits" ] || wp_fail "no $_wd/rank.$_wr.waits"
        _wl=$(head -n 1 "$_wd/rank.$_wr.waits")
        [ "$_wl" = "# waitprof-waits 1" ] ||
            wp_fail "rank.$_wr.waits: first line is '$_wl', not '# waitprof-waits 1'"
        _wr=$((_wr + 1))
    done
    grep '^truth rank=' "$_wt" >"$_wt.truth"
    [ "$(wc -l <"$_wt.truth")" -eq "$4" ] || { cat "$_wt" >&2; wp_fail "expected $4 truth lines from the program"; }
    while read -r _ _wr _wp _wf _ww; do
        _wr=${_wr#rank=} _wp=${_wp#pattern=} _wf=${_wf#function=} _ww=${_ww#wait=}
        _wg=$(wp_waits_sum "$_wd/rank.$_wr.waits" "$_wf" "$_wp") ||
            { cat "$_wd/rank.$_wr.waits" >&2; wp_fail "rank.$_wr.waits: no $_wf row with pattern $_wp, or not the waits format"; }
        _wtol=$(awk -v t="$_ww" -v r="${WP_WAITS_REL:-0.10}" -v a="${WP_WAITS_ABS:-0.005}" \
            'BEGIN { d = t * r; if (d < a) d = a; printf "%.6f", d }')
        _wlo=$(awk -v t="$_ww" -v d="$_wtol" 'BEGIN { printf "%.6f", t - d }')
        _whi=$(awk -v t="$_ww" -v d="$_wtol" 'BEGIN { printf "%.6f", t + d }')
        _wlabel="rank $_wr $_wf $_wp estimate, s (truth $_ww)"
        if wp_ge "$_wg" "$_wlo" && wp_ge "$_whi" "$_wg"; then
            wp_check_between "$_wlabel" "$_wg" "$_wlo" "$_whi"
            continue
        fi
        # The evidence: the per-iteration truth and the rank's rows.
        grep "^detail rank=$_wr " "$_wt" >&2
        cat "$_wd/rank.$_wr.waits" >&2
        [ "${5:-}" = soft ] || wp_check_between "$_wlabel" "$_wg" "$_wlo" "$_whi"
        wp_note "$_wlabel = $_wg, OUTSIDE $_wlo .. $_whi"
        _wbad=1
    done <"$_wt.truth"
    return "$_wbad"
}

# wp_check_waits_run NP NTRUTH PROGRAM ARGS... — run PROGRAM under waitprof
# and wp_check_waits it.  The truth does not count the time a call spends
# after the last partner arrived, the estimate does: on a loaded or
# oversubscribed machine a rank descheduled there can push an estimate out
# of the tolerance.  Such noise seldom strikes twice, a wrong estimator
# always does, so an estimate outside the tolerance gets WP_WAITS_TRIES
# (default 2) runs in all; a crash or a missing/malformed file fails at once.
wp_check_waits_run() {
    _wnp=$1 _wnt=$2 _wtry=1
    shift 2
    while :; do
        WP_WAITS_N=$((${WP_WAITS_N:-0} + 1))
        _wout=$WP_TMP/waits-$WP_WAITS_N
        wp_profile "$_wnp" "$_wout" "$@" >"$_wout.stdout" 2>"$_wout.stderr" ||
            { _wrc=$?; cat "$_wout.stderr" >&2; wp_fail "$* exited with $_wrc"; }
        if [ "$_wtry" -lt "${WP_WAITS_TRIES:-2}" ]; then
            wp_check_waits "$_wnp" "$_wout" "$_wout.stdout" "$_wnt" soft && return 0
            wp_note "attempt $_wtry of ${WP_WAITS_TRIES:-2} of '$*' is outside the tolerance: running it again"
        else
            wp_check_waits "$_wnp" "$_wout" "$_wout.stdout" "$_wnt"
            return 0
        fi
        _wtry=$((_wtry + 1))
    done
}

# wp_check_exact NP NTRUTH MIN PROGRAM MODE [ARGS...] — run PROGRAM MODE
# ARGS (tests/mpi/ws_exact.c) on NP ranks under waitprof and wp_check_waits
# its NTRUTH truth lines; besides, every row a truth line names must say
# method=measured (from matched instances, not the estimate) with at least
# one matched instance, and the largest truth must be at least MIN seconds,
# so a program that failed to inject its waits cannot pass.
wp_check_exact() {
    _xmin=$3 _xmode=$(basename "$4")${5:+ $5}
    _xnp=$1 _xnt=$2
    shift 3
    wp_check_waits_run "$_xnp" "$_xnt" "$@"
    _xo=$WP_TMP/waits-$WP_WAITS_N
    _xmax=0
    grep '^truth rank=' "$_xo.stdout" >"$_xo.lines"
    while read -r _ _xr _xp _xf _xw; do
        _xr=${_xr#rank=} _xp=${_xp#pattern=} _xf=${_xf#function=} _xw=${_xw#wait=}
        _xm=$(wp_waits_method "$_xo/rank.$_xr.waits" "$_xf" "$_xp") ||
            { cat "$_xo/rank.$_xr.waits" >&2; wp_fail "$_xmode: rank.$_xr.waits: no method column, no $_xf $_xp row, or rows disagree"; }
        [ "$_xm" = measured ] ||
            { cat "$_xo/rank.$_xr.waits" >&2; wp_fail "$_xmode: rank $_xr $_xf $_xp is '$_xm', not measured"; }
        _xn=$(wp_waits_matched "$_xo/rank.$_xr.waits" "$_xf" "$_xp") ||
            { cat "$_xo/rank.$_xr.waits" >&2; wp_fail "$_xmode: rank.$_xr.waits: no matched column"; }
        wp_ge "$_xn" 1 ||
            { cat "$_xo/rank.$_xr.waits" >&2; wp_fail "$_xmode: rank $_xr $_xf $_xp measured from $_xn matched instances"; }
        wp_note "$_xmode: rank $_xr $_xf $_xp measured, $_xn matched instances"
        wp_ge "$_xmax" "$_xw" || _xmax=$_xw
    done <"$_xo.lines"
    wp_ge "$_xmax" "$_xmin" ||
        { cat "$_xo.stdout" >&2; wp_fail "$_xmode: the largest truth is $_xmax s, below $_xmin: the program did not inject its waits"; }
}

# wp_check_measured DIR STDOUT — for every "truth rank=R pattern=P
# function=F wait=S" line in STDOUT, rank R's rows of F and P in
# DIR/rank.R.waits say method measured (from matched instances, not the
# minimum-duration estimate) and matched >= 1.  Run after wp_check_waits or
# wp_check_waits_run (whose last run is $WP_TMP/waits-$WP_WAITS_N).
wp_check_measured() {
    grep '^truth rank=' "$2" >"$2.measured"
    while read -r _ _mr _mp _mf _; do
        _mr=${_mr#rank=} _mp=${_mp#pattern=} _mf=${_mf#function=}
        _mm=$(wp_waits_method "$1/rank.$_mr.waits" "$_mf" "$_mp") ||
            { cat "$1/rank.$_mr.waits" >&2; wp_fail "rank.$_mr.waits: no method column, no $_mf $_mp row, or rows disagree"; }
        [ "$_mm" = measured ] || { cat "$1/rank.$_mr.waits" >&2; wp_fail "rank $_mr $_mf $_mp is '$_mm', not measured"; }
        _mn=$(wp_waits_matched "$1/rank.$_mr.waits" "$_mf" "$_mp") ||
            { cat "$1/rank.$_mr.waits" >&2; wp_fail "rank.$_mr.waits: no matched column"; }
        wp_ge "$_mn" 1 || { cat "$1/rank.$_mr.waits" >&2; wp_fail "rank $_mr $_mf $_mp measured from $_mn matched instances"; }
        wp_note "rank $_mr $_mf $_mp measured, $_mn matched instances"
    done <"$2.measured"
}

# wp_check_source SOURCE MODE NP TOL PATH [work] — run tests/mpi/ws_source
# MODE on NP ranks at 1000 Hz with WAITPROF_SOURCE=SOURCE; on rank 0 the
# share of the samples under PATH (a regular expression on the folded path)
# that are MPI-Stall must be within TOL (a fraction) of the share of that
# call's time the program measured as waiting; the meta file must name
# SOURCE as the source that classified; with "work", some of those samples
# must be MPI-Work (the transfer of a large message).  Like
# wp_check_waits_run, a result outside the tolerance gets WP_WAITS_TRIES
# (default 2) runs in all, since a descheduled rank on a loaded machine
# shifts the truth; a crash, a wrong source or missing samples fail at once.
wp_check_source() {
    _ss=$1 _sm=$2 _sn=$3 _st=$4 _sp=$5 _swork=${6:-} _stry=1
    while :; do
        WP_SRC_N=$((${WP_SRC_N:-0} + 1))
        _so=$WP_TMP/src-$_ss-$_sm-$WP_SRC_N
        WAITPROF_SOURCE=$_ss WAITPROF_HZ=1000 wp_profile "$_sn" "$_so" "$WP_BUILDDIR/tests/mpi/ws_source" "$_sm" ${WP_SRC_ARGS:-0.1 10} \
            >"$_so.stdout" 2>"$_so.stderr" || { _src=$?; cat "$_so.stderr" >&2; wp_fail "ws_source $_sm exited with $_src"; }
        _struth=$(wp_truth "$_so.stdout" 0 stall_share)
        [ -n "$_struth" ] || { cat "$_so.stdout" >&2; wp_fail "ws_source $_sm printed no truth line"; }
        [ "$(wp_meta "$_so/rank.0.meta" source)" = "$_ss" ] ||
            { cat "$_so.stderr" >&2; wp_fail "$_sm: meta names source '$(wp_meta "$_so/rank.0.meta" source)', not $_ss"; }
        _swr=full
        [ "${WAITPROF_LEAN:-0}" = 1 ] && _swr=lean
        [ "$(wp_meta "$_so/rank.0.meta" wrappers)" = "$_swr" ] || wp_fail "$_sm: meta does not say wrappers=$_swr"
        _sstall=$(wp_folded sum "$_so/rank.0.folded" --state MPI-Stall --path "$_sp")
        _swk=$(wp_folded sum "$_so/rank.0.folded" --state MPI-Work --path "$_sp")
        # At least 20 samples, or 70 % of what the time in the call gives at
        # 1000 Hz where that is less (the "there" case: ten 16 MiB copies
        # take 13-20 ms on these machines, depending on the memory).
        _sin=$(wp_truth "$_so.stdout" 0 in_call)
        _sneed=$(awk -v t="${_sin:-1}" 'BEGIN { n = int(t * 1000 * 0.7); if (n > 20) n = 20; if (n < 5) n = 5; print n }')
        [ "$((_sstall + _swk))" -ge "$_sneed" ] ||
            wp_fail "$_sm: only $((_sstall + _swk)) samples under $_sp (${_sin:-?} s in the call; at least $_sneed wanted)"
        [ -z "$_swork" ] || [ "$_swk" -gt 0 ] || wp_fail "$_sm: no MPI-Work sample under $_sp: the transfer was classified as waiting"
        _sshare=$(wp_calc "$_sstall / ($_sstall + $_swk)")
        _slo=$(wp_calc "$_struth - $_st") _shi=$(wp_calc "$_struth + $_st")
        _slabel="$_ss, $_sm: sampled MPI-Stall share under $_sp ($_sstall of $((_sstall + _swk)); truth $_struth)"
        if wp_ge "$_sshare" "$_slo" && wp_ge "$_shi" "$_sshare"; then
            wp_check_between "$_slabel" "$_sshare" "$_slo" "$_shi"
            return 0
        fi
        [ "$_stry" -lt "${WP_WAITS_TRIES:-2}" ] || wp_check_between "$_slabel" "$_sshare" "$_slo" "$_shi"
        wp_note "$_slabel = $_sshare, outside $_slo .. $_shi: running it again"
        _stry=$((_stry + 1))
    done
}

# wp_check_waitall_remedy OUT PROGRAM ARGS... — run a staggered-senders
# MPI_Waitall program at 2 ranks (tests/mpi/ws_waitall.c, ws_waitall.F90)
# into OUT and check, with the columns of rank 0's MPI_Waitall rows read
# by name: the late-sender estimate is within 10% or 5 ms of the program's
# truth (wp_check_waits), some calls were complete on entry, and the
# remedy (those calls wait zero and stay out of the minimum) is closer to
# the truth than the plain method (plain_wait_ns) of the same run.  Ends
# the calling subshell with wp_fail on a miss.
wp_check_waitall_remedy() {
    _rout=$1; shift
    wp_profile 2 "$_rout" "$@" >"$_rout.stdout" 2>"$_rout.stderr" ||
        { _rrc=$?; cat "$_rout.stderr" >&2; wp_fail "$* exited with $_rrc"; }
    wp_check_waits 2 "$_rout" "$_rout.stdout" 1
    _rtruth=$(sed -n 's/^truth rank=0 .* wait=//p' "$_rout.stdout")
    _rcols() {
        awk -F '\t' -v want="$1" 'NR == 2 { for (i = 1; i <= NF; i++) c[$i] = i; next }
            NR > 2 && $c["function"] == "MPI_Waitall" { s += $c[want] } END { print s + 0 }' "$_rout/rank.0.waits"
    }
    _rearly=$(_rcols early_calls)
    _rremedy=$(awk -v x="$(_rcols wait_ns)" 'BEGIN { printf "%.6f", x / 1e9 }')
    _rplain=$(awk -v x="$(_rcols plain_wait_ns)" 'BEGIN { printf "%.6f", x / 1e9 }')
    [ "$_rearly" -gt 0 ] || wp_fail "no MPI_Waitall call was found complete on entry"
    wp_note "truth $_rtruth s, with the remedy $_rremedy s, plain method $_rplain s, $_rearly calls complete on entry"
    awk -v t="$_rtruth" -v r="$_rremedy" -v p="$_rplain" 'BEGIN {
            er = r - t; if (er < 0) er = -er; ep = p - t; if (ep < 0) ep = -ep; exit !(er < ep) }' ||
        wp_fail "the remedy's error |$_rremedy - $_rtruth| is not below the plain method's |$_rplain - $_rtruth|"
}

# wp_check_source_fallback SOURCE USED — ask for a stall source this build or
# MPI cannot use: the run must succeed, stderr must hold exactly one line
# naming SOURCE, the reason and the source used instead, and the meta file
# must name USED as the source that classified.
wp_check_source_fallback() {
    _fbn=$((${_fbn:-0} + 1))
    _fo=$WP_TMP/fallback-$1.$_fbn
    WAITPROF_SOURCE=$1 WAITPROF_HZ=100 wp_profile 2 "$_fo" "$WP_BUILDDIR/tests/mpi/ws_source" eager 0.05 2 \
        >/dev/null 2>"$_fo.err" || { cat "$_fo.err" >&2; wp_fail "the run with WAITPROF_SOURCE=$1 failed"; }
    _fn=$(grep -c "WAITPROF_SOURCE=$1 is not available here (.*); using $2 instead" "$_fo.err")
    [ "$_fn" = 1 ] || { cat "$_fo.err" >&2; wp_fail "expected one line saying $1 is unavailable and $2 is used, got $_fn"; }
    [ "$(wp_meta "$_fo/rank.0.meta" source)" = "$2" ] || wp_fail "meta names source '$(wp_meta "$_fo/rank.0.meta" source)', not $2"
    wp_note "$(grep 'WAITPROF_SOURCE' "$_fo.err")"
}

# wp_observe_base NP program args... — run the program without waitprof;
# its output, sorted, in $WP_TMP/base; fail unless it exits with 0.
wp_observe_base() {
    wp_mpirun "$@" >"$WP_TMP/base.out" 2>"$WP_TMP/base.err"
    rc=$?
    [ $rc = 0 ] || { cat "$WP_TMP/base.err" >&2; wp_fail "$(basename "$2") without waitprof exited with $rc"; }
    sort "$WP_TMP/base.out" >"$WP_TMP/base"
}

# wp_observe_same HZ NP program args... — the same under waitprof at HZ:
# exit 0 and the same sorted output as wp_observe_base's.
wp_observe_same() {
    hz=$1; shift
    np=$1; shift
    WAITPROF_HZ=$hz wp_profile "$np" "$WP_TMP/o$hz" "$@" >"$WP_TMP/got.out" 2>"$WP_TMP/got.err"
    rc=$?
    [ $rc = 0 ] || { cat "$WP_TMP/got.err" >&2; wp_fail "$(basename "$1") at $hz Hz exited with $rc"; }
    sort "$WP_TMP/got.out" >"$WP_TMP/got"
    diff "$WP_TMP/base" "$WP_TMP/got" >&2 || wp_fail "at $hz Hz the program observed something else than without waitprof"
    wp_note "$hz Hz: $(wc -l <"$WP_TMP/got") observations as without waitprof"
}

# wp_shot FILE PNG — a screenshot of FILE (an SVG) by headless Chromium,
# 1200x600.  Chromium runs as root only without its sandbox; its profile
# goes to the test's own directory.
wp_shot() {
    rm -f "$2"
    HOME=$WP_TMP timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$WP_TMP/chromium" --window-size=1200,600 --screenshot="$2" \
        "file://$1" >"$WP_TMP/chromium.log" 2>&1 || { tail -n 20 "$WP_TMP/chromium.log" >&2; wp_fail "chromium failed on $1"; }
    [ -s "$2" ] || wp_fail "chromium wrote no screenshot of $1"
}

# wp_check_chain_costs REPORT_JSON TRUTH_LINE LABEL — tests/mpi/ws_chain.c's
# delay costs in a run's report.json against the program's truth line:
# rank 1's direct (short-term) and propagated (long-term) costs under
# late_work within 15 %, its propagated waits on rank 3 only, and rank 2's
# direct cost under relay_work within 15 % or 30 ms; both truths at least
# 0.6 s, so a program that did not inject its delays cannot pass.  Prints
# truth and measurement; fails (exit 1) when off.
wp_check_chain_costs() {
    "$PYTHON" - "$1" "$2" "$WP_TEST, $MPI_FLAVOR, $3" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["causes"]
t = dict(kv.split("=") for kv in sys.argv[2].split()[1:])
s1, l1, s2 = float(t["short1"]), float(t["long1"]), float(t["short2"])
def of(rank, fn):
    # A cause is a (rank, call path): samples in late_work() and in the
    # clock_gettime its loop calls are two paths of one delay.
    return [x for x in c if x["rank"] == rank and x["path"] and fn in x["path"].split(";")]
r1, r2 = of(1, "late_work"), of(2, "relay_work")
m_s1 = sum(x["short_term_s"] for x in r1)
m_l1 = sum(x["long_term_s"] for x in r1)
m_s2 = sum(x["short_term_s"] for x in r2)
prop_ranks = sorted({w["rank"] for x in r1 for w in x["waits"] if w["kind"] == "propagated"})
print("[%s] truth: rank 1 %.3f s direct, %.3f s propagated; rank 2 %.3f s direct" % (sys.argv[3], s1, l1, s2))
print("[%s] measured: rank 1 %.3f s direct, %.3f s propagated (waits on ranks %s); rank 2 %.3f s direct"
      % (sys.argv[3], m_s1, m_l1, prop_ranks, m_s2))
ok = s1 >= 0.6 and l1 >= 0.6
ok = ok and abs(m_s1 - s1) <= 0.15 * s1 and abs(m_l1 - l1) <= 0.15 * l1 and prop_ranks == [3]
ok = ok and abs(m_s2 - s2) <= max(0.15 * s2, 0.03)
sys.exit(0 if ok else 1)
PY
}
