"""The package as users get it: the sdist and the wheel built from a copy of this checkout,
the wheel installed into a fresh virtual environment outside it, and the installed
`referee` run from a folder outside it with no PYTHONPATH, so nothing comes from the
checkout: `--version`, `serve` answering the spec, the web pages, /health and /games,
`play` of the README's match with the installed bots, and a bad setting reported in one
line. The dependencies come from the package index (through pip's cache).

Both builds are checked: `python -m build` makes the sdist and then the wheel from the
sdist (what an index gets), `python -m build --wheel` the wheel from the tree (what
`pip install .` does). referee/api/openapi.yaml is a symbolic link to the root's
openapi.yaml; each build must carry its bytes."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from referee.config import Config, ConfigError
from referee.match.sealing import read_key_file
from referee.redis_server import RedisServer, free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
NAME = f"game_referee-{VERSION}"
LEFT_OUT = shutil.ignore_patterns(".venv", ".git", ".state", "__pycache__", "*.egg-info",
                                  ".pytest_cache", ".ruff_cache", ".mypy_cache",
                                  ".hypothesis", ".schemathesis", "build", "dist")
SHIPPED = ["openapi.yaml", "bots/c/random_bot.c", "bots/perl/random_bot.pl",
           "bots/node/random_bot.js", "bots/python/random_bot.py"]
MARKERS = [f"{package}/py.typed" for package in ("referee", "tournament", "bots", "engines")
           if (ROOT / package / "py.typed").exists()]
BUILD_S, INSTALL_S, START_S = 600, 900, 180  # generous: a loaded 2-core machine

pytestmark = pytest.mark.timeout(BUILD_S + INSTALL_S + 600)


@dataclass
class Built:
    sdist: Path
    wheel: Path  # built from the sdist
    tree_wheel: Path  # built from the tree


@dataclass
class Installed:
    venv: Path
    bin: Path
    site: Path  # the installed `bots`, `referee`... live here
    outside: Path  # a working folder outside the checkout
    env: dict[str, str]

    def run(self, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run([*args], cwd=self.outside, env={**self.env, **env},
                              capture_output=True, text=True, timeout=timeout)


def run_checked(command: list, timeout: float, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert done.returncode == 0, f"{shlex.join(map(str, command))}:\n{done.stdout}{done.stderr}"
    return done


def clean_env(*front: Path) -> dict[str, str]:
    """This environment without the checkout's virtual environment or PYTHONPATH."""
    running_venv = str(Path(sys.prefix) / "bin")
    path = [entry for entry in os.environ["PATH"].split(os.pathsep)
            if entry and entry != running_venv and not entry.startswith(str(ROOT))]
    env = {key: value for key, value in os.environ.items()
           if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")
           and not key.startswith("REFEREE_") and key != "REDIS_URL"}
    return {**env, "PATH": os.pathsep.join([*map(str, front), *path]),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONDONTWRITEBYTECODE": "1"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    """Builds from a copy of the checkout (symbolic links kept, as git has them), so no
    build output lands in the checkout."""
    work = tmp_path_factory.mktemp("build")
    source = work / "src"
    shutil.copytree(ROOT, source, symlinks=True, ignore=LEFT_OUT)
    env = clean_env()
    run_checked([sys.executable, "-m", "build", "--outdir", work / "dist", source],
                BUILD_S, cwd=work, env=env)
    run_checked([sys.executable, "-m", "build", "--wheel", "--outdir", work / "tree", source],
                BUILD_S, cwd=work, env=env)
    wheel_name = f"{NAME}-py3-none-any.whl"
    return Built(work / "dist" / f"{NAME}.tar.gz", work / "dist" / wheel_name,
                 work / "tree" / wheel_name)


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory) -> Installed:
    """A fresh virtual environment outside the checkout with the wheel (from the tree, as
    `pip install .` builds it) and its dependencies."""
    base = tmp_path_factory.mktemp("installed")
    venv, outside = base / "venv", base / "elsewhere"
    outside.mkdir()
    python = Path(getattr(sys, "_base_executable", sys.executable))
    env = clean_env(venv / "bin")
    run_checked([python, "-m", "venv", venv], INSTALL_S, cwd=outside, env=env)
    run_checked([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-compile",
                 built.tree_wheel], INSTALL_S, cwd=outside, env=env)
    located = run_checked([venv / "bin" / "python", "-c",
                           "import bots, referee, sys; print(bots.__path__[0]); "
                           "print(referee.__file__); print(sys.path)"],
                          60, cwd=outside, env=env).stdout.splitlines()
    site = Path(located[0]).parent
    assert site.is_relative_to(venv) and Path(located[1]).is_relative_to(venv), located
    assert str(ROOT) not in located[2], "the checkout is on the installed Python's path"
    return Installed(venv, venv / "bin", site, outside, {**env, "VIRTUAL_ENV": str(venv)})


# ----- the archives -----------------------------------------------------------------------

def test_the_sdist_has_the_spec_the_license_and_the_bots(built):
    with tarfile.open(built.sdist) as sdist:
        members = {member.name.removeprefix(f"{NAME}/"): member for member in sdist}
        for name in [*SHIPPED, "LICENSE", "README.md", "pyproject.toml",
                     "referee/api/openapi.yaml"]:
            assert name in members, f"{name} is not in the sdist"
        spec = members["referee/api/openapi.yaml"]
        assert spec.isfile(), "the spec's link is not resolved in the sdist"
        assert sdist.extractfile(spec).read() == (ROOT / "openapi.yaml").read_bytes()


@pytest.mark.parametrize("which", ["wheel", "tree_wheel"])
def test_the_wheel_has_the_spec_the_bots_the_markers_and_the_license(built, which):
    with zipfile.ZipFile(getattr(built, which)) as wheel:
        names = set(wheel.namelist())
        for name in [*(f"bots/{path.split('/', 1)[1]}" for path in SHIPPED[1:]), *MARKERS,
                     "referee/api/openapi.yaml", f"{NAME}.dist-info/licenses/LICENSE"]:
            assert name in names, f"{name} is not in the {which}"
        assert wheel.read("referee/api/openapi.yaml") == (ROOT / "openapi.yaml").read_bytes()
        metadata = wheel.read(f"{NAME}.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in metadata.splitlines()
    needs = [line.split(":", 1)[1].strip().lower() for line in metadata.splitlines()
             if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert any(need.startswith("urllib3") for need in needs)
    assert not any(need.startswith("pyyaml") for need in needs), "the API reads no YAML"
    assert any(need.startswith("marshmallow") and "<5" in need for need in needs)


def test_both_wheels_hold_the_same_files(built):
    with zipfile.ZipFile(built.wheel) as from_sdist, zipfile.ZipFile(built.tree_wheel) as tree:
        assert sorted(from_sdist.namelist()) == sorted(tree.namelist())


# ----- the installed command --------------------------------------------------------------

def test_the_installed_referee_prints_its_version(installed):
    done = installed.run(str(installed.bin / "referee"), "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"referee {VERSION}"


def test_the_installed_api_serves_the_spec_the_pages_health_and_games(installed, tmp_path):
    no_yaml = installed.run(str(installed.bin / "python"), "-c", "import yaml")
    assert no_yaml.returncode != 0, "PyYAML is installed: this test no longer shows that " \
                                    "the API serves its spec without it"
    port = free_port()
    log = tmp_path / "serve.log"
    with RedisServer(tmp_path / "redis", persistent=False) as redis_server, \
            log.open("w") as log_file:
        key_file = tmp_path / "signing-keys.pem"
        made = installed.run(str(installed.bin / "referee"), "keys", "rotate", "--key-file",
                             str(key_file), REDIS_URL=redis_server.url)
        assert made.returncode == 0, made.stderr
        proc = subprocess.Popen(
            [installed.bin / "referee", "serve", "--port", str(port), "--workers", "1"],
            cwd=installed.outside, stdout=subprocess.DEVNULL, stderr=log_file,
            env={**installed.env, "REDIS_URL": redis_server.url,
                 "REFEREE_ADMIN_TOKEN": "packaging-test-token",
                 "REFEREE_SIGNING_KEY_FILE": str(key_file)},
            start_new_session=True)
        try:
            wait_for_port(port, timeout=START_S)
            base = f"http://127.0.0.1:{port}"
            spec = requests.get(f"{base}/openapi.yaml", timeout=60)
            assert spec.status_code == 200, log.read_text()
            assert spec.content == (ROOT / "openapi.yaml").read_bytes()
            page = requests.get(f"{base}/ui/", timeout=60)
            assert page.status_code == 200, log.read_text()
            assert page.headers["Content-Type"].startswith("text/html")
            assert "<html" in page.text.lower()
            health = requests.get(f"{base}/health", timeout=60)
            assert health.status_code == 200 and health.json()["redis"] == "ok"
            games = requests.get(f"{base}/games", timeout=60)
            assert games.status_code == 200, log.read_text()
            assert "aladino" in games.text
            keys = requests.get(f"{base}/keys", timeout=60).json()["keys"]
            assert [key["key_id"] for key in keys] == [read_key_file(key_file)[0].key_id]
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)


def test_the_installed_referee_plays_the_readme_match_with_the_installed_bots(installed):
    """README, "Writing a bot": the Python random bot over HTTP against the Perl bot as a
    stdin/stdout command, both the installed copies."""
    perl_bot = installed.site / "bots" / "perl" / "random_bot.pl"
    assert perl_bot.is_file()
    port = free_port()
    bot = subprocess.Popen(
        [installed.bin / "python", "-m", "bots.python.random_bot", "--port", str(port)],
        cwd=installed.outside, env=installed.env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_port(port, timeout=START_S)
        played = installed.run(
            str(installed.bin / "referee"), "play", "--game", "aladino",
            "--bot", f"http://127.0.0.1:{port}/", "--bot", f"cmd:perl {perl_bot}",
            "--seed", "7", "--quiet", timeout=600)
    finally:
        os.killpg(bot.pid, signal.SIGTERM)
        bot.wait(timeout=30)
    assert played.returncode == 0, played.stdout + played.stderr
    assert "game over after" in played.stdout
    assert "rank" in played.stdout


BAD_SETTINGS = [
    ("worker", {"REDIS_URL": "nonsense"}, "REDIS_URL"),
    ("serve", {"REDIS_URL": "http://127.0.0.1:6379"}, "REDIS_URL"),
    ("worker", {"REFEREE_MOVE_RATE": "fast"}, "REFEREE_MOVE_RATE"),
    ("serve", {"REFEREE_MOVE_RATE": "0/10"}, "REFEREE_MOVE_RATE"),
    ("serve", {"REFEREE_BOT_HOSTS": "localhost,999.0.0.0/99"}, "REFEREE_BOT_HOSTS"),
    ("dashboard", {"REFEREE_BOT_MAX_MATCHES": "-1"}, "REFEREE_BOT_MAX_MATCHES"),
    ("archive", {"REDIS_URL": "nonsense"}, "REDIS_URL"),
    ("demo", {"REFEREE_MOVE_RATE": "fast"}, "REFEREE_MOVE_RATE"),
]


@pytest.mark.parametrize(("command", "setting", "variable"), BAD_SETTINGS,
                         ids=[f"{command}-{variable}" for command, _, variable in BAD_SETTINGS])
def test_a_bad_setting_is_one_line_naming_the_variable_and_status_2(installed, command,
                                                                     setting, variable):
    args = {"serve": ["--port", str(free_port())], "dashboard": ["--port", str(free_port())],
            "archive": ["--older-than", "1d", "--archive-dir", str(installed.outside)],
            "worker": ["--burst"],
            "demo": ["--exit", "--state-dir", str(installed.outside / "demo-state")]}[command]
    done = installed.run(str(installed.bin / "referee"), command, *args, timeout=120,
                         REFEREE_ADMIN_TOKEN="packaging-test-token", **setting)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr
    assert done.stderr.startswith(f"referee: error: {variable}="), done.stderr
    assert "admin token" not in done.stdout


def test_a_redis_url_password_is_not_printed_in_the_error(installed):
    done = installed.run(str(installed.bin / "referee"), "worker", "--burst",
                         REDIS_URL="redis://:hunter2@127.0.0.1:notaport/0")
    assert done.returncode == 2 and "hunter2" not in done.stderr, done.stderr
    assert done.stderr.startswith("referee: error: REDIS_URL='redis://:***@"), done.stderr


# ----- in this process: the configuration and the documented command lines ----------------

@pytest.mark.parametrize(("variable", "value"), [
    ("REDIS_URL", "nonsense"), ("REDIS_URL", "redis://127.0.0.1:99999/0"),
    ("REFEREE_MOVE_RATE", "5/x"), ("REFEREE_BOT_HOSTS", "999.0.0.0/99"),
    ("REFEREE_BOT_MAX_MATCHES", "0"), ("REFEREE_WORKER_CONCURRENCY", "many"),
    ("REFEREE_HOSTED_CACHE_BUILDS", "0"), ("REFEREE_HOSTED_CACHE_MB", "lots"),
    ("REFEREE_STREAMS_PER_ADDRESS", "-1"), ("REFEREE_STREAMS_PER_PROCESS", "0")])
def test_a_setting_that_does_not_parse_is_a_config_error_naming_it(variable, value):
    with pytest.raises(ConfigError, match=f"^{variable}="):
        Config.from_env({variable: value})


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/0", "rediss://:pw@cache:6380/2",
                                 "unix:///run/redis.sock"])
def test_a_redis_url_redis_accepts_is_kept(url):
    assert Config.from_env({"REDIS_URL": url}).redis_url == url


def test_the_documented_production_command_lines_parse():
    """docs/operations.md's Processes table: each `referee ...` line is one the command
    accepts (it once had `referee serve ... --threads 8`, an option serve does not have)."""
    from referee.cli import build_parser

    section = (ROOT / "docs" / "operations.md").read_text().split("\n## Processes\n")[1]
    table = section.strip().split("\n\n")[0]
    lines = [cell.strip("` ") for line in table.splitlines() for cell in line.split("|")
             if cell.strip().startswith("`referee ")]
    assert any(line.startswith("referee serve ") for line in lines), lines
    parser = build_parser()
    for line in lines:
        words = shlex.split(line.split("`")[0])
        parser.parse_args(words[1:])  # exits with status 2 on an unknown option


def test_a_command_loads_its_own_module_and_not_the_others():
    """`referee bridge` (started for every stdin/stdout bot) does not pay for the API's,
    the tournament formats' and networkx's imports; `referee --help` still lists all."""
    probe = ("import sys; from referee.cli import build_parser; build_parser('bridge'); "
             "print(sorted(m for m in sys.modules "
             "if m.startswith(('referee.commands.', 'referee.api', 'networkx'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "['referee.commands.bridge']", done.stdout
    listed = subprocess.run([sys.executable, "-m", "referee", "--help"], capture_output=True,
                            text=True, timeout=60, check=True).stdout
    assert all(name in listed for name in ("bridge", "check-bot", "serve", "worker")), listed
