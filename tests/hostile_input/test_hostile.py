"""The hostile corpus: every command and every file type collsel reads, fed malformed, extreme or
malicious input (tests/hostile/, described in tests/hostile/cases.txt).

Each case of the manifest gives a command line and the exit status it must end with. For every
case this test checks:

* the exit status (0 success, 1 failure, 2 bad input);
* no traceback: no exception other than argparse's SystemExit leaves `collsel.cli.main`, and
  stderr never holds "Traceback";
* no control character on stderr (a quoted file's escape sequences are shown escaped);
* for status 2, exactly one stderr line, `collsel: error: ...`, containing the case's WHERE
  (the file and, where the format has lines, the line, or the flag), and naming a `FILE:LINE:`
  location once (the `findings` cases of check-rules instead print one `FILE:LINE: ...` line per
  problem, as documented);
* no partial or changed output: when the status is not 0, the case's scratch directory (where
  every --out points, with an existing file, directory and FIFO to aim at) is byte for byte as
  it was, and no corpus file ever changes.

Cases run in-process through collsel.cli.main (fast); the few marked `process` run as a real
`python -m collsel.cli` under a memory limit and a timeout, for inputs that could exhaust the
machine if a bound were missing.
"""
import hashlib
import io
import json
import math
import os
import re
import resource
import shlex
import shutil
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from collsel import cli

HERE = Path(__file__).resolve().parents[1]
HOSTILE = HERE / "hostile"
MANIFEST = HOSTILE / "cases.txt"
FIXTURES = HERE.parent.parent / "shared" / "fixtures"
if not FIXTURES.is_dir():      # a git worktree elsewhere (/work/wt/NAME): the one shared copy
    FIXTURES = Path("/work/shared/fixtures")
KNOWN = b"known bytes: an output that must stay as it was\n"
PROCESS_TIMEOUT = 60            # seconds for a `process` case (option timeout=S)
PROCESS_MEMORY = 3 << 30        # bytes of address space for a `process` case


@dataclass
class Case:
    name: str
    status: int
    where: str
    options: dict
    args: list
    line: int
    tags: set = field(default_factory=set)


def read_manifest():
    """Cases of tests/hostile/cases.txt: `NAME STATUS WHERE [OPTION...] -- ARG...` per line
    (shell quoting; a trailing backslash continues the line; # starts a comment line)."""
    cases, pending, start = [], "", 0
    for lineno, text in enumerate(MANIFEST.read_text(encoding="utf-8").splitlines(), 1):
        if not pending:
            start = lineno
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        text, pending = pending + text, ""
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        tokens = shlex.split(text)
        if "--" not in tokens or tokens.index("--") < 3:
            raise ValueError(f"{MANIFEST}:{start}: expected NAME STATUS WHERE [OPTION...] -- ARGS")
        cut = tokens.index("--")
        name, status, where, *opts = tokens[:cut]
        options = dict(o.partition("=")[::2] for o in opts)
        cases.append(Case(name, int(status), where, options, tokens[cut + 1:], start))
    names = [c.name for c in cases]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{MANIFEST}: case names appear twice: {', '.join(dup)}")
    return cases


CASES = read_manifest()


# ---------------------------------------------------------------------------------------------
# Recipes: inputs made at test time, from the fixtures or from a tree collsel builds itself,
# rather than stored (third-party files are never copied into the repository). Each takes the
# scratch directory and returns the path it wrote.

_SESSION = {}


def base_tree(kind="2d"):
    """A valid tree.json built by collsel from tests/hostile/tables/good*.csv (once a run; kept
    in memory, its build directory removed at once)."""
    key = f"tree-{kind}"
    if key not in _SESSION:
        import contextlib
        import tempfile
        table = HOSTILE / "tables" / ("good.csv" if kind == "2d" else "good-ppn.csv")
        with tempfile.TemporaryDirectory(prefix="collsel-hostile-") as scratch:
            out = Path(scratch) / key
            argv = ["build", str(table), "--collective", "bcast", "--out", str(out)]
            if kind == "3d":
                argv += ["--z", "ppn"]
            with contextlib.redirect_stdout(io.StringIO()):
                assert cli.main(argv) == 0
            _SESSION[key] = json.loads((out / "tree.json").read_text())
    return json.loads(json.dumps(_SESSION[key]))


def _write_json(path, doc):
    path.write_text(json.dumps(doc, indent=1, allow_nan=True) + "\n")
    return path


def _tree_recipe(patch, kind="2d"):
    def make(scratch, name):
        doc = base_tree(kind)
        patch(doc)
        return _write_json(scratch / f"{name}.json", doc)
    return make


def _set(path, value):
    """A patch setting doc[...][...] = value; `path` is a tuple of keys and indexes."""
    def patch(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return patch


def _first_internal(doc, after=0):
    fc = doc["nodes"]["first_child"]
    return next(i for i, c in enumerate(fc) if c != -1 and i >= after)


def _first_leaf(doc):
    return doc["nodes"]["first_child"].index(-1)


def _patch_node(column, value, node=_first_internal, row=None):
    def patch(doc):
        i = node(doc)
        col = doc["nodes"][column] if row is None else doc["nodes"][column][row]
        col[i] = value
    return patch


def _drop_axis_values(doc):
    doc["axes"][0].update(values=[], labels=[], cuts=[])


def _nodes_mismatch(doc):
    doc["nodes"]["method"].pop()


def _nodes_empty(doc):
    doc["nodes"] = {"first_child": [], "split": [[], []], "method": [], "depth": []}


def _one_axis(doc):
    doc["axes"] = doc["axes"][:1]
    doc["nodes"]["split"] = doc["nodes"]["split"][:1]


def _labels_mismatch(doc):
    doc["axes"][1]["labels"].append("extra")


def _cuts_decreasing(doc):
    doc["axes"][1]["cuts"] = sorted(doc["axes"][1]["cuts"], reverse=True)


def _child_loop(doc):
    i = _first_internal(doc, after=1)
    doc["nodes"]["first_child"][i] = i


def _child_back(doc):
    i = _first_internal(doc, after=1)
    doc["nodes"]["first_child"][i] = 0


def _deep_tree(doc):
    """A chain 5,000 levels deep (beyond Python's recursion limit and the 64 levels collsel
    builds): each internal node splits P once, into a leaf and the next internal node (every
    link points forward and inside the arrays)."""
    k = 5000
    n = 2 * k + 1
    first_child, split0, method, depth = [], [], [], []
    for i in range(n):
        internal = i % 2 == 0 and i < n - 1
        first_child.append(i + 1 if internal else -1)
        split0.append(1 if internal else -2)
        method.append(-2 if internal else 0)
        depth.append((i + 1) // 2)
    doc["nodes"] = {"first_child": first_child, "split": [split0, [-2] * n], "method": method,
                    "depth": depth}


def _duplicate_method(doc):
    doc["methods"].append(dict(doc["methods"][0]))


TREES = {
    "tree": lambda doc: None,
    "tree-first-child-2p40": _patch_node("first_child", 2**40),
    "tree-first-child-negative": _patch_node("first_child", -7),
    "tree-first-child-loop": _child_loop,
    "tree-first-child-back": _child_back,
    "tree-cut-nan": _set(("axes", 0, "cuts", 0), math.nan),
    "tree-cut-infinity": _set(("axes", 1, "cuts", 0), math.inf),
    "tree-cuts-empty": _set(("axes", 0, "cuts"), []),
    "tree-cut-string": _set(("axes", 0, "cuts", 0), "4"),
    "tree-cut-float": _set(("axes", 0, "cuts", 0), 4.5),
    "tree-cut-2p64": _set(("axes", 1, "cuts", 1), 2**64),
    "tree-cut-2p70": _set(("axes", 0, "cuts", 1), 2**70),
    "tree-cuts-decreasing": _cuts_decreasing,
    "tree-values-empty": _drop_axis_values,
    "tree-version-string": _set(("version",), "1"),
    "tree-version-2": _set(("version",), 2),
    "tree-version-true": _set(("version",), True),
    "tree-version-float": _set(("version",), 1.0),
    "tree-format-other": _set(("format",), "collsel-treex"),
    "tree-collective-guard": _set(("collective",), "x_H\n#endif\n#define bcast"),
    "tree-collective-empty": _set(("collective",), ""),
    "tree-collective-path": _set(("collective",), "../../etc/x"),
    "tree-collective-long": _set(("collective",), "b" * 5000),
    "tree-collective-escape": _set(("collective",), "\x1b[2J\x1b]0;owned\x07"),
    "tree-collective-number": _set(("collective",), 7),
    "tree-collective-unknown": _set(("collective",), "alltoallw"),
    "tree-algorithm-code": _set(("methods", 0, "algorithm"), "1; } int evil(void) { return 0"),
    "tree-algorithm-negative": _set(("methods", 0, "algorithm"), -1),
    "tree-algorithm-2p31": _set(("methods", 0, "algorithm"), 2**31),
    "tree-segsize-negative": _set(("methods", 0, "segsize"), -1),
    "tree-segsize-2p40": _set(("methods", 0, "segsize"), 2**40),
    "tree-faninout-negative": _set(("methods", 0, "faninout"), -1),
    "tree-method-name-comment": _set(("methods", 0, "name"), "*/ int evil; /*"),
    "tree-method-name-newline": _set(("methods", 1, "name"), "x\n#include </etc/passwd>\n"),
    "tree-methods-empty": _set(("methods",), []),
    "tree-duplicate-method": _duplicate_method,
    "tree-leaf-basic-linear": _patch_node("method", 0, node=_first_leaf),  # a valid tree
    "tree-leaf-method-99": _patch_node("method", 99, node=_first_leaf),
    "tree-leaf-method-negative": _patch_node("method", -5, node=_first_leaf),
    "tree-split-1000": _patch_node("split", 1000, row=0),
    "tree-depth-negative": _patch_node("depth", -1),
    "tree-nodes-mismatch": _nodes_mismatch,
    "tree-nodes-empty": _nodes_empty,
    "tree-axis-kind": _set(("axes", 0, "kind"), "exponential"),
    "tree-axis-name-code": _set(("axes", 0, "name"), "comm_size) { evil(); } if (x"),
    "tree-label-comment": _set(("axes", 1, "labels", 0), "*/ int evil; /*"),
    "tree-one-axis": _one_axis,
    "tree-labels-mismatch": _labels_mismatch,
    "tree-build-split": _set(("build", "split"), "sideways"),
    "tree-extra-key": _set(("evil",), 1),
    "tree-deep": _deep_tree,
}
TREES3 = {
    "tree3": lambda doc: None,
    "tree3-z-cut-2p64": _set(("axes", 2, "cuts", 0), 2**64),
    "tree3-z-name-code": _set(("axes", 2, "name"), "ppn */ int evil; /*"),
}


def imb_cut(scratch, name):
    """The juno IMB fixture cut at a row boundary inside its Bcast block (7 of 23 sizes)."""
    lines = (FIXTURES / "imb" / "IMB-MPI1_internode_juno_np2.txt").read_text().splitlines(True)
    start = next(i for i, t in enumerate(lines) if t.startswith("# Benchmarking Bcast"))
    header = next(i for i in range(start, len(lines)) if "#bytes" in lines[i])
    path = scratch / "imb-cut.txt"
    path.write_text("".join(lines[:header + 1 + 7]))
    return path


def imb_cut_mid_row(scratch, name):
    """The same fixture cut in the middle of a Bcast row."""
    text = imb_cut(scratch, name).read_text()
    path = scratch / "imb-cut-mid-row.txt"
    path.write_text(text + "          128         1000")
    return path


def imb_cut_between_blocks(scratch, name):
    """The juno IMB fixture cut just before its Barrier block: the Bcast block is whole, only
    the run's last line is missing."""
    lines = (FIXTURES / "imb" / "IMB-MPI1_internode_juno_np2.txt").read_text().splitlines(True)
    stop = next(i for i, t in enumerate(lines) if t.startswith("# Benchmarking Barrier"))
    path = scratch / "imb-cut-between-blocks.txt"
    path.write_text("".join(lines[:stop]))
    return path


def _fixture_without(scratch, fixture, marker, out_name):
    """A scratch copy of a fixture without the lines holding `marker`."""
    text = (FIXTURES / fixture).read_text()
    path = scratch / out_name
    path.write_text("".join(line for line in text.splitlines(True) if marker not in line))
    return path


def imb_no_finalize(scratch, name):
    """The juno IMB fixture without its last line, '# All processes entering MPI_Finalize'."""
    return _fixture_without(scratch, "imb/IMB-MPI1_internode_juno_np2.txt", "MPI_Finalize",
                            "imb-no-finalize.txt")


def osu_denormal(scratch, name):
    """An OSU fixture whose 1-byte average latency reads 1e-320 µs."""
    lines = (FIXTURES / "osu" / "osu-broadcast-binomial-tree.txt").read_text().splitlines(True)
    i = next(i for i, t in enumerate(lines) if t.split()[:1] == ["1"])
    fields = lines[i].split()
    fields[1] = "1e-320"
    lines[i] = "  ".join(fields) + "\n"
    path = scratch / "osu-denormal.txt"
    path.write_text("".join(lines))
    return path


def osu_latin1(scratch, name):
    """An OSU fixture with one Latin-1 byte in its title."""
    raw = (FIXTURES / "osu" / "osu-broadcast-chain.txt").read_bytes()
    path = scratch / "osu-latin1.txt"
    path.write_bytes(raw.replace(b"Broadcast", b"Broadc\xe4st", 1))
    return path


def osu_header_twice(scratch, name):
    """Two OSU runs concatenated: the second title and header in the middle of the file."""
    text = (FIXTURES / "osu" / "osu-broadcast-chain.txt").read_text()
    path = scratch / "osu-twice.txt"
    path.write_text(text + text)
    return path


def reprompi_no_nprocs(scratch, name):
    return _fixture_without(scratch, "reprompi/reprompi_allreduce_p4_summary.txt", "#@nprocs",
                            "reprompi-no-nprocs.txt")


def coltune_nan(scratch, name):
    lines = (FIXTURES / "ompi-collectives-tuning" / "detail.out").read_text().splitlines(True)
    i = next(i for i, t in enumerate(lines) if t[:1].isdigit())
    fields = lines[i].split()
    fields[2] = "nan(0.5)"
    lines[i] = "  ".join(fields) + "\n"
    path = scratch / "detail-nan.out"
    path.write_text("".join(lines))
    return path


def skampi_cut(scratch, name):
    """The SKaMPI manual excerpt with its 'end result' line removed."""
    text = (FIXTURES / "skampi" / "manual_sec7.1_MPI_Bcast-length_excerpt.txt").read_text()
    path = scratch / "skampi-cut.sko"
    path.write_text("".join(t for t in text.splitlines(True) if "end result" not in t))
    return path


HEAD = "collective,comm_size,msg_size,algorithm,segsize,time_us\n"
TEN_MIB = 10 << 20


def table_big_field(scratch, name):
    """A table whose algorithm field is 10 MiB of digits."""
    path = scratch / "big-field.csv"
    with open(path, "w") as f:
        f.write(HEAD + "bcast,2,1,1,0,2.0\nbcast,4,1," + "1" * TEN_MIB + ",0,4.0\n")
    return path


def table_big_quoted(scratch, name):
    """A table with a 10 MiB quoted field (commas inside) in its last column."""
    path = scratch / "big-quoted.csv"
    with open(path, "w") as f:
        f.write(HEAD + 'bcast,2,1,1,0,"' + "4," * (TEN_MIB // 2) + '"\n')
    return path


def table_big_grid(scratch, name):
    """A 260 x 128 grid: fine for build and stats, more cells than a report draws."""
    path = scratch / "big-grid.csv"
    with open(path, "w") as f:
        f.write(HEAD)
        for p in range(2, 262):
            for k in range(128):
                f.write(f"bcast,{p},{k},{1 + 5 * ((p + k) % 2)},0,{1 + p + k}\n")
    return path


def table_many_z(scratch, name):
    """A third axis of 20 values: a report would draw 20 sets of figures."""
    path = scratch / "many-z.csv"
    with open(path, "w") as f:
        f.write(HEAD.rstrip("\n") + ",ppn\n")
        for z in range(1, 21):
            for p in (2, 4):
                for a in (1, 6):
                    f.write(f"bcast,{p},1024,{a},0,{p * z + a},{z}\n")
    return path


def csv_big_field(scratch, name):
    """A mapped CSV (ingest --map) with a 10 MiB field."""
    path = scratch / "big-field-map.csv"
    with open(path, "w") as f:
        f.write("Processes,Size,Algorithm,Latency(us)\n8,1,binomial," + "9" * TEN_MIB + "\n")
    return path


def manifest_big_field(scratch, name):
    path = scratch / "big-field-manifest.csv"
    with open(path, "w") as f:
        f.write("file,algorithm\n" + "x" * TEN_MIB + ",1\n")
    return path


def experiments_big_field(scratch, name):
    path = scratch / "big-field-experiments.csv"
    with open(path, "w") as f:
        f.write("experiment,comm_size,msg_size,algorithm,segsize,gather_size,launch,time_us,n\n"
                "nbft,2,1,0,0,0,1," + "5" * TEN_MIB + ",10\n")
    return path


def points_big(scratch, name):
    """A --points file of 2^17 lines (query answers all of them)."""
    path = scratch / "many-points.txt"
    path.write_text("4 1024\n" * (1 << 17))
    return path


def points_big_line(scratch, name):
    """A --points line of 10 MiB of digits."""
    path = scratch / "big-point.txt"
    path.write_text("4 " + "9" * TEN_MIB + "\n")
    return path


def rules_big_number(scratch, name):
    """A rules file whose message size has 10 MiB of digits."""
    path = scratch / "big-number.conf"
    path.write_text("1\n7\n1\n1 1\n" + "9" * TEN_MIB + " 1 0 0\n")
    return path


RECIPES = {
    "imb-cut": imb_cut,
    "imb-cut-mid-row": imb_cut_mid_row,
    "imb-cut-between-blocks": imb_cut_between_blocks,
    "imb-no-finalize": imb_no_finalize,
    "osu-denormal": osu_denormal,
    "osu-latin1": osu_latin1,
    "osu-header-twice": osu_header_twice,
    "reprompi-no-nprocs": reprompi_no_nprocs,
    "coltune-nan": coltune_nan,
    "skampi-cut": skampi_cut,
    "table-big-field": table_big_field,
    "table-big-quoted": table_big_quoted,
    "table-big-grid": table_big_grid,
    "table-many-z": table_many_z,
    "csv-big-field": csv_big_field,
    "manifest-big-field": manifest_big_field,
    "experiments-big-field": experiments_big_field,
    "points-big": points_big,
    "points-big-line": points_big_line,
    "rules-big-number": rules_big_number,
    **{k: _tree_recipe(v) for k, v in TREES.items()},
    **{k: _tree_recipe(v, "3d") for k, v in TREES3.items()},
}


# ---------------------------------------------------------------------------------------------
# Running a case.

def prepare_scratch(scratch):
    """What --out flags aim at: an existing file, a directory with a file in it, a FIFO."""
    (scratch / "file").write_bytes(KNOWN)
    (scratch / "dir").mkdir()
    (scratch / "dir" / "keep.txt").write_bytes(KNOWN)
    os.mkfifo(scratch / "fifo")


def expand(text, scratch, made):
    """Placeholders: {h} the corpus, {fx} the fixtures, {s} the scratch directory, {esc} and {nl}
    the ESC and newline characters, {presets} the shipped model presets, {c:REL} a scratch copy of corpus file or directory REL, {g:NAME}
    the file recipe NAME makes in the scratch directory. Other braces are left alone."""
    def one(m):
        key = m.group(1)
        if key == "esc":
            return "\x1b"
        if key == "nl":
            return "\n"
        if key == "h":
            return str(HOSTILE)
        if key == "fx":
            return str(FIXTURES)
        if key == "s":
            return str(scratch)
        if key == "presets":
            from collsel.research.models import params
            return str(params.preset_path("gros").parent)
        kind, _, rel = key.partition(":")
        if key not in made:
            if kind == "c":
                src, dst = HOSTILE / rel, scratch / Path(rel).name
                if src.is_dir():
                    shutil.copytree(src, dst)
                else:
                    shutil.copyfile(src, dst)
                made[key] = str(dst)
            else:
                made[key] = str(RECIPES[rel](scratch, rel))
        return made[key]
    return re.sub(r"\{(h|fx|s|esc|nl|presets|[cg]:[^{}]+)\}", one, text)


def snapshot(root):
    """{relative path: (type, sha256 of a file's bytes)} of everything under root."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            rel = os.path.relpath(path, root)
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    out[rel] = ("file", hashlib.sha256(f.read()).hexdigest())
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", None)
            elif stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            else:
                out[rel] = (stat.S_IFMT(st.st_mode), None)
    return out


def corpus_digest(args):
    """sha256 of every corpus file a command line names, so a run cannot change them."""
    out = {}
    for arg in args:
        for part in arg.split("="):
            p = Path(part)
            if p.is_file() and HOSTILE in p.resolve().parents:
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def run_in_process(argv, stdin_text, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin_text))
    escaped = None
    try:
        status = cli.main(argv)
    except SystemExit as e:      # argparse: one line and exit 2, as a real process
        status = e.code if isinstance(e.code, int) else 1
    except BaseException as e:   # noqa: B902 - anything else escaping main is the bug we look for
        import traceback
        escaped = "".join(traceback.format_exception(e))
        status = None
    out, err = capsys.readouterr()
    return status, out, err, escaped


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (PROCESS_MEMORY, PROCESS_MEMORY))


def run_process(argv, stdin_text, cwd, timeout):
    try:
        run = subprocess.run([sys.executable, "-m", "collsel.cli", *argv], cwd=cwd,
                             input=stdin_text, capture_output=True, text=True,
                             timeout=timeout, preexec_fn=_limits)
    except subprocess.TimeoutExpired:
        return None, "", "", f"still running after {timeout} s"
    return run.returncode, run.stdout, run.stderr, None


LOCATED = re.compile(r"^(.*?):(\d+):")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def check_error_line(case, err, where):
    lines = err.splitlines()
    if "findings" in case.options:
        # check-rules lists every problem it finds, one `FILE:LINE: message` line each.
        path = re.escape(case_file(case, where))
        assert lines, "no finding printed"
        bad = [ln for ln in lines if not re.match(rf"{path}:\d+: \S", ln)]
        assert not bad, f"lines that are not FILE:LINE: findings: {bad}"
        assert any(where in ln for ln in lines), f"no finding at {where!r}:\n{err}"
        return
    assert len(lines) == 1, f"expected one stderr line, got {len(lines)}:\n{err}"
    line = lines[0]
    assert line.startswith("collsel: error: "), line
    assert where in line, f"the message does not name {where!r}:\n{line}"
    if re.search(r":\d+:$", where):
        # A location is printed once, not as `f.csv:5: f.csv:5: ...`.
        assert line.count(where) == 1, f"{where!r} printed twice:\n{line}"


def case_file(case, where):
    m = LOCATED.match(where)
    return m.group(1) if m else where.rstrip(":")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_case(case, tmp_path, capsys, monkeypatch):
    scratch = tmp_path / "s"
    scratch.mkdir()
    prepare_scratch(scratch)
    made = {}
    argv = [expand(a, scratch, made) for a in case.args]
    where = expand(case.where, scratch, made)
    stdin_text = ""
    if "stdin" in case.options:
        stdin_text = Path(expand(case.options["stdin"], scratch, made)).read_text()
    before = snapshot(scratch)
    corpus = corpus_digest(argv)
    monkeypatch.chdir(scratch)
    started = time.monotonic()
    if "process" in case.options:
        status, out, err, escaped = run_process(argv, stdin_text, scratch,
                                                int(case.options.get("timeout", PROCESS_TIMEOUT)))
    else:
        status, out, err, escaped = run_in_process(argv, stdin_text, capsys, monkeypatch)
    elapsed = time.monotonic() - started
    context = f"\n{case.name} ({MANIFEST.name}:{case.line}): collsel {shlex.join(argv)}\n" \
              f"status {status}, {elapsed:.1f} s\nstderr:\n{err}"
    assert escaped is None, f"exception escaped collsel.cli.main:{context}\n{escaped}"
    assert "Traceback" not in err, context
    # A message quotes what it refuses; a file's or flag's control characters (terminal escape
    # sequences) are shown escaped, never sent to the terminal.
    control = CONTROL.search(err)
    assert not control, f"stderr holds control character {control.group()!r}{context!r}"
    assert status == case.status, f"exit status {status}, expected {case.status}{context}"
    assert corpus_digest(argv) == corpus, f"a corpus file changed{context}"
    if status != 0:
        after = snapshot(scratch)
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        assert not changed, f"failed run changed its outputs: {changed}{context}"
    else:
        leftovers = [k for k in snapshot(scratch) if ".tmp-" in k]
        assert not leftovers, f"temporary files left: {leftovers}{context}"
    if case.status == 2:
        try:
            check_error_line(case, err, where)
        except AssertionError as e:
            raise AssertionError(f"{e}{context}") from None
    if "json" in case.options:
        # stdout is strict JSON: no NaN, Infinity or -Infinity.
        def refuse(constant):
            raise AssertionError(f"stdout holds {constant}{context}")
        json.loads(out, parse_constant=refuse)
    if "never" in case.options:
        # Text that must not reach any output verbatim (code smuggled in through a name).
        text = expand(case.options["never"], scratch, made).encode()
        for rel, (kind, digest) in snapshot(scratch).items():
            if kind == "file" and before.get(rel) != (kind, digest):   # written by the run
                assert text not in (scratch / rel).read_bytes(), \
                    f"{rel} holds {case.options['never']!r}{context}"
    if "stdout" in case.options:
        assert expand(case.options["stdout"], scratch, made) in out, f"stdout:\n{out}{context}"
    if "stderr" in case.options:
        assert expand(case.options["stderr"], scratch, made) in err, f"stderr:\n{err}{context}"


def test_corpus_covers_every_command_and_is_large_enough():
    assert len(CASES) >= 200, len(CASES)
    commands = {" ".join(c.args[:2]) if c.args[0] == "model" else c.args[0] for c in CASES}
    need = {"build", "query", "stats", "baseline", "sweep", "ingest", "emit", "check-rules",
            "report", "model predict", "model fit", "model validate", "model paper"}
    assert need <= commands, need - commands
    targets = {c.args[c.args.index("--target") + 1] for c in CASES if "--target" in c.args}
    from collsel.sinks.emit.targets import TARGETS
    assert set(TARGETS) <= targets, set(TARGETS) - targets
    statuses = {c.status for c in CASES}
    assert {0, 2} <= statuses


def test_every_stored_input_is_used():
    """Every file under tests/hostile is named by some case (no dead corpus files)."""
    text = MANIFEST.read_text(encoding="utf-8")
    unused = []
    for path in sorted(HOSTILE.rglob("*")):
        if path.is_dir() or path == MANIFEST or path.name == "README":
            continue
        rel = path.relative_to(HOSTILE).as_posix()
        top = rel.split("/")[0] + "/" + rel.split("/")[1] if rel.count("/") >= 2 else rel
        if rel not in text and top not in text:
            unused.append(rel)
    assert not unused, unused


def test_collective_inferred_builds_what_naming_it_builds(tmp_path, capsys):
    """A table of one collective needs no --collective: `build` then writes the same files,
    stats.json's recommended command line included, as with --collective named."""
    table = HOSTILE / "tables" / "good.csv"
    outs = {}
    for name, flags in (("named", ["--collective", "bcast"]), ("inferred", [])):
        out = tmp_path / name
        assert cli.main(["build", str(table), *flags, "--recommend", "--out", str(out)]) == 0
        outs[name] = {p.name: p.read_bytes().replace(str(out).encode(), b"OUT")
                      for p in sorted(out.iterdir())}
    capsys.readouterr()
    assert outs["named"] == outs["inferred"]
    assert b"--collective bcast" in outs["inferred"]["stats.json"]


def test_one_size_grammar_for_every_option():
    """core.io.sizes.parse_size reads every size and count option (and points files): K, M, G are
    2^10, 2^20, 2^30; lists take A-B ranges (powers of two between; every integer for
    communicator sizes); a refusal lists the accepted forms."""
    from collsel.core.io import sizes
    from collsel.errors import InputError
    assert [sizes.parse_size(t, "--x") for t in ("4096", "64K", "64KiB", "1M", "1G", "2^20")] \
        == [4096, 65536, 65536, 1 << 20, 1 << 30, 1 << 20]
    assert sizes.parse_size_list("1K-8K,3", "--msg-sizes") == [3, 1024, 2048, 4096, 8192]
    assert sizes.parse_comm_sizes("1K-1026,2") == [2, 1024, 1025, 1026]
    assert sizes.comm_size("2^4", "--comm-size") == 16
    with pytest.raises(InputError, match=r"^--msg-size: msg_size '64Q' is not a size or count "
                       r"\(accepted: 4096, 4K, 4KiB, 64M, 1G, 2\^20 \(K, M, G = 2\^10, 2\^20, "
                       r"2\^30\)\)$"):
        sizes.msg_size("64Q", "--msg-size")
    with pytest.raises(InputError, match=r"^--comm-size: comm_size 2G out of range"):
        sizes.comm_size("2G", "--comm-size")
