"""Wheels for an offline install, re-packed from the packages of the environment running the tests.

scripts/install-service.sh installs with pip; the test points it at a folder of wheels
(`--wheels DIR`, pip's `--no-index --find-links DIR`) so nothing is downloaded and the versions
are the ones the suite already runs on. Each wheel holds exactly the files its distribution's
RECORD lists inside site-packages (no byte code; console scripts are made again by pip from
entry_points.txt), with a fresh RECORD. Every distribution goes in, the dev tools too: a script
that asked for them would get them, so the test's "no dev packages" check can fail.

The folder is kept between runs under ~/.cache/voiced-tests (one per set of installed versions).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as metadata
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "voiced-tests"
# pyproject's build-system: the environment's own setuptools may be older; one wheel is fetched once
BUILD_REQUIREMENT = "setuptools>=68"
_DROPPED = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _installed() -> list[metadata.Distribution]:
    """The environment's distributions that came from wheels (not the editable voiced itself)."""
    found = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if '"editable": true' in (dist.read_text("direct_url.json") or ""):
            continue
        if name and dist.read_text("RECORD") and dist.read_text("WHEEL"):
            found[_normal(name)] = dist
    return [found[key] for key in sorted(found)]


def _tag(wheel_file: str) -> str:
    tags = [line.split(":", 1)[1].strip() for line in wheel_file.splitlines() if line.startswith("Tag:")]
    if not tags:
        raise ValueError("no Tag: line")
    parts = [tag.split("-") for tag in tags]
    # name the wheel with every tag it was installed under: py/abi/platform parts joined with "."
    return "-".join(".".join(dict.fromkeys(part[i] for part in parts)) for i in range(3))


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def repack(dist: metadata.Distribution, folder: Path) -> Path:
    name, version = _normal(dist.metadata["Name"]), dist.version
    wheel_text = dist.read_text("WHEEL") or ""
    target = folder / f"{name}-{version}-{_tag(wheel_text)}.whl"
    if target.exists():
        return target
    site = Path(str(dist.locate_file(""))).resolve()
    info = Path(str(dist._path)).name  # type: ignore[attr-defined]
    partial = target.with_suffix(".part")
    record: list[str] = []
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_STORED) as wheel:
        for entry in dist.files or []:
            relative = Path(str(entry))
            if ".." in relative.parts or "__pycache__" in relative.parts or relative.suffix == ".pyc":
                continue  # scripts and data outside site-packages; byte code is compiled again
            if relative.parts[0] == info and relative.name in _DROPPED:
                continue
            path = site / relative
            if not path.is_file():
                continue
            data = path.read_bytes()
            wheel.writestr(zipfile.ZipInfo(relative.as_posix(), date_time=(1980, 1, 1, 0, 0, 0)), data)
            if path.stat().st_mode & 0o111:
                wheel.getinfo(relative.as_posix()).external_attr = 0o755 << 16
            record.append(f"{relative.as_posix()},{_digest(data)},{len(data)}")
        record.append(f"{info}/RECORD,,")
        wheel.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    partial.rename(target)
    return target


def wheelhouse() -> Path:
    """The folder of wheels for this environment, made once per set of installed versions."""
    dists = _installed()
    key = hashlib.sha256(
        "\n".join(f"{_normal(d.metadata['Name'])}=={d.version}" for d in dists).encode()
    ).hexdigest()[:16]
    folder = CACHE / f"wheelhouse-{key}"
    done = folder / ".complete"
    if done.exists():
        return folder
    if CACHE.is_dir():
        for old in CACHE.glob("wheelhouse-*"):
            if old != folder:
                shutil.rmtree(old, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    for dist in dists:
        repack(dist, folder)
    if not list(folder.glob("setuptools-*.whl")) or not _has_build_setuptools(folder):
        fetched = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--only-binary",
                ":all:",
                "--no-deps",
                "-d",
                str(folder),
                BUILD_REQUIREMENT,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if fetched.returncode != 0:
            raise RuntimeError(
                f"the offline install needs one {BUILD_REQUIREMENT} wheel (pyproject's build-system) in"
                f" {folder}; `pip download` failed: {fetched.stderr[-1500:]}"
            )
    done.write_text(key + "\n")
    return folder


def _has_build_setuptools(folder: Path) -> bool:
    for wheel in folder.glob("setuptools-*.whl"):
        major = wheel.name.split("-")[1].split(".")[0]
        if major.isdigit() and int(major) >= 68:
            return True
    return False
