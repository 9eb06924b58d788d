"""Placing the model experiments on the emulated cluster (`collsel cluster up`): Open MPI's
mpirun with an explicit host list, started through the cluster's launch agent with its TCP
settings (Cluster.launch_env), so one launch can put each rank on the node the experiment needs.

A placement is (nodes, ppn):

* ppn >= 1: nodes x ppn ranks in blocks, rank r on node r // ppn (Open MPI's by-slot mapping, the
  sweep's --nodes/--ppn and what models.topology.node_of assumes). nodes = 1 is one node: every
  link is shared memory (c = 0).
* ppn = ROOT_ALONE (0): rank 0 alone on the first node, the P - 1 others in blocks, as even as
  possible, over the next nodes - 1 nodes: every link of the root crosses nodes, the network
  NBFT of Nuriyev et al. 2022 section 5.1 (c = 1 only).

Every node of the emulated cluster shares this machine's cores, so ranks are never bound and
yield when idle (as the local launcher does beyond the core count).
"""
import numpy as np

from collsel.sources.measure import launchers

ROOT_ALONE = 0


def host_counts(P, nodes, ppn):
    """Ranks on each node used, in rank order (blocks)."""
    if ppn == ROOT_ALONE:
        if nodes < 2 or P < 2:
            raise ValueError("the root-alone placement needs 2 nodes and 2 ranks or more")
        rest, others = P - 1, min(nodes - 1, P - 1)
        return [1] + [rest // others + (i < rest % others) for i in range(others)]
    if nodes * ppn != P:
        raise ValueError(f"{nodes} nodes x {ppn} ranks per node is not P = {P}")
    return [ppn] * nodes


def rank_nodes(P, nodes, ppn):
    """The node index (0-based) of every rank."""
    counts = host_counts(P, nodes, ppn)
    return np.repeat(np.arange(len(counts)), counts)


def describe(nodes, ppn):
    return (f"root alone on 1 node, the rest over {nodes - 1}" if ppn == ROOT_ALONE
            else f"{nodes}x{ppn}")


class ClusterLauncher(launchers.Launcher):
    """mpirun across the nodes of an emulated cluster (a collsel.cluster.Cluster)."""
    name = "cluster"

    def __init__(self, cluster, program=None):
        super().__init__(program or launchers.default_program("openmpi"))
        self.cluster = cluster
        self.nodes = list(cluster.node_names)

    def hosts(self, P, nodes, ppn):
        """Host name of every rank."""
        if nodes > len(self.nodes):
            raise ValueError(f"{nodes} nodes asked for, the cluster has {len(self.nodes)}")
        return [self.nodes[i] for i in rank_nodes(P, nodes, ppn)]

    def mapping(self, P, nodes=1, ppn=None):
        counts = host_counts(P, nodes, P if ppn is None else ppn)
        return ("--host " + ",".join(f"{h}:{c}" for h, c in zip(self.nodes, counts))
                + " --map-by slot --bind-to none")

    def command(self, nprocs, mca, bench_argv, nodes=1, ppn=None):
        argv = [self.program, *launchers._root_flag(), "-np", str(nprocs),
                *self.mapping(nprocs, nodes, ppn).split(), "--mca", "mpi_yield_when_idle", "1",
                *launchers._mca_flags(mca), *self.extra, *bench_argv]
        return argv, {k: str(v) for k, v in self.cluster.launch_env.items()}
