#!/bin/sh
# What waitprof does at MPI_Init with the stall source (mpit/source.h,
# wp_source_preinit), seen from the program and from the meta files
# (tests/mpi/initq.c):
# - the thread level: for MPI_Init and for MPI_Init_thread at each of the
#   four levels, what MPI_Init_thread provides and what MPI_Query_thread
#   answers are the same with waitprof (default settings) as without it;
# - MPI_T is initialised only for a source that may use it: with
#   WAITPROF_SOURCE=wrappers, and with the default source wherever matched
#   instances decide the samples (the default settings) or PERUSE is used,
#   and on MPICH (not Open MPI: the variable is ob1's), the meta files say
#   mpit_init=none and mpit_init_ns=0 on every rank; with the default
#   source and lean wrappers (WAITPROF_LEAN=1: no matched instances) on
#   Open MPI without PERUSE, source=mpit and mpit_init=before (initialised
#   before PMPI_Init, where it costs less: doc/performance.md, "Start-up and
#   finalize"); every meta file has init_ns (waitprof's own time in
#   MPI_Init);
# - a program that uses MPI_T itself (init, the variables' names, finalize
#   after MPI_Init) next to WAITPROF_SOURCE=mpit finds variables where it
#   finds some without waitprof, and ob1's posted-queue variable where it
#   finds it without; its thread level is unchanged; and on Open MPI the
#   MPI_T source still classifies rank 0's late-sender receive afterwards:
#   at least 80 % of its samples in MPI_Recv are MPI-Stall (it waits the
#   whole 0.2 s).
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/initq

# initq_line FILE KEY — KEY=value of rank 0's line.
initq() { sed -n "s/^initq rank=0 .*$2=\(-*[0-9]*\).*/\1/p" "$1" | head -n 1; }

want_src=wrappers lean_src=wrappers
if [ "$MPI_FLAVOR" = openmpi ]; then
    lean_src=mpit
    [ "$WP_HAVE_PERUSE" = 1 ] && want_src=peruse lean_src=peruse
fi

# check_meta LABEL DIR SOURCE — every rank's meta file names SOURCE, says
# MPI_T was initialised before PMPI_Init exactly when SOURCE is mpit, and
# has waitprof's own time in MPI_Init.
check_meta() {
    for meta in "$2"/rank.*.meta; do
        src=$(wp_meta "$meta" source) when=$(wp_meta "$meta" mpit_init) ns=$(wp_meta "$meta" mpit_init_ns)
        init=$(wp_meta "$meta" init_ns)
        [ "$src" = "$3" ] || wp_fail "$1: $(basename "$meta"): the source is '$src', not $3"
        case $src in
        mpit) [ "$when" = before ] && [ "$ns" -gt 0 ] ||
            wp_fail "$1: $(basename "$meta"): source mpit, but mpit_init=$when mpit_init_ns=$ns" ;;
        *) [ "$when" = none ] && [ "$ns" = 0 ] ||
            wp_fail "$1: $(basename "$meta"): source $src needs no MPI_T, but mpit_init=$when mpit_init_ns=$ns" ;;
        esac
        [ "${init:-x}" -gt 0 ] 2>/dev/null || wp_fail "$1: $(basename "$meta"): init_ns '$init'"
    done
}

for level in init single funneled serialized multiple; do
    wp_mpirun 2 "$prog" $level >"$WP_TMP/plain.$level" 2>"$WP_TMP/plain.$level.err" ||
        { cat "$WP_TMP/plain.$level.err" >&2; wp_fail "$level: the run without waitprof failed"; }
    out=$WP_TMP/wp.$level
    wp_profile 2 "$out" "$prog" $level >"$out.stdout" 2>"$out.stderr" ||
        { cat "$out.stderr" >&2; wp_fail "$level: the profiled run failed"; }
    for k in provided query; do
        a=$(initq "$WP_TMP/plain.$level" $k) b=$(initq "$out.stdout" $k)
        [ -n "$a" ] && [ "$a" = "$b" ] || wp_fail "$level: $k is '$b' with waitprof, '$a' without"
    done
    check_meta "$level" "$out" "$want_src"
    wp_note "$level: provided $(initq "$out.stdout" provided), query $(initq "$out.stdout" query) as without waitprof; source $want_src, mpit_init=$(wp_meta "$out/rank.0.meta" mpit_init)"
done

# Lean wrappers keep no matched instances: the default source is then the
# most exact runtime source there is, MPI_T on Open MPI without PERUSE.
for level in init multiple; do
    out=$WP_TMP/lean.$level
    WAITPROF_LEAN=1 wp_profile 2 "$out" "$prog" $level >"$out.stdout" 2>"$out.stderr" ||
        { cat "$out.stderr" >&2; wp_fail "lean $level: the profiled run failed"; }
    b=$(initq "$out.stdout" query) a=$(initq "$WP_TMP/plain.$level" query)
    [ -n "$a" ] && [ "$a" = "$b" ] || wp_fail "lean $level: query is '$b' with waitprof, '$a' without"
    check_meta "lean $level" "$out" "$lean_src"
    wp_note "WAITPROF_LEAN=1 $level: source $lean_src, mpit_init=$(wp_meta "$out/rank.0.meta" mpit_init), query $b as without waitprof"
done

# WAITPROF_SOURCE=wrappers: MPI_T is never initialised.
out=$WP_TMP/wrappers
WAITPROF_SOURCE=wrappers wp_profile 2 "$out" "$prog" single >"$out.stdout" 2>"$out.stderr" ||
    { cat "$out.stderr" >&2; wp_fail "wrappers: the profiled run failed"; }
check_meta wrappers "$out" wrappers
[ "$(initq "$out.stdout" query)" = "$(initq "$WP_TMP/plain.single" query)" ] || wp_fail "wrappers: the thread level changed"
wp_note "WAITPROF_SOURCE=wrappers: mpit_init=none, mpit_init_ns=0 on every rank"

# The program's own MPI_T next to waitprof's.
wp_mpirun 2 "$prog" single mpit >"$WP_TMP/plain.mpit" 2>"$WP_TMP/plain.mpit.err" ||
    { cat "$WP_TMP/plain.mpit.err" >&2; wp_fail "mpit: the run without waitprof failed"; }
out=$WP_TMP/appmpit
WAITPROF_SOURCE=mpit WAITPROF_HZ=1000 wp_profile 2 "$out" "$prog" single mpit >"$out.stdout" 2>"$out.stderr" ||
    { cat "$out.stderr" >&2; wp_fail "mpit: the profiled run failed"; }
for k in query_after_mpit mpit_ob1; do
    a=$(initq "$WP_TMP/plain.mpit" $k) b=$(initq "$out.stdout" $k)
    [ -n "$a" ] && [ "$a" = "$b" ] || wp_fail "the program's own MPI_T: $k is '$b' with waitprof, '$a' without"
done
# Which variables Open MPI lists depends on when MPI_T was first
# initialised (doc/sources.md, "Limits"): the count is compared as none or
# some.
a=$(initq "$WP_TMP/plain.mpit" mpit_pvars) b=$(initq "$out.stdout" mpit_pvars)
{ [ "$a" -gt 0 ] 2>/dev/null && [ "$b" -gt 0 ]; } || { [ "$a" = 0 ] && [ "$b" = 0 ]; } ||
    wp_fail "the program's own MPI_T: $b performance variables with waitprof, $a without"
if [ "$(wp_meta "$out/rank.0.meta" source)" = mpit ]; then
    stall=$(wp_folded sum "$out/rank.0.folded" --state MPI-Stall --path ';MPI_Recv$')
    all=$(wp_folded sum "$out/rank.0.folded" --path '^MPI-(Work|Stall);.*;MPI_Recv$')
    [ "$all" -ge 20 ] || wp_fail "the program's own MPI_T: only $all samples in rank 0's MPI_Recv"
    wp_check_between "MPI-Stall share of rank 0's MPI_Recv after the program's MPI_T_finalize ($stall of $all)" \
        "$(wp_calc "$stall / $all")" 0.8 1
fi
wp_note "the program's own MPI_T: $b variables ($a without waitprof), ob1's $(initq "$out.stdout" mpit_ob1), thread level $(initq "$out.stdout" query_after_mpit)"
