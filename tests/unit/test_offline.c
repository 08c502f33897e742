/* tests/unit/test_offline.c — the module table (sampler/unwind.h,
 * wp_cfi_module_sig) and naming a partial profile afterwards
 * (symbols/offline.h).
 *
 * Checked: the table lists this program with its absolute path, its size
 * and modification time as stat gives them and its build-id as libdw
 * reads it; a run directory whose rank.R.folded has a frame
 * "test_offline+0xOFFSET" (the offset from the load address, as the
 * partial writer writes it) gets the function's name, its original text
 * is kept as rank.R.folded.partial-raw, and a second pass changes
 * nothing; a frame of waitprof's own object is left out; a build-id that
 * differs, a size that differs (no build-id) and a missing file are each
 * named in one line with the samples, and the frames stay raw; a module
 * table of another run (start_ns) is not used.
 */
#include <check.h>
#include <errno.h>
#include <elfutils/libdwfl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"
#include "sampler/unwind.h"
#include "symbols/offline.h"
#include "tests/unit/unit.h"

__attribute__((noinline)) int offline_target(int x)
{
    return x * 3 + 1;
}

static struct wp_cfi_module self_mod;
static char dir[64];

static void find_self(void)
{
    wp_cfi_refresh();
    char exe[WP_CFI_PATH];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(k, 0);
    exe[k] = '\0';
    struct wp_cfi_module m;
    for (int i = 0; wp_cfi_module_sig(i, &m) == 0; i++)
        if (strcmp(m.path, exe) == 0) {
            self_mod = m;
            return;
        }
    ck_abort_msg("the module table does not list %s", exe);
}

static void put(const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static char *get(const char *name)
{
    static char buf[4096];
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void hex(const struct wp_cfi_module *m, char *out)
{
    out[0] = '\0';
    for (int i = 0; i < m->build_id_len; i++)
        sprintf(out + 2 * i, "%02x", m->build_id[i]);
    if (m->build_id_len == 0)
        strcpy(out, "-");
}

/* A run directory: meta with start_ns=1, a module table of one row for
 * this program (build-id, size, path as given, self flag), and a folded
 * file with one line of 5 samples whose leaf is offline_target. */
static void make_run(const char *build_id, uint64_t size, const char *path, int self, int start_ns)
{
    snprintf(dir, sizeof dir, "/tmp/wp-test-offline.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    put("rank.0.meta", "format=waitprof-meta 1\nstatus=partial: terminated by SIGTERM\nstart_ns=1\n");
    char text[2048];
    snprintf(text, sizeof text, "# %s %d\nstart_ns\t%d\n%s\n%s\t0x%lx\t%s\t%llu\t%llu\t%d\t%s\n",
             wp_file_format(WP_FILE_MODULES), wp_file_version(WP_FILE_MODULES), start_ns, WP_MODULES_COLUMNS,
             self_mod.name, (unsigned long)self_mod.base, build_id, (unsigned long long)size,
             (unsigned long long)self_mod.mtime_ns, self, path);
    put("rank.0.modules", text);
    uintptr_t off = (uintptr_t)&offline_target + 2 - self_mod.base;
    snprintf(text, sizeof text, "Not-in-MPI;%s+0x%lx 5\n", self_mod.name, (unsigned long)off);
    put("rank.0.folded", text);
}

static void clean_run(void)
{
    const char *files[] = {"rank.0.meta", "rank.0.modules", "rank.0.folded", "rank.0.folded.partial-raw"};
    char path[128];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* wp_offline_name_dir on dir; its stderr lines in msg. */
static int name_dir(char *msg, size_t cap)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&buf, &len);
    int rc = wp_offline_name_dir(dir, err);
    fclose(err);
    snprintf(msg, cap, "%s", buf ? buf : "");
    free(buf);
    return rc;
}

START_TEST(test_table)
{
    find_self();
    struct stat st;
    ck_assert_int_eq(stat(self_mod.path, &st), 0);
    ck_assert_uint_eq(self_mod.size, (uint64_t)st.st_size);
    ck_assert_uint_eq(self_mod.mtime_ns, (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec);
    ck_assert_str_eq(self_mod.name, strrchr(program_invocation_name, '/') ? strrchr(program_invocation_name, '/') + 1
                                                                         : program_invocation_name);
    /* The build-id as libdw reads it from the file. */
    Dwfl_Callbacks cb = {.find_elf = dwfl_build_id_find_elf, .section_address = dwfl_offline_section_address};
    Dwfl *d = dwfl_begin(&cb);
    Dwfl_Module *mod = dwfl_report_offline(d, "x", self_mod.path, -1);
    ck_assert_ptr_nonnull(mod);
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &bits, &vaddr);
    ck_assert_int_eq(n, self_mod.build_id_len);
    ck_assert_int_eq(memcmp(bits, self_mod.build_id, (size_t)n), 0);
    dwfl_end(d);
}
END_TEST

START_TEST(test_named)
{
    find_self();
    char id[80], msg[1024];
    hex(&self_mod, id);
    make_run(id, self_mod.size, self_mod.path, 0, 1);
    char raw[256];
    snprintf(raw, sizeof raw, "%s", get("rank.0.folded"));
    ck_assert_int_eq(name_dir(msg, sizeof msg), 1);
    ck_assert_str_eq(msg, "");
    ck_assert_str_eq(get("rank.0.folded"), "Not-in-MPI;offline_target 5\n");
    ck_assert_str_eq(get("rank.0.folded.partial-raw"), raw);
    /* Again: nothing left to name, nothing changes. */
    ck_assert_int_eq(name_dir(msg, sizeof msg), 0);
    ck_assert_str_eq(get("rank.0.folded"), "Not-in-MPI;offline_target 5\n");
    ck_assert_str_eq(get("rank.0.folded.partial-raw"), raw);
    clean_run();
}
END_TEST

START_TEST(test_self_left_out)
{
    find_self();
    char id[80], msg[1024];
    hex(&self_mod, id);
    make_run(id, self_mod.size, self_mod.path, 1, 1);
    ck_assert_int_eq(name_dir(msg, sizeof msg), 1);
    ck_assert_str_eq(get("rank.0.folded"), "Not-in-MPI 5\n");
    clean_run();
}
END_TEST

/* Each case: the frame stays raw and one line says why. */
START_TEST(test_not_named)
{
    find_self();
    char id[80], msg[1024], path[WP_CFI_PATH + 8];
    hex(&self_mod, id);
    ck_assert_int_gt(self_mod.build_id_len, 0);
    id[0] = id[0] == '0' ? '1' : '0';
    for (int c = 0; c < 4; c++) {
        if (c == 0)
            make_run(id, self_mod.size, self_mod.path, 0, 1);
        else if (c == 1)
            make_run("-", self_mod.size + 1, self_mod.path, 0, 1);
        else if (c == 2) {
            snprintf(path, sizeof path, "%s.gone", self_mod.path);
            make_run("-", self_mod.size, path, 0, 1);
        } else
            make_run("-", self_mod.size, self_mod.path, 0, 2); /* another run's table */
        char before[256];
        snprintf(before, sizeof before, "%s", get("rank.0.folded"));
        ck_assert_int_eq(name_dir(msg, sizeof msg), 0);
        ck_assert_str_eq(get("rank.0.folded"), before);
        ck_assert_ptr_null(get("rank.0.folded.partial-raw"));
        char want[1200];
        if (c == 0)
            snprintf(want, sizeof want,
                     "waitprof report: %s changed since the run (its build-id differs); its 5 samples stay "
                     "module+offset\n",
                     self_mod.path);
        else if (c == 1)
            snprintf(want, sizeof want,
                     "waitprof report: %s changed since the run (its size or modification time differs, and it "
                     "has no build-id); its 5 samples stay module+offset\n",
                     self_mod.path);
        else if (c == 2)
            snprintf(want, sizeof want, "waitprof report: %s is gone; its 5 samples stay module+offset\n", path);
        else
            want[0] = '\0';
        ck_assert_str_eq(msg, want);
        clean_run();
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("offline");
    TCase *tc = tcase_create("offline");
    tcase_add_test(tc, test_table);
    tcase_add_test(tc, test_named);
    tcase_add_test(tc, test_self_left_out);
    tcase_add_test(tc, test_not_named);
    suite_add_tcase(s, tc);
    return wp_unit_run(s, 1);
}
