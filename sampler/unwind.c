/* sampler/unwind.c — see sampler/unwind.h.
 *
 * How a rule is found: the cache, keyed by the address; on a miss the
 * object holding the address (the table), its .eh_frame_hdr search table
 * (binary search), the FDE and its CIE, whose instructions are run up to
 * the address.  Only what x86-64 compilers emit for ordinary functions is
 * understood; everything else makes the whole unwind decline, and the
 * sampler asks libunwind instead. */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "sampler/unwind.h"

enum {
    WP_CFI_CFA_RBP = 1, /* the CFA is rbp-based, else rsp-based */
    WP_CFI_END = 2,     /* return address undefined: the outermost frame */
    WP_CFI_NONE = 4,    /* not understood: decline */
    WP_CFI_RBP_LOST = 8 /* rbp undefined in the caller */
};

/* --- reading DWARF ---------------------------------------------------------- */

static uint64_t wp_uleb(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    int shift = 0;
    while (*p < end) {
        uint8_t b = *(*p)++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    return v;
}

static int64_t wp_sleb(const uint8_t **p, const uint8_t *end)
{
    int64_t v = 0;
    int shift = 0;
    uint8_t b = 0;
    while (*p < end) {
        b = *(*p)++;
        if (shift < 64)
            v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    if (shift < 64 && (b & 0x40))
        v |= -((int64_t)1 << shift);
    return v;
}

/* A little-endian field of n bytes at *p, sign-extended when sgn. */
static int wp_fixed(const uint8_t **p, const uint8_t *end, int n, int sgn, uint64_t *v)
{
    if (end - *p < n)
        return -1;
    uint64_t x = 0;
    memcpy(&x, *p, (size_t)n);
    if (sgn && n < 8 && ((x >> (8 * n - 1)) & 1))
        x |= ~0ull << (8 * n);
    *p += n;
    *v = x;
    return 0;
}

/* A pointer in DW_EH_PE encoding enc at *p (pc-relative to the field,
 * data-relative to datarel).  Returns -1 for encodings not handled. */
static int wp_enc(const uint8_t **p, const uint8_t *end, uint8_t enc, uintptr_t datarel, uintptr_t *out)
{
    const uint8_t *at = *p;
    uint64_t v;
    int rc;
    switch (enc & 0x0f) {
    case 0x00: /* absptr */
    case 0x04: /* udata8 */
    case 0x0c: /* sdata8 */
        rc = wp_fixed(p, end, 8, 0, &v);
        break;
    case 0x01: /* uleb128 */
        v = wp_uleb(p, end);
        rc = 0;
        break;
    case 0x09: /* sleb128 */
        v = (uint64_t)wp_sleb(p, end);
        rc = 0;
        break;
    case 0x02: /* udata2 */
    case 0x0a: /* sdata2 */
        rc = wp_fixed(p, end, 2, enc & 0x08, &v);
        break;
    case 0x03: /* udata4 */
    case 0x0b: /* sdata4 */
        rc = wp_fixed(p, end, 4, enc & 0x08, &v);
        break;
    default:
        return -1;
    }
    if (rc < 0)
        return -1;
    switch (enc & 0x70) {
    case 0x00:
        break;
    case 0x10:
        v += (uintptr_t)at;
        break;
    case 0x30:
        v += datarel;
        break;
    default:
        return -1;
    }
    *out = (uintptr_t)v;
    return 0;
}

/* What the CFI says at one address about the three registers unwinding
 * needs.  how: 0 unchanged, 1 saved at CFA + off, 2 undefined, 3 anything
 * else (not handled). */
struct wp_row {
    int cfa_reg; /* 6 rbp, 7 rsp, -1 anything else */
    int64_t cfa_off;
    int rbp_how, ra_how;
    int64_t rbp_off, ra_off;
};

#define WP_RBP 6
#define WP_RSP 7
#define WP_RA 16
#define WP_CFI_STATES 8

struct wp_cie {
    int64_t caf, daf; /* code and data alignment factors */
    uint8_t fde_enc;
    int has_z;                /* FDEs carry augmentation data */
    const uint8_t *ins, *end; /* initial instructions */
};

static void wp_row_set(struct wp_row *r, uint64_t reg, int how, int64_t off)
{
    if (reg == WP_RBP) {
        r->rbp_how = how;
        r->rbp_off = off;
    } else if (reg == WP_RA) {
        r->ra_how = how;
        r->ra_off = off;
    }
}

/* Run CFA instructions from loc while the row applies at or before target;
 * init is the CIE's row (for DW_CFA_restore), NULL while running the CIE.
 * Returns -1 for anything not handled. */
static int wp_cfi_run(const uint8_t *p, const uint8_t *end, uintptr_t loc, uintptr_t target,
                      const struct wp_cie *cie, struct wp_row *r, const struct wp_row *init)
{
    struct wp_row saved[WP_CFI_STATES];
    int nsaved = 0;
    while (p < end) {
        uint8_t op = *p++;
        uint64_t reg, delta = 0;
        int64_t off;
        switch (op & 0xc0) {
        case 0x40: /* advance_loc */
            delta = (uint64_t)(op & 0x3f) * (uint64_t)cie->caf;
            goto advance;
        case 0x80: /* offset */
            off = (int64_t)wp_uleb(&p, end) * cie->daf;
            wp_row_set(r, op & 0x3f, 1, off);
            continue;
        case 0xc0: /* restore */
            if (init == NULL)
                return -1;
            reg = op & 0x3f;
            if (reg == WP_RBP)
                wp_row_set(r, reg, init->rbp_how, init->rbp_off);
            else if (reg == WP_RA)
                wp_row_set(r, reg, init->ra_how, init->ra_off);
            continue;
        }
        switch (op) {
        case 0x00: /* nop */
            break;
        case 0x02: /* advance_loc1 */
        case 0x03: /* advance_loc2 */
        case 0x04: /* advance_loc4 */
            if (wp_fixed(&p, end, op == 0x02 ? 1 : op == 0x03 ? 2 : 4, 0, &delta) < 0)
                return -1;
            delta *= (uint64_t)cie->caf;
            goto advance;
        case 0x05: /* offset_extended */
            reg = wp_uleb(&p, end);
            off = (int64_t)wp_uleb(&p, end) * cie->daf;
            wp_row_set(r, reg, 1, off);
            break;
        case 0x06: /* restore_extended */
            reg = wp_uleb(&p, end);
            if (init == NULL)
                return -1;
            if (reg == WP_RBP)
                wp_row_set(r, reg, init->rbp_how, init->rbp_off);
            else if (reg == WP_RA)
                wp_row_set(r, reg, init->ra_how, init->ra_off);
            break;
        case 0x07: /* undefined */
            wp_row_set(r, wp_uleb(&p, end), 2, 0);
            break;
        case 0x08: /* same_value */
            wp_row_set(r, wp_uleb(&p, end), 0, 0);
            break;
        case 0x09: /* register: reg is in another register */
            reg = wp_uleb(&p, end);
            (void)wp_uleb(&p, end);
            wp_row_set(r, reg, 3, 0);
            break;
        case 0x0a: /* remember_state */
            if (nsaved == WP_CFI_STATES)
                return -1;
            saved[nsaved++] = *r;
            break;
        case 0x0b: /* restore_state: the whole row, CFA included, as GCC's
                    * epilogues in mid-function expect */
            if (nsaved == 0)
                return -1;
            *r = saved[--nsaved];
            break;
        case 0x0c: /* def_cfa */
            reg = wp_uleb(&p, end);
            r->cfa_reg = reg == WP_RBP || reg == WP_RSP ? (int)reg : -1;
            r->cfa_off = (int64_t)wp_uleb(&p, end);
            break;
        case 0x0d: /* def_cfa_register */
            reg = wp_uleb(&p, end);
            r->cfa_reg = reg == WP_RBP || reg == WP_RSP ? (int)reg : -1;
            break;
        case 0x0e: /* def_cfa_offset */
            r->cfa_off = (int64_t)wp_uleb(&p, end);
            break;
        case 0x0f: /* def_cfa_expression */
            delta = wp_uleb(&p, end);
            if ((uint64_t)(end - p) < delta)
                return -1;
            p += delta;
            r->cfa_reg = -1;
            break;
        case 0x10: /* expression */
        case 0x16: /* val_expression */
            reg = wp_uleb(&p, end);
            delta = wp_uleb(&p, end);
            if ((uint64_t)(end - p) < delta)
                return -1;
            p += delta;
            wp_row_set(r, reg, 3, 0);
            break;
        case 0x11: /* offset_extended_sf */
            reg = wp_uleb(&p, end);
            off = wp_sleb(&p, end) * cie->daf;
            wp_row_set(r, reg, 1, off);
            break;
        case 0x12: /* def_cfa_sf */
            reg = wp_uleb(&p, end);
            r->cfa_reg = reg == WP_RBP || reg == WP_RSP ? (int)reg : -1;
            r->cfa_off = wp_sleb(&p, end) * cie->daf;
            break;
        case 0x13: /* def_cfa_offset_sf */
            r->cfa_off = wp_sleb(&p, end) * cie->daf;
            break;
        case 0x14: /* val_offset */
            reg = wp_uleb(&p, end);
            (void)wp_uleb(&p, end);
            wp_row_set(r, reg, 3, 0);
            break;
        case 0x15: /* val_offset_sf */
            reg = wp_uleb(&p, end);
            (void)wp_sleb(&p, end);
            wp_row_set(r, reg, 3, 0);
            break;
        case 0x2e: /* GNU_args_size: no effect on the CFA */
            (void)wp_uleb(&p, end);
            break;
        case 0x2f: /* GNU_negative_offset_extended */
            reg = wp_uleb(&p, end);
            off = -(int64_t)wp_uleb(&p, end) * cie->daf;
            wp_row_set(r, reg, 1, off);
            break;
        default: /* set_loc and the rest */
            return -1;
        }
        continue;
    advance:
        if (loc + delta > target)
            return 0;
        loc += delta;
    }
    return 0;
}

/* Parse the CIE at c.  Returns -1 for what is not handled: 64-bit
 * lengths, augmentations other than z, R, P, L (S marks a signal frame). */
static int wp_cie_parse(const uint8_t *c, struct wp_cie *cie)
{
    uint32_t len;
    memcpy(&len, c, 4);
    if (len == 0 || len == 0xffffffffu)
        return -1;
    const uint8_t *p = c + 4, *end = c + 4 + len;
    uint32_t id;
    memcpy(&id, p, 4);
    p += 4;
    if (id != 0)
        return -1;
    uint8_t version = *p++;
    if (version != 1 && version != 3)
        return -1;
    const char *aug = (const char *)p;
    size_t alen = strnlen(aug, (size_t)(end - p));
    p += alen + 1;
    cie->caf = (int64_t)wp_uleb(&p, end);
    cie->daf = wp_sleb(&p, end);
    uint64_t ra = version == 1 ? *p++ : wp_uleb(&p, end);
    if (ra != WP_RA)
        return -1;
    cie->fde_enc = 0; /* absptr */
    cie->has_z = aug[0] == 'z';
    if (cie->has_z) {
        uint64_t zlen = wp_uleb(&p, end);
        const uint8_t *zend = p + zlen;
        for (size_t i = 1; i < alen; i++) {
            uintptr_t skip;
            switch (aug[i]) {
            case 'R':
                cie->fde_enc = *p++;
                break;
            case 'L':
                p++;
                break;
            case 'P': {
                uint8_t penc = *p++;
                if (wp_enc(&p, zend, (uint8_t)(penc & 0x0f), 0, &skip) < 0)
                    return -1;
                break;
            }
            default:
                return -1;
            }
        }
        p = zend;
    } else if (alen != 0) {
        return -1;
    }
    if (p > end)
        return -1;
    cie->ins = p;
    cie->end = end;
    return 0;
}

/* Find the rule for pc (handler context).  flags WP_CFI_NONE when not
 * handled. */
static void wp_cfi_find(uintptr_t pc, struct wp_cfi_rule *out)
{
    out->pc = pc;
    out->flags = WP_CFI_NONE;
    const uint8_t *hdr = wp_cfi_hdr_sig(pc);
    /* .eh_frame_hdr: version 1, then the encodings of eh_frame_ptr,
     * fde_count and the table; the table handled is the one every linker
     * here writes: (initial location, FDE address) as 4-byte data-relative
     * offsets, sorted. */
    if (hdr == NULL || hdr[0] != 1 || hdr[2] != 0x03 || hdr[3] != 0x3b)
        return;
    const uint8_t *p = hdr + 4;
    uintptr_t ehf; /* not needed: the search table points at the FDEs */
    if (wp_enc(&p, p + 8, hdr[1], (uintptr_t)hdr, &ehf) < 0)
        return;
    uint32_t count;
    memcpy(&count, p, 4);
    const int32_t *tab = (const int32_t *)(p + 4);
    if (count == 0 || pc < (uintptr_t)hdr + tab[0])
        return;
    uint32_t lo = 0, hi = count - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if ((uintptr_t)hdr + tab[2 * mid] <= pc)
            lo = mid;
        else
            hi = mid - 1;
    }
    const uint8_t *fde = hdr + tab[2 * lo + 1];
    uint32_t len, cptr;
    memcpy(&len, fde, 4);
    if (len == 0 || len == 0xffffffffu)
        return;
    const uint8_t *fend = fde + 4 + len;
    memcpy(&cptr, fde + 4, 4);
    struct wp_cie cie;
    if (cptr == 0 || wp_cie_parse(fde + 4 - cptr, &cie) < 0)
        return;
    p = fde + 8;
    uintptr_t begin, range;
    if (wp_enc(&p, fend, cie.fde_enc, 0, &begin) < 0 || wp_enc(&p, fend, cie.fde_enc & 0x0f, 0, &range) < 0)
        return;
    if (pc < begin || pc - begin >= range)
        return;
    if (cie.has_z) {
        uint64_t zlen = wp_uleb(&p, fend);
        if ((uint64_t)(fend - p) < zlen)
            return;
        p += zlen;
    }
    struct wp_row init = {.cfa_reg = -1, .rbp_how = 0, .ra_how = 0};
    if (wp_cfi_run(cie.ins, cie.end, 0, UINTPTR_MAX, &cie, &init, NULL) < 0)
        return;
    struct wp_row r = init;
    if (wp_cfi_run(p, fend, begin, pc, &cie, &r, &init) < 0)
        return;
    if (r.cfa_reg < 0 || r.cfa_off < INT32_MIN || r.cfa_off > INT32_MAX || r.rbp_how == 3 || r.ra_how == 3)
        return;
    if (r.rbp_how == 1 && (r.rbp_off == 0 || r.rbp_off < INT16_MIN || r.rbp_off > INT16_MAX))
        return;
    out->cfa_off = (int32_t)r.cfa_off;
    out->rbp_off = r.rbp_how == 1 ? (int16_t)r.rbp_off : 0;
    out->flags = (uint8_t)((r.cfa_reg == WP_RBP ? WP_CFI_CFA_RBP : 0) | (r.rbp_how == 2 ? WP_CFI_RBP_LOST : 0));
    if (r.ra_how == 2) {
        out->flags |= WP_CFI_END;
        out->ra_off = 0;
    } else if (r.ra_how == 1 && r.ra_off % 8 == 0 && r.ra_off >= -1024 && r.ra_off < 0) {
        out->ra_off = (int8_t)(r.ra_off / 8);
    } else {
        out->flags = WP_CFI_NONE; /* the return address in a register */
    }
}

/* --- the unwinder -------------------------------------------------------------- */

static const struct wp_cfi_rule *wp_cfi_rule(struct wp_cfi_cache *c, uintptr_t pc)
{
    /* Fibonacci hashing of the address: neighbouring call sites spread. */
    struct wp_cfi_rule *e = &c->r[(pc * 0x9e3779b97f4a7c15ull) >> 55 & (WP_CFI_CACHE - 1)];
    if (e->pc != pc)
        wp_cfi_find(pc, e);
    return e;
}

/* Walk from a frame at pc with stack pointer sp (and rbp, when bp_ok) to
 * the outermost one, appending to out[k..max). */
static int wp_cfi_walk(struct wp_cfi_cache *c, uintptr_t pc, uintptr_t sp, uintptr_t bp, int bp_ok,
                       uintptr_t stack_hi, uintptr_t *out, int k, int max, int *trunc)
{
    for (;;) {
        out[k++] = pc;
        const struct wp_cfi_rule *r = wp_cfi_rule(c, pc);
        if (r->flags & WP_CFI_NONE)
            return -1;
        if (r->flags & WP_CFI_END) {
            *trunc = 0;
            return k;
        }
        if (k == max) {
            *trunc = 1;
            return k;
        }
        if ((r->flags & WP_CFI_CFA_RBP) && !bp_ok)
            return -1;
        uintptr_t cfa = ((r->flags & WP_CFI_CFA_RBP) ? bp : sp) + (uintptr_t)(intptr_t)r->cfa_off;
        /* The stack grows down: each caller's frame lies above, and every
         * slot read lies between the interrupted stack pointer and the top. */
        uintptr_t ra_at = cfa + (uintptr_t)(intptr_t)(8 * r->ra_off);
        if (cfa <= sp || cfa > stack_hi || ra_at < sp || ra_at + 8 > stack_hi)
            return -1;
        uintptr_t ra = *(const uintptr_t *)ra_at;
        if (r->rbp_off) {
            uintptr_t at = cfa + (uintptr_t)(intptr_t)r->rbp_off;
            if (at < sp || at + 8 > stack_hi)
                return -1;
            bp = *(const uintptr_t *)at;
            bp_ok = 1;
        }
        if (r->flags & WP_CFI_RBP_LOST)
            bp_ok = 0;
        sp = cfa;
        if (ra == 0) {
            *trunc = 0;
            return k;
        }
        pc = ra - 1;
    }
}

/* A new generation of the table empties the cache. */
static void wp_cfi_fresh(struct wp_cfi_cache *c)
{
    unsigned gen = __atomic_load_n(&wp_cfi_gen, __ATOMIC_ACQUIRE);
    if (c->gen != gen) {
        memset(c->r, 0, sizeof c->r);
        c->gen = gen;
    }
}

int wp_cfi_unwind_sig(const void *ucv, struct wp_cfi_cache *c, uintptr_t stack_lo, uintptr_t stack_hi,
                  uintptr_t *out, int max, int *trunc)
{
#if defined(__x86_64__)
    const ucontext_t *uc = ucv;
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    if (sp < stack_lo || sp >= stack_hi || max < 1)
        return -1; /* not on the thread's stack */
    wp_cfi_fresh(c);
    return wp_cfi_walk(c, (uintptr_t)uc->uc_mcontext.gregs[REG_RIP], sp, (uintptr_t)uc->uc_mcontext.gregs[REG_RBP],
                       1, stack_hi, out, 0, max, trunc);
#else
    (void)ucv, (void)c, (void)stack_lo, (void)stack_hi, (void)out, (void)max, (void)trunc;
    return -1;
#endif
}

int wp_cfi_unwind_from_sig(const void *ucv, struct wp_cfi_cache *c, uintptr_t stack_lo, uintptr_t stack_hi,
                       uintptr_t frame_pc, uintptr_t frame_cfa, uintptr_t *out, int max, int *trunc)
{
#if defined(__x86_64__)
    const ucontext_t *uc = ucv;
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    /* The frame must be live: above the interrupted stack pointer, on the
     * thread's stack, with its return address (at CFA - 8) inside it. */
    if (sp < stack_lo || sp >= stack_hi || frame_cfa <= sp || frame_cfa > stack_hi || frame_cfa - 8 < sp ||
        max < 1)
        return -1;
    wp_cfi_fresh(c);
    out[0] = frame_pc;
    uintptr_t ra = *(const uintptr_t *)(frame_cfa - 8);
    if (ra == 0) {
        *trunc = 0;
        return 1;
    }
    if (max == 1) {
        *trunc = 1;
        return 1;
    }
    /* rbp is unknown here: the frames below may have used it.  The walk
     * declines at the first frame that needs it before one restores it. */
    return wp_cfi_walk(c, ra - 1, frame_cfa, 0, 0, stack_hi, out, 1, max, trunc);
#else
    (void)ucv, (void)c, (void)stack_lo, (void)stack_hi, (void)frame_pc, (void)frame_cfa, (void)out, (void)max,
        (void)trunc;
    return -1;
#endif
}
