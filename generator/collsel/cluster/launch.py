"""What MPI launchers need to run on the cluster: the agent script (an ssh stand-in), the
hostfile, the launch environment and the `env` file that exports it."""
import shlex

from collsel.cluster import cpu, names

# `agent HOST COMMAND...` behaves like `ssh HOST COMMAND...`: the command's words are joined
# and run by a shell on HOST (Open MPI and hydra both build a remote shell command line). Options
# before HOST (hydra passes ssh's -x) are skipped; a node address is taken for its name.
AGENT = r"""#!/bin/sh
# collsel emulated cluster (collsel cluster up): `agent HOST COMMAND...` runs COMMAND on node
# HOST as ssh would (its words joined, run by sh -c) inside HOST's network namespace, with host
# name HOST, and inside HOST's cpu cgroup when it has a CPU share. Open MPI's plm_rsh_agent and
# MPICH hydra's -launcher-exec call it like ssh; ssh options before HOST are skipped.
while [ $# -gt 0 ]; do
  case "$1" in
    -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
host=${1:-}
[ $# -gt 0 ] && shift
case "$host" in 198.18.0.*) host=n${host##*.} ;; esac
case " @NODES@ " in
  *" $host "*) ;;
  *) echo "collsel agent: '$host' is not a node of the emulated cluster (@NODES@)" >&2; exit 255 ;;
esac
cgroup=@CGROUP_ROOT@/@PREFIX@-$host
if [ -d "$cgroup" ]; then echo $$ > "$cgroup/cgroup.procs" || exit 255; fi
exec ip netns exec "@PREFIX@-$host" unshare --uts sh -c 'hostname "$0" && eval "$1"' "$host" "$*"
"""


def agent_script(node_names):
    return (AGENT.replace("@NODES@", " ".join(node_names)).replace("@CGROUP_ROOT@", cpu.ROOT)
            .replace("@PREFIX@", names.PREFIX))


def hostfile(nodes):
    return "".join(f"{n['name']} slots={n['cpus']}\n" for n in nodes)


def launch_env(layout):
    """The environment Open MPI (mpirun --hostfile, or srun --mpi=pmix) and Slurm clients need."""
    return {"OMPI_MCA_plm_rsh_agent": layout.agent,
            "OMPI_MCA_oob_tcp_if_include": names.SUBNET,
            "OMPI_MCA_btl_tcp_if_include": names.SUBNET,
            "OMPI_MCA_btl": "self,vader,tcp",
            "SLURM_CONF": layout.slurm_conf}


def mpich_launch_args(layout):
    """mpiexec.mpich flags that start hydra's proxies on the nodes through the agent; the proxies
    connect back to mpiexec on the bridge address (the host's name means nothing inside).
    Caveat: Debian's MPICH runs over UCX, whose shared-memory transports reach across the
    namespaces (they share this machine's memory), so MPICH traffic between "nodes" does not
    cross the shaped links (a 2-node 1 KiB bcast: 0.63 us). UCX_TLS=tcp,self would route it
    over TCP, but then about 1 launch in 4 of a 4-node job hung at exit here (measured
    2026-11-23), so it is not set: MPICH on the cluster proves decisions, not network times."""
    return ["-launcher", "ssh", "-launcher-exec", layout.agent, "-iface", names.BRIDGE]


def env_file(env):
    lines = ["# collsel emulated cluster: `. THIS_FILE` to use it (Slurm clients, Open MPI)"]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in env.items()]
    return "\n".join(lines) + "\n"
