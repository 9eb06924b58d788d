"""What the user asked for, checked before anything is created: node count, link rates (what
tc's tbf accepts, within sane bounds) and CPU shares. Pure: no root actions."""
import os
import re

from collsel.errors import InputError
from collsel.cluster import names

DEFAULT_RATE = "1gbit"
# tbf's token bucket: one burst for every rate (at least a 64 KiB GSO packet, so TCP segments
# offloaded by the veth pass whole) and the longest a packet may wait before it is dropped.
TBF_BURST = "256kb"
TBF_LATENCY = "50ms"

_RATE = re.compile(r"^(\d+(?:\.\d+)?)([kmgt]i?)?(bit|bps)$")
_SCALE = {None: 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
          "ki": 2 ** 10, "mi": 2 ** 20, "gi": 2 ** 30, "ti": 2 ** 40}
MIN_RATE_BITS = 1e6      # below 1 mbit an MPI launch's own traffic takes minutes
MAX_RATE_BITS = 100e9


def rate_bits(text):
    """Bits per second of a tc rate ("100mbit", "1gbit", "12.5mbps" = bytes/s); InputError names
    what tc would not take or what is out of range."""
    m = _RATE.match(text.strip().lower())
    if not m:
        raise InputError(f"link rate {text!r}: not a tc rate (a number and a unit: bit kbit mbit "
                         "gbit tbit, bps kbps mbps gbps = bytes/s, kibit mibit ... = powers of 2)")
    bits = float(m.group(1)) * _SCALE[m.group(2)] * (8 if m.group(3) == "bps" else 1)
    if not MIN_RATE_BITS <= bits <= MAX_RATE_BITS:
        raise InputError(f"link rate {text!r}: {bits:g} bit/s is outside 1mbit..100gbit")
    return bits


def _per_node(text, what, node_names):
    """{node: value text} from "n1=V,n2=V"; names must be the cluster's nodes, each once."""
    out = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        node, sep, value = item.partition("=")
        node, value = node.strip(), value.strip()
        if not sep or not value:
            raise InputError(f"{what} {item!r}: expected NODE=VALUE (e.g. n1=...)")
        if node not in node_names:
            raise InputError(f"{what} {item!r}: no node {node!r} (nodes are "
                             f"{node_names[0]}..{node_names[-1]})")
        if node in out:
            raise InputError(f"{what}: node {node} given twice")
        out[node] = value
    return out


def cpu_share(text):
    """A node's share of the machine's CPU time, in (0, 1]; 1 = unlimited."""
    try:
        share = float(text)
    except ValueError:
        share = None
    if share is None or not 0 < share <= 1:
        raise InputError(f"cpu share {text!r}: expected a number in (0, 1] (the node's share of "
                         "the machine's CPU time; 1 = unlimited)")
    return share


def desired(nodes, rate=None, rates="", cpu_shares="", cpus=None):
    """The configuration `up` builds: {"nodes": [...], "link": {...}} as cluster.json holds it."""
    if not 1 <= nodes <= names.MAX_NODES:
        raise InputError(f"--nodes {nodes}: expected 1..{names.MAX_NODES}")
    node_names = [names.node_name(k) for k in range(1, nodes + 1)]
    rate = (rate or DEFAULT_RATE).strip().lower()
    rate_bits(rate)
    per_rate = _per_node(rates, "--rates", node_names)
    for value in per_rate.values():
        rate_bits(value)
    shares = {n: cpu_share(v) for n, v in _per_node(cpu_shares, "--cpu-shares",
                                                     node_names).items()}
    cpus = cpus or os.cpu_count() or 1
    return {
        "nodes": [{"name": names.node_name(k), "netns": names.netns(k),
                   "address": names.address(k),
                   "rate": per_rate.get(names.node_name(k), rate).lower(),
                   "cpu_share": shares.get(names.node_name(k), 1.0), "cpus": cpus}
                  for k in range(1, nodes + 1)],
        "link": {"qdisc": "tbf", "burst": TBF_BURST, "latency": TBF_LATENCY},
    }
