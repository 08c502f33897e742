/* format/folded.h — folded-stack collections and their text form.
 *
 * Contract (doc/design.md, "Folded stacks"): a folded line is the frames root
 * first joined by ';', one space, and a positive integer count.  Frame names
 * never contain ';', newlines or other control characters, never contain a
 * space-digit tail that a reader could take for a count, and never end in a
 * flamegraph.pl annotation such as "_[k]" (wp_frame_sanitize), except
 * "_[i]", which symbols/ appends to a function inlined into its caller and
 * flamegraph.pl colours as inlined.  wp_folded_finish() sorts the
 * lines (inferno wants sorted input) and merges equal stacks by summing.
 * Normal context only: these functions allocate.
 */
#ifndef WP_FORMAT_FOLDED_H
#define WP_FORMAT_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct wp_folded_line {
    char *stack;
    uint64_t count;
};

struct wp_folded {
    struct wp_folded_line *lines;
    size_t n, cap;
};

/* Copy src into dst (capacity cap > 0) as a safe frame name. */
void wp_frame_sanitize(char *dst, size_t cap, const char *src);

/* Add a stack (already joined and sanitized) with a count; 0 or -1 (no memory). */
int wp_folded_add(struct wp_folded *f, const char *stack, size_t len, uint64_t count);

/* Sort by stack and merge equal stacks. */
void wp_folded_finish(struct wp_folded *f);

/* Write every line; returns 0 or -1 on an I/O error. */
int wp_folded_write(FILE *out, const struct wp_folded *f);

/* Parse one line (without its newline): on success set *stack_len and
 * *count and return 0; return -1 for a malformed line. */
int wp_folded_parse(const char *line, size_t len, size_t *stack_len, uint64_t *count);

/* Add every well-formed line of a text; returns the number of malformed lines. */
size_t wp_folded_add_text(struct wp_folded *f, const char *text, size_t len);

uint64_t wp_folded_total(const struct wp_folded *f);
void wp_folded_free(struct wp_folded *f);

#endif
