/* collsel_cvar: MPI_T control variables bound to no object, as collsel forces a collective's
 * algorithm: open by name, read, write (and read back), enumeration values by name. One
 * implementation for libcollsel (runtime/libcollsel/force_*.c) and the sweep's benchmark
 * program, which the Python package ships and compiles (its bench/ folder links to this file and
 * to collsel_cvar.c). Every call needs MPI_T_init_thread() first. Not installed.
 *
 * Values are int64_t whatever the variable's type (MPI_INT, MPI_UNSIGNED, MPI_LONG,
 * MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_C_BOOL read as 0/1); a
 * variable of any other type cannot be read or written (-1). */
#ifndef COLLSEL_CVAR_H
#define COLLSEL_CVAR_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct collsel_cvar {
    char name[128];
    MPI_T_cvar_handle handle;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    int scope;                /* MPI_T_SCOPE_*: see collsel_cvar_fixed() */
    int64_t initial;          /* its value when opened */
    char desc[2048];          /* MPICH 4.0 lists its algorithm names here */
} collsel_cvar;

/* 0 when the variable exists, is bound to no object and its value was read into c->initial;
 * else -1 with nothing to close (c->name is set either way, for messages). */
int collsel_cvar_open(const char *name, collsel_cvar *c);
void collsel_cvar_close(collsel_cvar *c);                           /* an opened variable */
int collsel_cvar_read(const collsel_cvar *c, int64_t *value);       /* 0 or -1 */
int collsel_cvar_write(const collsel_cvar *c, int64_t value);       /* 0 or -1; not read back */
int collsel_cvar_set(const collsel_cvar *c, int64_t value);         /* 0: written, reads back */
/* 1 when MPI_T cannot write it (scope constant or read-only: Open MPI 4.1 and 5.0 register
 * every allgatherv variable so). */
int collsel_cvar_fixed(const collsel_cvar *c);

/* Items of the variable's MPI_T enumeration (0: it has none). */
int32_t collsel_cvar_enum_count(const collsel_cvar *c);
/* Item i: its value and its name (at most size bytes with the terminator); 0 or -1. Open MPI
 * 4.1 leaks a copy of the name at every call: read an enumeration once. */
int collsel_cvar_enum_item(const collsel_cvar *c, int32_t i, int64_t *value, char *name,
                           int32_t size);
/* The values of its enumeration's items (at most capacity), their count; -1 when it has none. */
int32_t collsel_cvar_enum_values(const collsel_cvar *c, int64_t *values, int32_t capacity);
/* 1 when `value` is among values[0..n) of collsel_cvar_enum_values(), or n < 0 (no enumeration
 * to check against). */
int collsel_cvar_in_values(const int64_t *values, int32_t n, int64_t value);
/* The value named `name`: the enumeration item of that name, or, for a variable without an
 * enumeration (MPICH 4.0's algorithm variables), the place of "name - text" among the entries
 * its description lists; 0 when found. */
int collsel_cvar_named_value(const collsel_cvar *c, const char *name, int64_t *value);

#endif
