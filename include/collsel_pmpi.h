/* libcollsel: collsel tree decisions inside unmodified MPI programs (PMPI interposition).
 *
 *   LD_PRELOAD=libcollsel.so COLLSEL_TREES=DIR mpirun ... ./app
 *
 * libcollsel.so defines MPI_Init, MPI_Init_thread, MPI_Finalize and the 14 collectives coll/tuned
 * can force (MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Allgather(v), MPI_Alltoall(v),
 * MPI_Barrier, MPI_Exscan, MPI_Gather, MPI_Reduce_scatter(_block), MPI_Scan, MPI_Scatter; under
 * an MPI-4 MPI also their MPI_<Coll>_c large-count variants, decided alike) and forwards them to
 * PMPI_*; built once per MPI (build/libcollsel/{openmpi,mpich}/libcollsel.so,
 * `make libcollsel`): a library built for one MPI must not be loaded by the other.
 *
 * ------------------------------------------------------------------------------------------
 * Environment (read once, in MPI_Init / MPI_Init_thread)
 *
 * COLLSEL_TREES  A directory: every file in it whose name ends in ".bin"; or a ':'-separated
 *                list of files. Each is a blob of `collsel emit --target blob` (any name); the
 *                collective in its header says what it serves: at most one tree per
 *                collective ("reduce_scat_blk": reduce_scatter_block), blobs of other
 *                collectives are skipped. The tree's algorithm ids
 *                must be the running MPI's family (Open MPI coll/tuned ids for the Open MPI
 *                build, MPICH ids, i.e. a tree built from a table with `# algorithm_family=mpich`,
 *                for the MPICH build): the blob does not say its family, so the library checks
 *                only that every method is one this MPI can force. A 3-axis tree's third axis is
 *                taken as ppn (`collsel build --z ppn`).
 * COLLSEL_TRACE  "1": one line on stderr per collective call (see Trace below).
 *
 * Anything wrong at MPI_Init (COLLSEL_TREES unset, a file missing or not a valid blob, two trees
 * of one collective, a method this MPI cannot force, Open MPI's coll_tuned_use_dynamic_rules
 * off, ranks holding different trees, MPI_THREAD_MULTIPLE): the lowest rank concerned prints
 * ONE line "libcollsel: ...; passing every collective through" on stderr and the
 * program runs with the MPI's own selection (collsel_pmpi_active() == 0): a tuning file must not
 * stop a job. All ranks agree on this at MPI_Init (reductions over MPI_COMM_WORLD, including the
 * CRC-32 of every tree), so they never decide differently. Later the library aborts only where a
 * rank could otherwise leave the others' algorithm: out of memory for a communicator's state, or
 * a control variable that took at MPI_Init refusing a write.
 *
 * ------------------------------------------------------------------------------------------
 * Per call. A communicator's decisions are resolved at its first call of the collective, in
 * which all its ranks take part: the tree is asked for the communicator's size P (and, for a
 * 3-axis tree, ppn = P / nodes rounded down, nodes = leaders of MPI_Comm_split_type SHARED) at
 * every message-size cell, giving a short rule list "from m bytes on: method"; what its methods
 * need is made then and cached in a communicator attribute whose delete callback frees it with
 * the communicator (MPI_Finalize deletes MPI_COMM_WORLD's). A call then costs one attribute
 * lookup, one rule lookup (m in bytes as the tree's m axis means for the collective,
 * docs/guide/libcollsel.md; bcast: count x MPI_Type_size_x) and the call itself:
 *   Open MPI  one shadow communicator per distinct forced method (MPI_Comm_create over the
 *             communicator's group, so no user attribute is copied), made right after the
 *             method was written into coll_tuned_<coll>_algorithm, _segmentsize, _tree_fanout
 *             and _chain_fanout through MPI_T, which are then reset: coll/tuned copies them into
 *             a communicator when it is created. Needs coll_tuned_use_dynamic_rules=1 at launch
 *             (--mca coll_tuned_use_dynamic_rules 1): Open MPI reads it only at start-up.
 *             Errors of a served call are raised on the shadow, which inherited the user's
 *             error handler when it was made.
 *   MPICH     no shadow: MPIR_CVAR_<COLL>_INTRA_ALGORITHM is written through MPI_T right before
 *             the call on the user's communicator and its launch value right after, so MPICH's
 *             internal bcasts and reduces (inside other collectives) keep their own choice. An
 *             algorithm MPICH cannot run there falls back to its own choice, silently unless
 *             MPIR_CVAR_COLLECTIVE_FALLBACK=error.
 *   Hierarchical leaves (blob format 2, Open MPI only: G groups, inner and outer algorithm; see
 *             collsel_tree.h): at the communicator's first call, MPI_Comm_split into G' = min(G,
 *             P) groups of consecutive ranks (rank r in group r * G' / P) and the groups' lowest
 *             ranks (the leaders), each level's method forced on its own communicator as a flat
 *             one; bcast among the leaders then inside the groups, reduce inside the groups
 *             then among the leaders; a root that is not its group's leader sends to (bcast) or
 *             receives from (reduce) the leader first. All of them are freed with the user's
 *             communicator and count as shadows below.
 *   A format-2 blob names its algorithm family: a tree of the other MPI is refused at MPI_Init.
 * Passed through untouched (decided alike on every rank): inter-communicators, P = 1, a
 * collective without a tree, non-commutative ops (MPI_Op_commutative) where the decided
 * algorithm needs commutativity, allgatherv and reduce_scatter with unequal counts, Open MPI
 * 4.1's allgatherv (its algorithm variable is constant), a two_proc method at P != 2 (Open MPI
 * fails it), a collective MPICH has no names for here, tree leaves of algorithm 0 (defer to the
 * MPI). MPI_IN_PLACE is served (it appears at the root
 * only, so passing it through would split the ranks between two algorithms).
 *
 * Threads. MPI_THREAD_SINGLE, FUNNELED and SERIALIZED are served: the library's state changes
 * only inside MPI calls. MPI_THREAD_MULTIPLE (provided) is refused with the one line above:
 * forcing is process-global state (Open MPI: the control variables read when another thread
 * creates a communicator; MPICH: the variable every thread's next MPI_Bcast reads), so a
 * concurrent call on another communicator could run, or be created with, the wrong method.
 *
 * Trace (COLLSEL_TRACE=1), rank = rank in the communicator, ppn = - for 2-axis trees:
 *   collsel-trace <collective> rank=R comm_size=P msg_size=M ppn=Z alg=A segsize=S faninout=F
 *   collsel-trace <collective> rank=R comm_size=P msg_size=M pass=<reason>
 *     reasons: off (library inactive), no-tree, inter, size1, noncommutative, unequal-counts,
 *     constant, unusable, no-mpich-names (docs/guide/libcollsel.md), invalid (the MPI
 *     refuses the communicator: the call reports it), unresolved (the communicator's first
 *     call could not make its methods on some rank)
 *   collsel-trace resolve <collective> rank=R comm_size=P ppn=Z rules=FROM:A/S/F,...
 * alg=0 is a defer leaf: the call went to the MPI's own selection.
 * ------------------------------------------------------------------------------------------
 */
#ifndef COLLSEL_PMPI_H
#define COLLSEL_PMPI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COLLSEL_PMPI_VERSION_MAJOR 1
#define COLLSEL_PMPI_VERSION_MINOR 0
#define COLLSEL_PMPI_VERSION_PATCH 0

/* What the library holds now (in this process). */
typedef struct collsel_pmpi_counts {
    int64_t shadows_live;    /* shadow (and hierarchical) communicators made, not yet freed */
    int64_t shadows_made;    /* since MPI_Init */
    int64_t states_live;     /* communicators carrying libcollsel state */
    int64_t state_bytes;     /* heap bytes of that state (rules and method tables) */
} collsel_pmpi_counts;

/* 1 when the library serves calls, 0 when it passes everything through (see above). */
int collsel_pmpi_active(void);

/* Fills *counts (nothing for NULL). For tests and overhead reports; a program that may run
 * without the library finds it with dlsym(RTLD_DEFAULT, "collsel_pmpi_counts_get"). */
void collsel_pmpi_counts_get(collsel_pmpi_counts *counts);

#ifdef __cplusplus
}
#endif

#endif
