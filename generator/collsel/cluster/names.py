"""Every name and address the emulated cluster uses, and how `down` recognises its leftovers.

One cluster at a time: the names are fixed and all start with `collsel`, so `down` finds what a
crashed `up` left (namespaces, links, cgroups) by name alone, without the state directory. The
addresses are in 198.18.0.0/24 (RFC 2544's benchmarking range), which no real network uses.
"""
import os

from collsel.errors import InputError

PREFIX = "collsel"
SUBNET = "198.18.0.0/24"
PREFIX_LEN = 24
BRIDGE = "collsel-br"
BRIDGE_ADDRESS = "198.18.0.254"
CTL_HOST = "ctl"                   # slurmctld's host name (own UTS namespace), bridge address
PARTITION = "collsel"
NODE_IFACE = "eth0"                # the node's end of its veth, inside its namespace
MAX_NODES = 64                     # addresses 1..64; veth names stay within 15 characters
DEFAULT_STATE_DIR = "/var/lib/collsel/cluster"
STATE_DIR_ENV = "COLLSEL_CLUSTER_DIR"
# Where `up` records its state directory before it creates anything, so that `down` given no
# directory (or another one) still finds the daemons of a crashed `up` by their command lines.
RUN_MARKER = "/run/collsel-cluster"


def state_dir(given=None):
    """The state directory: `given`, else $COLLSEL_CLUSTER_DIR, else the default; absolute."""
    return os.path.abspath(given or os.environ.get(STATE_DIR_ENV) or DEFAULT_STATE_DIR)


def check_state_dir(path):
    """InputError for a state directory inside /tmp: every node's slurmd has a private /tmp, so
    it would not see its configuration there."""
    real = os.path.realpath(path)
    if real == "/tmp" or real.startswith("/tmp/"):
        raise InputError(f"--state-dir {path}: must be outside /tmp (each node has a private "
                         "/tmp)")
    return path


def node_name(k):
    return f"n{k}"


def netns(k):
    return f"{PREFIX}-n{k}"


def host_veth(k):
    """The bridge-side end of node k's veth (Linux limits interface names to 15 characters)."""
    return f"{PREFIX}-n{k}-h"


def address(k):
    return f"198.18.0.{k}"


def cgroup(node):
    """The cpu cgroup of node `node` ("n1")."""
    return f"{PREFIX}-{node}"


def ours(name):
    return name.startswith(PREFIX)


def netns_from_listing(text):
    """Namespace names ours in `ip netns list` output ("collsel-n1 (id: 3)" lines)."""
    names = (line.split()[0] for line in text.splitlines() if line.strip())
    return sorted(n for n in names if ours(n))


def links_from_listing(text):
    """Interface names ours in `ip -o link show` output ("7: collsel-n1-h@if6: <...> ..." lines),
    bridge last so that its ports go first."""
    names = set()
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            name = parts[1].strip().split("@")[0]
            if ours(name):
                names.add(name)
    return sorted(names, key=lambda n: (n == BRIDGE, n))


def cgroups_from_listing(entries):
    """Our cgroup directory names among the entries of the cpu controller's root."""
    return sorted(e for e in entries if ours(e))
