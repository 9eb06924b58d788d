"""README.md and docs/: every relative link leads to a file (and heading) that exists, every
`collsel` command quoted in a code block names real sub-commands and options and parses, and the
generated command reference equals what docs/gen_reference.py writes from today's parsers."""
import contextlib
import functools
import importlib.util
import io
import re
import shlex
import unicodedata
from pathlib import Path

import pytest

from collsel import cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
REFERENCE = DOCS / "reference"
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)\s*([\w+-]*)")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+\1")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SHELL_LANGUAGES = {"", "sh", "bash", "shell", "console"}
SHELL_OPERATORS = {";", "&&", "||", "|", "&", "(", ")"}
REDIRECTIONS = {">", ">>", "<", ">&", "<&", "&>"}
# A quoted command that holds one of these is a synopsis ([optional], a|b, "..."): its sub-command
# path and option names are checked, not a full parse.
PLACEHOLDER = re.compile(r"[\[\]|]|\.\.\.|…")


@functools.lru_cache(maxsize=None)
def load_generator():
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def markdown_files():
    """README.md and every page of docs/, except the generated reference (usage text, no links)."""
    generated = {REFERENCE / name for name in load_generator().generated_files(REFERENCE)}
    return [ROOT / "README.md"] + [p for p in sorted(DOCS.rglob("*.md")) if p not in generated]


def split_markdown(text):
    """(prose lines, code blocks) of a Markdown text: prose as (line number, line) outside
    fences; blocks as (language, [(line number, line), ...])."""
    prose, blocks, block = [], [], None
    for number, line in enumerate(text.split("\n"), 1):
        fence = FENCE.match(line)
        if block is None and fence:
            block = (fence.group(1), fence.group(2).lower(), [])
        elif block is not None and fence and fence.group(1).startswith(block[0]) \
                and not fence.group(2):
            blocks.append((block[1], block[2]))
            block = None
        elif block is not None:
            block[2].append((number, line))
        else:
            prose.append((number, line))
    return prose, blocks


def slug(heading):
    """The anchor Python-Markdown's toc (MkDocs) gives a heading; GitHub's agrees on ours."""
    text = INLINE_CODE.sub(lambda m: m.group(0).strip("`"), heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


@functools.lru_cache(maxsize=None)
def anchors(path):
    prose, _ = split_markdown(path.read_text(encoding="utf-8"))
    return {slug(m.group(2)) for _, line in prose for m in [HEADING.match(line)] if m}


def broken_links(path):
    """One line per relative link of Markdown file `path` whose file or anchor does not exist."""
    prose, _ = split_markdown(path.read_text(encoding="utf-8"))
    problems = []
    for number, line in prose:
        for match in LINK.finditer(INLINE_CODE.sub("", line)):
            target = match.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):     # http:, mailto:, ...
                continue
            file_part, _, anchor = target.partition("#")
            where = (path.parent / file_part).resolve() if file_part else path
            if not where.exists():
                problems.append(f"{path}:{number}: {target}: no such file")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                problems.append(f"{path}:{number}: {target}: no heading #{anchor} in {where.name}")
    return problems


def quoted_commands(path):
    """(line number, argument list after `collsel`, synopsis?) of every collsel command in the
    shell code blocks of `path`; a line that does not split as shell words is returned as text."""
    _, blocks = split_markdown(path.read_text(encoding="utf-8"))
    found = []
    for language, lines in blocks:
        if language not in SHELL_LANGUAGES:
            continue
        logical, start = "", None
        for number, line in lines:
            start = number if start is None else start
            if line.rstrip().endswith("\\"):
                logical += line.rstrip()[:-1] + " "
                continue
            logical += line
            if re.search(r"(^|[\s;&|(])collsel\s", logical):
                found.extend((start, args, synopsis)
                             for args, synopsis in collsel_invocations(logical))
            logical, start = "", None
    return found


def inline_commands(path):
    """(line number, arguments, True) of every `collsel ...` code span in the prose of `path`:
    prose quotes fragments, so only their sub-commands and option names are checked."""
    prose, _ = split_markdown(path.read_text(encoding="utf-8"))
    return [(number, args, True) for number, line in prose
            for span in re.findall(r"`(collsel [^`]+)`", line)
            for args, _ in collsel_invocations(span)]


def collsel_invocations(line):
    """The argument lists of every `collsel` invocation in one shell line (after wrappers such as
    flock or salloc, between ;, &&, |), each with whether it is a synopsis."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as e:
        return [(f"cannot split as shell words: {e}", False)]
    segments, current, skip = [], [], False
    for token in tokens:
        if skip:
            skip = False
        elif token in SHELL_OPERATORS:
            segments.append(current)
            current = []
        elif token in REDIRECTIONS:
            skip = True
        else:
            current.append(token)
    segments.append(current)
    found = []
    for seg in segments:
        # The command word: a `collsel` not taken as an option's value (`salloc -p collsel`).
        starts = [i for i, t in enumerate(seg) if t == "collsel"
                  and (i == 0 or not seg[i - 1].startswith("-"))]
        if starts:
            args = seg[starts[0] + 1:]
            found.append((args, any(PLACEHOLDER.search(t) for t in args)))
    return found


def subcommand_parsers(parser):
    gen = load_generator()
    return dict(gen.subcommands(parser))


def command_problems(top, args, synopsis):
    """What is wrong with `collsel ARGS` for parser `top`: unknown sub-command, unknown option,
    or (for a full command) what parse_args refuses."""
    if isinstance(args, str):
        return [args]
    parser, path, rest = top, [], list(args)
    while rest and subcommand_parsers(parser):
        choices = subcommand_parsers(parser)
        if rest[0] not in choices:
            if rest[0] in ("-h", "--help"):
                break
            return [f"{' '.join(['collsel', *path])}: no sub-command {rest[0]!r} "
                    f"(known: {', '.join(choices)})"]
        path.append(rest.pop(0))
        parser = choices[path[-1]]
    if not path:
        return [] if not rest or rest[0] in ("-h", "--help", "--version") else \
            [f"collsel: no sub-command in {' '.join(args)!r}"]
    problems = []
    # after a bare `--` the words are not collsel's (`collsel verify ... -- mpirun --mca ...`)
    for token in rest[:rest.index("--")] if "--" in rest else rest:
        name = token.strip("[]").split("=")[0]
        if name.startswith("--") and name != "--" and name not in parser._option_string_actions:
            problems.append(f"collsel {' '.join(path)}: no option {name}")
    if problems or synopsis:
        return problems
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            top.parse_args(list(args))
    except SystemExit as e:
        if e.code:
            return [f"collsel {' '.join(args)}: {stderr.getvalue().strip()}"]
    return []


@pytest.fixture(scope="module")
def top_parser():
    return cli.parser()


def test_links_lead_somewhere():
    problems = [p for path in markdown_files() for p in broken_links(path)]
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_link_checker_finds_a_broken_link(tmp_path):
    (tmp_path / "other.md").write_text("# A heading `here`\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("see [ok](other.md#a-heading-here), [gone](missing.md),\n"
                    "[no anchor](other.md#elsewhere), `[not a link](x.md)`\n"
                    "```sh\n[in code](nowhere.md)\n```\n", encoding="utf-8")
    problems = broken_links(page)
    print("\n".join(problems))
    assert problems == [f"{page}:1: missing.md: no such file",
                        f"{page}:2: other.md#elsewhere: no heading #elsewhere in other.md"]


def test_quoted_commands_parse(top_parser):
    problems, paths = [], set()
    for path in markdown_files():
        for number, args, synopsis in quoted_commands(path) + inline_commands(path):
            problems += [f"{path}:{number}: {p}" for p in command_problems(top_parser, args,
                                                                          synopsis)]
            if not isinstance(args, str):
                paths.add(tuple(a for a in args[:2] if not a.startswith("-")))
    assert not problems, "quoted commands that do not parse:\n" + "\n".join(problems)
    assert len(paths) > 10        # the docs quote most commands: the extraction works


def test_every_quoted_subcommand_has_help(top_parser):
    """`collsel <path> --help` exits 0 for every sub-command path the docs quote."""
    paths = set()
    for path in markdown_files():
        for _, args, _ in quoted_commands(path):
            if isinstance(args, str) or not args or args[0].startswith("-"):
                continue
            sub = subcommand_parsers(top_parser).get(args[0])
            nested = subcommand_parsers(sub) if sub else {}
            paths.add((args[0], args[1]) if len(args) > 1 and args[1] in nested else (args[0],))
    for path in sorted(paths):
        with contextlib.redirect_stdout(io.StringIO()) as out, pytest.raises(SystemExit) as e:
            cli.main([*path, "--help"])
        assert e.value.code == 0 and out.getvalue().startswith("usage: collsel"), path


def test_command_checker_finds_wrong_commands(top_parser, tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```sh\n"
                    "collsel build t.csv --collective bcast --max-dept 3 --out o   # a typo\n"
                    "collsel biuld t.csv --collective bcast --out o\n"
                    "collsel model fitt --out p.json\n"
                    "collsel emit tree.json --out x.c\n"
                    "collsel stats T.csv --collective bcast \\\n"
                    "    [--depths 6] [--no-such-flag]\n"
                    "flock /tmp/l collsel model fit --out p.json && collsel query t.json "
                    "--comm-size 8 --msg-size 1\n"
                    "```\n"
                    "```text\ncollsel nonsense in an output block\n```\n"
                    "prose quotes `collsel emit --tagret c` and `collsel query --points FILE`\n",
                    encoding="utf-8")
    found = quoted_commands(page)
    problems = [(number, command_problems(top_parser, args, synopsis))
                for number, args, synopsis in found]
    print(problems)
    assert [number for number, _ in problems] == [2, 3, 4, 5, 6, 8, 8]
    assert problems[0][1] == ["collsel build: no option --max-dept"]
    assert problems[1][1][0].startswith("collsel: no sub-command 'biuld'")
    assert problems[2][1][0].startswith("collsel model: no sub-command 'fitt'")
    assert "required: --target" in problems[3][1][0]
    assert problems[4][1] == ["collsel stats: no option --no-such-flag"]
    assert [p for _, p in problems[5:]] == [[], []]
    inline = [(number, command_problems(top_parser, args, synopsis))
              for number, args, synopsis in inline_commands(page)]
    assert inline == [(13, ["collsel emit: no option --tagret"]), (13, [])]


def test_generated_reference_is_current(tmp_path):
    """docs/reference/<command>.md are what `make docs-reference` writes from today's parsers."""
    gen = load_generator()
    wanted = gen.pages(cli.parser())
    on_disk = {name: (REFERENCE / name).read_text(encoding="utf-8")
               for name in gen.generated_files(REFERENCE)}
    stale = sorted(name for name in set(wanted) | set(on_disk)
                   if wanted.get(name) != on_disk.get(name))
    assert not stale, (f"docs/reference is out of date for {', '.join(stale)}: "
                       "run `make docs-reference` and commit the pages")
    assert "build.md" in wanted and "## collsel model fit" in wanted["model.md"]


def test_every_page_is_in_the_nav():
    """`make docs` (mkdocs --strict) refuses a page missing from mkdocs.yml's nav: a new
    command's generated reference page must be added there too."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*(\S+\.md)\s*$", nav, flags=re.M))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages - listed == set(), "add these pages to mkdocs.yml's nav"
