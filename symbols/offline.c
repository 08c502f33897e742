/* symbols/offline.c — see symbols/offline.h.  Each object file is opened
 * once for the whole directory with libdwfl (dwfl_report_elf), at load
 * address 0: its link-time addresses, which is what the partial writer's
 * offsets are (ip minus the load address, sampler/objects.c), so the
 * ranks' different load addresses never matter.  As in the application,
 * separate debug files are not searched. */
#include <dirent.h>
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/folded.h"
#include "format/format.h"
#include "symbols/dwname.h"
#include "symbols/offline.h"

/* --- the object files ------------------------------------------------------ */

enum wp_file_state { WP_OK, WP_GONE, WP_CHANGED, WP_UNREADABLE };

/* What a looked-up address came to: a name, left out, or no symbol. */
static char wp_left_out_mark, wp_no_symbol_mark;
#define WP_LEFT_OUT (&wp_left_out_mark)
#define WP_NO_SYMBOL (&wp_no_symbol_mark)

struct wp_name_slot {
    uint64_t addr;
    char *name; /* NULL: empty slot */
};

/* One object file as the run recorded it; two ranks' rows for the same
 * file (same path and identity) share one entry. */
struct wp_ofile {
    char *path, *build_id; /* build_id: hexadecimal, or "-" */
    uint64_t size, mtime_ns;
    int self, checked;
    enum wp_file_state state;
    const char *why;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    uint64_t lost; /* samples whose stacks hold a frame of this file left raw */
    struct wp_name_slot *names;
    size_t ncap, nn;
};

struct wp_offline {
    struct wp_ofile **files;
    size_t nf, fcap;
    wp_demangler demangle;
    int demangle_looked;
};

static int wp_no_debuginfo(Dwfl_Module *m, void **ud, const char *modname, Dwarf_Addr base, const char *file,
                           const char *debuglink, GElf_Word crc, char **name)
{
    (void)m, (void)ud, (void)modname, (void)base, (void)file, (void)debuglink, (void)crc, (void)name;
    return -1;
}

static char *wp_offline_debuginfo_path;
static const Dwfl_Callbacks wp_offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = wp_no_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &wp_offline_debuginfo_path,
};

/* The application demangles C++ names with the libstdc++ it carries; this
 * program is C, so it loads libstdc++ for the demangler when a C++ name
 * first needs it. */
static wp_demangler wp_offline_demangler(struct wp_offline *o)
{
    if (!o->demangle_looked) {
        o->demangle_looked = 1;
        o->demangle = (wp_demangler)dlsym(RTLD_DEFAULT, "__cxa_demangle");
        if (o->demangle == NULL) {
            void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
            if (h)
                o->demangle = (wp_demangler)dlsym(h, "__cxa_demangle");
        }
    }
    return o->demangle;
}

static char *wp_xstrdup(const char *s)
{
    char *d = strdup(s);
    if (d == NULL) {
        fputs("waitprof report: out of memory\n", stderr);
        exit(2);
    }
    return d;
}

static void *wp_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (p == NULL) {
        fputs("waitprof report: out of memory\n", stderr);
        exit(2);
    }
    return p;
}

static struct wp_ofile *wp_file_get(struct wp_offline *o, const char *path, const char *build_id, uint64_t size,
                                    uint64_t mtime_ns, int self)
{
    for (size_t i = 0; i < o->nf; i++) {
        struct wp_ofile *f = o->files[i];
        if (strcmp(f->path, path) == 0 && strcmp(f->build_id, build_id) == 0 && f->size == size &&
            f->mtime_ns == mtime_ns)
            return f;
    }
    if (o->nf == o->fcap) {
        o->fcap = o->fcap ? 2 * o->fcap : 16;
        struct wp_ofile **t = realloc(o->files, o->fcap * sizeof *t);
        if (t == NULL) {
            fputs("waitprof report: out of memory\n", stderr);
            exit(2);
        }
        o->files = t;
    }
    struct wp_ofile *f = wp_xcalloc(1, sizeof *f);
    f->path = wp_xstrdup(path);
    f->build_id = wp_xstrdup(build_id);
    f->size = size;
    f->mtime_ns = mtime_ns;
    f->self = self;
    o->files[o->nf++] = f;
    return f;
}

/* Is the file at its path still the one the run loaded?  Opened once. */
static void wp_file_check(struct wp_ofile *f)
{
    if (f->checked)
        return;
    f->checked = 1;
    struct stat st;
    if (stat(f->path, &st) != 0) {
        f->state = WP_GONE;
        return;
    }
    f->dwfl = dwfl_begin(&wp_offline_callbacks);
    if (f->dwfl) {
        dwfl_report_begin(f->dwfl);
        f->mod = dwfl_report_elf(f->dwfl, f->path, f->path, -1, 0, false);
        dwfl_report_end(f->dwfl, NULL, NULL);
    }
    if (f->mod == NULL) {
        f->state = WP_UNREADABLE;
        f->why = dwfl_errmsg(-1);
        return;
    }
    if (strcmp(f->build_id, "-") != 0) {
        const unsigned char *bits;
        GElf_Addr vaddr;
        int n = dwfl_module_build_id(f->mod, &bits, &vaddr);
        char hex[2 * 64 + 1] = "";
        for (int i = 0; i < n && i < 64; i++) {
            hex[2 * i] = "0123456789abcdef"[bits[i] >> 4];
            hex[2 * i + 1] = "0123456789abcdef"[bits[i] & 15];
            hex[2 * i + 2] = '\0';
        }
        /* The run kept at most the first bytes of a long build-id. */
        if (n <= 0 || strncmp(hex, f->build_id, strlen(f->build_id)) != 0) {
            f->state = WP_CHANGED;
            f->why = "its build-id differs";
        }
    } else if ((uint64_t)st.st_size != f->size ||
               (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec != f->mtime_ns) {
        f->state = WP_CHANGED;
        f->why = "its size or modification time differs, and it has no build-id";
    }
}

/* The name of the code at the link-time address addr of f: a name, or
 * WP_LEFT_OUT, or WP_NO_SYMBOL.  Cached per file. */
static const char *wp_file_name(struct wp_offline *o, struct wp_ofile *f, uint64_t addr)
{
    if (f->nn * 2 >= f->ncap) {
        size_t cap = f->ncap ? 2 * f->ncap : 256;
        struct wp_name_slot *t = wp_xcalloc(cap, sizeof *t);
        for (size_t i = 0; i < f->ncap; i++)
            if (f->names[i].name) {
                size_t j = (f->names[i].addr * 11400714819323198485ull) & (cap - 1);
                while (t[j].name)
                    j = (j + 1) & (cap - 1);
                t[j] = f->names[i];
            }
        free(f->names);
        f->names = t;
        f->ncap = cap;
    }
    size_t j = (addr * 11400714819323198485ull) & (f->ncap - 1);
    while (f->names[j].name) {
        if (f->names[j].addr == addr)
            return f->names[j].name;
        j = (j + 1) & (f->ncap - 1);
    }
    char *name;
    /* waitprof's own frames (its thread trampoline) are left out, as the
     * application's symbolizer leaves them out. */
    Dwarf_Addr bias = 0;
    if (f->self) {
        name = WP_LEFT_OUT;
    } else if (dwfl_module_getelf(f->mod, &bias) == NULL) {
        name = WP_NO_SYMBOL;
    } else {
        uintptr_t ip = (uintptr_t)(addr + bias);
        const char *sym = wp_dw_addrname(f->mod, ip);
        char buf[1024], plt[1024];
        if (sym == NULL && wp_dw_pltname(f->mod, ip, plt, sizeof plt)) {
            /* A stub of the procedure linkage table, as the live
             * symbolizer names it. */
            wp_frame_sanitize(buf, sizeof buf, plt);
            name = wp_xstrdup(buf);
        } else if (sym == NULL)
            name = WP_NO_SYMBOL;
        else if (!wp_dw_name(f->mod, ip, sym, sym[0] == '_' && sym[1] == 'Z' ? wp_offline_demangler(o) : NULL, buf,
                             sizeof buf))
            name = WP_LEFT_OUT;
        else
            name = wp_xstrdup(buf);
    }
    f->names[j].addr = addr;
    f->names[j].name = name;
    f->nn++;
    return name;
}

static void wp_file_free(struct wp_ofile *f)
{
    for (size_t i = 0; i < f->ncap; i++)
        if (f->names[i].name != WP_LEFT_OUT && f->names[i].name != WP_NO_SYMBOL)
            free(f->names[i].name);
    free(f->names);
    if (f->dwfl) {
        wp_dw_forget(f->dwfl);
        dwfl_end(f->dwfl);
    }
    free(f->path);
    free(f->build_id);
    free(f);
}

/* --- one rank ----------------------------------------------------------------- */

/* A rank's rows of rank.R.modules: frame name to file, sorted by name. */
struct wp_rmod {
    char *name;
    struct wp_ofile *file; /* NULL: two objects share the name */
};

static int wp_rmod_cmp(const void *a, const void *b)
{
    return strcmp(((const struct wp_rmod *)a)->name, ((const struct wp_rmod *)b)->name);
}

/* A whole file, NUL-terminated; NULL when it cannot be read. */
static char *wp_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t k;
    while (buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n - 1 == 0) {
            char *t = realloc(buf, cap *= 2);
            if (t == NULL)
                free(buf);
            buf = t;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (buf == NULL || bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* The value of "key=" in a meta text, or 0. */
static uint64_t wp_meta_u64(const char *meta, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = meta; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, key, kl) == 0 && p[kl] == '=')
            return strtoull(p + kl + 1, NULL, 10);
    return 0;
}

/* Parse rank.R.modules into *mods (sorted); the number of rows, or -1 when
 * the file is not one this code reads or not of the run whose start is
 * start_ns. */
static long wp_read_modules(struct wp_offline *o, char *text, uint64_t start_ns, struct wp_rmod **mods)
{
    char head[64];
    snprintf(head, sizeof head, "# %s %d\n", wp_file_format(WP_FILE_MODULES), wp_file_version(WP_FILE_MODULES));
    if (strncmp(text, head, strlen(head)) != 0)
        return -1;
    char *p = text + strlen(head);
    if (strncmp(p, "start_ns\t", 9) != 0 || strtoull(p + 9, NULL, 10) != start_ns || start_ns == 0)
        return -1;
    p = strchr(p, '\n');
    if (p == NULL || strncmp(p + 1, WP_MODULES_COLUMNS "\n", strlen(WP_MODULES_COLUMNS) + 1) != 0)
        return -1;
    p += 1 + strlen(WP_MODULES_COLUMNS) + 1;
    size_t n = 0, cap = 64;
    struct wp_rmod *m = wp_xcalloc(cap, sizeof *m);
    while (*p) {
        char *eol = strchr(p, '\n');
        if (eol == NULL)
            break; /* a row cut short: the writer was killed */
        *eol = '\0';
        char *col[7];
        int nc = 0;
        for (char *q = p; nc < 7; nc++) {
            col[nc] = q;
            char *tab = nc < 6 ? strchr(q, '\t') : NULL;
            if (nc < 6 && tab == NULL)
                break;
            if (tab) {
                *tab = '\0';
                q = tab + 1;
            }
        }
        p = eol + 1;
        if (nc != 7 || col[6][0] != '/')
            continue;
        if (n == cap) {
            struct wp_rmod *t = realloc(m, (cap *= 2) * sizeof *t);
            if (t == NULL) {
                fputs("waitprof report: out of memory\n", stderr);
                exit(2);
            }
            m = t;
        }
        m[n].name = col[0];
        m[n].file = wp_file_get(o, col[6], col[2], strtoull(col[3], NULL, 10), strtoull(col[4], NULL, 10),
                                strcmp(col[5], "1") == 0);
        n++;
    }
    qsort(m, n, sizeof *m, wp_rmod_cmp);
    /* Two objects whose frames carry the same name cannot be told apart. */
    for (size_t i = 0; i + 1 < n; i++)
        if (strcmp(m[i].name, m[i + 1].name) == 0 && m[i].file != m[i + 1].file)
            m[i].file = m[i + 1].file = NULL;
    *mods = m;
    return (long)n;
}

/* A frame "NAME+0xHEX" whose NAME is a row of mods: that row, and the
 * offset in *off; else NULL. */
static struct wp_rmod *wp_raw_frame(const char *frame, size_t len, struct wp_rmod *mods, size_t n, uint64_t *off)
{
    const char *plus = NULL;
    for (size_t i = len; i-- > 0;)
        if (frame[i] == '+') {
            plus = frame + i;
            break;
        }
    if (plus == NULL || plus == frame || frame + len - plus < 4 || plus[1] != '0' || plus[2] != 'x')
        return NULL;
    uint64_t v = 0;
    for (const char *h = plus + 3; h < frame + len; h++) {
        int d = (*h >= '0' && *h <= '9') ? *h - '0' : (*h >= 'a' && *h <= 'f') ? *h - 'a' + 10 : -1;
        if (d < 0 || v >> 60)
            return NULL;
        v = v << 4 | (uint64_t)d;
    }
    char name[256];
    size_t nl = (size_t)(plus - frame);
    if (nl >= sizeof name)
        return NULL;
    memcpy(name, frame, nl);
    name[nl] = '\0';
    struct wp_rmod key = {name, NULL};
    struct wp_rmod *r = bsearch(&key, mods, n, sizeof *mods, wp_rmod_cmp);
    if (r == NULL || r->file == NULL)
        return NULL;
    *off = v;
    return r;
}

/* Write text to path through path.tmp and a rename; 0 or -1 (errno). */
static int wp_write_file(const char *path, const char *text, size_t len, const struct wp_folded *f)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *fp = fopen(tmp, "w");
    if (fp == NULL)
        return -1;
    int bad = f ? wp_folded_write(fp, f) != 0 : fwrite(text, 1, len, fp) != len;
    if (fclose(fp) != 0)
        bad = 1;
    if (bad || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e ? e : EIO;
        return -1;
    }
    return 0;
}

/* Name the raw frames of one folded file of a rank (rank.R.folded, or a
 * counter's rank.R.<event>.folded) by the rank's module table mods[0..nm);
 * samples: its weights are samples, which the lines about modules that
 * could not be read count.  1 when the file was rewritten, 0 when nothing
 * changed, -1 when it could not be written. */
static int wp_offline_file(struct wp_offline *o, const char *path, struct wp_rmod *mods, long nm, int samples,
                           FILE *err)
{
    size_t flen = 0;
    char *folded = wp_slurp(path, &flen);
    if (folded == NULL)
        return 0;
    int rc = 0;
    struct wp_folded out = {0};
    size_t cap = 1 << 16, changed = 0;
    char *line = wp_xcalloc(cap, 1);
    struct wp_ofile **touched = wp_xcalloc((size_t)o->nf, sizeof *touched);
    for (char *p = folded; *p;) {
        char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        size_t sl;
        uint64_t count;
        char *next = eol ? eol + 1 : p + ll;
        if (wp_folded_parse(p, ll, &sl, &count) != 0) {
            p = next; /* the report names malformed lines; nothing to name here */
            continue;
        }
        /* Frames root first; the last is the leaf, the exact interrupted
         * address, every other a return address whose call is the byte
         * before it (as profile/profile.c asks the symbolizer). */
        size_t len = 0, nt = 0;
        int at_root = 1, state = 1;
        for (size_t a = 0; a < sl;) {
            size_t b = a;
            while (b < sl && p[b] != ';')
                b++;
            const char *fr = p + a, *name = fr;
            size_t nlen = b - a;
            uint64_t off;
            struct wp_rmod *r = state ? NULL : wp_raw_frame(fr, nlen, mods, (size_t)nm, &off);
            if (r) {
                struct wp_ofile *f = r->file;
                wp_file_check(f);
                uint64_t addr = b < sl && off > 0 ? off - 1 : off;
                const char *nmv = f->state == WP_OK ? wp_file_name(o, f, addr) : NULL;
                if (nmv == WP_LEFT_OUT) {
                    changed++;
                    a = b + 1;
                    continue;
                }
                if (nmv && nmv != WP_NO_SYMBOL) {
                    name = nmv;
                    nlen = strlen(nmv);
                    changed++;
                } else if (f->state != WP_OK) {
                    size_t t = 0;
                    while (t < nt && touched[t] != f)
                        t++;
                    if (t == nt)
                        touched[nt++] = f;
                }
            }
            /* glibc's start-up frames at the root say nothing about the
             * program (profile/profile.c leaves them out the same way). */
            if (!state && at_root && nlen >= 8 && strncmp(name, "libc.so.", 8) == 0) {
                a = b + 1;
                continue;
            }
            if (!state)
                at_root = 0;
            if (len + nlen + 2 >= cap) {
                char *t = realloc(line, cap = 2 * (len + nlen + 2));
                if (t == NULL) {
                    fputs("waitprof report: out of memory\n", stderr);
                    exit(2);
                }
                line = t;
            }
            if (!state)
                line[len++] = ';';
            memcpy(line + len, name, nlen);
            len += nlen;
            state = 0;
            a = b + 1;
        }
        for (size_t t = 0; t < nt && samples; t++)
            touched[t]->lost += count;
        if (wp_folded_add(&out, line, len, count) != 0) {
            fputs("waitprof report: out of memory\n", stderr);
            exit(2);
        }
        p = next;
    }
    free(touched);
    free(line);
    if (changed) {
        wp_folded_finish(&out);
        char raw[4300];
        snprintf(raw, sizeof raw, "%s%s", path, WP_FOLDED_RAW_SUFFIX);
        /* The original text is kept once: a second pass reads a file
         * already partly named, and its raw copy is the first one. */
        if (access(raw, F_OK) != 0 && wp_write_file(raw, folded, flen, NULL) != 0) {
            fprintf(err, "waitprof report: cannot keep %s (%s); %s stays as it was, module+offset\n", raw,
                    strerror(errno), path);
            rc = -1;
        } else if (wp_write_file(path, NULL, 0, &out) != 0) {
            fprintf(err, "waitprof report: cannot rewrite %s (%s); its frames stay module+offset\n", path,
                    strerror(errno));
            rc = -1;
        } else {
            rc = 1;
        }
    }
    wp_folded_free(&out);
    free(folded);
    return rc;
}

/* Does a directory entry name one of rank's counter files,
 * "rank.R.<event>.folded" (not rank.R.folded itself)? */
static int wp_is_counter_file(const char *name, int rank)
{
    int r, n = 0;
    if (sscanf(name, "rank.%d.%n", &r, &n) != 1 || n == 0 || r != rank)
        return 0;
    const char *p = name + n, *sfx = wp_file_suffix(WP_FILE_FOLDED);
    size_t len = strlen(p), sl = strlen(sfx);
    return len > sl + 1 && p[len - sl - 1] == '.' && strcmp(p + len - sl, sfx) == 0;
}

/* Name the raw frames of one rank: rank.R.folded and its counter files.
 * 1 when a file was rewritten, 0 when nothing changed, -1 when one could
 * not be written. */
static int wp_offline_rank(struct wp_offline *o, const char *dir, int rank, FILE *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rank.%d.%s", dir, rank, wp_file_suffix(WP_FILE_META));
    char *meta = wp_slurp(path, NULL);
    snprintf(path, sizeof path, "%s/rank.%d.%s", dir, rank, wp_file_suffix(WP_FILE_MODULES));
    char *modtext = wp_slurp(path, NULL);
    struct wp_rmod *mods = NULL;
    long nm = meta && modtext ? wp_read_modules(o, modtext, wp_meta_u64(meta, "start_ns"), &mods) : -1;
    int rc = 0;
    if (nm > 0) {
        snprintf(path, sizeof path, "%s/rank.%d.%s", dir, rank, wp_file_suffix(WP_FILE_FOLDED));
        rc = wp_offline_file(o, path, mods, nm, 1, err);
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (!wp_is_counter_file(e->d_name, rank))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            int one = wp_offline_file(o, path, mods, nm, 0, err);
            rc = rc < 0 || one < 0 ? -1 : rc > one ? rc : one;
        }
        if (d)
            closedir(d);
    }
    free(mods);
    free(meta);
    free(modtext);
    return rc;
}

int wp_offline_name_dir(const char *dir, FILE *err)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    struct wp_offline o = {0};
    int rewritten = 0;
    struct dirent *e;
    char want[64];
    snprintf(want, sizeof want, ".%s", wp_file_suffix(WP_FILE_MODULES));
    while ((e = readdir(d)) != NULL) {
        int rank, n = 0;
        if (sscanf(e->d_name, "rank.%d%n", &rank, &n) != 1 || rank < 0 || strcmp(e->d_name + n, want) != 0)
            continue;
        if (wp_offline_rank(&o, dir, rank, err) > 0)
            rewritten++;
    }
    closedir(d);
    for (size_t i = 0; i < o.nf; i++) {
        struct wp_ofile *f = o.files[i];
        if (f->lost == 0)
            continue;
        if (f->state == WP_GONE)
            fprintf(err, "waitprof report: %s is gone; its %llu samples stay module+offset\n", f->path,
                    (unsigned long long)f->lost);
        else if (f->state == WP_CHANGED)
            fprintf(err, "waitprof report: %s changed since the run (%s); its %llu samples stay module+offset\n",
                    f->path, f->why, (unsigned long long)f->lost);
        else if (f->state == WP_UNREADABLE)
            fprintf(err, "waitprof report: %s cannot be read (%s); its %llu samples stay module+offset\n",
                    f->path, f->why ? f->why : "unknown error", (unsigned long long)f->lost);
    }
    for (size_t i = 0; i < o.nf; i++)
        wp_file_free(o.files[i]);
    free(o.files);
    return rewritten;
}
