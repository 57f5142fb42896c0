"""referee: run, play and audit bot matches of Aldabas, Aladino and Caravans.

Each subcommand is a module in `referee.commands` that defines `HELP` (one line),
`add_arguments(parser)` and `run(args) -> int`."""

import argparse
import importlib
import pkgutil
import sys
from importlib import metadata

from referee import commands

DISTRIBUTION = "game-referee"


def version() -> str:
    """The installed distribution's version (pyproject.toml's `version`, the one source)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of `command` alone when it names one: only its
    module is loaded (a command's start is not slowed by every other's imports: the
    API's, the engines', networkx's...)."""
    parser = argparse.ArgumentParser(prog="referee", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names = sorted(info.name for info in pkgutil.iter_modules(commands.__path__))
    if command is not None and command.replace("-", "_") in names:
        names = [command.replace("-", "_")]
    for module_name in names:
        module = importlib.import_module(f"{commands.__name__}.{module_name}")
        name = getattr(module, "NAME", module_name.replace("_", "-"))
        subparser = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(subparser)
        subparser.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    first = (sys.argv[1:] if argv is None else argv)[:1]
    if first == ["--version"]:  # without loading the commands (and the engines)
        print(f"referee {version()}")
        return 0
    if first == ["serve"]:
        _patch_for_gevent()
    from referee.config import ConfigError  # after the patch: it imports redis and urllib3

    args = build_parser(first[0] if first else None).parse_args(argv)
    try:
        return args.run(args)
    except ConfigError as error:  # a bad environment variable: one line, as argparse's
        print(f"referee: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _patch_for_gevent() -> None:
    """`referee serve` runs gevent workers: the standard library is patched before any
    module that keeps a reference to it (ssl, sockets, locks) is imported, rather than
    in each worker after the commands were loaded (gevent warns that is too late)."""
    from gevent import monkey

    monkey.patch_all()


if __name__ == "__main__":
    sys.exit(main())
