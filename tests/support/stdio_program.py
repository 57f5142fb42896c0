"""A stdin/stdout bot program for the bridge tests, healthy or misbehaving on purpose.

    python3 stdio_program.py MODE [ARGS...]

Healthy answers are the first legal action. Messages are counted from 1; updates are
not answered.
- first                      always healthy
- die-at N                   exits with code 3 at decision N (after a word on stderr)
- garbage-at N               answers `this is not json` at decision N
- hang-at N SECONDS          sleeps SECONDS before answering decision N (then answers it)
- huge-at N                  answers decision N with a 2 MiB line (no JSON), then healthy
- endless-at N               at decision N writes without a newline forever
- binary-at N                answers decision N with binary junk
- close-stdin                reads one decision, closes its stdin, answers, lives on
- record FILE                healthy; appends every line it reads to FILE, then `EOF`
- stubborn PIDFILE           writes its pid, ignores SIGTERM and EOF, never exits
"""

import json
import os
import signal
import sys
import time


def healthy(line: str) -> str:
    message = json.loads(line)
    return json.dumps({"action": message["legal_actions"][0]})


def misbehave(mode: str, args: list[str], line: str) -> str | None:
    """The misbehaviour of `mode` at its decision (None: answer normally after it)."""
    if mode == "die":
        print("dying on purpose", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "garbage":
        return "this is not json"
    if mode == "hang":
        time.sleep(float(args[1]))
        return None
    if mode == "huge":
        return "x" * (2 << 20)
    if mode == "endless":
        while True:
            sys.stdout.write("y" * 65536)
    if mode == "binary":
        sys.stdout.buffer.write(b"\x00\xff\xfe\x80junk")
        return ""
    raise SystemExit(f"unknown mode {mode}")


def main(mode: str, args: list[str]) -> None:
    if mode == "close-stdin":
        line = sys.stdin.readline()
        os.close(0)
        print(healthy(line), flush=True)
        time.sleep(3600)
    if mode == "stubborn":
        with open(args[0], "w") as pidfile:
            pidfile.write(str(os.getpid()))
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.stdin.read()
        time.sleep(3600)
    for count, line in enumerate(sys.stdin, start=1):
        if mode == "record":
            with open(args[0], "a") as record:
                record.write(line)
        kind = json.loads(line).get("type")
        if kind == "result":
            break  # the result notice: the bridge closes stdin next
        if kind == "update":
            continue  # heard, never answered
        answer = None
        if mode.endswith("-at") and count == int(args[0]):
            answer = misbehave(mode.removesuffix("-at"), args, line)
        sys.stdout.write((healthy(line) if answer is None else answer) + "\n")
        sys.stdout.flush()
    if mode == "record":
        rest = sys.stdin.read()  # returns at EOF
        with open(args[0], "a") as record:
            record.write(rest + "EOF\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
