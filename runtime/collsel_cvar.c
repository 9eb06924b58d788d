/* collsel_cvar: MPI_T control variables (collsel_cvar.h). */
#include "collsel_cvar.h"

#include <stdio.h>
#include <string.h>

/* Room for a value of any type collsel reads, zeroed first, so a narrower write of the MPI
 * leaves the rest 0 (MPI_C_BOOL: any width). */
union cvar_value {
    int i;
    unsigned u;
    long l;
    unsigned long ul;
    long long ll;
    unsigned long long ull;
    char pad[64];
};

int collsel_cvar_read(const collsel_cvar *c, int64_t *v)
{
    union cvar_value x;
    memset(&x, 0, sizeof x);
    if (MPI_T_cvar_read(c->handle, &x) != MPI_SUCCESS)
        return -1;
    if (c->type == MPI_INT) *v = x.i;
    else if (c->type == MPI_C_BOOL) *v = x.ull != 0;
    else if (c->type == MPI_UNSIGNED) *v = x.u;
    else if (c->type == MPI_LONG) *v = x.l;
    else if (c->type == MPI_UNSIGNED_LONG) *v = (int64_t)x.ul;
    else if (c->type == MPI_LONG_LONG) *v = x.ll;
    else if (c->type == MPI_UNSIGNED_LONG_LONG) *v = (int64_t)x.ull;
    else return -1;
    return 0;
}

int collsel_cvar_open(const char *name, collsel_cvar *c)
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
    /* a handle was allocated: it is freed on every way out but success */
    if (count != 1 || collsel_cvar_read(c, &c->initial) != 0) {
        collsel_cvar_close(c);
        return -1;
    }
    return 0;
}

void collsel_cvar_close(collsel_cvar *c)
{
    MPI_T_cvar_handle_free(&c->handle);
}

int collsel_cvar_write(const collsel_cvar *c, int64_t v)
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

int collsel_cvar_set(const collsel_cvar *c, int64_t v)
{
    int64_t back = 0;
    if (collsel_cvar_write(c, v) != 0 || collsel_cvar_read(c, &back) != 0)
        return -1;
    return back == v ? 0 : -1;
}

int collsel_cvar_fixed(const collsel_cvar *c)
{
    return c->scope == MPI_T_SCOPE_CONSTANT || c->scope == MPI_T_SCOPE_READONLY;
}

int32_t collsel_cvar_enum_count(const collsel_cvar *c)
{
    int n = 0, len = 0;
    if (c->enumtype == MPI_T_ENUM_NULL
        || MPI_T_enum_get_info(c->enumtype, &n, NULL, &len) != MPI_SUCCESS)
        return 0;
    return n;
}

int collsel_cvar_enum_item(const collsel_cvar *c, int32_t i, int64_t *value, char *name,
                           int32_t size)
{
    int v = 0, len = size;
    if (MPI_T_enum_get_item(c->enumtype, i, &v, name, &len) != MPI_SUCCESS)
        return -1;
    *value = v;
    return 0;
}

int32_t collsel_cvar_enum_values(const collsel_cvar *c, int64_t *values, int32_t capacity)
{
    int32_t i, n = collsel_cvar_enum_count(c), kept = 0;
    for (i = 0; i < n && kept < capacity; i++) {
        char item[128] = "";
        if (collsel_cvar_enum_item(c, i, &values[kept], item, sizeof item) == 0)
            kept++;
    }
    return n ? kept : -1;
}

int collsel_cvar_in_values(const int64_t *values, int32_t n, int64_t value)
{
    int32_t i;
    for (i = 0; i < n; i++)
        if (values[i] == value)
            return 1;
    return n < 0;
}

/* MPICH 4.0 has no MPI_T enumeration for its algorithm variables: the values are the C enum's,
 * in the order the description lists them ("...auto - Internal...binomial  - Force..."), so the
 * value of `name` is the number of " - " entry markers before its own entry, an entry being
 * `name` followed by spaces and "- " and not preceded by '_' (tree is not pipelined_tree). */
static int described_value(const collsel_cvar *c, const char *name, int64_t *value)
{
    size_t len = strlen(name);
    const char *p, *q, *r;
    for (p = strstr(c->desc, name); p; p = strstr(p + 1, name)) {
        int64_t markers = 0;
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

int collsel_cvar_named_value(const collsel_cvar *c, const char *name, int64_t *value)
{
    int32_t i, n = collsel_cvar_enum_count(c);
    if (n == 0)
        return described_value(c, name, value);
    for (i = 0; i < n; i++) {
        char item[128] = "";
        int64_t v = 0;
        if (collsel_cvar_enum_item(c, i, &v, item, sizeof item) == 0 && strcmp(item, name) == 0) {
            *value = v;
            return 0;
        }
    }
    return -1;
}
