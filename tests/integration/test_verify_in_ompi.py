"""`collsel verify` on real Open MPI 4.1: a rules file of three collectives (bcast, reduce, and
allgather, whose rules Open MPI matches at P · m), built from tables in which one method is
fastest below 1024 bytes and another from there (tests/helpers.switching_table), each unlike
Open MPI's fixed decision at P = 3 on at least one side. dec_fixed_all.c runs each at 512 and
2048 bytes, results checked, at P = 3.

- The file deployed right: exit 0, every call site "same", each naming the method `collsel
  check-rules --query` says. The independent tracer of the other tests (coll_algorithm_trace.c,
  LD_PRELOAD, given in the launch as `-x LD_PRELOAD=...`: verify keeps it) sees the same bcast
  and reduce functions under verify as in a launch without verify's probe: the probe changes
  no algorithm.
- Without `--mca coll_tuned_use_dynamic_rules 1`: exit 1, sites DIFFER, "dynamic rules are off".
- A path that does not exist, a relative path from another directory, a file Open MPI rejects:
  exit 1, each named.
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests"))
from coll_trace import FUNCTIONS as TRACED, TRACE, build as build_trace  # noqa: E402
from helpers import switching_table  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None or shutil.which("mpicc") is None,
                                reason="Open MPI (mpirun, mpicc) not installed")

# collective -> (method below 1024 bytes, from 1024): Open MPI 4.1.4's fixed decision at P = 3
# runs knomial and basic_linear (bcast), linear (reduce), recursive_doubling (allgather) at
# 512 and 2048, so with dynamic rules off most sites differ
SWITCH = {"bcast": (2, 5), "reduce": (5, 1), "allgather": (2, 4)}
SIZES = (512, 2048)
P = 3
RUN = ["timeout", "120", "mpirun", "--allow-run-as-root", "--oversubscribe",
       "--mca", "mpi_yield_when_idle", "1"]
LINE = re.compile(r"^(\w+) P=(\d+) m=(\d+)(?: \(rule size \d+\))?: ran (.+?); the file: (.+?): "
                  r"(same|DIFFERS|not compared) \(")


def collsel(*args, cwd=None):
    return subprocess.run(["collsel", *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    d = tmp_path_factory.mktemp("verify")
    trees = []
    for coll, (low, high) in SWITCH.items():
        done = collsel("build", switching_table(d / f"{coll}.csv", coll, low, high),
                       "--out", d / coll)
        assert done.returncode == 0, done.stderr
        trees.append(d / coll / "tree.json")
    done = collsel("emit", "--target", "ompi-rules", *trees, "--out", d / "rules.conf")
    assert done.returncode == 0, done.stderr
    program = d / "dec_fixed_all"
    done = subprocess.run(["mpicc", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror",
                           HERE / "dec_fixed_all.c", "-o", program], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    tracer, _ = build_trace("mpicc", d)
    return {"dir": d, "rules": d / "rules.conf", "program": program, "tracer": tracer}


def program_args(setup):
    return [str(setup["program"]), *(f"{c}:{','.join(map(str, SIZES))}" for c in SWITCH)]


def dynamic(rules):
    return ["--mca", "coll_tuned_use_dynamic_rules", "1",
            "--mca", "coll_tuned_dynamic_rules_filename", str(rules)]


def verify(setup, *mca, rules=None, cwd=None, program=None):
    """(exit status, {(collective, m): (ran, the file, status)}, stdout, stderr) of `collsel
    verify --rules FILE -- mpirun ... dec_fixed_all ...`."""
    launch = [*RUN, *mca, "-np", str(P), *(program or program_args(setup))]
    done = collsel("verify", "--rules", rules or setup["rules"], "--", *launch, cwd=cwd)
    sites = {}
    for line in done.stdout.splitlines():
        m = LINE.match(line)
        if m:
            assert int(m.group(2)) == P, line
            sites[m.group(1), int(m.group(3))] = (m.group(4), m.group(5), m.group(6))
    print(done.stdout)
    assert "FAIL " not in done.stdout and "failures=0" in done.stdout, done.stdout
    return done.returncode, sites, done.stdout, done.stderr


def traced(stderr):
    """{(collective, m): {function}} of the independent tracer's lines."""
    out = {}
    for line in stderr.splitlines():
        t = TRACE.match(line)
        if t:
            out.setdefault((t.group(1), int(t.group(5))), set()).add(t.group(2))
    return out


def test_a_file_deployed_right_is_confirmed_and_the_probe_changes_nothing(setup):
    tracer = ["-x", f"LD_PRELOAD={setup['tracer']}"]
    status, sites, out, err = verify(setup, *dynamic(setup["rules"]), *tracer)
    assert status == 0, out + err
    assert sorted(sites) == sorted((c, m) for c in SWITCH for m in SIZES), out
    for (coll, m), (ran, said, verdict) in sites.items():
        ids = collsel("check-rules", setup["rules"], "--collective", coll, "--ids",
                      "--query", P, m).stdout.split()
        assert verdict == "same" and f"(alg {ids[0]}, seg {ids[1]}, fan {ids[2]})" in said, \
            (coll, m, said)
    assert out.splitlines()[-1] == ("6 call sites: 6 as the file says, 0 differ: Open MPI ran "
                                    "what the file says (3 ranks)")
    # the tracer, under verify (its LD_PRELOAD kept beside the probe) and without it
    under_verify = traced(err)
    plain = subprocess.run([*RUN, *dynamic(setup["rules"]), *tracer, "-np", str(P),
                            *program_args(setup)], capture_output=True, text=True, timeout=150)
    assert plain.returncode == 0, plain.stderr
    without = traced(plain.stderr)
    expected = {(c, m): {TRACED[c][SWITCH[c][m >= 1024]]} for c in ("bcast", "reduce")
                for m in SIZES}
    assert under_verify == without == expected, (under_verify, without)


def test_without_dynamic_rules_it_fails_and_says_so(setup):
    status, sites, out, _ = verify(setup, "--mca", "coll_tuned_dynamic_rules_filename",
                                   setup["rules"])
    assert status == 1
    assert sum(v == "DIFFERS" for _, _, v in sites.values()) >= 4, out
    assert "why: dynamic rules are off on ranks 0, 1, 2: coll_tuned_use_dynamic_rules is 0" in out
    assert "add --mca coll_tuned_use_dynamic_rules 1 to the launch" in out
    assert "Open MPI did NOT run what the file says" in out.splitlines()[-1]


def test_a_wrong_path_is_named(setup):
    wrong = setup["dir"] / "no-such-dir" / "rules.conf"
    status, sites, out, _ = verify(setup, *dynamic(wrong))
    assert status == 1 and any(v == "DIFFERS" for _, _, v in sites.values())
    assert f"the rules file '{wrong}' cannot be opened (No such file or directory): Open MPI " \
           "ignored it silently" in out
    assert f"(verify was given {setup['rules']})" in out


def test_a_relative_path_from_elsewhere_is_named(setup):
    elsewhere = setup["dir"] / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    status, _, out, _ = verify(setup, *dynamic("rules.conf"), cwd=elsewhere)
    assert status == 1
    assert f"'rules.conf' is a relative path, opened from each rank's working directory " \
           f"({elsewhere}): give an absolute path" in out


def test_a_file_open_mpi_rejects_is_named(setup):
    rejected = setup["dir"] / "rejected.conf"
    text = setup["rules"].read_text()
    rejected.write_text(re.sub(r"^0 (\d+ 0 0  # size 0\.\.)", r"1 \1", text, count=1,
                               flags=re.M))
    assert rejected.read_text() != text
    status, _, out, _ = verify(setup, *dynamic(rejected))
    assert status == 1
    assert f"Open MPI rejected the rules file '{rejected}' (its reader returned -1" in out
    assert f"which is not the content of {setup['rules']}" not in out    # rejected says enough


# ---- --trees: the same trees deployed through libcollsel ------------------------------------

@pytest.fixture(scope="module")
def blobs(setup):
    """The trees as libcollsel reads them (COLLSEL_TREES=DIR of <collective>.bin) and
    libcollsel itself (`make libcollsel`)."""
    subprocess.run(["make", "-s", "-C", REPO, "libcollsel"], check=True, timeout=600,
                   capture_output=True)
    folder = setup["dir"] / "trees"
    folder.mkdir(exist_ok=True)
    for coll in SWITCH:
        done = collsel("emit", "--target", "blob", setup["dir"] / coll / "tree.json", "--out",
                       folder / f"{coll}.bin")
        assert done.returncode == 0, done.stderr
    return folder, REPO / "build" / "libcollsel" / "openmpi" / "libcollsel.so"


def verify_trees(setup, trees, *launch_words):
    """(exit status, {(collective, m): (ran, the tree, status)} of the trees' collectives (the
    program's own result checks are allreduce calls), stdout)."""
    launch = [*RUN, *launch_words, "-np", str(P), *program_args(setup)]
    done = collsel("verify", "--trees", trees, "--", *launch)
    sites = {}
    for line in done.stdout.splitlines():
        m = LINE.match(line)
        if m and m.group(1) in SWITCH:
            sites[m.group(1), int(m.group(3))] = (m.group(4), m.group(5), m.group(6))
    print(done.stdout)
    return done.returncode, sites, done.stdout


def test_trees_deployed_through_libcollsel_are_confirmed(setup, blobs):
    """The tune's deployment for programs that cannot take a rules file: every call site runs
    the method the tree says (`collsel query`), exit 0; the expected method is the tree's."""
    folder, library = blobs
    status, sites, out = verify_trees(setup, folder, "-x", f"LD_PRELOAD={library}",
                                      "-x", f"COLLSEL_TREES={folder}",
                                      "--mca", "coll_tuned_use_dynamic_rules", "1")
    assert status == 0, out
    assert sorted(sites) == sorted((c, m) for c in SWITCH for m in SIZES), out
    for (coll, m), (ran, said, verdict) in sites.items():
        ids = collsel("query", setup["dir"] / coll / "tree.json", "--ids", "--comm-size", P,
                      "--msg-size", m).stdout.split()
        assert verdict == "same" and f"(alg {ids[0]}, seg {ids[1]}, fan {ids[2]})" in said, \
            (coll, m, said)
    head = next(line for line in out.splitlines() if line.startswith("collsel verify: "))
    assert "; trees " in head and out.splitlines()[-1].endswith(
        "Open MPI ran what the file says (3 ranks)")


def test_trees_without_libcollsel_fail_and_say_why(setup, blobs):
    """The same launch without libcollsel preloaded runs Open MPI's fixed decision: sites
    differ, exit 1, and the line says libcollsel is not preloaded."""
    folder, _ = blobs
    status, sites, out = verify_trees(setup, folder, "-x", f"COLLSEL_TREES={folder}",
                                      "--mca", "coll_tuned_use_dynamic_rules", "1")
    assert status == 1, out
    assert any(v == "DIFFERS" for _, _, v in sites.values()), out
    assert "why: libcollsel is not preloaded" in out, out
