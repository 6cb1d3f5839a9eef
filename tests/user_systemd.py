"""A real systemd for the installed unit, on a machine whose PID 1 is not systemd (a container, a VM
with its own init): the distribution's own /lib/systemd/systemd, as a user-mode manager run by root
in a private mount namespace, starting voiced.service unchanged with its sandbox (User=,
ProtectSystem=strict, ProtectHome=, PrivateTmp=, the system-call filter...), Type=notify and the
watchdog.

In that namespace only: /etc and /opt are the staged install laid over the machine's own (read-only
overlays, so /etc/voiced and /opt/voiced are the staged ones and the user voiced exists), /run and
/var/lib are fresh tmpfs, and /run/systemd/system marks a systemd-booted machine. A user manager
puts StateDirectory= under $XDG_CONFIG_HOME, which is therefore /var/lib, so /var/lib/voiced is
made as on a real system. The manager and its units live in a cgroup of their own, removed at the
end. Nothing outside the namespace changes but that cgroup.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from types import TracebackType

SYSTEMD = Path("/lib/systemd/systemd")
RUNTIME = "/run/voiced-test-manager"  # the manager's XDG_RUNTIME_DIR, inside the namespace
CGROUP_ROOTS = ("/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd")  # hybrid; or /sys/fs/cgroup (v2)

_SETUP = r"""
set -euo pipefail
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/systemd/system /run/systemd/inaccessible
cd /run/systemd/inaccessible
mkdir -m 0000 dir; install -m 0000 /dev/null reg; mkfifo -m 0000 fifo
mknod -m 0000 chr c 0 0; mknod -m 0000 blk b 0 0
python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('sock')"; chmod 0000 sock
cd /
for pair in $BINDS; do
  mkdir -p "${pair#*=}" && mount --bind "${pair%%=*}" "${pair#*=}"
done
mount -t overlay overlay -o "lowerdir=$ETC_LAYERS" /etc
mount -t overlay overlay -o "lowerdir=$OPT_LAYERS" /opt
mount -t tmpfs -o mode=0755 tmpfs /var/lib
mkdir -p /var/lib/systemd/user "$XDG_RUNTIME_DIR"
cp -r "$UNITS"/. /var/lib/systemd/user/
for dir in $CGROUPS; do echo $$ > "$dir/cgroup.procs"; done
# the manager's own variables only: a system manager's services inherit nothing from it either
exec env -i PATH="$PATH" LANG="$LANG" XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" XDG_CONFIG_HOME=/var/lib \
  "$SYSTEMD" --user
"""
# What a user manager passes on to its services that a system manager does not: a unit under test
# takes them out with UnsetEnvironment= (a drop-in of the test's own).
MANAGER_ONLY_ENV = ("XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "DBUS_SESSION_BUS_ADDRESS", "QT_ACCESSIBILITY")


class UserSystemd:
    """`with UserSystemd(...) as manager:` then `manager.systemctl("start", "voiced")`."""

    def __init__(
        self,
        workdir: Path,
        staged_root: Path,
        units: Path,
        *,
        etc_extra: Path,
        binds: dict[Path, str] | None = None,
    ) -> None:
        """`units`: the unit files (and drop-in folders) to load; `etc_extra`: files over /etc
        (passwd, group, voiced/config.yaml); `binds`: host folder -> path in the namespace."""
        self._workdir = workdir
        self._root = staged_root
        self._units = units
        self._etc_extra = etc_extra
        self._binds = binds or {}
        self._name = f"voiced-test-{os.getpid()}-{time.monotonic_ns()}"
        self._cgroups: list[Path] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self.log = workdir / "manager.log"

    @staticmethod
    def unavailable() -> str | None:
        """Why this machine cannot run it, or None."""
        if os.geteuid() != 0:
            return "a private mount namespace and a cgroup need root"
        if not SYSTEMD.is_file():
            return f"{SYSTEMD} is missing (Debian package systemd)"
        for tool in ("unshare", "nsenter", "systemctl"):
            if shutil.which(tool) is None:
                return f"{tool} is missing"
        if not _cgroup_roots():
            return "no writable cgroup hierarchy under /sys/fs/cgroup"
        return None

    def __enter__(self) -> UserSystemd:
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self) -> None:
        for root in _cgroup_roots():
            group = root / self._name
            group.mkdir()
            self._cgroups.append(group)
        env = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LANG": "C.UTF-8",
            "HOME": str(self._workdir),
            "XDG_RUNTIME_DIR": RUNTIME,
            "XDG_CONFIG_HOME": "/var/lib",  # where a user manager puts StateDirectory= (and finds units)
            "SYSTEMD": str(SYSTEMD),
            "UNITS": str(self._units),
            "BINDS": " ".join(f"{host}={inside}" for host, inside in self._binds.items()),
            "ETC_LAYERS": f"{self._etc_extra}:{self._root / 'etc'}:/etc",
            "OPT_LAYERS": f"{self._root / 'opt'}:/opt",
            "CGROUPS": " ".join(str(group) for group in self._cgroups),
        }
        with self.log.open("wb") as log:
            self._proc = subprocess.Popen(
                ["unshare", "--mount", "--propagation", "private", "bash", "-c", _SETUP],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 30
        while self.systemctl("is-system-running", check=False).stdout.strip() not in ("running", "degraded"):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the user manager did not come up: {self.log.read_text()[-3000:]}")
            time.sleep(0.1)
        # As a system manager's /run/systemd/notify: any service's user may send to it (a user
        # manager's own is for its user alone).
        self._inside_checked("chmod", "0755", RUNTIME, f"{RUNTIME}/systemd")
        self._inside_checked("chmod", "0777", f"{RUNTIME}/systemd/notify")

    def _inside_checked(self, *args: str) -> None:
        done = self.inside(*args)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: {done.returncode} {done.stderr}")

    @property
    def pid(self) -> int:
        """The manager's process (unshare execs bash, which execs systemd)."""
        assert self._proc is not None
        return self._proc.pid

    def inside(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """A command in the manager's mount namespace, talking to it."""
        return subprocess.run(
            ["nsenter", "-t", str(self.pid), "-m", "env", f"XDG_RUNTIME_DIR={RUNTIME}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def systemctl(
        self, *args: str, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        done = self.inside("systemctl", "--user", *args, timeout=timeout)
        if check and done.returncode != 0:
            raise RuntimeError(
                f"systemctl --user {' '.join(args)}: {done.returncode}\n{done.stdout}{done.stderr}"
            )
        return done

    def show(self, unit: str, *properties: str) -> dict[str, str]:
        done = self.systemctl("show", unit, *(f"--property={p}" for p in properties))
        return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)

    def __exit__(
        self, _type: type[BaseException] | None, _exc: BaseException | None, _tb: TracebackType | None
    ) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.send_signal(signal.SIGTERM)  # the manager stops its units, then itself
                try:
                    self._proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait(timeout=10)
            self._proc = None
        for group in self._cgroups:
            _kill_and_remove(group)
        self._cgroups = []


def _cgroup_roots() -> list[Path]:
    found = [Path(root) for root in CGROUP_ROOTS if Path(root, "cgroup.procs").is_file()]
    if not found and Path("/sys/fs/cgroup/cgroup.subtree_control").is_file():
        found = [Path("/sys/fs/cgroup")]  # cgroup v2 alone
    return [root for root in found if os.access(root, os.W_OK)]


def _kill_and_remove(group: Path) -> None:
    """What is left in the manager's cgroup (its own processes only), then the cgroups, deepest first."""
    for _attempt in range(50):
        groups = sorted((p for p in group.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts))
        groups.append(group)
        for cgroup in groups:
            try:
                pids = (cgroup / "cgroup.procs").read_text().split()
            except OSError:
                continue
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
        try:
            for cgroup in groups:
                cgroup.rmdir()
            return
        except OSError:
            time.sleep(0.1)
