"""What every ``batloc <command>`` module's ``main`` does: read its arguments, do its work, fail in one line.

argparse prints its own usage and errors (exit 2; 0 for ``--help``). An error of
the kinds a command names is one line ``batloc <name>: error: …`` on stderr and
exit status 2, never a traceback. A reader that left (``batloc workload stats
… | head``) is the umbrella command's business: BrokenPipeError goes up to it.
"""

import sys


def run(name, parser, work, errors, argv=None) -> int:
    """`work(args)` on `parser`'s reading of `argv` (default: the process's); its status (None: 0)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage or help
        return int(exc.code or 0)
    try:
        return int(work(args) or 0)
    except BrokenPipeError:
        raise
    except errors as exc:
        print(f"batloc {name}: error: {exc}", file=sys.stderr)
        return 2
