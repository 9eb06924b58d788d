/* libcollsel internals with MPI: forcing a method in this MPI
 * (force_openmpi.c or force_mpich.c, one of them compiled per MPI), the per-communicator state
 * (comm.c) and the interposed functions (pmpi.c). Not installed. */
#ifndef LC_MPI_H
#define LC_MPI_H

#include <mpi.h>

#include "collsel_cvar.h"
#include "collsel_pmpi.h"
#include "lc_core.h"

#if defined(OPEN_MPI)
#define LC_FAMILY COLLSEL_TREE_FAMILY_OPENMPI
#else
#define LC_FAMILY COLLSEL_TREE_FAMILY_MPICH
#endif

/* ---- per-communicator methods ---- */

/* How a method of a communicator's rule list runs; pmpi.c's run_bcast / run_reduce are the one
 * place a call dispatches on the kind. */
enum lc_method_kind {
    LC_METHOD_DEFER = 0,   /* algorithm 0, or a method unusable at this size (lc_force_usable):
                              the call goes to the user's communicator as it is */
    LC_METHOD_FLAT = 1,    /* one of the MPI's own algorithms, forced */
    LC_METHOD_HIER = 2     /* G groups of consecutive ranks, inner and outer level (hier.c) */
};

struct lc_method {
    enum lc_method_kind kind;
    collsel_tree_choice choice;
    MPI_Comm comm;           /* where the call runs: Open MPI's shadow, else the user's */
    int owns_comm;           /* comm is a shadow to free with the user's communicator */
    int64_t cvar_value;      /* MPICH: MPIR_CVAR_<COLL>_INTRA_ALGORITHM for this method */
    struct lc_hier *hier;    /* LC_METHOD_HIER: its communicators and levels (hier.c) */
    int ready;               /* 1: usable (made, or nothing to make); 0: not made yet (made at
                                its first use, lc_comm_make); -1: making it failed: calls pass */
};

/* A hierarchical method on a communicator of P ranks: G' = min(G, P) groups, rank r in group
 * r * G' / P, each group's lowest rank its leader. */
struct lc_hier {
    int groups, size, rank;
    MPI_Comm group;              /* this rank's group (a split of the user's communicator) */
    MPI_Comm leaders;            /* the leaders, in group order; MPI_COMM_NULL elsewhere */
    struct lc_method inner;      /* flat or defer, on `group` (Open MPI: a shadow of it) */
    struct lc_method outer;      /* flat or defer, on `leaders` (leaders only) */
};

/* ---- force_openmpi.c / force_mpich.c: forcing a flat method in this MPI ---- */

/* At MPI_Init, after MPI_T_init_thread: 0 when every method of the loaded trees can be forced,
 * else 1 with one line in msg. Local (no communication). */
int lc_force_init(const collsel_treeset *trees, char *msg, size_t msg_size);
/* NULL when this MPI forces the methods of coll's tree (after lc_force_init), else why not, one
 * word for the trace (Open MPI: "constant", 4.1's allgatherv algorithm variable; MPICH:
 * "no-mpich-names", a collective collsel has no MPICH algorithm names for): its calls pass. */
const char *lc_force_refusal(enum collsel_mpi_coll coll);
/* What a method may need of a call; a call that lacks it passes (pass=noncommutative,
 * pass=unequal-counts). */
enum lc_need { LC_NEED_COMMUTATIVE = 1, LC_NEED_EQUAL_COUNTS = 2 };
/* The needs (enum lc_need bits) of method c of coll. */
unsigned lc_force_needs(enum collsel_mpi_coll coll, const collsel_tree_choice *c);
/* 0 when this MPI refuses the forced method c on comm_size ranks (the call would fail: Open MPI's
 * two_proc algorithms at P != 2, core/mpi/fallbacks.py); it then defers, traced as pass=unusable. */
int lc_force_usable(enum collsel_mpi_coll coll, const collsel_tree_choice *c, int comm_size);
/* What the flat method m->choice needs on the user's communicator comm (m->comm = comm and
 * m->owns_comm = 0 on entry). Open MPI: the shadow communicator (collective over comm); MPICH:
 * m->cvar_value. MPI_SUCCESS or an MPI error code. */
int lc_force_prepare(enum collsel_mpi_coll coll, MPI_Comm comm, struct lc_method *m);
/* Around a call on m->comm (MPICH: the per-call variable write and reset; Open MPI: nothing). */
void lc_force_enter(enum collsel_mpi_coll coll, const struct lc_method *m);
void lc_force_leave(enum collsel_mpi_coll coll, const struct lc_method *m);
void lc_force_finalize(void);

/* ---- hier.c: hierarchical methods ---- */

/* Prepares m (m->choice a hierarchical decision, m->comm = comm): splits comm into the groups
 * and the leaders and prepares both levels (lc_force_prepare); collective over comm. *made:
 * the communicators made (for the counts). MPI_SUCCESS or an MPI error code. */
int lc_hier_prepare(enum collsel_mpi_coll coll, MPI_Comm comm, struct lc_method *m, int *made);
/* Frees what lc_hier_prepare made; the number of communicators freed. */
int lc_hier_release(struct lc_method *m);
/* The calls: bcast among the leaders (root's group's leader; a root that is no leader first
 * sends to it), then inside the groups; reduce inside the groups, then among the leaders (a
 * root that is no leader receives the result from its leader). Commutative ops only. */
int lc_hier_bcast(const struct lc_method *m, void *buf, int count, MPI_Datatype type, int root);
int lc_hier_reduce(const struct lc_method *m, const void *sendbuf, void *recvbuf, int count,
                   MPI_Datatype type, MPI_Op op, int root);
/* One level's call on its communicator: forced (lc_force_enter/leave) or deferred. */
int lc_level_bcast(const struct lc_method *m, void *buf, int count, MPI_Datatype type, int root);
int lc_level_reduce(const struct lc_method *m, const void *sendbuf, void *recvbuf, int count,
                    MPI_Datatype type, MPI_Op op, int root);

/* ---- pmpi.c, for fortran.c: the Fortran bindings that go below MPI_Init / MPI_Finalize ---- */
void lc_mpit_before_init(int required); /* before the MPI's own init (Open MPI: MPI_T) */
void lc_pmpi_started(int rc);   /* after the MPI's own init returned rc: the library starts */
void lc_pmpi_finishing(void);   /* before the MPI's own finalize: the library stops */

/* ---- comm.c: state cached on a communicator ---- */
struct lc_coll_state {
    int resolved;            /* 0: not yet; 1: rules and methods below; -1: pass through (the
                                resolution failed on some rank: out of memory, an MPI error) */
    int32_t ppn;             /* -1: the tree has no third axis */
    struct lc_rules rules;
    struct lc_method *methods;   /* one per rules.choices entry */
};

struct lc_comm_state {
    int32_t size, rank;
    int inter;
    struct lc_coll_state coll[COLLSEL_MPI_NCOLL];
};

/* The attribute key; MPI_SUCCESS or an error code. thread_multiple: shadows are made one
 * communicator at a time (deadlock-free: comm.c making_begin). */
int lc_comm_init(int thread_multiple);
void lc_comm_finalize(void);   /* MPI_COMM_WORLD's and MPI_COMM_SELF's state, the key */
/* The state of comm, attached on first use (local); NULL when the MPI refuses the communicator
 * (the call passed through reports it). Out of memory aborts: one rank passing through while the
 * others force would leave them on different algorithms. */
struct lc_comm_state *lc_comm_state(MPI_Comm comm);
/* Rules and methods of one collective (sets s->coll[coll].resolved); collective over comm.
 * The methods are described, not made (m->ready 0 where something is to be made). */
void lc_comm_resolve(struct lc_comm_state *s, MPI_Comm comm, enum collsel_mpi_coll coll,
                     const collsel_tree *tree, int trace);
/* Makes method m of comm's rule list for coll at its first use (collective over comm); 1 when
 * it is ready, 0 when making it failed (m->ready -1). */
int lc_comm_make(MPI_Comm comm, enum collsel_mpi_coll coll, struct lc_method *m);
void lc_comm_counts(collsel_pmpi_counts *counts);
/* comm's processes per node: size / (its shared-memory nodes), rounded down; collective over
 * comm. MPI_SUCCESS or an MPI error code. */
int lc_comm_ppn(MPI_Comm comm, int size, int32_t *ppn);

/* ---- census.c: census mode (COLLSEL_CENSUS=PREFIX), what `collsel profile` reads ---- */
void lc_census_begin(void);        /* before the MPI's own init: the wall clock starts */
void lc_census_started(int rc);    /* after it returned rc */
int lc_census_on(void);
/* Around each collective the program calls, on every rank of comm: enter right before the
 * MPI's call (m = bytes, as the trees are queried), leave right after it. */
void lc_census_enter(enum collsel_mpi_coll coll, MPI_Comm comm, uint64_t bytes);
void lc_census_leave(void);
void lc_census_finish(void);       /* before the MPI's own finalize: PREFIX.<rank>.json */

#endif
