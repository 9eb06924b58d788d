"""`collsel verify` without an MPI: the judgement (core/mpi/verify.py), the probe's reports and the
launch words (sources/measure/coll_probe.py), and the whole command against a stand-in launcher
that writes the reports real ranks would (their format as collsel_coll_probe.c writes it;
tests/integration/test_verify_in_ompi.py runs the real thing)."""
import os
import stat
import sys

import pytest

from helpers import run_in_process
from collsel.core.mpi import verify
from collsel.core.mpi.algorithms import Method
from collsel.errors import InputError
from collsel.sources.measure import coll_probe

RULES = "1\n7\n1\n2 2\n0 2 0 0\n1024 5 0 0\n"      # bcast: chain below 1024 B, bintree from it
RULES_PATH = "/data/rules.conf"


run = run_in_process    # `collsel ARGS` in this process (tests/helpers.py)


def report_text(rank, size=2, dynamic="1", filename=RULES_PATH, read=None, sites=(),
                finalize=True, cwd="/home/u/run", end=True, extra=()):
    """A sites.<pid> file as collsel_coll_probe.c writes it. read: (rc, errno, hash, bytes)
    of coll/tuned's reading of `filename`, None when it did not read one."""
    lines = ["collsel-coll-probe 1", f"rank {rank} {size if finalize else -1}",
             f"finalize {int(finalize)}", "host node1", f"cwd {cwd}",
             "library Open MPI v4.1.4, package: Debian OpenMPI"]
    if finalize:
        if dynamic is not None:
            lines += [f"cvar coll_tuned_use_dynamic_rules {dynamic}",
                      f"cvar coll_tuned_dynamic_rules_filename {filename}",
                      "cvar coll_tuned_bcast_algorithm 0"]
        lines += ["cvar coll ", *extra]
    if read is not None:
        rc, errno, digest, nbytes = read
        lines.append(f"rules_read 1 {rc} {errno} {digest} {nbytes} {filename}")
        if errno:
            lines.append("rules_open_error No such file or directory")
    lines.append("dropped 0")
    for p, fn, m, seg, rule_size, rule_alg, calls in sites:
        lines.append(f"site {p} ompi_coll_base_{fn} 0 {m} {seg} {rule_size} {rule_alg} {calls}")
    lines.append(f"site {sites[0][0] if sites else 2} ompi_coll_base_bcast_intra_basic_linear 1 "
                 "8 -1 -1 -1 4")     # a nested call: never a call site of its own
    if end:
        lines.append("end")
    return "\n".join(lines) + "\n"


GOOD_SITES = [(2, "bcast_intra_chain", 512, 0, 512, 2, 3),
              (2, "bcast_intra_bintree", 2048, 0, 2048, 5, 3)]
FIXED_SITES = [(2, "bcast_intra_binomial", 512, 0, -1, -1, 3),
               (2, "bcast_intra_basic_linear", 2048, -1, -1, -1, 3)]
GOOD_HASH = coll_probe.fnv1a(RULES.encode())


def reports(tmp_path, texts):
    d = tmp_path / "reports"
    d.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(texts):
        (d / f"sites.{100 + i}").write_text(text)
    return coll_probe.read_reports(d)


# --- the probe's reports ------------------------------------------------------------------

def test_fnv1a_is_the_probes_hash():
    # collsel_coll_probe.c wrote this for these bytes under Open MPI 4.1.4 (rules_read line)
    assert coll_probe.fnv1a(b"1\n7\n1\n2 2\n0 6 0 0\n8192 2 0 1024\n") == "9864056aa8f73fd7"


def test_a_report_is_read_with_its_settings_sites_and_escapes(tmp_path):
    text = report_text(1, read=(0, 0, GOOD_HASH, len(RULES)), sites=GOOD_SITES,
                       filename="/data/my\\x20rules.conf")
    (r,) = reports(tmp_path, [text])
    assert (r.rank, r.size, r.host, r.settings_read, r.complete) == (1, 2, "node1", True, True)
    assert r.settings["coll_tuned_use_dynamic_rules"] == "1"
    assert r.settings["coll_tuned_dynamic_rules_filename"] == "/data/my rules.conf"
    assert r.rules_read == verify.RulesRead("/data/my rules.conf", 0, 0, "", GOOD_HASH,
                                            len(RULES))
    assert [s.function for s in r.sites] == ["bcast_intra_chain", "bcast_intra_bintree"]
    assert r.sites[0] == verify.Site(2, "bcast_intra_chain", 512, 0, 512, 2, 3)
    assert coll_probe.library_version([r]) == "4.1.4"


def test_a_report_without_its_end_line_is_incomplete(tmp_path):
    (r,) = reports(tmp_path, [report_text(0, end=False, finalize=False)])
    assert not r.complete and not r.settings_read and r.settings == {}


# --- the launch ---------------------------------------------------------------------------

def test_the_probe_goes_after_the_launcher_word_and_keeps_the_rest():
    words = ["timeout", "60", "mpirun", "--mca", "x", "1", "-np", "2", "./app", "-x"]
    argv = coll_probe.with_probe(words, "/c/probe.so", "/tmp/d", env={})
    assert argv == ["timeout", "60", "mpirun", "-x", "LD_PRELOAD=/c/probe.so", "-x",
                    "COLL_PROBE_DIR=/tmp/d", "--mca", "x", "1", "-np", "2", "./app", "-x"]


@pytest.mark.parametrize("words, env, preload", [
    (["mpirun", "-x", "LD_PRELOAD=/l/libcollsel.so", "-np", "2", "a"], {}, "/l/libcollsel.so"),
    (["mpirun", "-x", "LD_PRELOAD", "-np", "2", "a"], {"LD_PRELOAD": "/e/x.so"}, "/e/x.so"),
    (["mpirun", "-np", "2", "a"], {"LD_PRELOAD": "/e/x.so"}, "/e/x.so"),
])
def test_the_launchs_own_preload_is_kept_after_the_probe(words, env, preload):
    argv = coll_probe.with_probe(words, "/c/probe.so", "/d", env=env)
    assert argv[1:3] == ["-x", f"LD_PRELOAD=/c/probe.so:{preload}"]
    assert sum(w.startswith("LD_PRELOAD") for w in argv) == 1
    assert argv[-3:] == ["-np", "2", "a"]


def test_a_launch_without_a_launcher_word_is_refused():
    with pytest.raises(InputError, match="no MPI launcher word"):
        coll_probe.launcher_index(["./app", "arg"])
    assert coll_probe.launcher_index(["env", "A=1", "/opt/ompi/bin/mpiexec", "a"]) == 2


def test_where_the_launch_sets_a_parameter(tmp_path):
    name = verify.DYNAMIC_RULES
    words = ["mpirun", "--mca", name, "0", "-mca", name, "2", "./a"]
    assert coll_probe.mca_origin(words, name, env={}).value == "2"      # the last flag
    env = {f"OMPI_MCA_{name}": "0", "HOME": str(tmp_path), "PATH": ""}
    origin = coll_probe.mca_origin(["mpirun", "./a"], name, env=env)
    assert origin == verify.Origin("0", f"OMPI_MCA_{name}=0 in the environment")
    conf = tmp_path / ".openmpi" / "mca-params.conf"
    conf.parent.mkdir()
    conf.write_text(f"# mine\n{name} = 0\n")
    origin = coll_probe.mca_origin(["mpirun", "./a"], name, env={"HOME": str(tmp_path),
                                                                  "PATH": ""})
    assert origin == verify.Origin("0", f"{conf}:2")
    conf.unlink()
    origin = coll_probe.mca_origin(["mpirun", "./a"], name, env={"HOME": str(tmp_path),
                                                                  "PATH": ""})
    assert origin.value is None and "--mca flags" in origin.where


# --- the judgement ------------------------------------------------------------------------

def expect_from(table):
    """expect() of a {(collective, P, m): Method} table; 0 elsewhere."""
    def expect(collective, p, m):
        return verify.Expected(table.get((collective, p, m), Method(0, 0)), m)
    return expect


def site(fn, m, seg=-1, calls=1, p=2):
    return verify.Site(p, fn, m, seg, -1, -1, calls)


def one_rank(*sites):
    return [verify.RankReport(0, 1, sites=list(sites), settings_read=True)]


def test_same_differs_and_not_compared():
    rep = one_rank(site("bcast_intra_chain", 512, 0), site("bcast_intra_binomial", 2048, 0),
                   site("reduce_intra_binary", 64, 0))
    v = verify.verify(rep, expect_from({("bcast", 2, 512): Method(2, 0),
                                        ("bcast", 2, 2048): Method(5, 0)}))
    assert (v.same, v.differ, v.deferred, v.ok) == (1, 1, 1, False)
    assert v.lines[0].startswith("bcast P=2 m=512: ran chain; the file: chain (alg 2, seg 0, "
                                 "fan 0): same (1 calls on 1 rank)")
    assert "ran binomial; the file: binary_tree (alg 5, seg 0, fan 0): DIFFERS" in v.lines[1]
    assert "the file: defer (Open MPI's default): not compared" in v.lines[2]
    assert "1 differ" in verify.summary(v) and "did NOT run" in verify.summary(v)


@pytest.mark.parametrize("fn, alg, seg, want_seg, same", [
    ("bcast_intra_chain", 2, 1024, 1024, True),
    ("bcast_intra_chain", 2, 1024, 2048, False),          # chain uses its segment size
    ("bcast_intra_scatter_allgather", 8, 1024, 0, True),  # it ignores it (core.mpi.algorithms)
])
def test_the_segment_size_counts_where_the_algorithm_uses_it(fn, alg, seg, want_seg, same):
    v = verify.verify(one_rank(site(fn, 4096, seg)),
                      expect_from({("bcast", 2, 4096): Method(alg, want_seg)}))
    assert (v.same, v.differ) == ((1, 0) if same else (0, 1))


def test_ranks_that_ran_different_algorithms_at_one_point_differ():
    rep = [verify.RankReport(0, 2, sites=[site("bcast_intra_chain", 512, 0)]),
           verify.RankReport(1, 2, sites=[site("bcast_intra_binomial", 512, 0)])]
    v = verify.verify(rep, expect_from({("bcast", 2, 512): Method(2, 0)}))
    assert v.differ == 1 and "chain (1 calls) / binomial (1 calls)" in v.lines[0]


def test_open_mpis_own_lookup_is_named_where_it_disagrees():
    s = verify.Site(2, "bcast_intra_chain", 512, 0, 512, 6, 1)
    v = verify.verify(one_rank(s), expect_from({("bcast", 2, 512): Method(2, 0)}))
    assert any("Open MPI's own lookup in the file it read gave algorithm 6" in n
               for n in v.notes)


def test_no_call_site_is_nothing_confirmed():
    v = verify.verify(one_rank(), expect_from({}))
    assert not v.ok and "nothing to compare" in v.problems[0]


def diagnose(tmp_path, texts, origins=None):
    return verify.diagnose_rules(reports(tmp_path, texts), RULES_PATH, GOOD_HASH,
                                 origins or {})


def test_a_launch_that_read_the_file_has_no_problem(tmp_path):
    read = (0, 0, GOOD_HASH, len(RULES))
    assert diagnose(tmp_path, [report_text(r, read=read) for r in range(2)]) == ([], [])


def test_dynamic_rules_off_says_where_it_is_set(tmp_path):
    origin = verify.Origin("0", "`--mca coll_tuned_use_dynamic_rules 0` in the launch")
    problems, _ = diagnose(tmp_path, [report_text(r, dynamic="0") for r in range(2)],
                           {verify.DYNAMIC_RULES: origin})
    assert len(problems) == 1
    assert problems[0].startswith("dynamic rules are off on ranks 0, 1: "
                                  "coll_tuned_use_dynamic_rules is 0")
    assert "`--mca coll_tuned_use_dynamic_rules 0` in the launch sets it to '0'" in problems[0]
    problems, _ = diagnose(tmp_path / "b", [report_text(0, dynamic="0")],
                           {verify.DYNAMIC_RULES: verify.Origin(None, "checked: x")})
    assert "nothing in the launch sets it (checked: x), and Open MPI's default is 0" \
        in problems[0]


def test_no_file_named(tmp_path):
    problems, _ = diagnose(tmp_path, [report_text(0, filename="")])
    assert problems == [f"rank 0: no rules file is named ({verify.RULES_FILENAME} is empty); "
                        "nothing in the launch sets it: add --mca "
                        f"{verify.RULES_FILENAME} {RULES_PATH} to the launch (or export "
                        f"OMPI_MCA_{verify.RULES_FILENAME}={RULES_PATH})"]


def test_a_path_that_cannot_be_opened(tmp_path):
    problems, _ = diagnose(tmp_path, [report_text(0, filename="/data/nope.conf",
                                                  read=(-1, 2, "0", 0))])
    assert "rank 0 on node1: the rules file '/data/nope.conf' cannot be opened (No such file " \
           "or directory)" in problems[0] and "is the path right?" in problems[0]
    problems, _ = diagnose(tmp_path / "rel", [report_text(0, filename="rules.conf",
                                                          read=(-1, 2, "0", 0))])
    assert "'rules.conf' is a relative path, opened from each rank's working directory " \
           "(/home/u/run): give an absolute path" in problems[0]


def test_a_rejected_file_another_file_and_a_relative_path_that_worked(tmp_path):
    problems, _ = diagnose(tmp_path, [report_text(0, read=(-1, 0, "1234", 20))])
    assert "Open MPI rejected the rules file '/data/rules.conf' (its reader returned -1" \
        in problems[0]
    problems, _ = diagnose(tmp_path / "b", [report_text(0, read=(1, 0, "1234", 20))])
    assert "the launch deploys '/data/rules.conf' (20 bytes), which is not the content of " \
           "/data/rules.conf" in problems[0]
    problems, notes = diagnose(tmp_path / "c", [report_text(0, 1, filename="rules.conf",
                                                            read=(1, 0, GOOD_HASH, 5))])
    assert problems == [] and "is a relative path: it was found from /home/u/run" in notes[0]


def test_coll_tuned_not_loaded_and_a_forced_algorithm(tmp_path):
    problems, _ = diagnose(tmp_path, [report_text(0, dynamic=None,
                                                  extra=["cvar coll ^tuned"])])
    assert problems == ["rank 0: coll/tuned is not loaded, so no rules file is read ('coll' is "
                        "'^tuned'; it must not exclude tuned)"]
    text = report_text(0, 1, read=(1, 0, GOOD_HASH, 5)).replace(
        "coll_tuned_bcast_algorithm 0", "coll_tuned_bcast_algorithm 6")
    problems, notes = diagnose(tmp_path / "f", [text])
    assert problems == [] and "coll_tuned_bcast_algorithm is 6" in notes[0]


def test_missing_and_silent_ranks_are_noted(tmp_path):
    problems, notes = diagnose(tmp_path, [report_text(0, size=4, read=(1, 0, GOOD_HASH, 5)),
                                          report_text(1, size=4, finalize=False)])
    assert problems == []
    assert notes[0].startswith("only 2 of 4 ranks reported")
    assert notes[1].startswith("rank 1: did not reach MPI_Finalize")
    problems, _ = verify.diagnose_rules([], RULES_PATH, GOOD_HASH, {})
    assert problems[0].startswith("the probe wrote no report")


# --- the command, with a stand-in launcher ------------------------------------------------

FAKE_MPIRUN = '''\
#!{python}
"""Stands in for Open MPI's mpirun: --version as 4.1.4's; else writes $FAKE_REPORTS/* into the
COLL_PROBE_DIR its -x words name, records its argv, and exits $FAKE_STATUS."""
import os, shutil, sys
if sys.argv[1:] == ["--version"]:
    print(os.environ.get("FAKE_VERSION", "mpirun (Open MPI) 4.1.4"))
    sys.exit(0)
with open(os.environ["FAKE_ARGV"], "w") as f:
    f.write("\\n".join(sys.argv))
words = sys.argv[1:]
where = next(w.split("=", 1)[1] for w in words if w.startswith("COLL_PROBE_DIR="))
for name in os.listdir(os.environ["FAKE_REPORTS"]):
    shutil.copy(os.path.join(os.environ["FAKE_REPORTS"], name), where)
print("the program's own output")
sys.exit(int(os.environ.get("FAKE_STATUS", "0")))
'''


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """(run collsel verify against the stand-in launcher, the reports directory it copies)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mpirun = bin_dir / "mpirun"
    mpirun.write_text(FAKE_MPIRUN.format(python=sys.executable))
    mpirun.chmod(mpirun.stat().st_mode | stat.S_IXUSR)
    # no probe is built: the stand-in never loads it
    monkeypatch.setattr(coll_probe, "library", lambda mpicc="mpicc", env=None: "/c/probe.so")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_ARGV", str(tmp_path / "argv"))
    monkeypatch.setenv("HOME", str(tmp_path))
    for key in list(os.environ):
        if key.startswith("OMPI_MCA_") or key == "LD_PRELOAD":
            monkeypatch.delenv(key)
    src = tmp_path / "reports"
    src.mkdir()
    monkeypatch.setenv("FAKE_REPORTS", str(src))
    rules = tmp_path / "rules.conf"
    rules.write_text(RULES)

    def verify_run(texts, *launch, status=0):
        for old in src.iterdir():
            old.unlink()
        for i, text in enumerate(texts):
            (src / f"sites.{10 + i}").write_text(text.replace(RULES_PATH, str(rules)))
        monkeypatch.setenv("FAKE_STATUS", str(status))
        return run("verify", "--rules", rules, "--", *launch)
    return verify_run, rules


LAUNCH = ("mpirun", "--mca", "coll_tuned_use_dynamic_rules", "1", "-np", "2", "./app")


def test_verify_passes_when_every_site_ran_what_the_file_says(fake, tmp_path, capfd):
    verify_run, rules = fake
    read = (0, 0, GOOD_HASH, len(RULES))
    done = verify_run([report_text(r, read=read, sites=GOOD_SITES) for r in range(2)], *LAUNCH)
    assert done.returncode == 0, done.stdout + done.stderr
    assert capfd.readouterr().out == "the program's own output\n"   # passed through as it is
    lines = done.stdout.splitlines()
    assert lines[0] == f"collsel verify: 2 rank report(s), Open MPI v4.1.4; rules file {rules}"
    assert lines[1] == ("bcast P=2 m=512: ran chain; the file: chain (alg 2, seg 0, fan 0): same "
                        "(6 calls on 2 ranks)")
    assert lines[2].startswith("bcast P=2 m=2048: ran binary_tree; the file: binary_tree")
    assert lines[-1] == ("2 call sites: 2 as the file says, 0 differ: Open MPI ran what the file "
                         "says (2 ranks)")
    argv = (tmp_path / "argv").read_text().splitlines()
    assert argv[1:3] == ["-x", "LD_PRELOAD=/c/probe.so"] and argv[-1] == "./app"


def test_verify_fails_when_dynamic_rules_are_off(fake):
    verify_run, _ = fake
    launch = ("mpirun", "-np", "2", "./app")
    done = verify_run([report_text(r, dynamic="0", sites=FIXED_SITES) for r in range(2)],
                      *launch)
    assert done.returncode == 1
    assert "bcast P=2 m=512: ran binomial; the file: chain (alg 2, seg 0, fan 0): DIFFERS" \
        in done.stdout
    assert "why: dynamic rules are off on ranks 0, 1: coll_tuned_use_dynamic_rules is 0" \
        in done.stdout
    assert "nothing in the launch sets it (checked: its --mca flags" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("2 call sites: 0 as the file says, 2 differ")


def test_verify_fails_on_a_wrong_path_and_on_a_failed_program(fake):
    verify_run, _ = fake
    texts = [report_text(r, filename="/nowhere/rules.conf", read=(-1, 2, "0", 0),
                         sites=FIXED_SITES) for r in range(2)]
    done = verify_run(texts, *LAUNCH)
    assert done.returncode == 1
    assert "why: ranks 0, 1 on node1: the rules file '/nowhere/rules.conf' cannot be opened " \
           "(No such file or directory)" in done.stdout
    done = verify_run(texts, *LAUNCH, status=3)
    assert done.returncode == 1 and "why: the launch exited with status 3" in done.stdout


def test_verify_refuses_bad_input_with_one_line(fake, tmp_path):
    verify_run, rules = fake
    for args, says in ((("verify", "--rules", rules), "no LAUNCH"),
                       (("verify", "--rules", tmp_path / "none.conf", "--", *LAUNCH),
                        "cannot read"),
                       (("verify", "--rules", rules, "--", "./app"), "no MPI launcher word"),
                       (("verify", "--rules", rules, "--ompi-version", "7", "--", *LAUNCH),
                        "--ompi-version")):
        done = run(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert len(done.stderr.splitlines()) == 1 and says in done.stderr, done.stderr
    os.environ["FAKE_VERSION"] = "HYDRA build details:"
    try:
        done = run("verify", "--rules", rules, "--", *LAUNCH)
    finally:
        del os.environ["FAKE_VERSION"]
    assert done.returncode == 2 and "is not Open MPI's launcher (it is mpich)" in done.stderr


def test_the_rules_file_is_read_as_check_rules_reads_it(fake):
    verify_run, rules = fake
    rules.write_text(RULES.replace("0 2 0 0", "1 2 0 0"))      # rejected: first MSGSIZE 1
    done = verify_run([report_text(0, sites=FIXED_SITES, read=(-1, 0, "x", 9))], *LAUNCH)
    assert done.returncode == 1
    assert "the file: defer (Open MPI's default), Open MPI ignores the whole file: not " \
           "compared" in done.stdout
    assert f"why: {rules}:5: bcast: the first message rule of block P>=2 has MSGSIZE 1; it " \
           "must be 0; Open MPI ignores the whole file" in done.stdout


def test_trees_are_found_where_tune_writes_them_and_a_bad_folder_is_refused(tmp_path):
    """--trees takes a tune's output, its trees/ folder of blobs (what COLLSEL_TREES names:
    the tree.json beside decide) or a folder of builds; anything else is one line, exit 2,
    before anything runs; the expectation is the tree's decision (`collsel query`)."""
    from collsel.commands import verify as command
    from helpers import switching_table
    switching = switching_table(tmp_path / "bcast.csv", "bcast", 2, 5)
    assert run("build", switching, "--out", tmp_path / "t" / "bcast").returncode == 0
    (tmp_path / "t" / "trees").mkdir()
    (tmp_path / "t" / "trees" / "bcast.bin").write_bytes(b"")
    for folder in (tmp_path / "t", tmp_path / "t" / "trees"):
        trees = command.tree_files(str(folder))
        assert list(trees) == ["bcast"]
        expect = command.tree_expectation(trees)
        assert expect("bcast", 3, 512).method.algorithm == 2
        assert expect("bcast", 3, 2048).method.algorithm == 5
        assert expect("reduce", 3, 512).method.algorithm == 0      # no tree: passed through
    for bad in (tmp_path / "missing", tmp_path):
        done = run("verify", "--trees", bad, "--", "mpirun", "-n", "2", "true")
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "--trees" in done.stderr
