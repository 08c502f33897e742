# (fragment of Makefile.am)
# The cross-rank reduction of the wait-state table for 100 000 simulated
# ranks, through the same merge code as the finalize step (bench/reduce_sim.c).
noinst_PROGRAMS += bench/reduce_sim
bench_reduce_sim_SOURCES = bench/reduce_sim.c fallback/wsreduce.c fallback/wsreduce.h
bench_reduce_sim_CFLAGS = $(AM_CFLAGS) -O2

# The rank-local work of matching at MPI_Finalize for one rank of a P-rank
# halo exchange, through the library's own matching code without MPI
# (bench/match_sim.c; bench/match_scale.sh runs it).  Built with the
# library's compiler (the MPI wrapper: match/ includes mpi.h); not a test.
noinst_PROGRAMS += bench/match_sim
bench_match_sim_SOURCES = bench/match_sim.c match/local.c match/local.h match/measured.c match/measured.h \
	match/clock.c match/clock.h match/internal.h match/types.h state/clock.c state/clock.h \
	state/prefault.c state/prefault.h
bench_match_sim_CFLAGS = $(AM_CFLAGS) -O2
bench_match_sim_LDADD = -lpthread -lm
