/* sampler/perf_names.h — the perf_event names sampler/ctr_perf.c knows,
 * for the other users of perf_event_open (the overflow trigger,
 * sampler/overflow.c), so that an event has one name and one attribute
 * pair in waitprof whatever uses it.
 *
 * wp_ctr_perf_attr() looks name up (perf(1)'s names and aliases:
 * task-clock, cpu-clock, cycles, instructions, ...) and returns 0 with its
 * perf_event_attr type and config and its canonical name, or -1 when the
 * name is not one of them.  Any context; it reads a constant table. */
#ifndef WP_SAMPLER_PERF_NAMES_H
#define WP_SAMPLER_PERF_NAMES_H

#include <stdint.h>

int wp_ctr_perf_attr(const char *name, uint32_t *type, uint64_t *config, const char **canonical);

#endif
