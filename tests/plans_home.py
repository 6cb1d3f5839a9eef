"""A real `voiced run --text -` for the plan tests: lines typed on its stdin, its events read from
its `--events` file, its task API over real HTTP, and kill -9 / restart on the same state directory."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.conftest import REPO, free_port
from tests.live import spawn_collecting

Event = dict[str, Any]


def plan_config(workdir: Path, mqtt_port: int, **sections: dict[str, Any]) -> Path:
    config: dict[str, Any] = {
        "devices_dir": str(REPO / "devices"),
        "mqtt": {"port": mqtt_port, "connect_timeout_s": 3},
        "web": {"port": free_port()},
        "brain": {"state_file": str(workdir / "state.sqlite")},
        "vibe": {"confirm_timeout_s": 2.0},
    }
    for key, value in sections.items():
        config[key] = {**config.get(key, {}), **value}
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


class TypedDaemon:
    def __init__(self, config: Path, workdir: Path, name: str = "run") -> None:
        self.config = config
        self.port = int(yaml.safe_load(config.read_text())["web"]["port"])
        self.events_file = workdir / f"events-{name}.jsonl"
        self.output: list[str] = []
        self._events: list[Event] = []
        self._read_to = 0
        command = [sys.executable, "-m", "voiced", "-c", str(config), "run", "-v", "--text", "-"]
        command += ["--output", str(workdir / f"replies-{name}.wav"), "--events", str(self.events_file)]
        self.proc = spawn_collecting(command, self.output, stdin=subprocess.PIPE)
        self.started = time.monotonic()
        self.wait_for("ready", timeout=120)

    def say(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def events(self) -> list[Event]:
        if self.events_file.exists():
            with self.events_file.open("rb") as stream:
                stream.seek(self._read_to)
                data = stream.read()
            end = data.rfind(b"\n") + 1
            self._read_to += end
            self._events += [json.loads(line) for line in data[:end].splitlines() if line.endswith(b"}")]
        return list(self._events)

    def wait_for(
        self,
        kind: str,
        where: Callable[[Event], bool] = lambda _e: True,
        *,
        timeout: float = 30,
        after: int = 0,
    ) -> Event:
        """The first `kind` event (from the `after`-th on) that `where` accepts."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.events()[after:]:
                if event["kind"] == kind and where(event):
                    return event
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.proc.returncode}\n{self.report()}")
            time.sleep(0.05)
        raise TimeoutError(f"no {kind} event within {timeout} s\n{self.report()}")

    def reply_to(self, text: str, timeout: float = 30) -> str:
        """Type `text` and return what the daemon answered to it."""
        after = len(self.events())
        self.say(text)
        heard = self.wait_for("transcript", lambda e: e["text"] == text, timeout=timeout, after=after)
        self.wait_for("turn_finished", lambda e: e["turn"] == heard["turn"], timeout=timeout)
        said = [e["text"] for e in self.events() if e["kind"] == "agent_text" and e["turn"] == heard["turn"]]
        return " ".join(said)

    def http(self, method: str, path: str, body: Any = None) -> httpx.Response:
        return httpx.request(method, f"http://127.0.0.1:{self.port}{path}", json=body, timeout=30)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> int:
        if self.proc.poll() is not None:
            return self.proc.returncode
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # the end of the typed input: the run ends once its turns have
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise

    def report(self) -> str:
        return "daemon output:\n" + "".join(self.output[-80:])
