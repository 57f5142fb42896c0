"""Where this process stands in the cgroup trees, and the idle cgroup a worker may join.

The hosted bots' sandboxes make cgroups of their own (`referee.match.sandbox`); a
`referee worker` at the lowest priority joins an idle one (`join_idle`): with cgroup
scheduling, a cgroup whose `cpu.idle` is 1 runs only on the CPU its siblings leave, and any
of their tasks waking takes the CPU from it at once, which nice 19 alone does not promise
(the kernel shares the CPU between cgroups, or sessions' autogroups, by their weights, and a
waking Redis or API waited up to 66 ms behind niced workers: docs/performance.md section 9).
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

IDLE_FOLDER = "referee-idle"


def mounts() -> dict[str, tuple[str, Path]]:
    """The cgroup trees mounted: controller (v1) or "" (v2) -> (its root, mount point)."""
    found: dict[str, tuple[str, Path]] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        kind, _, options = fields[fields.index("-") + 1:][:3]
        mount = (_unescape(fields[3]), Path(_unescape(fields[4])))
        if kind == "cgroup2":
            found.setdefault("", mount)
        elif kind == "cgroup":
            for option in options.split(","):
                found.setdefault(option, mount)
    return found


def own() -> dict[str, str]:
    """This process's cgroup in each tree: controller (v1) or "" (v2) -> path."""
    paths = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            paths[controller] = path
    return paths


def own_folder(mount: tuple[str, Path], path: str) -> Path:
    """The folder of cgroup `path` in the tree mounted at `mount`."""
    root, point = mount
    relative = os.path.relpath(path, root)
    return point if relative.startswith("..") else point / relative


def join_idle() -> str:
    """Move this process (its threads, and the children it starts) into an idle child of
    its CPU cgroup, `referee-idle`, shared by the workers there. v1's cpu tree: made when
    missing; v2: this process's own cgroup delegates the cpu controller to it, which the
    kernel allows only when no other process is left in it (the worker alone in a systemd
    unit with `Delegate=yes`, or in a container's root). Returns what was done, or why
    not (no permission, no cgroup scheduling, a kernel without `cpu.idle`), for the
    start-up line; never raises."""
    try:
        trees, paths = mounts(), own()
        if "cpu" in trees:
            folder = own_folder(trees["cpu"], paths.get("cpu", "/"))
            return _enter(folder / IDLE_FOLDER, folder, delegate=False)
        if "" in trees and "" in paths:
            folder = own_folder(trees[""], paths[""])
            return _enter(folder / IDLE_FOLDER, folder, delegate=True)
        return "no idle cgroup (no cgroup tree with the cpu controller)"
    except OSError as error:
        return f"no idle cgroup ({os.strerror(error.errno or errno.EIO).lower()})"


def _enter(idle: Path, parent: Path, delegate: bool) -> str:
    if parent.name == IDLE_FOLDER:
        return f"in the idle cgroup {parent}"  # started by a process already in it
    idle.mkdir(exist_ok=True)
    if delegate:  # v2: the controller is enabled once this process has left `parent`
        (idle / "cgroup.procs").write_text(str(os.getpid()))
        try:
            (parent / "cgroup.subtree_control").write_text("+cpu")
        except OSError as error:
            (parent / "cgroup.procs").write_text(str(os.getpid()))  # back where it was
            if error.errno == errno.EBUSY:
                return "no idle cgroup (other processes share its cgroup)"
            raise
    if not (idle / "cpu.idle").exists():
        return "no idle cgroup (the kernel has no cpu.idle)"
    (idle / "cpu.idle").write_text("1")
    (idle / "cgroup.procs").write_text(str(os.getpid()))
    return f"in the idle cgroup {idle}"


def _unescape(text: str) -> str:
    """A mountinfo field (spaces and the like are octal escapes there)."""
    return re.sub(r"\\([0-7]{3})", lambda code: chr(int(code[1], 8)), text)
