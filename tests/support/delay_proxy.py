"""A TCP proxy that holds every byte `--delay-ms` before passing it on, each way: the link
to a machine elsewhere (issue 31: workers reach Redis through it, 1 ms each way). Bytes keep
their order; a side that closes closes the other once what it sent has passed.

    python3 -m tests.support.delay_proxy --listen HOST:PORT --target HOST:PORT [--delay-ms 1]

`start_proxy` runs one as a process of its own (its CPU is not the test's or the
benchmark's) and returns once it listens."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from pathlib import Path

from referee.redis_server import wait_for_port

ROOT = Path(__file__).resolve().parents[2]
CHUNK = 1 << 16


async def _carry(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 delay_s: float) -> None:
    """Pass what `reader` reads to `writer`, each chunk `delay_s` after it was read."""
    loop = asyncio.get_running_loop()
    held: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def send() -> None:
        while True:
            due, data = await held.get()
            if (pause := due - loop.time()) > 0:
                await asyncio.sleep(pause)
            if not data:
                return
            writer.write(data)
            await writer.drain()

    sender = asyncio.create_task(send())
    try:
        while data := await reader.read(CHUNK):
            held.put_nowait((loop.time() + delay_s, data))
        held.put_nowait((loop.time() + delay_s, b""))
        await sender
    except (ConnectionError, OSError):
        pass
    finally:
        sender.cancel()
        writer.close()


async def _serve(listen: tuple[str, int], target: tuple[str, int], delay_s: float) -> None:
    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_carry(reader, upstream_writer, delay_s),
                             _carry(upstream_reader, writer, delay_s))

    server = await asyncio.start_server(connection, *listen)
    async with server:
        await server.serve_forever()


def start_proxy(listen: tuple[str, int], target: tuple[str, int], delay_ms: float = 1.0,
                ) -> subprocess.Popen:
    """The proxy in a process of its own, once it listens on `listen`."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.delay_proxy", "--listen", _joined(listen),
         "--target", _joined(target), "--delay-ms", str(delay_ms)], cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for_port(listen[1], host=listen[0])
    return process


def _joined(address: tuple[str, int]) -> str:
    return f"{address[0]}:{address[1]}"


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", type=_address, required=True)
    parser.add_argument("--target", type=_address, required=True)
    parser.add_argument("--delay-ms", type=float, default=1.0)
    args = parser.parse_args()
    asyncio.run(_serve(args.listen, args.target, args.delay_ms / 1000))


if __name__ == "__main__":
    main()
