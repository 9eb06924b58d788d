"""cluster.json: what `up` built, read back by `load()` (sweeps, emitters and models use it),
and which of its nodes are gone since (`lost_text`)."""
import json
import os

from collsel.core.io.files import write_file
from collsel.errors import InputError
from collsel.cluster import names
from collsel.cluster.config import rate_bits
from collsel.cluster.layout import Layout
from collsel.cluster.processes import NETNS_DIR

VERSION = 1


class Node:
    """One emulated node (attributes, or ["key"] as in cluster.json)."""
    FIELDS = ("name", "netns", "address", "rate", "cpu_share", "cpus")

    def __init__(self, record):
        for key in self.FIELDS:
            setattr(self, key, record[key])

    def __getitem__(self, key):
        return getattr(self, key)

    def as_dict(self):
        return {k: getattr(self, k) for k in self.FIELDS}

    def __repr__(self):
        return f"Node({self.as_dict()})"

    @property
    def rate_bits(self):
        """The node's link rate in bits per second (what a load generator shares out)."""
        return rate_bits(self.rate)


class Cluster:
    """cluster.json's fields as attributes, plus the state directory and node names."""

    def __init__(self, record, state_dir):
        self.record = record
        self.state_dir = state_dir
        for key, value in record.items():
            setattr(self, key, value)
        self.nodes = [Node(n) for n in record["nodes"]]
        self.env_file = Layout(state_dir).env

    @property
    def node_names(self):
        return [n.name for n in self.nodes]

    @property
    def slots(self):
        """Ranks the hostfile offers (a slot per CPU of each node): Open MPI starts no more."""
        return sum(n.cpus for n in self.nodes)

    def lost_nodes(self):
        """The nodes whose network namespace is gone: a node lost while the cluster is up
        (its links went with the namespace, nothing can reach it)."""
        return [n for n in self.nodes if not os.path.exists(os.path.join(NETNS_DIR, n.netns))]

    def lost_text(self):
        """What a failed launch says of the lost nodes: '' when none is."""
        gone = self.lost_nodes()
        if not gone:
            return ""
        one = len(gone) == 1
        return (f"node{'' if one else 's'} {','.join(n.name for n in gone)} of the emulated "
                f"cluster {'is' if one else 'are'} gone (no network namespace"
                f"{'' if one else 's'} {','.join(n.netns for n in gone)})")

    def describe(self):
        """One line: the link and CPU configuration (for a table's metadata)."""
        rates = sorted({n.rate for n in self.nodes})
        shares = sorted({n.cpu_share for n in self.nodes})
        rate = (f"{rates[0]} every node" if len(rates) == 1
                else ",".join(f"{n.name}={n.rate}" for n in self.nodes))
        share = ("cpu unlimited" if shares == [1.0] else "cpu share "
                 + ",".join(f"{n.name}={n.cpu_share:g}" for n in self.nodes))
        return (f"emulated {len(self.nodes)} nodes ({self.nodes[0].cpus} shared cores), "
                f"tbf {rate} each way, no propagation delay, {share}")


def record(desired_config, layout, launch_env, mpich_args):
    return {"version": VERSION, "subnet": names.SUBNET,
            "bridge": {"name": names.BRIDGE, "address": names.BRIDGE_ADDRESS},
            **desired_config,
            "hostfile": layout.hostfile, "agent": layout.agent,
            "slurm_conf": layout.slurm_conf, "partition": names.PARTITION,
            "launch_env": launch_env, "mpich_launch_args": mpich_args}


def save(layout, rec):
    write_file(layout.cluster_json, json.dumps(rec, indent=1) + "\n")


def read(state_dir):
    """cluster.json's record, or None when there is none."""
    try:
        with open(Layout(state_dir).cluster_json) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise InputError(f"{Layout(state_dir).cluster_json}: unreadable: {e}") from None


def load(state_dir=None):
    """The cluster that is up at `state_dir` (default: $COLLSEL_CLUSTER_DIR or
    /var/lib/collsel/cluster); InputError when none is."""
    state_dir = names.state_dir(state_dir)
    rec = read(state_dir)
    if rec is None:
        raise InputError(f"no emulated cluster is up at {state_dir}: run `collsel cluster up`")
    if rec.get("version") != VERSION:
        raise InputError(f"{Layout(state_dir).cluster_json}: version {rec.get('version')!r}, "
                         f"expected {VERSION}")
    return Cluster(rec, state_dir)
