"""Intel MPI's algorithm catalogue: the presets of I_MPI_ADJUST_<COLL>, per collective.

Intel MPI 2021.18.1 (PyPI impi-devel/impi-rt) selects a collective's implementation by preset
id: `impi_info -v I_MPI_ADJUST_<COLL>` says "<presetid> - Preset identifier, range: 0-N" and
nothing more (no names). A preset is a composition (I_MPI_ADJUST_<COLL>_COMPOSITION) with a
node-level and a network-level algorithm (..._NODE, ..._NETWORK) and their parameters; 0 is
Intel's own selection logic. Intel's documentation: "Presets are algorithmic derivatives. The
number of presets surpasses the number of algorithms."

Names: `p<id>` for every preset; for bcast and allreduce the internal functions a preset ran
on one node at P = 4, 64 KiB (libmpi.so's symbol table, traced with gdb breakpoints:
docs/guide/intel-mpi.md) are appended, e.g. `p3_scatter_ring_allgather`, where they differ
from what preset 0 runs (presets that fell back to Intel's auto selection there, and the other
12 collectives, keep `p<id>`). A preset may run differently at another P or size.

Parameters: the I_MPI_ADJUST_<COLL>_<PARAM> variables impi_info -e lists beside each preset
variable (radix, segment size, ...); the sweep forces the preset only, Intel's defaults for the
rest.

Forcing: Intel MPI exposes each I_MPI_ADJUST_<COLL> as the MPI_T control variable
MPIR_CVAR_USE_<COLL> (a string, MPI_T_cvar_write accepts it and reads it back), but the value
only takes effect when read in MPI_Init: written at run time it changes nothing, on
MPI_COMM_WORLD or a communicator created afterwards (traced). So a preset is forced per launch,
through the environment (FORCING_VARIABLE), never paired.

Tuning file: I_MPI_TUNING=<file.json> names a collective `coll=<MPI function name>` (Bcast,
Reduce_scatter_block; case matters, an unknown name is ignored silently) and a preset
`<COLL>=<id>`; all 14 names were checked (an out-of-range preset under each makes Intel MPI
print "Incorrect algorithm: <COLL>=99", under an unknown name nothing).
"""

# impi_info -v I_MPI_ADJUST_<COLL>: the largest preset id (0 = Intel's own selection).
_PRESETS = {
    "allgather": 6, "allgatherv": 5, "allreduce": 32, "alltoall": 18, "alltoallv": 9,
    "barrier": 11, "bcast": 22, "exscan": 3, "gather": 5, "reduce": 19, "reduce_scatter": 6,
    "reduce_scatter_block": 4, "scan": 3, "scatter": 5,
}

# Traced on one node (docs/guide/intel-mpi.md): preset -> the coll algorithm functions it ran.
_TRACED = {
    "bcast": {1: "binomial", 2: "scatter_recursive_doubling_allgather",
              3: "scatter_ring_allgather", 4: "binomial", 5: "scatter_recursive_doubling_allgather",
              6: "scatter_ring_allgather", 7: "shumilin", 8: "knomial_tree", 9: "knomial_tree",
              10: "knomial_tree", 11: "knomial_tree", 12: "binomial_knomial_tree",
              13: "binomial_knomial_tree", 14: "binomial_knomial_tree",
              18: "binomial_knomial_tree", 19: "binomial_knomial_tree",
              20: "binomial_knomial_tree", 21: "binomial_knomial_tree",
              22: "binomial_knomial_tree"},
    # 3, 5, 6: a reduce (its functions are inlined, untraced) and then this bcast
    "allreduce": {2: "rabenseifner", 3: "reduce_bcast_scatter_allgather", 4: "rec_multiplying",
                  5: "reduce_bcast_binomial", 6: "reduce_bcast_binomial", 7: "shumilin",
                  8: "nb_ring", 13: "nreduce", 14: "ring", 15: "shumilin", 16: "shumilin",
                  17: "shumilin"},
}

# impi_info -e: the I_MPI_ADJUST_<COLL>_<PARAM> parameters beside each preset variable.
PARAMETERS = {
    "allgather": ("COMPOSITION", "COMPOSITION_DELTA_SEGSIZE", "NETWORK", "NODE",
                  "NETWORK_KNOMIAL_RADIX", "NODE_KNOMIAL_RADIX"),
    "allgatherv": ("COMPOSITION", "NETWORK", "NODE"),
    "allreduce": ("COMPOSITION", "NETWORK", "NODE", "NETWORK_MULTIPLYING_RADIX",
                  "NODE_MULTIPLYING_RADIX", "NETWORK_KNOMIAL_RADIX", "NETWORK_KARY_RADIX",
                  "NODE_KNOMIAL_RADIX", "NODE_KARY_RADIX", "NODE_SHM_GATHER_TYPE",
                  "NODE_SHM_GATHER_RADIX", "NODE_SHM_RELEASE_TYPE", "NODE_SHM_RELEASE_RADIX",
                  "NETWORK_SHUMILIN_SEGSIZE", "NODE_SHUMILIN_SEGSIZE", "ZETA_RADIX",
                  "ZETA_SHM_TYPE", "IOTA_NLEAD", "ETA_MREDUCE", "NODE_NREDUCE_NB_ALLGATHER",
                  "NETWORK_NREDUCE_NB_ALLGATHER", "NODE_NREDUCE_NB_ALLTOALL",
                  "NETWORK_NREDUCE_NB_ALLTOALL", "NODE_NREDUCE_SEGSIZE",
                  "NETWORK_NREDUCE_SEGSIZE"),
    "alltoall": ("COMPOSITION", "NETWORK", "NODE", "COMPOSITION_GAMMA_SEGSIZE",
                 "NETWORK_SCATTERED_THROTTLE", "NODE_SCATTERED_THROTTLE", "LINEAR_THROTTLE",
                 "NETWORK_LINEAR_THROTTLE", "NODE_LINEAR_THROTTLE", "BRUCKS_RADIX",
                 "NETWORK_BRUCKS_RADIX", "NODE_BRUCKS_RADIX"),
    "alltoallv": ("COMPOSITION", "NETWORK", "NODE", "NETWORK_SCATTERED_THROTTLE",
                  "NODE_SCATTERED_THROTTLE"),
    "barrier": ("COMPOSITION", "NETWORK", "NODE", "NETWORK_KNOMIAL_RADIX", "NODE_KNOMIAL_RADIX",
                "NETWORK_KARY_RADIX", "NODE_KARY_RADIX", "ZETA_SHM_TYPE", "ZETA_RADIX",
                "NETWORK_MULTIPLYING_RADIX", "NODE_SHMGR_GATHER_TYPE",
                "NODE_SHMGR_GATHER_RADIX", "NODE_SHMGR_RELEASE_TYPE",
                "NODE_SHMGR_RELEASE_RADIX"),
    "bcast": ("COMPOSITION", "NETWORK", "NODE", "NETWORK_KNOMIAL_RADIX", "NODE_KNOMIAL_RADIX",
              "NETWORK_KNOMIAL_SEGSIZE", "NODE_KNOMIAL_SEGSIZE", "NETWORK_KARY_RADIX",
              "NODE_KARY_RADIX", "NETWORK_KARY_SEGSIZE", "NODE_KARY_SEGSIZE",
              "NETWORK_SHUMILIN_SEGSIZE", "NODE_SHUMILIN_SEGSIZE",
              "NODE_NUMA_AWARE_MEMCPY_ARCH", "EPSILON_NRAIL", "NETWORK_DIRECT_KNOMIAL_RADIX",
              "NETWORK_DIRECT_KNOMIAL_SEGSIZE", "NETWORK_TREE_RADIX", "NETWORK_TREE_SEGSIZE",
              "NETWORK_TREE_TYPE", "NETWORK_TREE_THROTTLE", "NODE_SHMGR_GATHER_TYPE",
              "NODE_SHMGR_GATHER_RADIX", "NODE_SHMGR_RELEASE_TYPE", "NODE_SHMGR_RELEASE_RADIX"),
    "exscan": ("COMPOSITION", "NETWORK", "NODE"),
    "gather": ("COMPOSITION", "NETWORK", "NODE", "NODE_BINOMIAL_SEGMENTED_SEGSIZE",
               "NETWORK_BINOMIAL_SEGMENTED_SEGSIZE"),
    "reduce": ("COMPOSITION", "NETWORK", "NODE", "NETWORK_KARY_RADIX", "NODE_KARY_RADIX",
               "NETWORK_KARY_SEGSIZE", "NODE_KARY_SEGSIZE", "NETWORK_KARY_NBUFFERS",
               "NODE_KARY_NBUFFERS", "NETWORK_KNOMIAL_RADIX", "NODE_KNOMIAL_RADIX",
               "NETWORK_KNOMIAL_SEGSIZE", "NODE_KNOMIAL_SEGSIZE", "NETWORK_KNOMIAL_NBUFFERS",
               "NODE_KNOMIAL_NBUFFERS", "NETWORK_RING_SEGSIZE", "NODE_RING_SEGSIZE",
               "NODE_GATHER_RELEASE_SHM_GATHER_TYPE", "NODE_GATHER_RELEASE_SHM_GATHER_RADIX",
               "NODE_GATHER_RELEASE_SHM_RELEASE_TYPE", "NODE_GATHER_RELEASE_SHM_RELEASE_RADIX",
               "NODE_HEAP_SEGSIZE"),
    "reduce_scatter": ("COMPOSITION", "NETWORK", "NODE"),
    "reduce_scatter_block": ("COMPOSITION", "NETWORK", "NODE"),
    "scan": ("COMPOSITION", "NETWORK", "NODE"),
    "scatter": ("COMPOSITION", "NETWORK", "NODE", "NETWORK_KNOMIAL_RADIX",
                "NODE_KNOMIAL_RADIX"),
}


def _name(collective, preset):
    if preset == 0:
        return "auto"
    traced = _TRACED.get(collective, {}).get(preset)
    return f"p{preset}_{traced}" if traced else f"p{preset}"


# {collective: {preset id: name}}: the registry of family `intel` (core.mpi.algorithms).
INTEL_ALGORITHMS = {c: {p: _name(c, p) for p in range(top + 1)} for c, top in _PRESETS.items()}


def forcing_variable(collective):
    """The environment variable that forces a preset of `collective`, read in MPI_Init."""
    return f"I_MPI_ADJUST_{collective.upper()}"


def tuning_file_keys(collective):
    """(the `coll=` key, the leaf name) of `collective` in Intel MPI's JSON tuning file."""
    return f"coll={collective.capitalize()}", collective.upper()


OPEN = -1          # the tuning file's "no upper bound" (and "any" for ppn and comm_id)


def tuning_document(collective, p_ranges):
    """One collective's part of Intel MPI's JSON tuning file (I_MPI_TUNING), as a dict:
    `p_ranges` is [(comm_size bound, [(msg_size bound, preset), ...]), ...], each bound inclusive
    and ascending, OPEN last for no bound (docs/guide/intel-mpi.md: a value takes the first entry
    it does not exceed). The emitter (`--target intel-json`) and the by-size sweep, which forces
    one preset per message size, both write it."""
    key, leaf = tuning_file_keys(collective)
    body = {f"comm_size={p}": {"comm_id=-1": {f"msg_size={m}": {f"{leaf}={preset}": {}}
                                              for m, preset in sizes}}
            for p, sizes in p_ranges}
    return {key: {"ppn=-1": body}}
