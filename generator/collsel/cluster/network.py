"""The cluster's network: a bridge in the root namespace, one network namespace per node joined
to it by a veth pair, each direction of each node's link shaped by tbf (egress on the node's end,
ingress on the bridge-side end, which is that end's egress). The namespaces get only the
connected route of 198.18.0.0/24 (no default route, no forwarding, no NAT), so nothing they send
can leave that range; IPv6 is off on every interface of theirs (no link-local chatter)."""
import os

from collsel.cluster import names
from collsel.cluster.system import run


def _tbf(rate, link):
    return ["root", "tbf", "rate", rate, "burst", link["burst"], "latency", link["latency"]]


# Run by sh inside a namespace: IPv6 off on all its interfaces (when the kernel has IPv6).
_NO_IPV6 = ('for f in /proc/sys/net/ipv6/conf/*/disable_ipv6; do [ -e "$f" ] && echo 1 > "$f"; '
            'done; true')


def _no_ipv6_here(interface):
    """Root namespace: IPv6 off on one of our interfaces."""
    path = f"/proc/sys/net/ipv6/conf/{interface}/disable_ipv6"
    if os.path.exists(path):
        with open(path, "w") as f:
            f.write("1")


def bridge_commands():
    return [["ip", "link", "add", names.BRIDGE, "type", "bridge"],
            ["ip", "addr", "add", f"{names.BRIDGE_ADDRESS}/{names.PREFIX_LEN}",
             "dev", names.BRIDGE],
            ["ip", "link", "set", names.BRIDGE, "up"]]


def node_commands(k, node, link):
    """The commands that make node k (`node` as cluster.json holds it) and its shaped link."""
    ns, veth, eth = node["netns"], names.host_veth(k), names.NODE_IFACE
    return [["ip", "netns", "add", ns],
            ["ip", "link", "add", veth, "type", "veth", "peer", "name", eth, "netns", ns],
            ["ip", "link", "set", veth, "master", names.BRIDGE, "up"],
            ["ip", "-n", ns, "addr", "add", f"{node['address']}/{names.PREFIX_LEN}", "dev", eth],
            ["ip", "-n", ns, "link", "set", eth, "up"],
            ["ip", "-n", ns, "link", "set", "lo", "up"],
            ["ip", "netns", "exec", ns, "sh", "-c", _NO_IPV6],
            ["tc", "-n", ns, "qdisc", "add", "dev", eth] + _tbf(node["rate"], link),
            ["tc", "qdisc", "add", "dev", veth] + _tbf(node["rate"], link)]


def create_bridge():
    run(bridge_commands()[0])
    _no_ipv6_here(names.BRIDGE)
    for cmd in bridge_commands()[1:]:
        run(cmd)


def create_node(k, node, link):
    commands = node_commands(k, node, link)
    run(commands[0])
    run(commands[1])
    _no_ipv6_here(names.host_veth(k))
    for cmd in commands[2:]:
        run(cmd)


def existing_netns():
    return names.netns_from_listing(run(["ip", "netns", "list"], check=False).stdout)


def existing_links():
    return names.links_from_listing(run(["ip", "-o", "link", "show"], check=False).stdout)


def remove_all():
    """Delete every collsel namespace and link (the veth pairs go with their namespace); what
    could not be deleted, as a list of names."""
    for ns in existing_netns():
        run(["ip", "netns", "delete", ns], check=False)
    for link in existing_links():
        run(["ip", "link", "delete", link], check=False)
    return existing_netns() + existing_links()
