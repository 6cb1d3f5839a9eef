"""A room with an echo: the daemon's speaker loops back into its microphone, and someone talks.

Shared by the barge-in tests and `bench/bargein.py`. Every trial starts from an idle daemon,
has a deadline at every step, and ends in a `Trial` record even when something went wrong,
so a long run never hangs and never gets out of step: the scripted LLM answers each request
by what it asks (the weather: a long reply; anything else: a short one), not by its order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tests.live import Event, LiveDaemon, spoken_request
from tests.openai_server import Step, Text
from tests.probe import RATE, MonitorRecorder, find, first_silence, voice_start
from tests.pulse import MIC_SINK, SPEAKER_SINK, PulseServer
from voiced.audio.pcm import read_wav, resample

ECHO_MS = 80
LONG_REPLY = (
    "Here is the forecast for today. The morning starts cool and cloudy, with a light breeze from "
    "the west. By noon the clouds break up and the sun comes out for a few hours. In the afternoon "
    "the temperature climbs to about twenty degrees, which is mild for the season. Toward evening "
    "a band of showers moves in from the coast, so keep an umbrella near the door. Tomorrow looks "
    "drier, with sunshine most of the day."
)
SHORT_REPLY = "Okay."
CONVERSATION = {  # the events that say the daemon is still busy with someone
    "speech_started", "speech_ended", "transcript", "agent_text", "tts_started", "tts_stopped",
    "barge_in", "barge_in_ignored", "turn_finished",
}  # fmt: skip
ASK = "What is the weather like today?"
LINES = {  # what is said over the reply, in another (higher) voice than the daemon's
    "over": ("Please turn on the kitchen light.", 1.15),
    "uh-huh": ("Uh-huh.", 1.25),
    "stop": ("Stop.", 1.25),
}


def respond(body: dict[str, Any]) -> Step:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    asked = str(users[-1].get("content", "")) if users else ""
    return Text(LONG_REPLY, token_delay_s=0.01) if "weather" in asked.lower() else Text(SHORT_REPLY)


class TrialError(Exception):
    """A step of a trial did not happen in time."""


@dataclass(frozen=True)
class Trial:
    kind: str  # "over", "uh-huh" or "stop"
    stopped: bool  # the reply was interrupted (a barge_in on its turn)
    reply_s: float  # how much of the reply was played
    decided_s: float | None = None  # voice onset -> barge-in decision
    silent_s: float | None = None  # voice onset -> the speaker monitor falls silent
    next_turn: str | None = None  # the interjection, transcribed as the next turn
    problem: str = ""  # what went wrong on the way, if anything


class EchoRoom:
    def __init__(self, workdir: Path, pulse: PulseServer, daemon: LiveDaemon) -> None:
        self.workdir = workdir
        self.daemon = daemon
        self.speaker = MonitorRecorder(pulse, f"{SPEAKER_SINK}.monitor")
        self.mic = MonitorRecorder(pulse, f"{MIC_SINK}.monitor")
        self._lines: dict[str, tuple[Path, np.ndarray]] = {}

    def start(self) -> None:
        self.speaker.start()
        self.mic.start()

    def stop(self) -> None:
        self.speaker.stop()
        self.mic.stop()

    def _line(self, kind: str) -> tuple[Path, np.ndarray]:
        if kind not in self._lines:
            text, pitch = LINES.get(kind, (ASK, 1.0))
            path = spoken_request(self.workdir / f"line-{kind}.wav", text, pitch=pitch)
            samples, rate = read_wav(path)
            self._lines[kind] = (path, resample(samples, rate, RATE))
        return self._lines[kind]

    def _wait(self, kind: str, where: Any, timeout: float, what: str) -> Event:
        try:
            return self.daemon.wait_for(kind, where, timeout=timeout)
        except TimeoutError:
            raise TrialError(f"{what}: no {kind} within {timeout:.0f} s") from None

    def wait_idle(self, *, quiet_s: float = 1.0, timeout: float = 90.0) -> None:
        """Until nothing plays and nothing has happened for `quiet_s`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            events = [e for e in self.daemon.events() if e["kind"] in CONVERSATION]
            started = sum(1 for e in events if e["kind"] == "tts_started")
            stopped = sum(1 for e in events if e["kind"] == "tts_stopped")
            if started == stopped and (not events or time.monotonic() - events[-1]["t"] > quiet_s):
                return
            time.sleep(0.1)
        raise TrialError(f"the daemon did not fall idle within {timeout:.0f} s")

    def long_reply(self) -> int:
        """Ask about the weather; returns the turn whose long reply has just started playing."""
        self.wait_idle()
        asked_at = self.daemon.play(self._line("ask")[0])
        started = self._wait("tts_started", lambda e: e["t"] > asked_at, 30, "asking for the weather")
        turn = int(started["turn"])
        heard = [e for e in self.daemon.events() if e["kind"] == "transcript" and e["turn"] == turn]
        if not heard or "weather" not in heard[-1]["text"].lower():
            raise TrialError(f"the question was heard as {heard[-1]['text'] if heard else None!r}")
        return turn

    def _into_reply(self, turn: int, after_s: float) -> None:
        started = self._wait("tts_started", lambda e: e["turn"] == turn, 5, "the reply")
        time.sleep(max(0.0, started["t"] + after_s - time.monotonic()))

    def _barge(self, turn: int) -> Event | None:
        return next((e for e in self.daemon.events() if e["kind"] == "barge_in" and e["turn"] == turn), None)

    def reply_end(self, turn: int) -> float:
        """How much of the reply of `turn` played, once it has stopped."""
        return float(self._wait("tts_stopped", lambda e: e["turn"] == turn, 60, "the reply")["audio_s"])

    def onset(self, kind: str, played_at: float) -> float | None:
        """When the `kind` line, played at `played_at`, began to sound in the microphone."""
        _path, known = self._line(kind)
        end = played_at + len(known) / RATE + 0.5
        time.sleep(max(0.0, end + 0.1 - time.monotonic()))
        recording, first_t = self.mic.between(played_at - 0.3, end)
        lag = find(known, recording)
        return None if lag is None else first_t + lag / RATE + voice_start(known)

    def silent_at(self, decided_t: float) -> float | None:
        """When the speaker went silent after a barge-in decided at `decided_t`: the first run of
        the exact zeros a stopped speaker plays; None: it kept playing for 2 s."""
        until_t = decided_t + 2.0
        time.sleep(max(0.0, until_t + 0.1 - time.monotonic()))
        recording, first_t = self.speaker.between(decided_t - 0.05, until_t)
        at = first_silence(recording)
        return None if at is None else first_t + at

    def _next_reply(self, turn: int, since: float, timeout: float) -> tuple[str | None, float | None]:
        """The next turn after `turn` heard after `since`, and when its reply began playing."""
        try:
            heard = self.daemon.wait_for(
                "transcript", lambda e: e["turn"] > turn and e["t"] >= since, timeout=timeout
            )
        except TimeoutError:
            return None, None
        try:
            reply = self.daemon.wait_for("tts_started", lambda e: e["turn"] == heard["turn"], timeout=15)
        except TimeoutError:
            return str(heard["text"]), None
        return str(heard["text"]), float(reply["t"])

    def over_trial(self) -> Trial:
        """One whole trial: a long reply, and a request over it."""
        try:
            turn = self.long_reply()
        except TrialError as exc:
            return Trial("over", False, 0.0, problem=str(exc))
        return self.interject(turn)

    def backchannel_trial(self) -> list[Trial]:
        """One whole trial: a long reply, "uh-huh" over it, then "stop"."""
        try:
            turn = self.long_reply()
        except TrialError as exc:
            return [Trial("uh-huh", False, 0.0, problem=str(exc))]
        return self.backchannel_then_stop(turn)

    def interject(self, turn: int, *, after_s: float = 2.0) -> Trial:
        """Another voice makes a request over the reply: it should stop and be the next turn."""
        try:
            self._into_reply(turn, after_s)
            played_at = self.daemon.play(self._line("over")[0])
            reply_s = self.reply_end(turn)
            barge = self._barge(turn)
            onset = self.onset("over", played_at)
            if barge is None or onset is None:
                problem = "" if onset is not None else "the voice was not found in the microphone"
                return Trial("over", barge is not None, reply_s, problem=problem)
            silent = self.silent_at(barge["t"])
            heard, _reply_t = self._next_reply(turn, barge["t"] - 0.01, timeout=20)
            return Trial(
                "over",
                True,
                reply_s,
                decided_s=barge["t"] - onset,
                silent_s=None if silent is None else silent - onset,
                next_turn=heard,
            )
        except TrialError as exc:
            return Trial("over", bool(self._barge(turn)), 0.0, problem=str(exc))

    def backchannel_then_stop(
        self, turn: int, *, after_s: float = 1.5, stop_after_s: float = 5.0
    ) -> list[Trial]:
        """ "Uh-huh" over the reply (it should go on), then "stop" (it should stop, with no new turn)."""
        trials: list[Trial] = []
        try:
            self._into_reply(turn, after_s)
            played_at = self.daemon.play(self._line("uh-huh")[0])
            while time.monotonic() < played_at + stop_after_s and not self._barge(turn):
                time.sleep(0.05)
            barge = self._barge(turn)
            if barge is not None:  # "uh-huh" stopped it: wrongly
                onset = self.onset("uh-huh", played_at)
                decided = None if onset is None else barge["t"] - onset
                return [Trial("uh-huh", True, self.reply_end(turn), decided_s=decided)]
            trials.append(Trial("uh-huh", False, time.monotonic() - played_at))
            played_at = self.daemon.play(self._line("stop")[0])
            reply_s = self.reply_end(turn)
            barge = self._barge(turn)
            onset = self.onset("stop", played_at)
            if barge is None or onset is None:
                problem = "" if onset is not None else "the voice was not found in the microphone"
                return [*trials, Trial("stop", barge is not None, reply_s, problem=problem)]
            heard, _reply_t = self._next_reply(turn, barge["t"] - 0.01, timeout=3)
            replied = heard is not None and _reply_t is not None
            silent = self.silent_at(barge["t"])
            stop = Trial(
                "stop",
                True,
                reply_s,
                decided_s=barge["t"] - onset,
                silent_s=None if silent is None else silent - onset,
                next_turn=heard if replied else None,
            )
            return [*trials, stop]
        except TrialError as exc:
            kind = "stop" if trials else "uh-huh"
            return [*trials, Trial(kind, bool(self._barge(turn)), 0.0, problem=str(exc))]
