/* MPI_T control variables: open, read, write, and enumeration values by name. */
#include "lc_mpi.h"

#include <stdio.h>
#include <string.h>

union cvar_value {
    int i;
    unsigned u;
    long l;
    unsigned long ul;
    long long ll;
    unsigned long long ull;
    char pad[64];
};

int lc_cvar_read(const struct lc_cvar *c, long long *v)
{
    union cvar_value x;
    memset(&x, 0, sizeof x);
    if (MPI_T_cvar_read(c->handle, &x) != MPI_SUCCESS)
        return -1;
    if (c->type == MPI_INT) *v = x.i;
    else if (c->type == MPI_C_BOOL) *v = x.ull != 0;   /* zeroed first: any width */
    else if (c->type == MPI_UNSIGNED) *v = x.u;
    else if (c->type == MPI_LONG) *v = x.l;
    else if (c->type == MPI_UNSIGNED_LONG) *v = (long long)x.ul;
    else if (c->type == MPI_LONG_LONG) *v = x.ll;
    else if (c->type == MPI_UNSIGNED_LONG_LONG) *v = (long long)x.ull;
    else return -1;
    return 0;
}

int lc_cvar_open(const char *name, struct lc_cvar *c)
{
    int index = 0, count = 0, verbosity = 0, bind = 0;
    char vname[256];
    int vlen = sizeof vname, dlen = sizeof c->desc;
    snprintf(c->name, sizeof c->name, "%s", name);
    c->desc[0] = '\0';
    if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS
        || MPI_T_cvar_get_info(index, vname, &vlen, &verbosity, &c->type, &c->enumtype, c->desc,
                               &dlen, &bind, &c->scope) != MPI_SUCCESS
        || bind != MPI_T_BIND_NO_OBJECT
        || MPI_T_cvar_handle_alloc(index, NULL, &c->handle, &count) != MPI_SUCCESS)
        return -1;
    if (count != 1 || lc_cvar_read(c, &c->initial) != 0) {
        lc_cvar_close(c);
        return -1;
    }
    return 0;
}

int lc_cvar_write(const struct lc_cvar *c, long long v)
{
    union cvar_value x;
    memset(&x, 0, sizeof x);
    if (c->type == MPI_INT) x.i = (int)v;
    else if (c->type == MPI_UNSIGNED) x.u = (unsigned)v;
    else if (c->type == MPI_LONG) x.l = (long)v;
    else if (c->type == MPI_UNSIGNED_LONG) x.ul = (unsigned long)v;
    else if (c->type == MPI_LONG_LONG) x.ll = v;
    else if (c->type == MPI_UNSIGNED_LONG_LONG) x.ull = (unsigned long long)v;
    else return -1;
    return MPI_T_cvar_write(c->handle, &x) == MPI_SUCCESS ? 0 : -1;
}

int lc_cvar_set(const struct lc_cvar *c, long long v)
{
    long long back = 0;
    if (lc_cvar_write(c, v) != 0 || lc_cvar_read(c, &back) != 0)
        return -1;
    return back == v ? 0 : -1;
}

static int enum_count(const struct lc_cvar *c)
{
    int n = 0, len = 0;
    if (c->enumtype == MPI_T_ENUM_NULL
        || MPI_T_enum_get_info(c->enumtype, &n, NULL, &len) != MPI_SUCCESS)
        return 0;
    return n;
}

/* Item i of the enumeration: 0 on success. */
static int enum_item(const struct lc_cvar *c, int i, long long *value, char *name, int size)
{
    int v = 0, len = size;
    if (MPI_T_enum_get_item(c->enumtype, i, &v, name, &len) != MPI_SUCCESS)
        return -1;
    *value = v;
    return 0;
}

/* MPICH 4.0 has no MPI_T enumeration for its algorithm variables: the values are the C enum's,
 * in the order the description lists them ("...auto - Internal...binomial  - Force..."), so the
 * value of `name` is the number of " - " entry markers before its own entry, an entry being
 * `name` followed by spaces and "- " and not preceded by '_' (tree is not pipelined_tree). */
static int described_value(const struct lc_cvar *c, const char *name, long long *value)
{
    size_t len = strlen(name);
    const char *p, *q, *r;
    for (p = strstr(c->desc, name); p; p = strstr(p + 1, name)) {
        long long markers = 0;
        q = p + len;
        while (*q == ' ')
            q++;
        if (q == p + len || q[0] != '-' || q[1] != ' ' || (p > c->desc && p[-1] == '_'))
            continue;
        for (r = strstr(c->desc, " - "); r && r < p; r = strstr(r + 1, " - "))
            markers++;
        *value = markers;
        return 0;
    }
    return -1;
}

int lc_cvar_named_value(const struct lc_cvar *c, const char *name, long long *value)
{
    int i, n = enum_count(c);
    if (n == 0)
        return described_value(c, name, value);
    for (i = 0; i < n; i++) {
        char item[128] = "";
        long long v = 0;
        if (enum_item(c, i, &v, item, sizeof item) == 0 && strcmp(item, name) == 0) {
            *value = v;
            return 0;
        }
    }
    return -1;
}

int lc_cvar_enum_values(const struct lc_cvar *c, long long *values, int capacity)
{
    int i, n = enum_count(c), kept = 0;
    for (i = 0; i < n && kept < capacity; i++) {
        char item[128] = "";
        if (enum_item(c, i, &values[kept], item, sizeof item) == 0)
            kept++;
    }
    return n ? kept : -1;
}

void lc_cvar_close(struct lc_cvar *c)
{
    MPI_T_cvar_handle_free(&c->handle);
}
