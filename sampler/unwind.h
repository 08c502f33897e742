/* sampler/unwind.h — the handler's own unwinder: DWARF call-frame
 * information read in place, with a small per-thread cache of rules.
 *
 * Why: libunwind's unw_backtrace costs the handler a fixed 4–8 µs when it
 * runs once per 10 ms here, whatever the depth (its code and its trace
 * cache's table are cold by then; doc/performance.md).  This unwinder
 * touches a few lines of its own code, one 8 KiB cache and the stack.
 *
 * Contract:
 * - x86-64 only; elsewhere wp_cfi_unwind_sig() always declines.
 * - wp_cfi_refresh() rebuilds the table of loaded objects (their executable
 *   segments, load addresses, names and .eh_frame_hdr) with dl_iterate_phdr
 *   (sampler/objects.c).  Normal context; the sampler calls it at start,
 *   and the interposed dlopen and dlclose after every load and unload,
 *   before samples are let in again.  Each rebuild also invalidates every thread's
 *   cache of rules (by a generation number).
 * - wp_cfi_unwind_sig() unwinds from a signal context: async-signal-safe, no
 *   allocation, no lock, no call outside this file.  It reads only the
 *   objects' .eh_frame data, the table (under a sequence count: a rebuild
 *   in progress makes it decline), the cache and the thread's stack
 *   [stack_lo, stack_hi), above the interrupted stack pointer; a stack
 *   pointer outside that range (an alternate signal stack, a coroutine's
 *   stack) makes it decline.  It returns the frame count
 *   (leaf first: the exact interrupted PC, then each return address minus
 *   one, as libunwind's users store them), or -1 when anything is outside
 *   what it handles — an address in no known object, a frame whose rule is
 *   not "CFA = rsp or rbp + offset, return address and rbp at fixed offsets
 *   from the CFA" (signal trampolines, PLT stubs, DWARF expressions), a
 *   stack address out of bounds.  The caller then unwinds with libunwind,
 *   so a sample's stack is never worse than libunwind's.
 * - The stack ends at a frame whose return address is undefined in its CFI
 *   (_start, clone3), or at a return address of 0.
 */
#ifndef WP_SAMPLER_UNWIND_H
#define WP_SAMPLER_UNWIND_H

#include <stdint.h>

#define WP_CFI_CACHE 512 /* rules per thread: 8 KiB */

/* One rule: how to get from a frame at pc to its caller. */
struct wp_cfi_rule {
    uintptr_t pc;    /* the address looked up (0: empty slot) */
    int32_t cfa_off; /* CFA = (rbp or rsp) + cfa_off */
    int16_t rbp_off; /* caller's rbp saved at CFA + rbp_off; 0: unchanged */
    int8_t ra_off;   /* return address at CFA + 8 * ra_off */
    uint8_t flags;   /* WP_CFI_* */
};

struct wp_cfi_cache {
    unsigned gen; /* the table's generation the rules were made under */
    struct wp_cfi_rule r[WP_CFI_CACHE];
};

void wp_cfi_refresh(void);
/* The run's last sample is taken (wp_sampler_stop_sig): dlopen and dlclose
 * no longer rebuild the table.  Nothing reads it any more (the symbolizers
 * read the loader's own list), and Open MPI closes about a hundred
 * components in PMPI_Finalize.  Async-signal-safe: one atomic store. */
void wp_cfi_retire_sig(void);

/* The table's side of the unwinder (sampler/objects.c): the
 * .eh_frame_hdr of the object whose code holds pc, or NULL (also while a
 * rebuild runs); and the table's generation, raised by every rebuild.
 * Both async-signal-safe: atomic loads under the table's sequence count. */
const uint8_t *wp_cfi_hdr_sig(uintptr_t pc);
extern unsigned wp_cfi_gen;

/* The object whose code holds pc: its load address in *base, its file
 * name without directories in name (cap bytes, NUL-terminated).  Returns
 * 0, or -1 when no listed object holds pc (or rebuilds kept overlapping
 * the read).  Async-signal-safe: the partial writer names frames
 * "module+offset" with it at an abnormal end. */
int wp_cfi_object_sig(uintptr_t pc, uintptr_t *base, char *name, size_t cap);

/* One loaded object as the report needs it to name the partial writer's
 * "module+offset" frames afterwards from the file on disk
 * (symbols/offline.h): the frame's module name (as wp_cfi_object_sig
 * gives it), the load address the offsets are taken from, and the file's
 * absolute path, size, modification time and GNU build-id, read when the
 * table was rebuilt (empty path: no file, as the vDSO; build_id_len 0:
 * none).  self marks waitprof's own object. */
#define WP_CFI_NAME 104
#define WP_CFI_PATH 512
#define WP_CFI_BUILD_ID 32
#define WP_CFI_MODS 512
struct wp_cfi_module {
    uintptr_t base;
    uint64_t size, mtime_ns;
    int build_id_len, self;
    uint8_t build_id[WP_CFI_BUILD_ID];
    char name[WP_CFI_NAME];
    char path[WP_CFI_PATH];
};

/* Copy the i-th object of the table (0, 1, ... in load order) into *m;
 * returns 0, or -1 past the last one (or when rebuilds kept overlapping
 * the read).  Async-signal-safe: relaxed atomic loads under the table's
 * sequence count, as wp_cfi_object_sig. */
int wp_cfi_module_sig(int i, struct wp_cfi_module *m);

int wp_cfi_unwind_sig(const void *ucontext, struct wp_cfi_cache *c, uintptr_t stack_lo, uintptr_t stack_hi,
                  uintptr_t *out, int max, int *trunc);

/* The same, but from a frame known to be live on the interrupted stack,
 * given its canonical frame address and a PC inside it, which becomes
 * out[0]; the frames below it are neither walked nor returned.  For a
 * sample inside a wrapper, whose frame (wrap/wrap.h) stands for the whole
 * MPI call: the MPI library's frames are skipped rather than walked and
 * then cut.  The caller's rbp is not known at that frame; the walk
 * declines (-1) if a frame needs it before one restores it from the
 * stack. */
int wp_cfi_unwind_from_sig(const void *ucontext, struct wp_cfi_cache *c, uintptr_t stack_lo, uintptr_t stack_hi,
                       uintptr_t frame_pc, uintptr_t frame_cfa, uintptr_t *out, int max, int *trunc);

#endif
