"""The `semledger` command: ``python -m semledger`` and the installed script both run `run`."""

import sys


def run() -> int:
    """`main`, imported here so that Ctrl-C while the command's modules import (its first
    0.1 s) is said in one line, exit 130, as a later one is, not as a traceback."""
    try:
        from semledger._cli import main
    except KeyboardInterrupt:
        print("semledger: interrupted", file=sys.stderr)
        return 130
    return main()


if __name__ == "__main__":
    sys.exit(run())
