"""Bots as stdin/stdout programs: `referee bridge` and `cmd:` bot specs (issue 18).

`server` routes the bot protocol's messages to one program per match and seat, `program`
runs one program, `httpd` is the small HTTP/1.1 server under it, `local` runs a bridge in
a thread of this process (`referee play` / `check-bot` with `cmd:`).
"""

from referee.bridge.local import (
    CMD_PREFIX,
    BadCommand,
    ServedBots,
    bot_urls,
    check_runnable,
    running_bridge,
    split_command,
)
from referee.bridge.server import Bridge, BridgeConfig

__all__ = ["CMD_PREFIX", "BadCommand", "Bridge", "BridgeConfig", "ServedBots", "bot_urls",
           "check_runnable", "running_bridge", "split_command"]
