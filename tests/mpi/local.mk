# Integration tests: real MPI programs under this build's mpirun, with the
# library from this build.  Programs are built by 'make check'; the scripts
# assert the numbers they exist for (see each script's header).
check_PROGRAMS += tests/mpi/late_sender tests/mpi/threads tests/mpi/stress tests/mpi/sleeps tests/mpi/reqkinds tests/mpi/observe \
	tests/mpi/ending tests/mpi/nonmpi tests/mpi/readapi tests/mpi/inlined tests/mpi/partial_names
tests_mpi_late_sender_SOURCES = tests/mpi/late_sender.c
# -O2: the helpers must be inlined (t_inlined.sh).
tests_mpi_inlined_SOURCES = tests/mpi/inlined.c
tests_mpi_inlined_CFLAGS = -g -O2
tests_mpi_threads_SOURCES = tests/mpi/threads.c
tests_mpi_threads_LDADD = -lpthread
tests_mpi_sleeps_SOURCES = tests/mpi/sleeps.c
tests_mpi_sleeps_LDADD = -lpthread -lrt
tests_mpi_observe_LDADD = -lpthread
tests_mpi_stress_SOURCES = tests/mpi/stress.c
tests_mpi_stress_LDADD = -lpthread -ldl
tests_mpi_ending_SOURCES = tests/mpi/ending.c
# A position-independent executable on purpose (t_partial_names.sh).
tests_mpi_partial_names_SOURCES = tests/mpi/partial_names.c
tests_mpi_partial_names_CFLAGS = -g -O1 -fPIE
tests_mpi_partial_names_LDFLAGS = -pie
tests_mpi_nonmpi_SOURCES = tests/mpi/nonmpi.c
tests_mpi_nonmpi_LDADD = -lpthread -ldl
# Counters (t_counters.sh): known CPU time under a known function.
check_PROGRAMS += tests/mpi/counters
tests_mpi_counters_SOURCES = tests/mpi/counters.c
tests_mpi_counters_CFLAGS = -g -O1
tests_mpi_counters_LDADD = -lpthread
# t_counters_split.sh: CPU time outside and inside MPI, as the program measures it.
check_PROGRAMS += tests/mpi/counters_split
tests_mpi_counters_split_SOURCES = tests/mpi/counters_split.c
tests_mpi_counters_split_CFLAGS = -g -O1
# What this machine can count, found without waitprof (t_counters_papi.sh,
# t_counters_hw.sh): perf_event_open, and PAPI through libpapi linked here
# (the library itself only ever dlopens it) when the build has PAPI.
check_PROGRAMS += tests/mpi/ctr_probe tests/mpi/ctr_hw
tests_mpi_ctr_probe_SOURCES = tests/mpi/ctr_probe.c
if HAVE_PAPI
tests_mpi_ctr_probe_LDADD = $(PAPI_LDFLAGS) -lpapi
endif
# A known instruction count under a known function (t_counters_hw.sh).
tests_mpi_ctr_hw_SOURCES = tests/mpi/ctr_hw.c
tests_mpi_ctr_hw_CFLAGS = -g -O1
# The overflow trigger (t_overflow.sh): known CPU time, a known wait, a
# paused stretch.
check_PROGRAMS += tests/mpi/overflow
tests_mpi_overflow_SOURCES = tests/mpi/overflow.c
tests_mpi_overflow_CFLAGS = -g -O1
tests_mpi_overflow_LDADD = -lpthread
tests_mpi_readapi_SOURCES = tests/mpi/readapi.c
tests_mpi_readapi_LDADD = -ldl -lpthread
# Test programs are compiled as users compile: -g, optimized, no waitprof flags.
WP_TEST_CFLAGS = -g -O1
tests_mpi_late_sender_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_threads_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_stress_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_ending_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_nonmpi_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_readapi_CFLAGS = $(WP_TEST_CFLAGS)

if HAVE_MPICXX
check_PROGRAMS += tests/mpi/late_sender_cxx
tests_mpi_late_sender_cxx_SOURCES = tests/mpi/late_sender.cpp
tests_mpi_late_sender_cxx_CXXFLAGS = $(WP_TEST_CFLAGS)
endif

# Fortran programs are built with the MPI Fortran wrapper directly, so a
# machine without Fortran still configures (the Fortran test then skips).
if HAVE_MPIFC
check_SCRIPTS += tests/mpi/late_sender_f tests/mpi/late_sender_f08
tests/mpi/late_sender_f: $(srcdir)/tests/mpi/late_sender.F90
	$(AM_V_GEN)$(MKDIR_P) tests/mpi/f && $(MPIFC) -g -O1 -J tests/mpi/f -o $@ $(srcdir)/tests/mpi/late_sender.F90
tests/mpi/late_sender_f08: $(srcdir)/tests/mpi/late_sender.F90
	$(AM_V_GEN)$(MKDIR_P) tests/mpi/f08 && $(MPIFC) -g -O1 -DWP_F08 -J tests/mpi/f08 -o $@ $(srcdir)/tests/mpi/late_sender.F90
CLEANFILES += tests/mpi/late_sender_f tests/mpi/late_sender_f08
# The Waitall remedy through the Fortran wrappers (t_ws_waitall_f.sh).
check_SCRIPTS += tests/mpi/ws_waitall_f tests/mpi/ws_waitall_f08
tests/mpi/ws_waitall_f: $(srcdir)/tests/mpi/ws_waitall.F90
	$(AM_V_GEN)$(MKDIR_P) tests/mpi/wf && $(MPIFC) -g -O1 -J tests/mpi/wf -o $@ $(srcdir)/tests/mpi/ws_waitall.F90
tests/mpi/ws_waitall_f08: $(srcdir)/tests/mpi/ws_waitall.F90
	$(AM_V_GEN)$(MKDIR_P) tests/mpi/wf08 && $(MPIFC) -g -O1 -DWP_F08 -J tests/mpi/wf08 -o $@ $(srcdir)/tests/mpi/ws_waitall.F90
CLEANFILES += tests/mpi/ws_waitall_f tests/mpi/ws_waitall_f08
# Matched instances through the Fortran wrappers (t_ws_exact_f.sh).
check_SCRIPTS += tests/mpi/ws_exact_f tests/mpi/ws_exact_f08
tests/mpi/ws_exact_f: $(srcdir)/tests/mpi/ws_exact.F90
	$(AM_V_GEN)$(MKDIR_P) tests/mpi/xf && $(MPIFC) -g -O1 -J tests/mpi/xf -o $@ $(srcdir)/tests/mpi/ws_exact.F90
tests/mpi/ws_exact_f08: $(srcdir)/tests/mpi/ws_exact.F90
	$(AM_V_GEN)$(MKDIR_P) tests/mpi/xf08 && $(MPIFC) -g -O1 -DWP_F08 -J tests/mpi/xf08 -o $@ $(srcdir)/tests/mpi/ws_exact.F90
CLEANFILES += tests/mpi/ws_exact_f tests/mpi/ws_exact_f08
# A followed receive completed unseen, its Fortran handle then reused
# (t_ws_fforget.sh).
check_SCRIPTS += tests/mpi/ws_fforget_f
tests/mpi/ws_fforget_f: $(srcdir)/tests/mpi/ws_fforget.F90 $(srcdir)/tests/mpi/ws_fforget_c.c
	$(AM_V_GEN)$(MKDIR_P) tests/mpi/ff && $(MPICC) -c -o tests/mpi/ff/ws_fforget_c.o $(srcdir)/tests/mpi/ws_fforget_c.c && \
	$(MPIFC) -g -O1 -J tests/mpi/ff -o $@ $(srcdir)/tests/mpi/ws_fforget.F90 tests/mpi/ff/ws_fforget_c.o
CLEANFILES += tests/mpi/ws_fforget_f
# Inlined frames (t_inlined.sh): -O2, so that gfortran inlines the
# program's internal procedures.
check_SCRIPTS += tests/mpi/inlined_f
tests/mpi/inlined_f: $(srcdir)/tests/mpi/inlined.F90
	$(AM_V_GEN)$(MKDIR_P) tests/mpi/if && $(MPIFC) -g -O2 -J tests/mpi/if -o $@ $(srcdir)/tests/mpi/inlined.F90
CLEANFILES += tests/mpi/inlined_f
endif

WP_MPI_TESTS = tests/mpi/t_nonmpi.sh tests/mpi/t_late_sender_c.sh tests/mpi/t_late_sender_cxx.sh \
	tests/mpi/t_late_sender_f.sh tests/mpi/t_threads.sh tests/mpi/t_sleeps.sh tests/mpi/t_reqkinds.sh tests/mpi/t_killed.sh tests/mpi/t_partial_names.sh tests/mpi/t_observe.sh tests/mpi/t_launcher.sh \
	tests/mpi/t_badenv.sh tests/mpi/t_endings.sh tests/mpi/t_readapi.sh tests/mpi/t_lean.sh tests/mpi/t_install.sh \
	tests/mpi/t_ws_p2p.sh tests/mpi/t_ws_coll.sh tests/mpi/t_ws_waitall.sh tests/mpi/t_ws_stall.sh \
	tests/mpi/t_ws_sendwait.sh tests/mpi/t_ws_waitall_f.sh tests/mpi/t_ws_callpath.sh \
	tests/mpi/t_ws_exact.sh tests/mpi/t_ws_exact_nbc.sh tests/mpi/t_ws_exact_f.sh tests/mpi/t_ws_fforget.sh tests/mpi/t_ws_stale.sh tests/mpi/t_ws_chain.sh tests/mpi/t_ws_rounds.sh \
	tests/mpi/t_ws_sample.sh tests/mpi/t_ws_mix.sh tests/mpi/t_ws_threads.sh tests/mpi/t_ws_comms.sh tests/mpi/t_stress.sh tests/mpi/t_wrongmpi.sh \
	tests/mpi/t_firstcontact.sh tests/mpi/t_inlined.sh tests/mpi/t_counters.sh tests/mpi/t_counters_papi.sh \
	tests/mpi/t_counters_hw.sh tests/mpi/t_counters_split.sh tests/mpi/t_overflow.sh
TESTS += $(WP_MPI_TESTS)
EXTRA_DIST += tests/mpi/late_sender.F90 tests/mpi/ws_waitall.F90 tests/mpi/ws_exact.F90 tests/mpi/ws_fforget.F90 tests/mpi/ws_fforget_c.c tests/mpi/inlined.F90 tests/mpi/clock.h tests/mpi/greq.h \
	$(WP_MPI_TESTS)

# Wait-state estimator checks: injected wait states of known size.
check_PROGRAMS += tests/mpi/ws_p2p tests/mpi/ws_coll tests/mpi/ws_waitall tests/mpi/ws_stall \
	tests/mpi/ws_sendwait tests/mpi/ws_callpath tests/mpi/ws_exact tests/mpi/ws_chain tests/mpi/ws_sample tests/mpi/ws_mix \
	tests/mpi/ws_threads tests/mpi/ws_comms tests/mpi/ws_stale
tests_mpi_ws_callpath_SOURCES = tests/mpi/ws_callpath.c
tests_mpi_ws_callpath_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_ws_sendwait_SOURCES = tests/mpi/ws_sendwait.c
tests_mpi_ws_sendwait_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_ws_p2p_SOURCES = tests/mpi/ws_p2p.c
tests_mpi_ws_p2p_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_ws_coll_SOURCES = tests/mpi/ws_coll.c
tests_mpi_ws_coll_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_ws_waitall_SOURCES = tests/mpi/ws_waitall.c
tests_mpi_ws_waitall_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_ws_stall_SOURCES = tests/mpi/ws_stall.c
tests_mpi_ws_stall_CFLAGS = $(WP_TEST_CFLAGS)
# Persistent waits, measured from matched instances (t_ws_exact.sh,
# t_ws_exact_nbc.sh).
tests_mpi_ws_exact_SOURCES = tests/mpi/ws_exact.c
tests_mpi_ws_exact_CFLAGS = $(WP_TEST_CFLAGS)
# A tested receive's handle taken by a generalized request (t_ws_stale.sh).
tests_mpi_ws_stale_SOURCES = tests/mpi/ws_stale.c
tests_mpi_ws_stale_CFLAGS = $(WP_TEST_CFLAGS)
# Delay costs through a chain of waits (t_ws_chain.sh).
tests_mpi_ws_chain_SOURCES = tests/mpi/ws_chain.c
tests_mpi_ws_chain_CFLAGS = $(WP_TEST_CFLAGS)
# Sampling error of matched instances (t_ws_sample.sh).
tests_mpi_ws_sample_SOURCES = tests/mpi/ws_sample.c
tests_mpi_ws_sample_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_ws_sample_LDADD = -lm
# Blocking sends numbered after their call, mixed with other sends
# (t_ws_mix.sh).
tests_mpi_ws_mix_SOURCES = tests/mpi/ws_mix.c
tests_mpi_ws_mix_CFLAGS = $(WP_TEST_CFLAGS)
# Matched instances under MPI_THREAD_MULTIPLE (t_ws_threads.sh) and on
# created communicators (t_ws_comms.sh).
tests_mpi_ws_threads_SOURCES = tests/mpi/ws_threads.c
tests_mpi_ws_threads_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_ws_threads_LDADD = -lpthread
tests_mpi_ws_comms_SOURCES = tests/mpi/ws_comms.c
tests_mpi_ws_comms_CFLAGS = $(WP_TEST_CFLAGS)

# Stall sources (mpit/): Work/Stall from the runtime against injected truth.
# On the PERUSE build ./quickstart check runs just these (WP_SRC_TESTS).
# t_init.sh: what waitprof does at MPI_Init for the stall source (MPI_T
# initialised only for a source that may use it, the thread level left as
# MPI_Init provided it).
WP_SRC_TESTS = tests/mpi/t_src_mpit.sh tests/mpi/t_src_peruse.sh tests/mpi/t_ws_source.sh tests/mpi/t_init.sh
TESTS += $(WP_SRC_TESTS)
EXTRA_DIST += $(WP_SRC_TESTS)
check_PROGRAMS += tests/mpi/ws_source tests/mpi/initq
tests_mpi_ws_source_SOURCES = tests/mpi/ws_source.c
tests_mpi_ws_source_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_ws_source_LDADD = -lpthread
tests_mpi_initq_SOURCES = tests/mpi/initq.c
tests_mpi_initq_CFLAGS = $(WP_TEST_CFLAGS)
print-src-tests:
	@echo $(WP_SRC_TESTS)
.PHONY: print-src-tests
# Rank and time selection, the memory budget.
check_PROGRAMS += tests/mpi/select
tests_mpi_select_SOURCES = tests/mpi/select.c
tests_mpi_select_CFLAGS = $(WP_TEST_CFLAGS)
# The sampling timers themselves: stopped by MPI_Pcontrol(0), started again
# by MPI_Pcontrol(1).
check_PROGRAMS += tests/mpi/timers
tests_mpi_timers_SOURCES = tests/mpi/timers.c
tests_mpi_timers_CFLAGS = $(WP_TEST_CFLAGS)
tests_mpi_timers_LDADD = -lpthread
WP_SELECT_TESTS = tests/mpi/t_select.sh tests/mpi/t_window.sh tests/mpi/t_budget.sh tests/mpi/t_timers.sh
TESTS += $(WP_SELECT_TESTS)
EXTRA_DIST += $(WP_SELECT_TESTS)

# The cross-rank report and `waitprof report` (report/report.h): a known
# imbalanced program; the tool on damaged directories; the SVG in Chromium;
# a synthetic run of 3 000 ranks.
check_PROGRAMS += tests/mpi/report_imb tests/mpi/replace
tests_mpi_report_imb_SOURCES = tests/mpi/report_imb.c
tests_mpi_report_imb_CFLAGS = $(WP_TEST_CFLAGS)
# The per-rank timeline (t_timeline.sh): two phases of known imbalance.
check_PROGRAMS += tests/mpi/timeline
tests_mpi_timeline_SOURCES = tests/mpi/timeline.c
tests_mpi_timeline_CFLAGS = $(WP_TEST_CFLAGS)
# Traffic of MPI_Sendrecv_replace, of known size (t_traffic_replace.sh).
tests_mpi_replace_SOURCES = tests/mpi/replace.c
tests_mpi_replace_CFLAGS = $(WP_TEST_CFLAGS)
WP_REPORT_TESTS = tests/mpi/t_report.sh tests/mpi/t_report_bad.sh tests/mpi/t_report_svg.sh \
	tests/mpi/t_report_scale.sh tests/mpi/t_traffic_replace.sh tests/mpi/t_doc_report.sh \
	tests/mpi/t_timeline.sh
TESTS += $(WP_REPORT_TESTS)
EXTRA_DIST += $(WP_REPORT_TESTS) tests/report_check.py tests/jsonschema_mini.py bench/gen_report_ranks.py \
	bench/calls_cost.c
