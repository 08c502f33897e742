# (fragment of Makefile.am)
# The cross-rank reduction of the wait-state table for 100 000 simulated
# ranks, through the same merge code as the finalize step (bench/reduce_sim.c).
noinst_PROGRAMS += bench/reduce_sim
bench_reduce_sim_SOURCES = bench/reduce_sim.c fallback/wsreduce.c fallback/wsreduce.h
bench_reduce_sim_CFLAGS = $(AM_CFLAGS) -O2
