"""What `--resume` may change: the options of the resumed sweep against those the table records.

A sweep table records its options as one command line (`# options=`, the last such line counts;
written by `collsel sweep` itself). A resumed sweep must measure its points the way the recorded
ones were measured, so these must match:

    --mode --mpi --seed --collective --launches --time-cap --rel-ci --min-reps --max-reps
    --warmup --launcher --launcher-args --bench --cluster --probe --load-levels --load (and the
    --fault test hook)

(a table whose options name no --mode was written before paired mode existed: per-method)

and the grid may grow but not shrink (every recorded value must still be asked for; new ones are
measured like the rest):

    --comm-sizes --msg-sizes --algorithms (with --segsizes) and the baseline (--no-baseline)
    --nodes --ppn (an explicit nodes x ppn sweep: its points are (nodes, ppn, m, method), so
    2 x 2 and 4 x 1 are different points of one P; a --comm-sizes sweep cannot continue as a
    --nodes/--ppn one, nor the reverse)

Free to differ: --out (the table may have moved), --timeout (a guard, not part of a
measurement), the progress options, --refine, --confidence and --equivalence (how many more
launches to add), --raw, and --srun-mpi (how srun starts the ranks: a plugin that failed may be
replaced). A grown grid is recorded by appending new `# options=`,
`# comm_sizes=`, `# msg_sizes=` and `# methods=` lines (later keys override earlier ones).
"""
import shlex

from collsel.errors import InputError

FLAGS_WITHOUT_VALUE = ("--no-baseline",)
MUST_MATCH = (("--mode", str, "per-method"), ("--mpi", str, "openmpi"), ("--seed", int, "1"),
              ("--collective", str, None), ("--launches", int, None),
              ("--time-cap", float, None), ("--rel-ci", float, None),
              ("--min-reps", int, None), ("--max-reps", int, None), ("--warmup", int, None),
              ("--launcher", str, None), ("--launcher-args", str, ""),
              ("--bench", str, "(the built collsel_bench)"), ("--fault", str, ""),
              ("--cluster", str, ""), ("--probe", str, ""), ("--load-levels", str, ""),
              ("--load", str, ""))
GRID = ("--comm-sizes", "--nodes", "--ppn", "--msg-sizes", "methods")


def parse_options(text):
    """{flag: value} of a canonical sweep command line (flags without a value map to True)."""
    words = shlex.split(text)
    out = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--") and word in FLAGS_WITHOUT_VALUE:
            out[word] = True
            i += 1
        elif word.startswith("--") and i + 1 < len(words):
            out[word] = words[i + 1]
            i += 2
        else:
            i += 1
    return out


def _ints(text):
    return {int(x) for x in text.split(",") if x.strip()}


def _methods(options):
    """Methods as 'ALG:SEG' texts, the baseline ('0:0') unless --no-baseline."""
    methods = {x.strip() for x in options.get("--algorithms", "").split(",") if x.strip()}
    if not options.get("--no-baseline"):
        methods.add("0:0")
    return methods


def _grid(options):
    return {"--comm-sizes": _ints(options.get("--comm-sizes", "")),
            "--nodes": _ints(options.get("--nodes", "")),
            "--ppn": _ints(options.get("--ppn", "")),
            "--msg-sizes": _ints(options.get("--msg-sizes", "")),
            "methods": _methods(options)}


def _same(kind, a, b):
    if a is None or b is None:
        return a == b
    try:
        if kind is str:
            return " ".join(a.split()) == " ".join(b.split())
        return kind(a) == kind(b)
    except ValueError:
        return False


def _listing(values, limit=8):
    def key(v):
        return tuple(int(x) for x in v.split(":")) if isinstance(v, str) else (v,)
    shown = [str(v) for v in sorted(values, key=key)]
    return ",".join(shown[:limit]) + (f",... ({len(shown)} in all)" if len(shown) > limit
                                      else "")


def differences(recorded, wanted):
    """The ways `wanted` (the resumed sweep's options) breaks the rules above, as texts."""
    found = []
    for flag, kind, default in MUST_MATCH:
        a, b = recorded.get(flag, default), wanted.get(flag, default)
        if not _same(kind, a, b):
            found.append(f"{flag} {b if b not in (None, '') else '(none)'} "
                         f"(recorded {a if a not in (None, '') else '(none)'})")
    old, new = _grid(recorded), _grid(wanted)
    for flag in GRID:
        dropped = old[flag] - new[flag]
        if dropped:
            name = "--algorithms/--no-baseline" if flag == "methods" else flag
            what = "methods ALG:SEG" if flag == "methods" else "values"
            found.append(f"{name} leaves out recorded {what} {_listing(dropped)} (may only add)")
    return found


def check_mode(table, options):
    """One line when a table of the other mode, or of the other grid kind (--comm-sizes or
    --nodes/--ppn), is resumed (before its header is read, which differs between them)."""
    from collsel.core.io import csvfile
    from collsel.core.maps.table import sweep_mode
    try:
        meta = csvfile.read(table, "a sweep table").metadata
        recorded = parse_options(meta.get("options", ""))
    except (InputError, ValueError):
        return                  # the full reader says what is wrong with it
    want = parse_options(options)
    was, wanted = sweep_mode(meta) or "per-method", want.get("--mode", "per-method")
    if recorded and ("--nodes" in recorded) != ("--nodes" in want):
        kinds = ("a --nodes/--ppn sweep (rows carry nodes and ppn)", "a --comm-sizes sweep")
        was_kind, wanted_kind = kinds if "--nodes" in recorded else kinds[::-1]
        raise InputError(f"{table} was written by {was_kind}; it cannot continue as "
                         f"{wanted_kind}: resume it with the recorded options, or start again "
                         "with --force or into another --out")
    if recorded and was != wanted:
        raise InputError(f"{table} was written by a {was} sweep (--mode {was}); resume it with "
                         f"--mode {was}, or start a {wanted} sweep with --force or into another "
                         "--out")


def check(table, meta, options):
    """Refuse a resume whose options differ from the recorded ones (one line naming each
    difference); otherwise whether the grid grew (the caller records the new one)."""
    if not meta.get("options"):
        raise InputError(f"{table}: no '# options=' line records how this sweep was run, so "
                         "--resume cannot check it continues the same sweep; start again with "
                         "--force (or into another --out)")
    recorded, wanted = parse_options(meta["options"]), parse_options(options)
    found = differences(recorded, wanted)
    if found:
        raise InputError(f"{table}: --resume must continue the recorded sweep, but "
                         + "; ".join(found) + "; resume with the options of the '# options=' "
                         "line in the table, or start again with --force")
    return _grid(recorded) != _grid(wanted)
