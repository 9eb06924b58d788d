"""Read an Open MPI coll/tuned classic rules file exactly as Open MPI does (`collsel check-rules`,
and every `ompi-rules` file collsel emits is read back through it).

Facts from Open MPI 4.1.4 (`coll_tuned_dynamic_file.c`, `coll_tuned_dynamic_rules.c`,
`coll_base_util.c` of the Debian source package) and, for the optional version line, 4.1.8 / 5.0.7:

- Numbers are read one at a time with `fscanf("%li")` (so `010` is octal 8, `0x10` is 16, `-2` is
  negative, `1.5` is 1 then 5); any other character is skipped one at a time, and `#` skips to the
  end of the line. Newlines mean nothing, except that a version-2 rule's optional MAXREQ must sit
  on the rule's own line.
- Layout: [rule-file-version-N] NCOL, then per collective COLID NCOMSIZES, per block COMSIZE
  NMSGSIZES, per rule MSGSIZE ALG FANINOUT SEGSIZE [MAXREQ]. `rule-file-version-N` is understood
  only by Open MPI >= 4.1.8 (4.1.x) or >= 5.0.7, and only at byte 0 of the file; older releases
  read its `-N` as the number of collectives and reject the file.
- Open MPI rejects the whole file (silently, in a release build, falling back to its fixed
  decision) on: a negative number, end of file before the last expected number, NCOL > 22,
  COLID >= 22, or a block whose first MSGSIZE is not 0.
- It silently accepts: a duplicate collective (the last one wins), numbers after the last
  collective (ignored), blocks or rules out of ascending order (the scans below then stop early),
  values that overflow an `int` (truncated), and an algorithm id the collective does not have
  (the call then fails with MPI_ERR_ARG).
- Matching: per communicator, the block is found by scanning blocks in file order and stopping at
  the first with COMSIZE > P; the last one passed wins, and the first block when P is below all.
  Per call, the same scan over the block's rules with MSGSIZE <= m. ALG 0 means Open MPI's fixed
  decision (or the algorithm coll_tuned_<coll>_algorithm forces, if set): a tree's "defer to the
  MPI" leaves are written so (tests/integration/test_ompi_rules_in_ompi.py runs it on real Open
  MPI).

This module reports every trap above as one line `FILE:LINE: ...`; the evaluator follows Open
MPI's scans exactly (including on files with errors), so `--query` says what Open MPI would run.

JSON rules files (Open MPI 6 / main, `rule_file_version` 3; read from the source, not run: no
Open MPI 6 here): Open MPI tries a file as JSON first. `read_json` checks what `json_lookup`
reads (one line naming the JSON location of the first problem) and `json_lookup` matches as
coll_tuned_dynamic_rules.c on main does: the first communicator rule, in file order, whose
comm_rank_distribution the communicator satisfies ("single-node": every rank on this node;
"one-per-node": a communicator Open MPI marked disjoint) and whose inclusive
[comm_size_min, comm_size_max] holds P, then its first message rule whose inclusive
[msg_size_min, msg_size_max] holds m ("inf" in any case Open MPI accepts); no match = alg 0.
"""
import json
import re
from dataclasses import dataclass, field

from collsel.core.mpi import algorithms, rules_size
from collsel.errors import InputError

# Open MPI's collective ids (core/mpi/algorithms.py, enum COLLTYPE of 4.1, 5.0 and main)
COLLECTIVE_IDS = algorithms.OMPI_COLLTYPE
COLLCOUNT = len(COLLECTIVE_IDS)
COLLECTIVE_NAMES = {v: k for k, v in COLLECTIVE_IDS.items()}
INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1

VERSION_LINE = re.compile(rb"rule-file-version-(\d+)")
# one number as fscanf("%li") reads it: sign, then hex, octal (leading 0) or decimal
_NUMBER = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
_DECIMAL = re.compile(r"0|[1-9][0-9]*")

FIELDS = ("MSGSIZE", "ALG", "FANINOUT", "SEGSIZE", "MAXREQ")


def parse_version(text):
    """'4.1.4' -> (4, 1, 4); the Open MPI release whose reader to emulate."""
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not m:
        raise InputError(f"--ompi-version '{text}' is not a version like 4.1.4")
    v = (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
    if v[:2] not in ((4, 1), (5, 0)):
        raise InputError(f"--ompi-version {text}: only the 4.1.x and 5.0.x classic readers are "
                         "emulated (Open MPI 6/main shifts comm-size ranges: use "
                         "`collsel emit --target ompi-json` there)")
    return v


def version_line_supported(version):
    """rule-file-version-N and MAXREQ came with 4.1.8 and 5.0.7."""
    return version >= (4, 1, 8) if version[:2] == (4, 1) else version >= (5, 0, 7)


def ompi_reads(word):
    """The numbers Open MPI's tokenizer takes out of one whitespace-free, comment-free word."""
    out, i = [], 0
    while i < len(word):
        m = _NUMBER.match(word, i)
        if m:
            text = m.group(0)
            sign = -1 if text[0] == "-" else 1
            body = text.lstrip("+-")
            if len(body) > 40:
                # strtol saturates; any value past a long is reported the same way below
                value = LONG_MAX + 1
            elif body[:2].lower() == "0x":
                value = int(body[2:], 16)
            elif len(body) > 1 and body[0] == "0":
                value = int(body[1:], 8)
            else:
                value = int(body)
            out.append(sign * value)
            i = m.end()
        else:
            # scanf consumes a lone sign before failing; Open MPI then skips one character
            i += 2 if word[i] in "+-" else 1
    return out


@dataclass
class Number:
    value: int
    line: int
    text: str          # the word it came from
    first_on_line: bool
    word_starts_digit: bool


@dataclass
class Rule:
    msg_size: int
    alg: int
    faninout: int
    segsize: int
    max_requests: int
    line: int


@dataclass
class Block:
    comm_size: int
    line: int
    rules: list = field(default_factory=list)


@dataclass
class Collective:
    coll_id: int
    line: int
    blocks: list = field(default_factory=list)


@dataclass
class RulesFile:
    path: str
    version: int
    collectives: dict            # coll_id -> Collective, as Open MPI keeps it (last one wins)
    rejected: bool               # Open MPI would ignore the whole file
    errors: list                 # (line, message)
    rule_count: int = 0

    def lookup(self, coll_id, comm_size, msg_size, ppn=None):
        """(alg, segsize, faninout, max_requests) Open MPI 4.1 runs; alg 0 = its fixed decision.
        `ppn` is ignored: a classic file cannot tell communicators apart by it."""
        coll = None if self.rejected else self.collectives.get(coll_id)
        if coll is None or not coll.blocks:
            return (0, 0, 0, 0)
        # ompi_coll_tuned_get_com_rule_ptr, then ompi_coll_tuned_get_target_method_params
        best = _last_at_most(coll.blocks, "comm_size", comm_size)
        if not best.rules:
            return (0, 0, 0, 0)
        rule = _last_at_most(best.rules, "msg_size", msg_size)
        return (rule.alg, rule.segsize, rule.faninout, rule.max_requests)

    def decide(self, coll_id, comm_size, m, ppn=None):
        """lookup() for a call whose collsel m (docs/guide/collectives.md) is `m`: at the size
        Open MPI's dynamic decision computes for it (core.mpi.rules_size)."""
        return self.lookup(coll_id, comm_size, rule_size_of(coll_id, comm_size, m), ppn)


def rule_size_of(coll_id, comm_size, m):
    """The rule message size Open MPI matches for collsel's (P, m) of collective `coll_id`."""
    return rules_size.rule_msg_size(COLLECTIVE_NAMES[coll_id], comm_size, m)


def _last_at_most(items, key, value):
    """Open MPI's scan: the last item whose `key` is <= value, else the first item."""
    chosen = items[0]
    for item in items:
        if getattr(item, key) > value:
            break
        chosen = item
    return chosen


def _words(data, skip_version):
    """Numbers as Open MPI reads them, and (line, word, message) for each word not plain decimal."""
    numbers, problems = [], []
    text = data.decode("latin-1")
    for lineno, line in enumerate(text.split("\n"), 1):
        body = line.split("#", 1)[0]
        if lineno == 1 and skip_version:
            body = body[skip_version:]
        first = True
        for word in body.split():
            values = ompi_reads(word)
            if not _DECIMAL.fullmatch(word):
                problems.append((lineno, word, _describe_word(word, values)))
            for k, v in enumerate(values):
                numbers.append(Number(v, lineno, word, first, k == 0 and word[0].isdigit()))
                first = False
    return numbers, problems


def _describe_word(word, values):
    read = ("nothing (skipped silently)" if not values
            else " then ".join(str(v) for v in values))
    if VERSION_LINE.fullmatch(word.encode("latin-1")):
        what = ("a version line must be the very first bytes of the file (nothing before it, "
                "not even a comment or a blank line)")
    elif re.fullmatch(r"[+-]?0[xX][0-9a-fA-F]+", word):
        what = "hexadecimal number"
    elif re.fullmatch(r"[+-]?0[0-9]+", word):
        what = "leading zero (fscanf %li reads octal)"
    elif re.fullmatch(r"-[0-9]+", word):
        what = "negative number (Open MPI rejects the file)"
    elif re.fullmatch(r"\+[0-9]+", word):
        what = "explicit sign"
    elif re.fullmatch(r"[+-]?[0-9]*[.eE][0-9.eE+-]*", word):
        what = "not an integer"
    else:
        what = "text outside a comment (start comments with #)"
    return f"'{word}': {what}; Open MPI reads {read}; write plain decimal digits"


def read(path, data, version=(4, 1, 4)):
    """Parse `data` (bytes) as Open MPI `version` would; collect every problem."""
    m, file_version, skip, errors = _version_line(data, version)
    numbers, problems = _words(data, skip)
    errors += _word_errors(problems, m, skip, version)
    parser = _Parser(numbers, file_version, errors)
    parser.parse()
    errors.sort(key=lambda e: e[0])
    return RulesFile(path, file_version, parser.collectives, parser.rejected, errors,
                     parser.rule_count)


def _version_line(data, version):
    """The file's version line as Open MPI `version` reads it: (its match or None, the file
    version, the bytes it takes, [(line, message)] for a version Open MPI cannot use)."""
    errors = []
    file_version, skip = 1, 0
    m = VERSION_LINE.match(data)
    if m and version_line_supported(version):
        file_version, skip = int(m.group(1)), m.end()
        if file_version > INT_MAX:      # read with %d into an int: truncated, if not undefined
            errors.append((1, f"rule-file-version-{m.group(1)[:40].decode()}: the version does "
                           "not fit Open MPI's int (it reads it with %d); write "
                           "rule-file-version-2 (or -1)"))
        elif file_version not in (1, 2):
            errors.append((1, f"rule-file-version-{file_version}: Open MPI knows versions 1 "
                           "and 2 (it reads any version above 1 as 2); write "
                           "rule-file-version-2 (or -1)"))
    return m, file_version, skip, errors


def _word_errors(problems, m, skip, version):
    """(line, message) of each word not plain decimal (_words); a version line that `version`
    does not understand (`m` matched, nothing skipped) is explained as what Open MPI reads."""
    errors = []
    for line, word, message in problems:
        if m and line == 1 and word == m.group(0).decode() and not skip:
            message = (f"'{word}': Open MPI {'.'.join(map(str, version))} has no version line "
                       "(it came with 4.1.8 / 5.0.7): it reads "
                       f"{' then '.join(map(str, ompi_reads(word)))} as the number of "
                       "collectives and rejects the file")
        errors.append((line, message))
    return errors


def _type_name(hi):
    """The C type whose largest value is `hi`."""
    return "int" if hi == INT_MAX else "long"


class _Parser:
    """Open MPI's walk over the numbers of a classic file (NCOL, then per collective its blocks,
    per block its rules), appending every problem to `errors`; a problem Open MPI rejects the
    file for sets `rejected` and ends the walk, as it ends Open MPI's."""

    def __init__(self, numbers, file_version, errors):
        self.numbers, self.i = numbers, 0
        self.file_version = file_version
        self.errors = errors
        self.rejected = False
        self.collectives = {}
        self.rule_count = 0
        self.layout_ok = True     # no layout error reported yet (only the first is)

    def parse(self):
        """NCOL and the collectives it announces, then the numbers left after them."""
        ncol = self.take("the number of collectives (NCOL)")
        if ncol is not None and ncol.value > COLLCOUNT:
            self.fail(ncol.line, f"NCOL {ncol.value} is more than the {COLLCOUNT} collectives "
                      "Open MPI has")
        self.layout_ok = ncol is not None and self.layout([ncol], "NCOL")
        for _ in range(ncol.value if ncol is not None and not self.rejected else 0):
            self.collective()
            if self.rejected:
                break
        if not self.rejected and self.i < len(self.numbers):
            extra = self.numbers[self.i]
            self.errors.append((extra.line, f"{len(self.numbers) - self.i} number(s) after the "
                                f"last of the {ncol.value} collective(s) NCOL announces (line "
                                f"{ncol.line}): Open MPI ignores them silently"))

    def collective(self):
        """COLID NCOMSIZES and its blocks."""
        colid = self.take("a collective id (COLID)")
        if colid is None:
            return
        if colid.value >= COLLCOUNT:
            self.fail(colid.line, f"collective id {colid.value} >= {COLLCOUNT}")
            return
        self.layout_ok = self.layout_ok and self.layout([colid], "COLID")
        name = COLLECTIVE_NAMES[colid.value]
        if colid.value in self.collectives:
            self.errors.append((colid.line, f"{name} (id {colid.value}) appears again (first on "
                                f"line {self.collectives[colid.value].line}): Open MPI "
                                "silently uses the last"))
        coll = Collective(colid.value, colid.line)
        self.collectives[colid.value] = coll
        ncs = self.take(f"{name}: the number of communicator sizes (NCOMSIZES)", hi=INT_MAX)
        if ncs is None:
            return
        for b in range(ncs.value):
            self.block(coll, name, b)
            if self.rejected:
                return

    def block(self, coll, name, b):
        """Block `b` of collective `coll`: COMSIZE NMSGSIZES and its rules."""
        cs = self.take(f"{name}: communicator size (COMSIZE) of block {b + 1}", hi=INT_MAX)
        if cs is None:
            return
        self.layout_ok = self.layout_ok and self.layout([cs], "COMSIZE")
        block = Block(cs.value, cs.line)
        if coll.blocks and cs.value <= coll.blocks[-1].comm_size:
            self.errors.append((cs.line, f"{name}: communicator size {cs.value} is not above the "
                                f"previous block's {coll.blocks[-1].comm_size} (line "
                                f"{coll.blocks[-1].line}): blocks must ascend; Open MPI stops "
                                "at the first larger size, so blocks after it are misapplied"))
        coll.blocks.append(block)
        nms = self.take(f"{name}: the number of message sizes (NMSGSIZES) of block "
                        f"P>={cs.value}", hi=INT_MAX)
        if nms is None:
            return
        for r in range(nms.value):
            self.rule(block, name, r)
            if self.rejected:
                return

    def rule(self, block, name, r):
        """Rule `r` of `block`: MSGSIZE ALG FANINOUT SEGSIZE, and MAXREQ (version 2) when the
        rule's line has it."""
        where = f"{name}, block P>={block.comm_size}, rule {r + 1}"
        group = []
        for k, fname in enumerate(FIELDS[:4]):
            n = self.take(f"{where}: {fname}", hi=LONG_MAX if k == 0 else INT_MAX)
            if n is None:
                return
            group.append(n)
        maxreq = 0
        if self.file_version > 1:
            nxt = self.numbers[self.i] if self.i < len(self.numbers) else None
            if nxt is not None and nxt.line == group[-1].line and nxt.word_starts_digit:
                n = self.take(f"{where}: MAXREQ", hi=INT_MAX)
                if n is None:
                    return
                group.append(n)
                maxreq = n.value
        if self.layout_ok:
            self.layout_ok = self.layout(group, "rule")
        rule = Rule(group[0].value, group[1].value, group[2].value, group[3].value,
                    maxreq, group[0].line)
        if r == 0 and rule.msg_size != 0:
            self.fail(rule.line, f"{name}: the first message rule of block P>={block.comm_size} "
                      f"has MSGSIZE {rule.msg_size}; it must be 0")
        if block.rules and rule.msg_size <= block.rules[-1].msg_size:
            self.errors.append((rule.line, f"{name}: message size {rule.msg_size} is not above "
                                f"the previous rule's {block.rules[-1].msg_size}: rules must "
                                "ascend; Open MPI stops at the first larger size"))
        known = algorithms.ALGORITHMS.get(name)
        if known is not None and rule.alg not in known:
            self.errors.append((rule.line, f"{name}: algorithm {rule.alg} does not exist "
                                f"(0-{max(known)}): the MPI call would fail with MPI_ERR_ARG"))
        block.rules.append(rule)
        self.rule_count += 1

    def fail(self, line, message):
        """A problem Open MPI rejects the whole file for."""
        self.rejected = True
        self.errors.append((line, message + "; Open MPI ignores the whole file"))

    def take(self, what, hi=LONG_MAX):
        """The next number, read as `what`; None (the file rejected) at the end of the file or
        for a negative number. A value above `hi` is truncated by Open MPI: reported."""
        if self.i >= len(self.numbers):
            last = self.numbers[-1].line if self.numbers else 1
            self.fail(last, f"file ends where {what} is expected")
            return None
        n = self.numbers[self.i]
        self.i += 1
        if n.value < 0:
            self.fail(n.line, f"{what} is negative ({n.value})")
            return None
        if n.value > hi:
            self.errors.append((n.line, f"{what} {n.value} does not fit Open MPI's "
                                f"{_type_name(hi)}: it is silently truncated; write a value up "
                                f"to {hi}"))
        return n

    def layout(self, group, role):
        """A group of numbers must fill its own line(s): catches counts that do not match."""
        lines = sorted({n.line for n in group})
        if role == "rule":
            first = group[0]
            maxreq_note = " with MAXREQ" if len(group) == 5 else ""
            if len(lines) > 1 or not first.first_on_line:
                self.errors.append((first.line, f"Open MPI reads a message rule "
                                    f"({' '.join(FIELDS[:len(group)])}) from "
                                    f"{_where(group)}: a count above does not match the rules "
                                    "that follow, or a line has the wrong number of fields "
                                    f"({len(group)} per rule{maxreq_note})"))
                return False
        elif not group[0].first_on_line:
            self.errors.append((group[0].line, f"Open MPI reads {role} {group[0].value} from the "
                                f"middle of line {group[0].line} (after a message rule's "
                                "fields): a count above does not match, or a rule line has too "
                                "many fields"))
            return False
        return True


def _where(group):
    lines = sorted({n.line for n in group})
    return f"line {lines[0]}" if len(lines) == 1 else f"lines {lines[0]}-{lines[-1]}"


def _read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None


def load(path, version=(4, 1, 4)):
    return read(path, _read_bytes(path), version)


def load_any(path, version=(4, 1, 4)):
    """A classic RulesFile, or a JsonRulesFile when the file holds a JSON object (Open MPI 6 /
    main reads such a file as JSON; 4.1 and 5.0 read classic files only)."""
    data = _read_bytes(path)
    if is_json(data):
        return JsonRulesFile(path, read_json(path, data))
    return read(path, data, version)


def summary(rules):
    parts = []
    for coll_id in sorted(rules.collectives):
        coll = rules.collectives[coll_id]
        parts.append(f"{COLLECTIVE_NAMES[coll_id]} (id {coll_id}): {len(coll.blocks)} "
                     f"communicator-size block(s), {sum(len(b.rules) for b in coll.blocks)} "
                     "message rule(s)")
    return "; ".join(parts) or "no collectives"


# --- Open MPI 6 / main JSON rules ------------------------------------------------------------

DISTRIBUTIONS = ("any", "one-per-node", "single-node")
INFINITE = ("inf", "Inf", "INF")
SIZE_MAX = 2**64 - 1


def is_json(data):
    """True when the bytes hold a JSON object (Open MPI main reads such a file as JSON)."""
    try:
        return isinstance(json.loads(data.decode("utf-8")), dict)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False


def _json_int(value, where, low, high, infinite=False):
    if infinite and value in INFINITE:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{where}: {str(value)[:40]!r} is not an integer in [{low}, {high}]"
                         + (" or \"inf\"" if infinite else ""))


def read_json(path, data):
    """The JSON rules document in `data`, checked for everything json_lookup reads."""
    doc = json.loads(data.decode("utf-8"))
    if doc.get("module") != "tuned" or not isinstance(doc.get("collectives"), dict):
        raise InputError(f"{path}: a JSON rules file needs \"module\": \"tuned\" and a "
                         "\"collectives\" object")
    _json_int(doc.get("rule_file_version"), f"{path}: rule_file_version", 1, INT_MAX)
    for name, comms in doc["collectives"].items():
        where = f"{path}: collectives.{str(name)[:24]}"
        if name not in COLLECTIVE_IDS:
            raise InputError(f"{where}: not an Open MPI collective name")
        if not isinstance(comms, list):
            raise InputError(f"{where}: not an array of communicator rules")
        for i, comm in enumerate(comms):
            w = f"{where}[{i}]"
            if not isinstance(comm, dict) or not isinstance(comm.get("rules"), list):
                raise InputError(f"{w}: not an object with a \"rules\" array")
            for key in ("comm_size_min", "comm_size_max"):
                if key in comm:
                    _json_int(comm[key], f"{w}.{key}", 0, INT_MAX)
            if comm.get("comm_rank_distribution", "any") not in DISTRIBUTIONS:
                raise InputError(f"{w}.comm_rank_distribution: not one of "
                                 f"{', '.join(DISTRIBUTIONS)}")
            for j, rule in enumerate(comm["rules"]):
                r = f"{w}.rules[{j}]"
                if not isinstance(rule, dict) or "alg" not in rule:
                    raise InputError(f"{r}: not an object with \"alg\"")
                _json_int(rule["alg"], f"{r}.alg (collsel reads ids, not names)", 0, INT_MAX)
                if "msg_size_min" in rule:
                    _json_int(rule["msg_size_min"], f"{r}.msg_size_min", 0, SIZE_MAX)
                if "msg_size_max" in rule:
                    _json_int(rule["msg_size_max"], f"{r}.msg_size_max", 0, SIZE_MAX, True)
                for key in ("faninout", "seg_size", "reqs"):
                    if key in rule:
                        _json_int(rule[key], f"{r}.{key}", 0, INT_MAX)
    return doc


def distribution(comm_size, ppn):
    """The comm_rank_distribution, besides "any", that a communicator of `comm_size` ranks
    spread evenly at `ppn` per node satisfies: "single-node" (ppn >= P), "one-per-node"
    (ppn == 1), else None."""
    if ppn >= comm_size:
        return "single-node"
    return "one-per-node" if ppn == 1 else None


def json_lookup(document, collective, comm_size, msg_size, ppn=None):
    """(alg, seg_size, faninout) Open MPI main picks from a JSON rules document. Without `ppn`
    the communicator is neither single-node nor disjoint (several nodes, several ranks on some)."""
    held = {"any", None, distribution(comm_size, ppn) if ppn is not None else None}
    for comm in document["collectives"].get(collective, []):
        if comm.get("comm_rank_distribution") not in held:
            continue
        if not comm.get("comm_size_min", 0) <= comm_size <= comm.get("comm_size_max", INT_MAX):
            continue
        for rule in comm["rules"]:
            hi = rule.get("msg_size_max", "inf")
            if rule.get("msg_size_min", 0) <= msg_size and (hi in INFINITE or msg_size <= hi):
                return (rule["alg"], rule.get("seg_size", 0), rule.get("faninout", 0))
        return (0, 0, 0)
    return (0, 0, 0)


@dataclass
class JsonRulesFile:
    """A checked JSON rules document, with RulesFile's interface."""
    path: str
    document: dict
    errors: list = field(default_factory=list)    # read_json raises instead
    rejected: bool = False

    def lookup(self, coll_id, comm_size, msg_size, ppn=None):
        alg, seg, fan = json_lookup(self.document, COLLECTIVE_NAMES[coll_id], comm_size,
                                    msg_size, ppn)
        return (alg, seg, fan, 0)

    decide = RulesFile.decide

    def summary(self):
        return "; ".join(f"{name} (id {COLLECTIVE_IDS[name]}): {len(comms)} communicator "
                         f"rule(s), {sum(len(c['rules']) for c in comms)} message rule(s)"
                         for name, comms in self.document["collectives"].items()
                         ) or "no collectives"
