/* symbols/names.c — see symbols/names.h. */
#include <string.h>

#include "symbols/names.h"

/* Fortran names as the compilers write them: lower-case letters, digits,
 * underscores (and '$', which some compilers accept), never empty. */
static int fortran_chars(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '$'))
            return 0;
    return 1;
}

/* Append s[0..n) to out[*len..) within cap, keeping out terminated. */
static void put(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
    if (*len + 1 >= cap)
        return;
    if (n > cap - 1 - *len)
        n = cap - 1 - *len;
    memcpy(out + *len, s, n);
    *len += n;
    out[*len] = '\0';
}

/* Write "module::proc" from the two parts, checked for Fortran names. */
static int two_parts(const char *mod, size_t nm, const char *proc, size_t np, char *out, size_t cap)
{
    if (!fortran_chars(mod, nm) || !fortran_chars(proc, np))
        return 0;
    size_t len = 0;
    out[0] = '\0';
    put(out, cap, &len, mod, nm);
    put(out, cap, &len, "::", 2);
    put(out, cap, &len, proc, np);
    return 1;
}

/* flang: "_Q" then tagged scopes, outermost first, ending with the
 * procedure ("P").  The tags are upper case because the names never are. */
static int flang_name(const char *sym, char *out, size_t cap)
{
    const char *p = sym + 2;
    char tmp[1024];
    size_t len = 0;
    tmp[0] = '\0';
    while (*p) {
        char tag = *p++;
        const char *name = p;
        while (*p && !(*p >= 'A' && *p <= 'Z'))
            p++;
        size_t n = (size_t)(p - name);
        if (tag == 'B') {
            /* A block's "name" is its index: not a scope the source names. */
            for (size_t i = 0; i < n; i++)
                if (name[i] < '0' || name[i] > '9')
                    return 0;
            if (n == 0)
                return 0;
            continue;
        }
        if ((tag != 'M' && tag != 'S' && tag != 'F' && tag != 'P') || !fortran_chars(name, n))
            return 0;
        if (tag == 'P') {
            if (*p)
                return 0; /* the procedure is the innermost name */
            put(tmp, sizeof tmp, &len, name, n);
            if (cap > 0) {
                strncpy(out, tmp, cap - 1);
                out[cap - 1] = '\0';
            }
            return 1;
        }
        put(tmp, sizeof tmp, &len, name, n);
        put(tmp, sizeof tmp, &len, "::", 2);
    }
    return 0; /* a variable, a type, a common block: not a procedure */
}

int wp_name_fortran(const char *sym, char *out, size_t cap)
{
    if (sym == NULL || cap == 0)
        return 0;
    size_t n = strlen(sym);
    /* gfortran: "__" module "_MOD_" procedure.  Its names are lower case,
     * so the upper-case "_MOD_" cannot be part of either. */
    const char *mod = n > 2 && sym[0] == '_' && sym[1] == '_' ? strstr(sym + 2, "_MOD_") : NULL;
    if (mod)
        return two_parts(sym + 2, (size_t)(mod - sym - 2), mod + 5, n - (size_t)(mod + 5 - sym), out, cap);
    if (n > 2 && sym[0] == '_' && sym[1] == 'Q')
        return flang_name(sym, out, cap);
    /* Intel: module "_mp_" procedure "_", a name that starts with a letter. */
    const char *mp = strstr(sym, "_mp_");
    if (mp && sym[0] >= 'a' && sym[0] <= 'z' && sym[n - 1] == '_')
        return two_parts(sym, (size_t)(mp - sym), mp + 4, n - (size_t)(mp + 4 - sym) - 1, out, cap);
    return 0;
}

int wp_name_is_fortran_main(const char *sym)
{
    return sym && (strcmp(sym, "MAIN__") == 0 || strcmp(sym, "_QQmain") == 0);
}
