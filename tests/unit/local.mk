# (fragment of Makefile.am)

# --- report writers: SVG flame graph and text summary (tests/unit/test_report.c)
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_report
TESTS += tests/unit/test_report
tests_unit_test_report_SOURCES = tests/unit/test_report.c report/svg.c report/svg.h \
	report/summary.c report/summary.h format/folded.c format/folded.h
tests_unit_test_report_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_report_LDADD = $(CHECK_LIBS)
endif

# --- core units: configuration, sample store, folded stacks and Fortran frame
# names, MPI function table (tests/unit/test_{config,store,folded,functions}.c).  test_functions builds
# state/thread.c with the generated function table rather than linking the
# library, whose internal symbols are hidden.
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_config tests/unit/test_store tests/unit/test_folded \
	tests/unit/test_functions
TESTS += tests/unit/test_config tests/unit/test_store tests/unit/test_folded \
	tests/unit/test_functions
tests_unit_test_config_SOURCES = tests/unit/test_config.c state/config.c state/config.h format/select.c format/select.h
tests_unit_test_config_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_config_LDADD = $(CHECK_LIBS)
tests_unit_test_store_SOURCES = tests/unit/test_store.c sampler/store.c sampler/store.h sampler/timeline.c sampler/timeline.h state/clock.c state/clock.h
tests_unit_test_store_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_store_LDADD = $(CHECK_LIBS)
tests_unit_test_folded_SOURCES = tests/unit/test_folded.c format/folded.c format/folded.h symbols/names.c \
	symbols/names.h
tests_unit_test_folded_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_folded_LDADD = $(CHECK_LIBS)
tests_unit_test_functions_SOURCES = tests/unit/test_functions.c state/thread.c state/thread.h state/clock.c \
	state/functions.h
nodist_tests_unit_test_functions_SOURCES = state/functions.gen.c
tests_unit_test_functions_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_functions_LDADD = $(CHECK_LIBS) -ldl
endif

# --- estimator units: size classes, histogram bins, category statistics, the
# wait formula, the patterns and the report's per-function rows summed from
# the categories (tests/unit/test_stats.c).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_stats
TESTS += tests/unit/test_stats
tests_unit_test_stats_SOURCES = tests/unit/test_stats.c fallback/stats.c fallback/stats.h state/clock.c \
	state/clock.h profile/calls.c profile/calls.h wrap/traffic.c wrap/traffic.h \
	state/thread.c state/thread.h
nodist_tests_unit_test_stats_SOURCES = state/functions.gen.c
tests_unit_test_stats_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_stats_LDADD = $(CHECK_LIBS)
endif

# --- the handler's unwinder against libunwind on the same signal contexts
# (tests/unit/test_unwind.c).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_unwind
TESTS += tests/unit/test_unwind
tests_unit_test_unwind_SOURCES = tests/unit/test_unwind.c sampler/unwind.c sampler/unwind.h sampler/objects.c \
	state/thread.c state/thread.h state/clock.c state/clock.h
nodist_tests_unit_test_unwind_SOURCES = state/functions.gen.c
tests_unit_test_unwind_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_unwind_LDADD = $(CHECK_LIBS) $(UNWIND_LIBS) -ldl -lpthread -lrt
endif

# --- the module table and naming a partial profile afterwards
# (tests/unit/test_offline.c): the table's code as test_unwind builds it,
# the offline symbolizer as the report program links it.
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_offline
TESTS += tests/unit/test_offline
tests_unit_test_offline_SOURCES = tests/unit/test_offline.c sampler/objects.c sampler/unwind.h \
	state/thread.c state/thread.h state/clock.c state/clock.h \
	symbols/offline.c symbols/offline.h symbols/dwname.c symbols/dwname.h symbols/names.c symbols/names.h \
	format/folded.c format/folded.h
nodist_tests_unit_test_offline_SOURCES = state/functions.gen.c
tests_unit_test_offline_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS) -g
tests_unit_test_offline_LDADD = $(CHECK_LIBS) $(DW_LIBS) -ldl -lpthread -lrt
endif

# --- the TSC's reference pairs under delayed clock readings
# (tests/unit/test_clock.c).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_clock
TESTS += tests/unit/test_clock
tests_unit_test_clock_SOURCES = tests/unit/test_clock.c state/clock.c state/clock.h
tests_unit_test_clock_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_clock_LDADD = $(CHECK_LIBS)
endif

# --- the DWARF scope index against libdw's own walk, on every address of
# the test program (tests/unit/test_dwscopes.c).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_dwscopes
TESTS += tests/unit/test_dwscopes
tests_unit_test_dwscopes_SOURCES = tests/unit/test_dwscopes.c symbols/dwname.c symbols/dwname.h \
	symbols/names.c symbols/names.h format/folded.c format/folded.h
tests_unit_test_dwscopes_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS) -g
tests_unit_test_dwscopes_LDADD = $(CHECK_LIBS) $(DW_LIBS) -lpthread
endif

# --- the stall sources' lock-free request table (tests/unit/test_requests.c)
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_requests
TESTS += tests/unit/test_requests
tests_unit_test_requests_SOURCES = tests/unit/test_requests.c mpit/requests.c mpit/requests.h state/clock.c
tests_unit_test_requests_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_requests_LDADD = $(CHECK_LIBS) -lpthread
endif

# --- rank and time selection: the WAITPROF_RANKS and WAITPROF_WINDOW parsers, the
# window arithmetic, and the bad-value reports of the new variables
# (tests/unit/test_select.c).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_select
TESTS += tests/unit/test_select
tests_unit_test_select_SOURCES = tests/unit/test_select.c format/select.c format/select.h state/config.c \
	state/config.h
tests_unit_test_select_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_select_LDADD = $(CHECK_LIBS)
endif

# --- cross-rank report reductions on hand-written run directories
# (tests/unit/test_crossrank.c, report/report.h).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_crossrank
TESTS += tests/unit/test_crossrank
tests_unit_test_crossrank_SOURCES = tests/unit/test_crossrank.c report/report.c report/report.h \
	report/model.h report/util.c report/read.c report/aggregate.c report/text.c report/json.c \
	report/csv.c report/diff.c report/counters.c \
	report/svg.c report/svg.h report/timeline.c report/summary.c report/summary.h format/folded.c format/folded.h \
	format/select.c format/select.h
tests_unit_test_crossrank_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_crossrank_LDADD = $(CHECK_LIBS)
endif

# --- the counters' name rules: which backend a name goes to, the PAPI names'
# perf_event twins, units and file names, and a setup and a normal-context
# read on this machine (tests/unit/test_counters.c).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_counters
TESTS += tests/unit/test_counters
tests_unit_test_counters_SOURCES = tests/unit/test_counters.c sampler/counters.c sampler/counters.h \
	sampler/ctr_backend.h sampler/ctr_perf.c sampler/ctr_papi.c
tests_unit_test_counters_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_counters_LDADD = $(CHECK_LIBS) -ldl
endif

# --- memory made present ahead of its writers (tests/unit/test_prefault.c)
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_prefault
TESTS += tests/unit/test_prefault
tests_unit_test_prefault_SOURCES = tests/unit/test_prefault.c state/prefault.c state/prefault.h
tests_unit_test_prefault_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_prefault_LDADD = $(CHECK_LIBS)
endif

# --- the choice of matched instances, a pure function of the number
# (tests/unit/test_match_choice.c, match/types.h).
if HAVE_CHECK
check_PROGRAMS += tests/unit/test_match_choice
TESTS += tests/unit/test_match_choice
tests_unit_test_match_choice_SOURCES = tests/unit/test_match_choice.c match/types.h
tests_unit_test_match_choice_CFLAGS = $(CHECK_CFLAGS) $(WP_CFLAGS)
tests_unit_test_match_choice_LDADD = $(CHECK_LIBS)
endif
