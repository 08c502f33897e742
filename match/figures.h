/* match/figures.h — what the finalize step of matching did on this rank
 * (match/exchange.c), for the meta file: how long it took, and how many
 * records it held and received, so that its cost can be measured in any
 * run (doc/performance.md, "Matched instances"). */
#ifndef WP_MATCH_FIGURES_H
#define WP_MATCH_FIGURES_H

#include <stdint.h>

struct wp_match_fig {
    uint64_t finalize_ns; /* wall time of wp_match_finalize, clock measurement included */
    uint64_t clock_ns;    /* of which the clocks' second measurement */
    uint64_t held;        /* point-to-point records held at MPI_Finalize */
    uint64_t received;    /* the partners' records received for them */
    uint64_t gathered;    /* 1: the propagation ran on every rank's gathered waits and
                           * sends, 0: in rounds of messages (match/exchange.c) */
};
/* Zero until wp_match_finalize has run; written once, by the thread that
 * calls MPI_Finalize, before the meta file. */
extern struct wp_match_fig wp_match_fig;

#endif
