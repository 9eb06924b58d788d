"""A Slurm batch script that runs (and, submitted again, resumes) a sweep."""
import os
import shlex


def sbatch_script(cfg, inner_command, ntasks, time_limit, nodes=None, extra=""):
    lines = ["#!/bin/bash",
             f"#SBATCH --job-name=collsel-{cfg.collective}",
             f"#SBATCH --ntasks={ntasks}",
             f"#SBATCH --time={time_limit}",
             "#SBATCH --output=collsel-sweep-%j.log"]
    if nodes:
        lines.append(f"#SBATCH --nodes={nodes}")
    lines += [f"#SBATCH {x}" for x in shlex.split(extra or "")]
    lines += ["# Written by: " + " ".join(cfg.command.split()),   # one comment line
              "# Submitting it again continues the sweep (--resume).",
              "set -euo pipefail",
              f"cd {shlex.quote(os.getcwd())}",
              inner_command, ""]
    return "\n".join(lines)
