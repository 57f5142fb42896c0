"""`scripts/install` on a machine whose python3 is externally managed (PEP 668, as on stock
Debian 12 and Ubuntu 24.04), has no pip and cannot make a virtual environment until the
distribution's venv package is installed: it installs that package, makes `.venv`, installs
the project there and leaves the system interpreter as it found it.

The "system" interpreter is a copy of the one running the tests, with a prefix of its own:
its binary copied, its standard library linked entry by entry into a real folder that holds
an `EXTERNALLY-MANAGED` marker and an empty site-packages (so no pip), and no `ensurepip`
(what Debian moves into python3.X-venv). Python finds its prefix from the binary's place, so
pip, run for that interpreter, refuses to install into it, as the first test shows.
PIP_REQUIRE_VIRTUALENV=1 makes pip refuse any install outside a virtual environment as well.
The `apt-get` on PATH does what Debian's python3.X-venv package does for that interpreter
(puts `ensurepip` into its standard library) and fails on anything else it is asked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.apitest import ROOT

VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"
SPLIT_OFF = "ensurepip"  # the part of the standard library in Debian's venv package
LEFT_OUT = shutil.ignore_patterns(".venv", ".git", ".state", "__pycache__", "*.egg-info",
                                  ".pytest_cache", ".ruff_cache", ".hypothesis", "build",
                                  "dist")


@pytest.fixture(scope="module")
def system_python(tmp_path_factory) -> Path:
    """The prefix of an externally managed interpreter without pip; `bin/python3` runs it."""
    prefix = tmp_path_factory.mktemp("system-python")
    stdlib = Path(sysconfig.get_paths(vars={"installed_base": sys.base_prefix,
                                            "base": sys.base_prefix})["stdlib"])
    (prefix / "bin").mkdir()
    binary = prefix / "bin" / VERSION
    shutil.copy2(Path(sys._base_executable).resolve(), binary)
    (prefix / "bin" / "python3").symlink_to(VERSION)
    own_stdlib = prefix / "lib" / VERSION
    (own_stdlib / "site-packages").mkdir(parents=True)
    for entry in stdlib.iterdir():
        if entry.name not in ("site-packages", SPLIT_OFF):
            (own_stdlib / entry.name).symlink_to(entry)
    (own_stdlib / "EXTERNALLY-MANAGED").write_text(
        "[externally-managed]\nError=this interpreter belongs to the system (a test)\n")
    return prefix


@pytest.fixture
def apt(system_python, tmp_path) -> tuple[Path, Path]:
    """A folder with the `apt-get` of this machine, and the file listing its calls."""
    folder, calls = tmp_path / "apt-bin", tmp_path / "apt-calls"
    folder.mkdir()
    stdlib = sysconfig.get_paths(vars={"installed_base": sys.base_prefix,
                                       "base": sys.base_prefix})["stdlib"]
    script = folder / "apt-get"
    script.write_text(f"""#!/bin/sh
echo "$*" >> {calls}
case "$*" in
  "update -qq") exit 0 ;;
  "install -y -qq {VERSION}-venv")
    ln -s {stdlib}/{SPLIT_OFF} {system_python}/lib/{VERSION}/{SPLIT_OFF}; exit 0 ;;
esac
echo "apt-get: not on this test machine: $*" >&2
exit 100
""")
    script.chmod(0o755)
    return folder, calls


def clean_env(system_python: Path, *first: Path) -> dict[str, str]:
    """The environment of a shell on that machine: its python3 first on PATH, no trace of
    the virtual environment running the tests."""
    inherited = {key: value for key, value in os.environ.items()
                 if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    running_venv = str(Path(sys.prefix) / "bin")
    path = [entry for entry in os.environ["PATH"].split(os.pathsep) if entry != running_venv]
    front = [str(system_python / "bin"), *map(str, first)]
    return {**inherited, "PATH": os.pathsep.join([*front, *path]),
            "PIP_REQUIRE_VIRTUALENV": "1", "PIP_NO_COMPILE": "1"}  # no .pyc: a quicker test


def site_packages(system_python: Path) -> list[str]:
    return sorted(os.listdir(system_python / "lib" / VERSION / "site-packages"))


def test_the_copied_interpreter_is_externally_managed_and_has_no_pip(system_python):
    python = system_python / "bin" / "python3"
    prefix = subprocess.run([python, "-c", "import sys; print(sys.prefix)"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert prefix == str(system_python)
    no_pip = subprocess.run([python, "-m", "pip", "--version"], capture_output=True,
                            text=True)
    assert no_pip.returncode != 0 and "No module named pip" in no_pip.stderr
    env = {key: value for key, value in clean_env(system_python).items()
           if key != "PIP_REQUIRE_VIRTUALENV"}
    refused = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                              "--no-index", "--no-deps", "six"],
                             capture_output=True, text=True, env=env)
    assert "externally-managed-environment" in refused.stdout + refused.stderr
    assert site_packages(system_python) == []


def test_install_makes_the_venv_and_leaves_the_system_python_alone(system_python, apt,
                                                                   tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, ignore=LEFT_OUT)
    apt_folder, apt_calls = apt
    env = clean_env(system_python, apt_folder)
    first = subprocess.run(["bash", "scripts/install"], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stdout + first.stderr
    assert apt_calls.read_text().splitlines() == ["update -qq",
                                                  f"install -y -qq {VERSION}-venv"]
    assert "creating the virtual environment .venv" in first.stdout

    venv_python = repo / ".venv" / "bin" / "python"
    assert f"home = {system_python / 'bin'}" in (repo / ".venv" / "pyvenv.cfg").read_text()
    imported = subprocess.run(
        [venv_python, "-c", "import prometheus_client, pytest, referee, rq_dashboard; "
                            "print(referee.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True)
    assert imported.stdout.strip() == str(repo / "referee" / "__init__.py"), imported.stderr
    help_text = subprocess.run([repo / ".venv" / "bin" / "referee", "--help"], env=env,
                               capture_output=True, text=True)
    assert "dashboard" in help_text.stdout

    again = subprocess.run(["bash", "scripts/install"], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stdout == "", again.stdout + again.stderr
    assert site_packages(system_python) == []
