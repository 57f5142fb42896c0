"""The escape suite (issue 29): hostile hosted bots, each playing a real match (against a
first-legal-action hosted bot, the "victim") on one `referee worker --hosted`, all at once,
while normal hosted matches (two first-legal bots each) play one after the other on the
same worker for as long as the attacks last.

The attacks (tests/support/hosted/hostile/main.py, one python3 bot each): connect to the
worker's Redis, to TCP, UDP and unix listeners of this test and to 192.0.2.1 (TEST-NET, never
routed), resolve a name; read /etc/shadow, the worker's /proc/<pid>/environ, REFEREE_SECRET,
the signing key, another bot's build and source, files of the host; write outside its tmp;
fill its tmp (and /dev/shm); write stderr without end; fork bomb; allocate without end;
spin the CPU between and during decisions; sleep forever; close stdout and keep running; a
line of 1 GiB without a newline; double-fork daemons that would outlive the match; ptrace
its parent; `kill -9 -1`.

Every one is contained: the seat faults as the failure policy says (or plays on, where the
attack only fails), the victim and the normal matches play on untouched, nothing of the bot
runs after its match (the machine's process table is read: every process of a bot carries
its marker), nothing is written outside its tmp, no secret reaches its stderr or its
replay, and no process of any sandbox is left under the worker or reparented away from it.

It all runs in one module fixture (`escape`) so the attacks share one worker and the time
of one match; the tests then check what it saw, one attack at a time.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import pytest
import redis

import engines
from referee.api.app import create_app
from referee.match import sandbox
from referee.match.sealing import append_new_key
from referee.match.stderr import KEPT_BYTES, PROGRAM_BYTES
from tests.support.apitest import ADMIN, SECRET, ApiClient, common_config, signing_key_file
from tests.support.hosted import hostile
from tests.support.hosted import source as first_legal_source
from tests.support.waiting import wait_for
from tests.support.workers import Workers
from tournament.store import Store

VICTIM_MS = 5000  # the victims' and the normal bots' deadline: they answer at once
FAULT_MS = 3000  # the hostile seats meant to time out
PLAY_ON_MS = 20_000  # the hostile seats that attack, then answer (a fault is not a timeout)
BUILD_WAIT_S = 240
PLAY_WAIT_S = 150  # every match of the run, all at once
STOP_WAIT_S = 15  # a finished match's processes are gone by then
SAMPLE_EVERY_S = 0.2
STATUS_EVERY_S = 0.5
FILL_CAP = 1 << 30  # the fill bots stop here if nothing stops them before
ALLOCATION_CAP = 4 << 30
TICKS_PER_S = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Attack:
    """One hostile match: `program` (main.py's attack, the name by default) in seat 0; the
    fault codes its seat may end with (None: it plays on without a fault)."""

    what: str
    faults: frozenset[str | None]
    deadline_ms: int
    program: str = ""
    game: str = "aladino"
    seed: int = 1
    policy: str = "forfeit"


PLAYS_ON = frozenset({None})
ATTACKS = {
    "network": Attack("connect to Redis, TCP/UDP/unix listeners, 192.0.2.1; resolve a name",
                      PLAYS_ON, PLAY_ON_MS),
    "secrets": Attack("read the secrets, the signing key, another bot's build, host files",
                      PLAYS_ON, PLAY_ON_MS),
    "writes": Attack("write outside its tmp", PLAYS_ON, PLAY_ON_MS),
    "fill_tmp": Attack("fill its tmp until ENOSPC, then play on", PLAYS_ON, PLAY_ON_MS),
    "fill_shm": Attack("fill /dev/shm until ENOSPC, then play on", PLAYS_ON, PLAY_ON_MS),
    "flood_stderr": Attack("write stderr without end", PLAYS_ON, PLAY_ON_MS),
    "fork_bomb": Attack("fork bomb", frozenset({"timeout"}), FAULT_MS),
    "allocate": Attack("allocate without end", frozenset({"crash"}), PLAY_ON_MS),
    "allocate_random": Attack("allocate without end, the crash policy `random`",
                              frozenset({"crash"}), PLAY_ON_MS, program="allocate",
                              policy="random"),
    "spin": Attack("spin the CPU between and during decisions", frozenset({"timeout"}),
                   FAULT_MS),
    "sleep": Attack("sleep forever", frozenset({"timeout"}), FAULT_MS),
    "close_stdout": Attack("close stdout and keep running", frozenset({"crash", "timeout"}),
                           FAULT_MS),
    "huge_line": Attack("a line of 1 GiB without a newline", frozenset({"malformed"}),
                        PLAY_ON_MS),
    "daemon": Attack("double-fork daemons that would outlive the match", PLAYS_ON,
                     PLAY_ON_MS),
    "ptrace": Attack("ptrace its parent and every process it sees", PLAYS_ON, PLAY_ON_MS),
    "kill_all": Attack("kill -9 -1 every 10 ms, and the worker by its pid",
                       frozenset({None, "crash"}), PLAY_ON_MS, game="caravans", seed=2),
}


# ----- the machine's process table ------------------------------------------------------
@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    uid: int
    state: str  # R, S, D, Z...
    cpu_s: float
    argv: tuple[str, ...]
    markers: frozenset[str]  # the hostile markers in its argv or environment

    def __str__(self) -> str:
        return (f"pid {self.pid} (parent {self.ppid}, uid {self.uid}, state {self.state}): "
                f"{' '.join(self.argv)}")


def process_table() -> dict[int, Process]:
    """Every process of the machine (this test runs as root: it reads every environment)."""
    table = {}
    prefix = f"{hostile.MARKER_VARIABLE}=".encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat_line = Path(f"/proc/{name}/stat").read_text()
            status = Path(f"/proc/{name}/status").read_text()
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            uid = next(int(line.split()[1]) for line in status.splitlines()
                       if line.startswith("Uid:"))
            # root's processes are most of them: their argv alone is looked at
            environ = (Path(f"/proc/{name}/environ").read_bytes().split(b"\0") if uid
                       else [])
        except OSError:
            continue  # gone meanwhile
        fields = stat_line.rsplit(")", 1)[1].split()
        words = tuple(word.decode(errors="replace") for word in argv if word)
        markers = {word for word in words if word.startswith("hostile-")}
        markers |= {entry[len(prefix):].decode(errors="replace") for entry in environ
                    if entry.startswith(prefix)}
        table[int(name)] = Process(int(name), int(fields[1]), uid, fields[0],
                                   (int(fields[11]) + int(fields[12])) / TICKS_PER_S, words,
                                   frozenset(markers))
    return table


def cgroup_cpu_cores(pid: int) -> float | None:
    """The CPU quota (in cores) of the cgroups `pid` is in, as the host sees them (v1's cpu
    tree, v2's tree: the least of those that set one); None when none does."""
    mounts: dict[str, tuple[str, str]] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        kind, _, options = fields[fields.index("-") + 1:][:3]
        for controller in ([""] if kind == "cgroup2" else
                           options.split(",") if kind == "cgroup" else []):
            mounts.setdefault(controller, (fields[3], fields[4]))
    quotas = []
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        tree = "cpu" if "cpu" in controllers.split(",") else "" if not controllers else None
        if tree is None or tree not in mounts:
            continue
        root, point = mounts[tree]
        relative = os.path.relpath(path, root)
        folder = Path(point) if relative.startswith("..") else Path(point, relative)
        try:
            if tree:
                quota = int((folder / "cpu.cfs_quota_us").read_text())
                period = int((folder / "cpu.cfs_period_us").read_text())
            else:
                words = (folder / "cpu.max").read_text().split()
                quota, period = (-1 if words[0] == "max" else int(words[0])), int(words[1])
        except (OSError, ValueError, IndexError):
            continue
        if quota > 0:
            quotas.append(quota / period)
    return min(quotas, default=None)


def descendants(table: dict[int, Process], root: int) -> list[Process]:
    children: dict[int, list[int]] = {}
    for process in table.values():
        children.setdefault(process.ppid, []).append(process.pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(table[pid])
        todo += children.get(pid, [])
    return found


def escaped(table: dict[int, Process], uid: int) -> list[Process]:
    """Processes of the sandbox uid that no sandbox holds: each one's parent is neither a
    process of that uid nor is it itself bwrap (which the worker starts as that uid). Not
    zombies: they run nothing, and an orphan's wait for an init that may never reap it
    (a container's) is none of the sandbox's doing."""
    return [process for process in table.values() if process.uid == uid
            and process.state != "Z"
            and not (process.argv and os.path.basename(process.argv[0]) == "bwrap")
            and (parent := table.get(process.ppid)) is not None and parent.uid != uid]


# ----- what one hostile match showed ------------------------------------------------------
@dataclass
class Played:
    attack: str
    marker: str
    bot: dict
    match_id: str = ""
    created_at: float = 0.0
    finished_at: float | None = None  # when this test saw it over (time.monotonic)
    gone_after_s: float | None = None  # its processes gone this long after
    left: list[str] = field(default_factory=list)  # its processes STOP_WAIT_S after
    peak: int = 0  # the most processes of it seen at once
    cpu: list[tuple[float, float]] = field(default_factory=list)  # (when, CPU s) of them
    cpu_quota: list[float | None] = field(default_factory=list)  # its cgroup's, in cores
    match: dict = field(default_factory=dict)
    replay: dict = field(default_factory=dict)
    stderr: dict[int, str] = field(default_factory=dict)

    def reports(self, attempt: str | None = None) -> list[dict]:
        """What the hostile bot said it did (its REPORT lines), of one attempt or all."""
        found = [json.loads(line.removeprefix("| REPORT ")) for line in
                 self.stderr.get(0, "").splitlines() if line.startswith("| REPORT {")]
        return [row for row in found if attempt is None or row["attempt"] == attempt]

    def faults(self) -> list[tuple[int, dict]]:
        return [(step["seat"], step["fault"]) for step in self.replay.get("steps", [])
                if step["fault"]]

    def about(self) -> str:
        return (f"{self.attack} ({ATTACKS[self.attack].what}), match {self.match_id}: "
                f"{self.match.get('status')}, faults {self.faults()}, forfeit "
                f"{self.match.get('forfeit')}\nstderr of the hostile seat:\n"
                f"{self.stderr.get(0, '')[-6000:]}")


@dataclass
class Escape:
    """Everything the run saw (the `escape` fixture)."""

    limits: sandbox.Limits
    worker: int
    played: dict[str, Played]
    normal: list[dict]  # the normal matches: view, replay, (created, finished) times
    needles: dict[str, str]  # secret name -> its text
    listeners: dict[str, str]  # listener -> what reached it ("" for nothing)
    redis_key_set: bool
    host_written: list[str]  # files of a bot found on the host
    host_targets: list[str]
    left_at_end: list[str]
    worker_alive: bool
    worker_log: str
    written_name: str
    key_file: str  # the worker's signing key
    hosted_dir_left: list[str]  # what is in the worker's REFEREE_HOSTED_DIR after the run


# ----- the run ----------------------------------------------------------------------------

def upload(api: ApiClient, name: str, source: dict) -> dict:
    response = api.post("/bots", token=ADMIN,
                        json={"name": name, "games": engines.names(), "source": source})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def ready(api: ApiClient, bot: dict) -> None:
    settled = wait_for(lambda: (view := api.get(f"/bots/{bot['id']}", token=ADMIN)
                                .get_json())["status"] != "building" and view,
                       BUILD_WAIT_S, f"the build of {bot['name']}")
    build = api.get(f"/bots/{bot['id']}/build", token=ADMIN).get_json()
    assert settled["status"] == "ready", (bot["name"], build.get("log"))


def world_folder(path: Path, mode: int) -> Path:
    path.mkdir(exist_ok=True)
    path.chmod(mode)
    return path


def key_lines(path: Path) -> list[str]:
    """The base64 lines of a PEM key file (each holds key material)."""
    return [line for line in path.read_text().splitlines()
            if line and not line.startswith("-----")]


def listen(kind: int, family: int, address: object) -> socket.socket:
    sock = socket.socket(family, kind)
    sock.bind(address)
    if kind == socket.SOCK_STREAM:
        sock.listen(16)
    sock.setblocking(False)
    return sock


def reached(sock: socket.socket) -> str:
    """What reached a listener: "" for nothing."""
    try:
        if sock.type == socket.SOCK_STREAM:
            connection, peer = sock.accept()
            connection.close()
            return f"a connection from {peer!r}"
        data, peer = sock.recvfrom(4096)
        return f"a datagram {data!r} from {peer!r}"
    except BlockingIOError:
        return ""


@pytest.fixture(scope="module")
def escape(redis_server, openapi, tmp_path_factory) -> Iterator[Escape]:
    client = redis.Redis.from_url(redis_server)
    client.flushall()
    token = uuid.uuid4().hex[:10]
    base = "/var/tmp" if os.path.isdir("/var/tmp") else None
    # host folders any uid may read (and the `open` ones write): only the sandbox's own
    # view of the files can keep a bot out of them, not their modes
    root = world_folder(Path(tempfile.mkdtemp(prefix="referee-escape-", dir=base)), 0o755)
    tmp_root = world_folder(Path(tempfile.mkdtemp(prefix="referee-escape-")), 0o755)
    pytest_tmp = tmp_path_factory.mktemp("escape")
    sockets: list[socket.socket] = []
    workers = Workers(redis_server, pytest_tmp)
    try:
        yield run(client, redis_server, openapi, token, root, tmp_root, pytest_tmp, workers,
                  sockets)
    finally:
        workers.stop_all()
        for sock in sockets:
            sock.close()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(tmp_root, ignore_errors=True)
        client.close()


def run(client: redis.Redis, redis_url: str, openapi, token: str, root: Path, tmp_root: Path,
        pytest_tmp: Path, workers: Workers, sockets: list[socket.socket]) -> Escape:
    hosted_dir = world_folder(root / "hosted", 0o755)
    key_file = world_folder(root / "keys", 0o755) / "signing-keys.pem"
    append_new_key(key_file)
    key_file.chmod(0o644)
    probes = {}
    for folder in (root, tmp_root):
        probe = folder / "probe.txt"
        probe.write_text(f"probe-{token}-{folder.name}\n")
        probe.chmod(0o644)
        probes[str(probe)] = probe.read_text().strip()
    open_dirs = [world_folder(folder / "open", 0o777) for folder in (root, tmp_root)]
    canary = f"canary-{uuid.uuid4().hex}"
    env = {"REFEREE_HOSTED_DIR": str(hosted_dir), "REFEREE_SIGNING_KEY_FILE": str(key_file),
           "REFEREE_ESCAPE_CANARY": canary}
    limits = sandbox.Limits.from_env({**os.environ, **env})
    worker = workers.start_ready(1, hosted=True, **env)[0]
    api = ApiClient(create_app(common_config(redis_url)), openapi)

    tcp = listen(socket.SOCK_STREAM, socket.AF_INET, ("127.0.0.1", 0))
    udp = listen(socket.SOCK_DGRAM, socket.AF_INET, ("127.0.0.1", 0))
    abstract_name = f"referee-escape-{token}"
    abstract = listen(socket.SOCK_STREAM, socket.AF_UNIX, "\0" + abstract_name)
    unix_path = root / "socket"
    unix = listen(socket.SOCK_STREAM, socket.AF_UNIX, str(unix_path))
    unix_path.chmod(0o777)
    listeners = {"tcp 127.0.0.1": tcp, "udp 127.0.0.1": udp, "abstract unix": abstract,
                 "unix socket file": unix}
    try:
        tcp6 = listen(socket.SOCK_STREAM, socket.AF_INET6, ("::1", tcp.getsockname()[1]))
        listeners["tcp ::1"] = tcp6
    except OSError:
        pass  # no IPv6 here: the bot's attempt on ::1 fails all the more
    sockets += listeners.values()

    victim_mark = f"victim-source-{uuid.uuid4().hex}"
    victim_source = first_legal_source("python3")
    victim_source["files"]["main.py"] += f"# {victim_mark}\n"
    victim = upload(api, "victim", victim_source)
    normal_bot = upload(api, "normal", first_legal_source("python3"))
    ready(api, victim)
    ready(api, normal_bot)
    digest = Store.from_url(redis_url).bot_build(victim["id"], 1)["digest"]
    victim_build = hosted_dir / "builds" / f"{victim['id']}-1-{digest[:16]}"

    written_name = f"hostile-written-{token}"
    host_targets = [str(folder / written_name) for folder in open_dirs]
    host_targets += [str(pytest_tmp / "pwned"), str(hosted_dir / "builds" / written_name),
                     str(victim_build / written_name)]
    played: dict[str, Played] = {}
    for name, attack in ATTACKS.items():
        marker = f"hostile-{token}-{name}"
        config = {
            "attack": attack.program or name, "marker": marker, "worker_pid": worker.pid,
            "redis_port": urlparse(redis_url).port, "redis_key": f"escaped-{marker}",
            "tcp_port": tcp.getsockname()[1], "udp_port": udp.getsockname()[1],
            "abstract_socket": abstract_name, "unix_socket": str(unix_path),
            "key_files": [str(key_file), str(signing_key_file())],
            "victim_build": str(victim_build), "hosted_dir": str(hosted_dir),
            "probes": sorted(probes), "written_name": written_name,
            "host_targets": host_targets, "fill_cap": FILL_CAP,
            "allocation_cap": ALLOCATION_CAP}
        played[name] = Played(name, marker, upload(api, f"hostile-{name}",
                                                   hostile.source(config)))
    for one in played.values():
        ready(api, one.bot)

    normal = play(api, played, victim, normal_bot)
    for one in played.values():
        collect(api, one)
    for match in normal:
        match["replay"] = api.get(f"/matches/{match['view']['id']}/replay",
                                  token=ADMIN).get_json()
    left_at_end = wait_until_clean(worker.pid, limits.uid, played)

    needles = {"REFEREE_SECRET": SECRET, "the admin token": ADMIN,
               "the worker's environment (a canary)": canary,
               "the victim's source": victim_mark}
    needles |= {f"the worker's signing key ({n})": line
                for n, line in enumerate(key_lines(key_file))}
    needles |= {f"the tests' signing key ({n})": line
                for n, line in enumerate(key_lines(signing_key_file()))}
    needles |= {f"host file {path}": text for path, text in probes.items()}
    needles |= {f"{bot['name']}'s bot secret": bot["secret"] for bot in
                [victim, normal_bot, *(one.bot for one in played.values())]
                if bot.get("secret")}
    return Escape(
        limits=limits, worker=worker.pid, played=played, normal=normal, needles=needles,
        listeners={name: reached(sock) for name, sock in listeners.items()},
        redis_key_set=any(client.exists(f"escaped-{one.marker}") for one in played.values()),
        host_written=written_on_host(root, tmp_root, written_name, token, host_targets),
        host_targets=host_targets, left_at_end=left_at_end,
        worker_alive=worker.poll() is None, worker_log=workers.logs(),
        written_name=written_name, key_file=str(key_file),
        hosted_dir_left=sorted(os.listdir(hosted_dir)))


def play(api: ApiClient, played: dict[str, Played], victim: dict, normal_bot: dict
         ) -> list[dict]:
    """Start a normal match, then every hostile match; start the next normal match as each
    ends, for as long as a hostile match plays, while a thread watches the process table.
    The normal matches, with the times they were created and seen finished."""
    normal: list[dict] = []

    def start_normal() -> None:
        seats = [{"kind": "bot", "bot_id": normal_bot["id"]}] * 2
        view = api.create_match("caravans", seats, seed=2, deadline_ms=VICTIM_MS)
        normal.append({"view": view, "created_at": time.monotonic(), "finished_at": None})

    stop = threading.Event()
    sampler = threading.Thread(target=sample, args=(played, stop), daemon=True)
    sampler.start()
    try:
        start_normal()
        for one in played.values():
            attack = ATTACKS[one.attack]
            policy = ({"crash": "random", "strike_limit": None} if attack.policy == "random"
                      else {})
            seats = [{"kind": "bot", "bot_id": one.bot["id"],
                      "deadline_ms": attack.deadline_ms},
                     {"kind": "bot", "bot_id": victim["id"], "deadline_ms": VICTIM_MS}]
            one.created_at = time.monotonic()
            one.match_id = api.create_match(attack.game, seats, seed=attack.seed,
                                            deadline_ms=VICTIM_MS,
                                            failure_policy=policy)["id"]
        give_up = time.monotonic() + PLAY_WAIT_S
        while time.monotonic() < give_up:
            for one in played.values():
                if one.finished_at is None and finished(api, one.match_id):
                    one.finished_at = time.monotonic()
            last = normal[-1]
            if last["finished_at"] is None and finished(api, last["view"]["id"]):
                last["finished_at"] = time.monotonic()
                if any(one.finished_at is None for one in played.values()):
                    start_normal()
            if normal[-1]["finished_at"] is not None and all(
                    one.gone_after_s is not None or one.left for one in played.values()):
                break
            time.sleep(STATUS_EVERY_S)
    finally:
        stop.set()
        sampler.join()
    for match in normal:
        match["view"] = api.get(f"/matches/{match['view']['id']}", token=ADMIN).get_json()
    return normal


def sample(played: dict[str, Played], stop: threading.Event) -> None:
    """Watch each hostile bot's processes until `stop`: how many at most, their CPU time
    and their cgroup's CPU quota while the match plays, and when they are gone after it
    (or which are left `STOP_WAIT_S` after)."""
    while not stop.is_set():
        now = time.monotonic()
        table = process_table()
        for one in played.values():
            mine = [process for process in table.values() if one.marker in process.markers]
            one.peak = max(one.peak, len(mine))
            finished_at = one.finished_at
            if finished_at is None:
                if mine:
                    one.cpu.append((now, sum(process.cpu_s for process in mine)))
                    if not one.cpu_quota:
                        with suppress(OSError):  # gone meanwhile: the next sample
                            one.cpu_quota.append(cgroup_cpu_cores(mine[0].pid))
            elif one.gone_after_s is None and not one.left:
                if not mine:
                    one.gone_after_s = max(0.0, now - finished_at)
                elif now - finished_at > STOP_WAIT_S:
                    one.left = [str(process) for process in mine]
        stop.wait(SAMPLE_EVERY_S)


def finished(api: ApiClient, match_id: str) -> bool:
    status = api.get(f"/matches/{match_id}", token=ADMIN).get_json()["status"]
    return status in ("finished", "failed")


def collect(api: ApiClient, one: Played) -> None:
    """The match, its replay and both seats' stderr (kept once each seat is stopped)."""
    one.match = api.get(f"/matches/{one.match_id}", token=ADMIN).get_json()
    if one.match["status"] not in ("finished", "failed"):
        return
    one.replay = api.get(f"/matches/{one.match_id}/replay", token=ADMIN).get_json()
    for seat in (0, 1):
        try:
            answer = wait_for(lambda seat=seat: (response := api.get(
                f"/matches/{one.match_id}/stderr?seat={seat}", token=ADMIN)
            ).status_code == 200 and response, STOP_WAIT_S, "its stderr")
        except AssertionError:  # the seat was never stopped: the tests say what is left
            one.stderr[seat] = f"(no stderr kept {STOP_WAIT_S} s after the match)"
            continue
        one.stderr[seat] = answer.data.decode(errors="replace")


def wait_until_clean(worker: int, uid: int, played: dict[str, Played]) -> list[str]:
    """Once every match is over: wait for no process under the worker, none of the sandbox
    uid that escaped its sandbox and none carrying a hostile marker; what is left if not."""
    markers = {one.marker for one in played.values()}
    give_up = time.monotonic() + STOP_WAIT_S
    while True:
        table = process_table()
        left = {process.pid: process for process in descendants(table, worker)}
        left |= {process.pid: process for process in escaped(table, uid)}
        left |= {process.pid: process for process in table.values()
                 if process.markers & markers}
        if not left or time.monotonic() > give_up:
            return [str(process) for process in left.values()]
        time.sleep(0.25)


def written_on_host(root: Path, tmp_root: Path, written_name: str, token: str,
                    targets: list[str]) -> list[str]:
    """The files a hostile bot wrote that are on the host: the targets it was given, its
    file name in the folders it tried (as the host sees them), and any file named after
    this run in this run's folders or the machine's shared ones."""
    found = [path for path in targets if os.path.lexists(path)]
    for folder in ("/", "/usr", "/etc", "/tmp", "/var/tmp", "/dev", "/dev/shm", "/proc"):
        if os.path.lexists(Path(folder, written_name)):
            found.append(str(Path(folder, written_name)))
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        with_token = [entry.path for entry in os.scandir(folder) if token in entry.name]
        found += with_token
    for top in (root, tmp_root):
        for folder, _, files in os.walk(top):
            found += [os.path.join(folder, name) for name in files if token in name]
    return sorted(set(found))


# ----- the tests --------------------------------------------------------------------------
def hostile_fault_codes(one: Played) -> set[str | None]:
    codes = {fault["code"] for seat, fault in one.faults() if seat == 0}
    return codes or {None}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_hostile_seat_ends_as_the_failure_policy_says(escape, attack):
    """Each attack in a real match: the match finishes; the hostile seat faults as it may
    (a timeout, a crash, a malformed line: forfeit by default, the match ends there; under
    `random`, each of its decisions is a fault with a random action and the match plays to
    the end) or plays on without a fault, where the attack only fails; the victim seat of
    the same match, in a sandbox of its own, never faults."""
    one = escape.played[attack]
    expected = ATTACKS[attack]
    assert one.match.get("status") == "finished", one.about()
    faults = one.faults()
    assert all(seat == 0 for seat, _ in faults), f"the victim faulted: {one.about()}"
    codes = hostile_fault_codes(one)
    assert len(codes) == 1 and codes <= expected.faults, one.about()
    if codes == {None}:
        assert one.match["forfeit"] is None, one.about()
    elif expected.policy == "forfeit":
        assert len(faults) == 1 and faults[0][1]["policy"] == "forfeit", one.about()
        assert one.match["forfeit"]["seat"] == 0, one.about()
    else:
        assert one.match["forfeit"] is None, one.about()
        assert {fault["policy"] for _, fault in faults} == {"random"}, one.about()
        decided = [step for step in one.replay["steps"] if step["seat"] == 0]
        assert len(faults) == len(decided) > 1, one.about()
    assert one.match["result"] is not None, one.about()


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_nothing_of_a_hostile_bot_runs_after_its_match(escape, attack):
    """Every process of the bot (each carries its marker: forks, daemons, a fork bomb's
    tree) is gone within seconds of its match's end: the sandbox's cgroup is killed and
    its pid namespace goes with bwrap's init."""
    one = escape.played[attack]
    assert one.finished_at is not None, one.about()
    assert one.peak >= 1, f"no process of {attack} was ever seen: is the marker lost?"
    assert not one.left, (f"{attack}: still running {STOP_WAIT_S} s after its match: "
                          f"{one.left}")
    assert one.gone_after_s is not None, one.about()


def test_the_network_is_out_of_reach(escape):
    """Attack: connect to the worker's Redis (and SET a key), to this test's TCP listener
    (IPv4 and IPv6 loopback), its abstract unix socket and a unix socket file of the host;
    send UDP datagrams to this test and to 192.0.2.1; connect to 192.0.2.1:80; resolve
    example.com. Containment: every connection and the name fail (the sandbox has a
    network namespace of its own, with its own loopback only); no listener of the test saw
    anything; the Redis key is not set."""
    one = escape.played["network"]
    must_fail = ("redis", "tcp-listener", "tcp-listener-v6", "tcp-test-net", "unix-abstract",
                 "unix-path", "resolve")
    for attempt in must_fail:
        rows = one.reports(attempt)
        assert rows, f"the bot did not say how {attempt} went: {one.about()}"
        assert not any(row["ok"] for row in rows), (attempt, rows)
    assert {row["attempt"] for row in one.reports()} >= {"udp-listener", "udp-test-net"}
    assert escape.listeners == dict.fromkeys(escape.listeners, ""), escape.listeners
    assert not escape.redis_key_set, "a hostile bot set a key in the worker's Redis"
    interfaces = one.reports("interfaces")
    assert interfaces and set(interfaces[0].get("names", [])) <= {"lo"}, interfaces


def test_no_secret_is_read(escape):
    """Attack: REFEREE_SECRET in its environment; /etc/shadow; the worker's signing key
    (a file any uid may read, on the host) and the tests' key; the victim's build (its
    source) in the worker's cache and the cache's folder of builds; host
    files any uid may read; the worker's /proc/<pid>/environ, cmdline, descriptors and root;
    every /proc/*/environ it sees; descriptors it inherited. Containment: each attempt
    fails (the sandbox sees no host file but /usr and a few of /etc, no process but its
    own); what it could read (its own environment, its sandbox's processes) holds no
    secret; no secret (REFEREE_SECRET, the admin token, a canary in the worker's
    environment, a line of either signing key, the victim's source, any bot's secret, the
    host files) appears in any stderr or replay of any match of the run."""
    one = escape.played["secrets"]
    must_fail = ("secret-variable", "shadow", "signing-key", "victim-source", "victim-build",
                 "builds", "host-file", "worker-environ", "worker-cmdline",
                 "worker-descriptors", "worker-root-key")
    for attempt in must_fail:
        rows = one.reports(attempt)
        assert rows, f"the bot did not say how {attempt} went: {one.about()}"
        assert not any(row["ok"] for row in rows), (attempt, rows)
    environment = one.reports("environment")
    assert environment, one.about()
    assert not any(name.startswith("REFEREE_") for name in environment[0]["environ"]), \
        environment
    for row in one.reports("descriptor"):
        assert row["target"].startswith("pipe:"), f"an inherited descriptor: {row}"
    texts = {f"{other.attack} seat {seat} stderr": text
             for other in escape.played.values() for seat, text in other.stderr.items()}
    texts |= {f"{other.attack} replay": json.dumps(other.replay)
              for other in escape.played.values()}
    texts |= {f"normal match {match['view']['id']} replay": json.dumps(match["replay"])
              for match in escape.normal}
    leaks = [(secret, where) for secret, needle in escape.needles.items()
             for where, text in texts.items() if needle in text]
    assert not leaks, f"secrets read: {leaks}"


def test_nothing_is_written_outside_the_private_tmp(escape):
    """Attack: create a file in /bot, /usr, /etc, /, /var/tmp, /proc, /dev and /dev/shm of the
    sandbox, in its /tmp, and at host paths: folders any uid may write (under /var/tmp and
    /tmp), the test's tmp_path, the worker's cache (builds, the victim's build).
    Containment: only /tmp (private, a tmpfs of its own) takes it; every other attempt fails
    but for the sandbox's own /dev (a tmpfs of bwrap's, gone with the sandbox); none of the
    files, nor any file named after this run, is on the host."""
    one = escape.played["writes"]
    rows = {row["path"]: row for row in one.reports() if "path" in row}
    name = escape.written_name
    must_fail = [f"{folder}/{name}" for folder in ("/bot", "/usr", "/etc", "", "/var/tmp",
                                                   "/proc")] + escape.host_targets
    for path in must_fail:
        assert path in rows, f"the bot did not say how writing {path} went: {one.about()}"
        assert not rows[path]["ok"], rows[path]
    assert rows[f"/tmp/{name}"]["ok"], rows[f"/tmp/{name}"]
    assert not escape.host_written, f"files of hostile bots on the host: {escape.host_written}"


def test_filling_the_tmp_ends_at_its_size_and_the_bot_plays_on(escape):
    """Attack: write /tmp full (a new file whenever one reaches the file size limit), then
    play on. Containment: ENOSPC at the tmp's size (`tmp_bytes`), long before the bot's
    cap; the seat plays the whole match without a fault; nothing of it is on the host."""
    one = escape.played["fill_tmp"]
    rows = one.reports("fill")
    assert rows, one.about()
    assert rows[0]["errno"] == "ENOSPC", rows
    assert rows[0]["written"] <= escape.limits.tmp_bytes, rows
    assert rows[0]["written"] >= escape.limits.tmp_bytes // 2, rows
    assert hostile_fault_codes(one) == {None}, one.about()


def test_filling_dev_shm_ends_at_its_size_and_the_bot_plays_on(escape):
    """Attack: write the sandbox's /dev/shm full (up to 1 GiB), then play on. Containment:
    /dev/shm is a tmpfs of the tmp's size (`tmp_bytes`: not only bounded by the memory
    limit), so ENOSPC there; the seat plays on without a fault; nothing of it is on the
    host's /dev/shm."""
    one = escape.played["fill_shm"]
    rows = one.reports("fill")
    assert rows, one.about()
    assert rows[0]["errno"] == "ENOSPC", rows
    assert escape.limits.tmp_bytes // 2 <= rows[0]["written"] <= escape.limits.tmp_bytes, rows
    assert hostile_fault_codes(one) == {None}, one.about()
    assert not [path for path in escape.host_written if "fill" in path], escape.host_written


def test_flooding_stderr_stops_at_the_file_size_limit(escape):
    """Attack: write stderr without end, then play on. Containment: stderr is a pipe the
    worker reads (nothing on the host's disk), closed once the sandbox's file size limit
    (`file_bytes`) is read: later writes fail; the seat plays on without a fault; what is
    kept of it is capped and says what was left out; nothing but the builds is in the
    worker's hosted folder."""
    one = escape.played["flood_stderr"]
    limit = escape.limits.file_bytes
    assert hostile_fault_codes(one) == {None}, one.about()
    assert len(one.stderr[0]) <= KEPT_BYTES, len(one.stderr[0])
    assert f"stderr closed: it reached its limit of {limit} bytes" in one.stderr[0]
    assert f"... {limit - PROGRAM_BYTES} bytes of stderr left out ..." in one.stderr[0]
    assert escape.hosted_dir_left == ["builds"], escape.hosted_dir_left


def test_a_fork_bomb_stops_at_the_task_limit(escape):
    """Attack: a fork bomb (a tree of 585 processes, each retrying whatever fork is
    refused), never answering again. Containment: fork fails at the sandbox's task limit
    (pids cgroup: `processes`), so no more processes of it ever exist than that; the seat
    times out."""
    one = escape.played["fork_bomb"]
    assert one.reports("fork-refused"), f"fork was never refused: {one.about()}"
    assert 1 < one.peak <= escape.limits.processes, (one.peak, escape.limits.processes)
    assert hostile_fault_codes(one) == {"timeout"}, one.about()


@pytest.mark.parametrize("attack", ["allocate", "allocate_random"])
def test_endless_allocation_is_killed_at_the_memory_limit(escape, attack):
    """Attack: allocate and touch memory without end (up to 4 GiB). Containment: the
    sandbox's memory limit kills it well before (the seat crashes; under `random`, each
    later decision is a crash too)."""
    one = escape.played[attack]
    allocated = [row["bytes"] for row in one.reports("allocated")]
    assert not one.reports("allocation-cap"), f"allocated up to the cap: {one.about()}"
    assert max(allocated, default=0) <= escape.limits.memory_bytes, allocated
    assert hostile_fault_codes(one) == {"crash"}, one.about()


def test_spinning_is_held_to_the_cpu_quota(escape):
    """Attack: three spinning processes and a spinning thread from the start, 0.3 s of
    spinning in each of 12 decisions, then a decision it spins through. Containment: its
    processes are in a cgroup whose CPU quota is the sandbox's `cpu_cores`, and all of
    them together never use more (with a margin for sampling; on a busy machine they get
    less anyway); the seat times out."""
    one = escape.played["spin"]
    assert one.reports("spinners"), one.about()
    assert one.cpu_quota and one.cpu_quota[0] is not None, "its cgroup has no CPU quota"
    assert one.cpu_quota[0] <= escape.limits.cpu_cores, one.cpu_quota
    rates = [(c2 - c1) / (t2 - t1) for i, (t1, c1) in enumerate(one.cpu)
             for t2, c2 in one.cpu[i + 1:] if t2 - t1 >= 1.0]
    assert rates, f"too few samples of its CPU time: {one.cpu}"
    assert max(rates) <= escape.limits.cpu_cores * 1.25 + 0.1, (max(rates), one.cpu)
    assert hostile_fault_codes(one) == {"timeout"}, one.about()


def test_daemons_do_not_outlive_the_match(escape):
    """Attack: two daemons, double-forked into sessions of their own (one with its pipes
    to /dev/null, one holding the bot's stdin and stdout), then play on. Containment: the
    match plays to the end without a fault, and the daemons are gone with it (checked by
    `test_nothing_of_a_hostile_bot_runs_after_its_match` too)."""
    one = escape.played["daemon"]
    assert len(one.reports("daemon")) == 2, one.about()
    assert one.peak >= 3, f"the daemons were never seen running: peak {one.peak}"
    assert hostile_fault_codes(one) == {None}, one.about()
    assert not one.left and one.gone_after_s is not None, one.left


def test_ptrace_and_the_memory_of_other_processes_are_refused(escape):
    """Attack: PTRACE_ATTACH and PTRACE_SEIZE its parent; PTRACE_ATTACH the worker by its
    pid, a child of its own (the kernel alone would allow that one) and every process it
    sees; process_vm_readv its parent; read and write back its parent's memory through
    /proc/<pid>/mem, and open every visible process's. Containment: every attempt fails:
    seccomp refuses ptrace and process_vm_readv, and no process but its own is in its pid
    namespace (nor its parent: the program is the namespace's init)."""
    one = escape.played["ptrace"]
    for attempt in ("ptrace-parent", "ptrace-seize-parent", "ptrace-worker", "ptrace-child",
                    "read-parent-memory", "open-parent-memory"):
        assert one.reports(attempt), f"the bot did not say how {attempt} went: {one.about()}"
    worked = [row for row in one.reports()
              if row["ok"] and row["attempt"] not in ("result", "parent-status")]
    assert not worked, f"reached another process: {worked}"


def test_kill_9_minus_1_reaches_only_its_own_sandbox(escape):
    """Attack: `kill -9 -1` every 10 ms for its whole match (a long one) and SIGKILL to the
    worker's pid. Containment: it reaches nothing outside its pid namespace: the worker
    lives, the victim of its match and every normal match play on without a fault."""
    one = escape.played["kill_all"]
    kills = one.reports("kill-worker")
    assert kills and not kills[0]["ok"], one.about()
    assert one.reports("kill-minus-1"), one.about()
    assert escape.worker_alive, "the worker died"
    assert all(seat == 0 for seat, _ in one.faults()), one.about()


def test_the_normal_matches_beside_the_attacks_play_untouched(escape):
    """Containment of every attack towards other matches on the worker: normal matches of
    two first-legal hosted bots, played one after another for as long as the attacks
    lasted (each attack overlaps at least one), all finish without a fault."""
    assert escape.normal, "no normal match was played"
    for match in escape.normal:
        view = match["view"]
        assert view["status"] == "finished", view
        assert view["forfeit"] is None, view
        faults = [step["fault"] for step in match["replay"]["steps"] if step["fault"]]
        assert not faults, (view["id"], faults)
    for one in escape.played.values():
        overlapping = [match for match in escape.normal
                       if match["created_at"] < (one.finished_at or 0)
                       and (match["finished_at"] or float("inf")) > one.created_at]
        assert overlapping, f"no normal match played beside {one.attack}"


def test_no_process_of_any_sandbox_is_left_and_the_worker_lives(escape):
    """After the run: no process under the worker (it starts nothing but sandboxes), none
    of the sandbox uid that left its sandbox (reparented away from bwrap), none carrying a
    hostile marker; the worker still runs and logged no traceback."""
    assert not escape.left_at_end, escape.left_at_end
    assert escape.worker_alive, escape.worker_log[-5000:]
    assert "Traceback" not in escape.worker_log, escape.worker_log[-5000:]


def test_the_host_files_aimed_at_let_any_uid_in(escape):
    """The premise of the file attacks: the host folders they write to and the worker's
    signing key let any uid in (write, read), so only the sandbox's own view of the files
    keeps a bot out of them, not their modes."""
    for target in escape.host_targets[:2]:
        mode = os.stat(os.path.dirname(target)).st_mode
        assert mode & stat.S_IWOTH and mode & stat.S_IXOTH, (target, oct(mode))
    key = Path(escape.key_file)
    assert key.stat().st_mode & stat.S_IROTH, oct(key.stat().st_mode)
    assert all(folder.stat().st_mode & stat.S_IXOTH for folder in key.parents)
