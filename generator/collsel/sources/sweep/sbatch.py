"""A Slurm batch script that runs (and, submitted again, resumes) a sweep."""
import os
import shlex


def allocation(cfg, nodes=None):
    """The #SBATCH size options: a --nodes/--ppn sweep asks for its largest shape's nodes with
    its largest ppn tasks on each (every srun step takes `nodes` of them); a --comm-sizes sweep
    for max(P) tasks (and --sbatch-nodes when given)."""
    if cfg.explicit:
        return [f"--nodes={max(s.nodes for s in cfg.shapes)}",
                f"--ntasks-per-node={max(s.ppn for s in cfg.shapes)}"]
    return [f"--ntasks={max(cfg.comm_sizes)}"] + ([f"--nodes={nodes}"] if nodes else [])


def sbatch_script(cfg, inner_command, time_limit, nodes=None, extra="", partition=None):
    """The script: #SBATCH options, the directory it was written in (the job runs there and
    writes its log there), then the sweep with --resume. `partition`: the emulated cluster's."""
    cwd = os.getcwd()
    lines = ["#!/bin/bash",
             f"#SBATCH --job-name=collsel-{cfg.collective}",
             *(f"#SBATCH {x}" for x in allocation(cfg, nodes)),
             f"#SBATCH --time={time_limit}",
             "#SBATCH --output=collsel-sweep-%j.log"]
    if not any(c.isspace() for c in cwd):       # #SBATCH lines have no quoting
        lines.append(f"#SBATCH --chdir={cwd}")
    if partition:
        lines.append(f"#SBATCH --partition={partition}")
    lines += [f"#SBATCH {x}" for x in shlex.split(extra or "")]
    lines += ["# Written by: " + " ".join(cfg.command.split()),   # one comment line
              "# Submitting it again continues the sweep (--resume).",
              "set -euo pipefail",
              f"cd {shlex.quote(cwd)}",
              inner_command, ""]
    return "\n".join(lines)
