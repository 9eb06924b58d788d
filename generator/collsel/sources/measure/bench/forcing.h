/* Forcing the methods of --methods (paired mode) through MPI_T control variables (the shared
 * collsel_cvar.c, as libcollsel forces them): Open MPI, one communicator per method, dup'ed
 * while coll/tuned's variables name it; MPICH, the algorithm variable written around every call
 * of a method. A variable missing, not writable or reading back different: exit 6. */
#ifndef FORCING_H
#define FORCING_H

#include "bench.h"
#include "collsel_cvar.h"

struct forcing {
    collsel_cvar alg;           /* MPICH: written before every call of a method */
    int alg_open;
    int per_call;
    char fallback[MAX_TOKEN];   /* MPICH: MPIR_CVAR_COLLECTIVE_FALLBACK, for the header */
};

/* All ranks, after MPI_T_init_thread: every method's communicator (o->methods[k].comm, and the
 * hierarchical ones' group and leaders), checked and forced; 0, 2 or 6 (all ranks agree). */
int forcing_setup(struct options *o, struct forcing *fs, int rank);
/* Around the call of method k (on = 1 before, 0 after), outside the timed region: MPICH sets the
 * method's algorithm and puts the launch's own back, so the harness's barriers, which MPICH
 * builds from bcast internally, do not run the forced algorithm. k < 0 (per-launch mode) and
 * Open MPI: nothing, the communicator carries the method. */
void forcing_select(const struct options *o, const struct forcing *fs, int k, int on);
/* Before MPI_T_finalize. */
void forcing_finish(struct forcing *fs);

#endif
