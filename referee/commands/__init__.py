"""Subcommands of `referee`, one module each (see referee.cli)."""
