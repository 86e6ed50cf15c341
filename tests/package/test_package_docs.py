"""Every command and option the README and docs/*.md name exists.

The commands are read from the documents' code blocks and inline code: every
`batloc <command> [<subcommand>]`, `robin`, `batloc-batsim` and
`batloc-stage-proxy` invocation is walked with the real argparse parser of that
command (captured from its `main`, so it is the parser users get), each
`--flag` and `-f` checked, each option's value skipped; a fragment of inline
code made of flags alone (`--one-node`) must be a flag of some command. The
scheduler options named in `-o`/`--options`/`--scheduler-options` JSON and in
docs/schedulers.md's option tables are held to the options classes, and those
tables list every option there is.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import re
import shlex
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


class _Caught(Exception):
    def __init__(self, parser):
        self.parser = parser


def captured_parser(main, argv=("x",)) -> argparse.ArgumentParser:
    """The parser `main` builds, taken as it starts parsing (nothing else runs)."""
    def grab(self, *args, **kwargs):
        raise _Caught(self)

    saved = argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args
    argparse.ArgumentParser.parse_args = argparse.ArgumentParser.parse_known_args = grab
    try:
        with redirect_stdout(StringIO()), redirect_stderr(StringIO()):
            main(list(argv))
    except _Caught as caught:
        return caught.parser
    finally:
        argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args = saved
    raise AssertionError(f"{main} parsed nothing")


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Command (as typed) → its parser: `batloc <name>` for each of the umbrella's commands, and the three
    other console scripts."""
    from batloc.cli.main import COMMANDS

    found = {f"batloc {name}": captured_parser(importlib.import_module(module).main)
             for name, (module, _) in COMMANDS.items()}
    from batloc.adapters.cli import main as proxy
    from batloc.engine.cli import main as engine
    from batloc.robin.cli import main as robin

    found.update({"robin": captured_parser(robin), "batloc-batsim": captured_parser(engine),
                  "batloc-stage-proxy": captured_parser(proxy)})
    return found


PARSERS = parsers()
ALIASES = {"python -m batloc.robin": "robin", "python3 -m batloc.robin": "robin"}


def _subparsers(parser):
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def all_flags() -> set[str]:
    flags = set()

    def walk(parser):
        flags.update(o for a in parser._actions for o in a.option_strings)
        sub = _subparsers(parser)
        for child in (sub.choices.values() if sub else ()):
            walk(child)

    for parser in PARSERS.values():
        walk(parser)
    return flags


# Flags the documents name in prose beside batloc's own: real Batsim 4.2.1's (src/batsim.cpp's usage, which
# the contract compares with) and the benchmark scripts' (benchmarks/*.py, found in their sources).
BATSIM_FLAGS = {"--acknowledge-dynamic-jobs", "--add-role-to-hosts", "--disable-machine-state-tracing",
                "--disable-schedule-tracing", "--disable-storage-sharing", "--dump-execution-context",
                "--enable-compute-sharing", "--enable-dynamic-jobs", "--enable-profile-reuse", "--enable-redis",
                "--energy", "--events", "--export", "--forward-profiles-on-submission", "--forward-unknown-events",
                "--ignore-beyond-last-workflow", "--master-host", "--mmax", "--mmax-workload", "--no-sched",
                "--platform", "--quiet", "--redis-hostname", "--redis-port", "--redis-prefix", "--sched-cfg",
                "--sched-cfg-file", "--sg-cfg", "--sg-log", "--simgrid-version", "--socket-endpoint",
                "--verbosity", "--workflow", "--workflow-jobs-limit", "--workflow-start", "--workload"}
BENCHMARK_FLAGS = {m for path in (ROOT / "benchmarks").glob("*.py")
                   for m in re.findall(r"""add_argument\(\s*["'](--?[\w-]+)["']""", path.read_text())}
FLAGS = all_flags() | BATSIM_FLAGS | BENCHMARK_FLAGS
# robin's names of the backfilling variants (fcfs-bf), written alone in prose: not flags
SUFFIXES = {"-bf", "-BF"}


# ---------------------------------------------------------------------------------------------------------
# scheduler options

def scheduler_options() -> dict[str, set[str]]:
    """Family → the option names its options classes take."""
    from batloc.schedulers.filesharing.options import FileSharingOptions
    from batloc.schedulers.plain.options import COMMON
    from batloc.schedulers.planning.options import SchedulerOptions

    plain = set(COMMON)
    for module, cls in (("io_list", "Io_list"), ("io_pack", "Io_pack"), ("cons_tabu", "Cons_tabu")):
        plain |= set(getattr(importlib.import_module(f"batloc.schedulers.{module}"), cls).options_spec)
    return {"planning": {f.name for f in dataclasses.fields(SchedulerOptions)},
            "filesharing": {f.name for f in dataclasses.fields(FileSharingOptions)}, "plain": plain}


OPTIONS = scheduler_options()
ANY_OPTION = set().union(*OPTIONS.values())
JSON_FLAGS = {"-o", "--options", "--scheduler-options"}


def check_json_options(text: str, where: str) -> list[str]:
    try:
        value = json.loads(text)
    except ValueError:
        return []          # a placeholder such as JSON or '{...}'
    if not isinstance(value, dict):
        return []
    return [f"{where}: scheduler option {key!r} exists in no options class" for key in value if key not in ANY_OPTION]


# ---------------------------------------------------------------------------------------------------------
# reading the documents

def code_fragments(text: str) -> list[tuple[int, str, bool]]:
    """(line, text, is_block) of every code block (indented or fenced; lines joined at a trailing backslash)
    and every inline code span."""
    out, lines, i = [], text.splitlines(), 0
    fenced = False
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            fenced = not fenced
            i += 1
            continue
        if fenced or (line.startswith("    ") and (i == 0 or not lines[i - 1].strip() or
                                                   lines[i - 1].startswith("    "))):
            start, joined = i, line.strip()
            while joined.endswith("\\") and i + 1 < len(lines):
                i += 1
                joined = joined[:-1] + " " + lines[i].strip()
            out.append((start + 1, joined, True))
        else:
            out += [(i + 1, m.group(1), False) for m in re.finditer(r"`([^`]+)`", line)]
        i += 1
    # inline spans may wrap onto the next line
    flat = re.sub(r"\n(?!\n)", " ", text)
    for m in re.finditer(r"`([^`\n]+)`", flat):
        if m.group(1) not in {f for _, f, _ in out}:
            out.append((text.count("\n", 0, text.find(m.group(1).split()[0])) + 1, m.group(1), False))
    return out


def simple_commands(fragment: str) -> list[list[str]]:
    """A shell line as its simple commands' words (comments dropped); [] when it is not shell."""
    try:
        lexer = shlex.shlex(fragment, posix=True, punctuation_chars="|&;")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
    except ValueError:
        return []
    commands, current = [], []
    for w in words:
        if w and set(w) <= set("|&;"):
            commands.append(current)
            current = []
        else:
            current.append(w)
    return [c for c in commands + [current] if c]


def command_of(words: list[str]) -> tuple[str | None, list[str]]:
    """The documented command a simple command starts (after VAR=value words), and its arguments."""
    while words and re.match(r"^[A-Z_]+=", words[0]):
        words = words[1:]
    for alias, name in ALIASES.items():
        n = len(alias.split())
        if words[:n] == alias.split():
            return name, words[n:]
    if words and words[0] in ("robin", "batloc-batsim", "batloc-stage-proxy"):
        return words[0], words[1:]
    if words[:1] == ["batloc"]:
        if len(words) > 1 and f"batloc {words[1]}" in PARSERS:
            return f"batloc {words[1]}", words[2:]
        return "batloc", words[1:]
    return None, words


def check_command(name: str, args: list[str], where: str) -> list[str]:
    if name == "batloc":
        if not args or args[0] in ("--version", "-V", "--help", "-h"):
            return []       # the package's name, or the umbrella's own flags
        shown = args[0] if args else "(nothing)"
        return [] if shown.isupper() or shown in ("<command>", "…", "...") else [
            f"{where}: `batloc {shown}`: batloc has no such command"]
    parser, problems = PARSERS[name], []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":      # the staging proxy's SCHEDCMD: a command of its own
            sub_name, sub_args = command_of(args[i + 1:])
            return problems + (check_command(sub_name, sub_args, where) if sub_name else [])
        if word.startswith("-") and len(word) > 1 and not re.match(r"^-\d", word):
            flag, eq, value = word.partition("=")
            action = parser._option_string_actions.get(flag)
            if action is None:
                problems.append(f"{where}: `{name}` has no option {flag}")
            elif flag in JSON_FLAGS and (eq or i + 1 < len(args)):
                problems += check_json_options(value if eq else args[i + 1], where)
            if action is not None and not eq and action.nargs != 0 and i + 1 < len(args) and (
                    action.nargs != "?" or not args[i + 1].startswith("-")):
                i += 1
        elif _subparsers(parser) is not None and not word.startswith(("[", "<")) and not word.isupper():
            sub = _subparsers(parser)
            if word in sub.choices:
                parser, name = sub.choices[word], f"{name} {word}"
            elif "|" not in word:       # `from-swf | from-sacct` names several
                return problems + [f"{where}: `{name}` has no subcommand {word!r} ({', '.join(sub.choices)})"]
        i += 1
    return problems


def check_yaml_options(fragment: str, where: str) -> list[str]:
    """A robin scheduler entry's `options: {...}` (YAML flow mapping) holds scheduler options."""
    import yaml

    problems = []
    for found in re.finditer(r"options: (\{[^{}]*\})", fragment):
        try:
            value = yaml.safe_load(found.group(1))
        except yaml.YAMLError:
            continue
        if isinstance(value, dict):
            problems += [f"{where}: scheduler option {key!r} exists in no options class" for key in value
                         if isinstance(key, str) and key not in ANY_OPTION and key not in ("...", "…")]
    return problems


def check_text(text: str, document: str) -> list[str]:
    problems = []
    for line, fragment, block in code_fragments(text):
        where = f"{document}:{line}"
        problems += check_yaml_options(fragment, where)
        commands = simple_commands(fragment.replace("[", " ").replace("]", " ") if not block else fragment)
        named = False
        for words in commands:
            name, args = command_of(words)
            if name is not None:
                named = True
                problems += check_command(name, args, where)
        if not named and not block and fragment.startswith("-"):
            # flags alone in prose: a flag of some command (`--one-node`, `--gantt-window all`)
            words = fragment.replace("/", " ").split()
            for k, word in enumerate(words):
                if re.match(r"^--?[A-Za-z][\w-]*(=.*)?$", word) and word not in SUFFIXES:
                    flag = word.partition("=")[0]
                    if flag not in FLAGS:
                        problems.append(f"{where}: no command has the option {flag}")
                    if flag in JSON_FLAGS and k + 1 < len(words):
                        problems += check_json_options(fragment.split(None, 1)[1].strip().strip("'"), where)
    return problems


def option_tables(text: str) -> list[tuple[str, list[str]]]:
    """(the table's first header, the option names of each row) of every table whose first column is
    `option`."""
    rows, in_table = [], False
    for line in text.splitlines():
        if line.startswith("| option"):
            in_table = True
            continue
        if in_table and line.startswith("|---"):
            continue
        if in_table and line.startswith("|"):
            rows.append(re.findall(r"`([A-Za-z_]\w*)`", line.split("|")[1]))
        else:
            in_table = False
    return rows


# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_command_and_option_a_document_names_exists(document):
    assert check_text(document.read_text(), document.relative_to(ROOT).as_posix()) == []


def test_the_scheduler_option_tables_hold_every_option_and_no_other():
    text = (ROOT / "docs" / "schedulers.md").read_text()
    listed = {name for row in option_tables(text) for name in row}
    assert listed - ANY_OPTION == set(), "options listed that no scheduler takes"
    assert OPTIONS["planning"] - listed == set(), "options of the planning family left out of docs/schedulers.md"
    assert OPTIONS["filesharing"] - listed == set(), "file-sharing options left out of docs/schedulers.md"
    assert OPTIONS["plain"] - listed == set(), "plain schedulers' options left out of docs/schedulers.md"


def test_the_readme_points_to_a_page_per_command_family():
    readme = (ROOT / "README.md").read_text()
    for page in ("engine", "schedulers", "robin", "workloads", "platforms", "report", "study", "batsim"):
        assert f"(docs/{page}.md)" in readme and (ROOT / "docs" / f"{page}.md").exists(), page
    first_screen = readme.split("\n---\n")[0]
    assert first_screen.count("\n") < 60
    # the two install commands, byte for byte; the second is what CI runs
    assert "    bash scripts/install.sh && batloc demo\n" in first_screen
    assert "    bash scripts/install.sh && python3 -m pytest -q\n" in first_screen
    assert "bash scripts/install.sh && python3 -m pytest -q" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("text, problem", [
    ("    robin --output-dir out --no-such-flag\n", "`robin` has no option --no-such-flag"),
    ("Run `batloc-batsim -p p.xml --progres` first.\n", "`batloc-batsim` has no option --progres"),
    ("    batloc platform generate -o x.xml --nodes 5 --core 20\n", "`batloc platform generate` has no option --core"),
    ("    batloc platform gen -o x.xml\n", "`batloc platform` has no subcommand 'gen' (generate, rackham, show, annotate)"),
    ("    batloc report out --baseline fcfs \\\n      --gant-window all\n", "`batloc report` has no option --gant-window"),
    ("`batloc frobnicate`\n", "`batloc frobnicate`: batloc has no such command"),
    ("the proxy's `--walltime-excludes-loads`\n", "no command has the option --walltime-excludes-loads"),
    ("    batloc-stage-proxy --bind tcp://127.0.0.1:28000 -- batloc scheduler fcfs --verbose info\n",
     "`batloc scheduler` has no option --verbose"),
    ("`batloc scheduler schedulers/lea.py -o '{\"W\": 500, \"cachee\": \"lru\"}'`\n",
     "scheduler option 'cachee' exists in no options class"),
    ("a sweep entry `{name: lea-w, policy: lea, options: {w: 100}}`\n", "scheduler option 'w' exists in no options class"),
])
def test_a_document_that_names_what_does_not_exist_fails(text, problem):
    found = check_text(text, "doc.md")
    assert len(found) == 1 and found[0].startswith("doc.md:") and found[0].endswith(problem), found


def test_values_and_other_programs_are_not_taken_for_options():
    assert check_text("    robin --output-dir -weird --jobs 2\n"
                      "    pip install --no-deps pybatsim==3.2.1\n"
                      "    batloc scheduler lea -o '{\"W\": 500, \"backfilling\": true}' -v info\n"
                      "`robin … --dask local`, `batloc workload from-swf | from-sacct`\n", "doc.md") == []
