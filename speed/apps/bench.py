"""`make apps-bench` (issue 41): real applications, profiled, tuned for, deployed, and run
default and tuned alternately.

For each application (APPS below; installed by `make apps-setup`):
  1. `collsel profile` of its default run (which collectives, P, m, and their time);
  2. `collsel tune --profile` on that profile, within --budget (its wall time is the tune's cost);
  3. deploy: Open MPI's rules file (coll_tuned dynamic rules) for the C/C++ programs,
     libcollsel with COLLSEL_TREES for the Python one;
  4. `collsel profile` of the tuned run (the time in collectives after);
  5. --rounds pairs of runs, default and tuned, the order swapped every round (ABBA), each run's
     end-to-end wall time (mpirun start to exit) recorded; in the first --census-rounds rounds a
     third run, the default under `collsel profile` (census mode), its order rotating with the
     other two: its launch's wall time (launcher start to exit, as `collsel profile` records it
     in the profile's launch_s) against the same round's default run is the census overhead;
     the whole command's time less the launch's is collsel profile's own cost (its start, the
     merging of the ranks' files), a fixed cost apart from the program.
It prints per application the median, min and max of each way, the tuned/default ratio of every
pair, the time in collectives per rank before and after (from the two profiles), and which
collectives the tune changed (their trees' methods); and writes it all with the machine, the
command and the load (uptime before and after) to --out.

Where: the emulated cluster (`collsel cluster up --nodes 4`, 2 ranks a node, state in
build/apps/cluster, taken down at the end) when it comes up; else, with the reason printed,
mpirun on this machine with 8 oversubscribed ranks (--local forces that).
Every launch has a timeout (--timeout) and is killed with its process group when it runs over.
"""
import argparse
import csv
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from collsel.core.io import profile as profiles

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
COLLSEL = os.path.join(os.path.dirname(sys.executable), "collsel")
LIBCOLLSEL = os.path.join(ROOT, "build", "libcollsel", "openmpi", "libcollsel.so")
RANKS, NODES = 8, 4
MPIRUN = ["mpirun.openmpi", "--oversubscribe", "--allow-run-as-root",
          "--mca", "mpi_yield_when_idle", "1", "-np", str(RANKS)]
IDLE_LOAD = 0.5          # a 1-minute load average above this on 2 cores: "loaded"


def _hpcc(directory):
    """HPC Challenge with Debian's example input, N = 2000 on a 2 x 4 process grid (HPL, PTRANS,
    MPI FFT, MPIRandomAccess, ...: about 40 s at 8 ranks here)."""
    with open("/usr/share/doc/hpcc/examples/_hpccinf.txt") as f:
        lines = f.read().splitlines()
    lines[5] = "2000         Ns"
    lines[10] = "2            Ps"
    lines[11] = "4            Qs"
    with open(os.path.join(directory, "hpccinf.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return ["hpcc"], ("hpccinf.txt from /usr/share/doc/hpcc/examples/_hpccinf.txt, N=2000, "
                      "P x Q = 2 x 4")


def _lammps(directory):
    """LAMMPS' peptide example (PPPM long-range electrostatics, SHAKE), its 300 steps and 600
    more: about 25 s at 8 ranks here."""
    for name in ("in.peptide", "data.peptide"):
        shutil.copy(os.path.join("/usr/share/lammps/examples/peptide", name), directory)
    with open(os.path.join(directory, "in.apps"), "w") as f:
        f.write("include in.peptide\nrun 600\n")
    return (["lmp", "-in", "in.apps", "-log", "none", "-screen", "none"],
            "/usr/share/lammps/examples/peptide/in.peptide (run 300) then run 600")


def _fft(directory):
    """mpi4py-fft's PFFT, 128^3 complex, 50 forward/backward round trips (speed/apps/fft3d.py)."""
    return (["/usr/bin/python3", os.path.join(HERE, "fft3d.py"), "128", "50"],
            "speed/apps/fft3d.py 128 50 (128^3 complex grid, 50 round trips)")


# name: (prepare(run directory) -> (argv, input text), deployed with)
APPS = {"lammps": (_lammps, "rules"), "hpcc": (_hpcc, "rules"), "mpi4py-fft": (_fft, "libcollsel")}


class Failed(Exception):
    pass


def run(argv, timeout, env=None, cwd=None, quiet=False):
    """(seconds, stdout) of one command in its own process group, killed whole on timeout."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise Failed(f"timed out after {timeout} s: {shlex.join(argv)}") from None
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        raise Failed(f"exit {proc.returncode}: {shlex.join(argv)}\n{err[-2000:]}")
    if not quiet and err.strip():
        print(err.rstrip(), file=sys.stderr)
    return seconds, out


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


class Place:
    """Where the applications run: the emulated cluster, or this machine."""

    def __init__(self, local, state):
        self.state, self.cluster, self.why = state, False, "--local given"
        self.env = dict(os.environ)
        if local:
            return
        try:
            run([COLLSEL, "cluster", "up", "--nodes", str(NODES), "--state-dir", state], 120,
                quiet=True)
        except Failed as e:
            self.why = "collsel cluster up failed: " + str(e).splitlines()[-1]
            return
        self.cluster = True
        with open(os.path.join(state, "env")) as f:
            for line in f:
                if line.startswith("export "):
                    key, value = line[len("export "):].strip().split("=", 1)
                    self.env[key] = value

    def describe(self):
        if self.cluster:
            return (f"emulated cluster: {NODES} nodes x {RANKS // NODES} ranks (network "
                    f"namespaces, 1gbit tbf links, TCP between nodes; all on this machine's "
                    f"{os.cpu_count()} cores)")
        return f"this machine, {RANKS} ranks oversubscribed on {os.cpu_count()} cores ({self.why})"

    def mpirun(self):
        if not self.cluster:
            return list(MPIRUN)
        return MPIRUN + ["--hostfile", os.path.join(self.state, "hostfile"), "--map-by", "slot"]

    def tune_flags(self):
        return ["--cluster", self.state] if self.cluster else []

    def close(self):
        if self.cluster:
            run([COLLSEL, "cluster", "down", "--state-dir", self.state], 120, quiet=True)
            self.cluster = False


def deploy_args(kind, tune_dir, profiling):
    """mpirun's arguments that deploy the tune: Open MPI's rules file, or libcollsel with the
    trees (profiling: collsel profile preloads libcollsel itself, only the trees are added)."""
    rules = os.path.join(tune_dir, "rules.conf")
    if kind == "rules":
        if not os.path.exists(rules):
            return []
        return ["--mca", "coll_tuned_use_dynamic_rules", "1",
                "--mca", "coll_tuned_dynamic_rules_filename", rules]
    trees = os.path.join(tune_dir, "trees")
    if not os.path.isdir(trees) or not os.listdir(trees):
        return []
    preload = [] if profiling else ["-x", f"LD_PRELOAD={LIBCOLLSEL}"]
    return preload + ["-x", f"COLLSEL_TREES={trees}", "--mca", "coll_tuned_use_dynamic_rules", "1"]


def profile(place, argv, directory, out, timeout, quiet=False):
    """(wall seconds, printed text) of `collsel profile` of `argv`, written to `out`."""
    census = tempfile.mkdtemp(prefix="census-", dir=directory)
    try:
        return run([COLLSEL, "profile", "--census-dir", census, "--out", out, "--", *argv],
                   timeout, place.env, directory, quiet=quiet)
    finally:
        shutil.rmtree(census, ignore_errors=True)


def collective_times(path):
    """({collective: seconds per rank}, wall seconds per rank) of a profile file."""
    doc = profiles.read(path)
    return ({c: seconds / doc["ranks"] for c, _, seconds, _, _ in profiles.by_collective(doc)},
            doc["wall_time_s"]["mean"])


def chosen_methods(summary):
    """The tune summary's 'chosen methods:' lines, {collective: text}."""
    lines = summary.splitlines()
    if "chosen methods:" not in lines:
        return {}
    found = {}
    for line in lines[lines.index("chosen methods:") + 1:]:
        if not line.startswith("  ") or ":" not in line:
            break
        name, text = line.strip().split(":", 1)
        found[name] = text.strip()
    return found


def bench_app(name, place, args, report, rows):
    prepare, kind = APPS[name]
    directory = os.path.join(ROOT, "build", "apps", name)
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    app_argv, input_text = prepare(directory)
    record = os.path.join(args.out, name)
    os.makedirs(record, exist_ok=True)
    say = report.append
    say(f"== {name}: {shlex.join(app_argv)}")
    say(f"   input: {input_text}")

    default_profile = os.path.join(record, "profile-default.json")
    _, text = profile(place, place.mpirun() + app_argv, directory, default_profile,
                      args.timeout)
    say("   profile (default):")
    say("     " + "\n     ".join(text.rstrip().splitlines()))

    tune_dir = os.path.join(directory, "tune")
    tune_argv = [COLLSEL, "tune", "--out", tune_dir, "--profile", default_profile,
                 "--budget", args.budget, *place.tune_flags()]
    try:
        tune_s, summary = run(tune_argv, args.tune_timeout, place.env, directory, quiet=True)
    except Failed as e:
        say(f"   tune refused or failed: {str(e).splitlines()[0]}")
        say("     " + "\n     ".join(str(e).splitlines()[1:][-3:]))
        return
    plan = json.load(open(os.path.join(tune_dir, "tune.json")))
    say(f"   tune: {shlex.join(['collsel', *tune_argv[1:]])}")
    say(f"   tune cost: {tune_s:.0f} s wall (budget {args.budget} of measuring, then trees and "
        f"reports); collectives {', '.join(plan['collectives'])}")
    for collective, why in plan["left_out"]:
        say(f"     left out: {why}")
    say("     " + "\n     ".join(summary.rstrip().splitlines()))
    with open(os.path.join(record, "tune-summary.txt"), "w") as f:
        f.write(summary)
    shutil.copy(os.path.join(tune_dir, "tune.json"), os.path.join(record, "tune.json"))
    tuned = deploy_args(kind, tune_dir, profiling=False)
    if os.path.exists(os.path.join(tune_dir, "rules.conf")):
        shutil.copy(os.path.join(tune_dir, "rules.conf"), os.path.join(record, "rules.conf"))
    say(f"   deployed: {shlex.join(tuned) if tuned else 'nothing (every tree defers)'}")

    tuned_profile = os.path.join(record, "profile-tuned.json")
    profile(place, place.mpirun() + deploy_args(kind, tune_dir, profiling=True) + app_argv,
            directory, tuned_profile, args.timeout)

    times = {"default": [], "tuned": [], "census": [], "profile": []}
    census_out = os.path.join(directory, "profile-census.json")
    for i in range(args.rounds):
        order = ("default", "tuned") if i % 2 == 0 else ("tuned", "default")
        if i < args.census_rounds:      # the census run takes each place in turn
            order = list(order)
            order.insert(i % 3, "census")
        for way in order:
            if way == "census":
                whole, _ = profile(place, place.mpirun() + app_argv, directory, census_out,
                                   args.timeout, quiet=True)
                seconds = profiles.read(census_out)["launch_s"]
                times["profile"].append(whole)
                rows.append([name, i + 1, "profile", f"{whole:.3f}"])
            else:
                argv = place.mpirun() + (tuned if way == "tuned" else []) + app_argv
                seconds, _ = run(argv, args.timeout, place.env, directory, quiet=True)
            times[way].append(seconds)
            rows.append([name, i + 1, way, f"{seconds:.3f}"])
            print(f"apps-bench: {name} round {i + 1} {way} {seconds:.2f} s", file=sys.stderr,
                  flush=True)
    ratios = [t / d for d, t in zip(times["default"], times["tuned"])]
    say(f"   end-to-end wall time, {args.rounds} rounds alternated (ABBA):")
    for way in ("default", "tuned", "census", "profile"):
        values = times[way]
        if not values:
            continue
        say(f"     {way:<8} median {statistics.median(values):7.2f} s  min {min(values):7.2f}  "
            f"max {max(values):7.2f}   runs: {' '.join(f'{v:.2f}' for v in values)}")
    say(f"     tuned/default per pair: {' '.join(f'{r:.3f}' for r in ratios)}; median "
        f"{statistics.median(ratios):.3f}")
    if times["census"]:
        census = [c / d for d, c in zip(times["default"], times["census"])]
        spread = max(times["default"]) / min(times["default"])
        say(f"     census/default per round: {' '.join(f'{r:.3f}' for r in census)}; median "
            f"{statistics.median(census):.3f} (census overhead "
            f"{statistics.median(census) - 1:+.1%}; the default's own spread, max/min: "
            f"{spread:.3f})")
        own = [w - c for w, c in zip(times["profile"], times["census"])]
        say(f"     collsel profile's own cost (whole command less its launch): "
            f"{' '.join(f'{s:.2f}' for s in own)} s; median {statistics.median(own):.2f} s")
    before, wall_before = collective_times(default_profile)
    after, wall_after = collective_times(tuned_profile)
    say(f"   time in collectives per rank (profiles): default {sum(before.values()):.3f} s of "
        f"{wall_before:.2f} s ({sum(before.values()) / wall_before:.1%}), tuned "
        f"{sum(after.values()):.3f} s of {wall_after:.2f} s "
        f"({sum(after.values()) / wall_after:.1%})")
    chosen = chosen_methods(summary)
    for c in sorted(set(before) | set(after), key=lambda c: -before.get(c, 0)):
        change = chosen.get(c, "not tuned (left out)")
        say(f"     {c:<15} {before.get(c, 0) * 1e3:9.1f} ms -> {after.get(c, 0) * 1e3:9.1f} ms"
            f"   {change}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--census-rounds", type=int, default=3,
                        help="rounds (the first ones) that also run the default under `collsel "
                        "profile`, for the census overhead (0: none)")
    parser.add_argument("--budget", default="3m")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench-data", "apps"))
    parser.add_argument("--apps", default=",".join(APPS))
    parser.add_argument("--local", action="store_true", help="mpirun on this machine")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per launch")
    parser.add_argument("--tune-timeout", type=int, default=1200)
    args = parser.parse_args(argv)
    args.out = os.path.abspath(args.out)     # the launches run in each application's directory
    names = [n for n in args.apps.split(",") if n]
    unknown = [n for n in names if n not in APPS]
    if unknown or args.rounds < 1:
        print(f"apps-bench: error: unknown app {unknown[0]!r} (known: {', '.join(APPS)})"
              if unknown else "apps-bench: error: --rounds must be 1 or more", file=sys.stderr)
        return 2
    if not os.path.exists(LIBCOLLSEL):
        print(f"apps-bench: error: {LIBCOLLSEL} missing: run make libcollsel", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    before_load, before = load_average(), uptime()
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    place = Place(args.local, os.path.join(ROOT, "build", "apps", "cluster"))
    where = place.describe()
    report, rows, failed = [], [], []
    try:
        for name in names:
            shown = len(report)
            try:
                bench_app(name, place, args, report, rows)
            except Failed as e:
                report.append(f"   {name} failed: {e}")
                failed.append(name)
            print("\n".join(report[shown:]), flush=True)
    finally:
        place.close()
    after = uptime()
    state = ("idle" if before_load <= IDLE_LOAD else
             f"loaded (1-minute load average {before_load:.2f} on {os.cpu_count()} cores at the "
             "start: other work shared the machine; figures are not those of an idle machine)")
    head = [f"apps-bench: {started}, {platform.node()}, {platform.platform()}, "
            f"{os.cpu_count()} cores",
            f"command: {shlex.join(['speed/apps/bench.py', *(argv or sys.argv[1:])])}",
            f"where: {where}",
            f"uptime before: {before}", f"uptime after:  {after}", f"machine: {state}"]
    text = "\n".join(head + report) + "\n"
    with open(os.path.join(args.out, "RESULTS.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "runs.csv"), "w", newline="") as f:
        csv.writer(f).writerows([["app", "round", "way", "wall_s"], *rows])
    print("\n".join(head))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
