"""The emulated cluster: network namespaces as nodes on a bridge with rate-shaped links, optional
per-node CPU shares, an ssh stand-in agent for MPI launchers, and a real Slurm (munged, slurmctld,
one slurmd per node). `collsel cluster up|down|status` drives it (lifecycle.py); everything else
reads what is up through `load()`."""
from collsel.cluster.state import Cluster, Node, load  # noqa: F401
