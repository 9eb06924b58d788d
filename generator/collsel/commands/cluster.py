"""collsel cluster: rehearse multi-node tuning on one machine.

`up` emulates a small cluster here: each node is a network namespace (host name nK, address
198.18.0.K) joined to a bridge by a link shaped with tbf to a rate in each direction, optionally
held to a share of the CPU time (cgroup cpu), with a real Slurm (munged, slurmctld, one slurmd
per node, partition `collsel`). MPI jobs run across the nodes through the hostfile and the agent
(an ssh stand-in), or through srun/sbatch. It models link bandwidth and CPU speed; it does NOT
model propagation delay (the kernel has no netem) and all nodes share this machine's cores.
Everything it creates is named collsel* and uses only 198.18.0.0/24; `down` removes it all, also
after a crash. Needs root.

  collsel cluster up --nodes 4 --rate 1gbit
  . /var/lib/collsel/cluster/env           SLURM_CONF and Open MPI's launch variables
  mpirun --hostfile /var/lib/collsel/cluster/hostfile -np 4 --map-by node ./a.out
  srun -N2 -n4 --mpi=pmix ./a.out          (or salloc, sbatch; programs outside /tmp)
  mpiexec.mpich -launcher ssh -launcher-exec /var/lib/collsel/cluster/agent \\
      -iface collsel-br -hosts n1,n2 -n 2 ./a.out    (cluster.json: mpich_launch_args)
  collsel cluster status
  collsel cluster down

Exit status: 0 done (status: up and healthy), 1 failure (a daemon that did not start names its
log; status: not up or unhealthy), 2 bad input.
"""
import argparse
import signal
import sys

from collsel.errors import InputError
from collsel.cluster import config, lifecycle, names
from collsel.commands import add_command


def register(sub):
    top = add_command(sub, "cluster",
                      description=__doc__,
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    csub = top.add_subparsers(title="cluster commands", metavar="ACTION")
    top.set_defaults(run=_no_action)
    state_help = (f"state directory (config, logs, hostfile, agent, cluster.json; outside /tmp): "
                  f"default ${names.STATE_DIR_ENV} or {names.DEFAULT_STATE_DIR}")

    p = csub.add_parser("up", help="bring the emulated cluster up (idempotent)",
                        description="Create the nodes, links and Slurm, and wait until sinfo "
                        "shows every node idle. The same configuration already up and healthy "
                        "is left as it is; a different one must be taken down first. On "
                        "failure, what was made is removed.")
    p.add_argument("--nodes", type=int, required=True,
                   help=f"number of nodes n1..nN (1..{names.MAX_NODES})")
    p.add_argument("--rate", default=config.DEFAULT_RATE,
                   help="every node's link rate in each direction, as tc writes it (100mbit, "
                        "1gbit, 12.5mbps = bytes/s; 1mbit..100gbit); default %(default)s")
    p.add_argument("--rates", default="", metavar="n1=RATE,...",
                   help="per-node link rates overriding --rate, e.g. n1=100mbit,n3=10mbit")
    p.add_argument("--cpu-shares", default="", metavar="n1=SHARE,...",
                   help="per-node share of the machine's CPU time in (0, 1] (cgroup cpu quota), "
                        "e.g. n2=0.5 makes n2 a slower processor; unlisted nodes are unlimited")
    p.add_argument("--state-dir", help=state_help)
    p.set_defaults(run=run_up)

    p = csub.add_parser("down", help="remove everything the emulated cluster made",
                        description="Stop its daemons and every process running on its nodes, "
                        "delete its namespaces, links, cgroups and state directory; also the "
                        "leftovers of a crashed `up`, found by name.")
    p.add_argument("--state-dir", help=state_help)
    p.set_defaults(run=run_down)

    p = csub.add_parser("status", help="nodes, links, daemons and Slurm state; exit 0 when up "
                        "and healthy")
    p.add_argument("--state-dir", help=state_help)
    p.set_defaults(run=run_status)


def _no_action(args):
    raise InputError("collsel cluster: give an action: up, down or status (see collsel "
                     "cluster --help)")


def _progress(line):
    print(f"collsel cluster: {line}", file=sys.stderr, flush=True)


def _terminate(signum, frame):
    raise KeyboardInterrupt     # `up` tears down what it made on the way out


def run_up(args):
    wanted = config.desired(args.nodes, args.rate, args.rates, args.cpu_shares)
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    lifecycle.up(wanted, names.check_state_dir(names.state_dir(args.state_dir)), _progress)
    return 0


def run_down(args):
    lifecycle.down(names.state_dir(args.state_dir), _progress)
    return 0


def run_status(args):
    healthy, lines = lifecycle.status(names.state_dir(args.state_dir))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0 if healthy else 1
