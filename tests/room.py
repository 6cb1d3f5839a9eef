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
from tests.probe import RATE, MonitorRecorder, blocks_db, find, last_sound, silent_run, voice_start
from tests.pulse import MIC_SINK, SPEAKER_SINK, PulseServer
from tests.speech_fixtures import synthesizer
from voiced.audio.pcm import read_wav, resample, resample_band_limited
from voiced.mouth.sentences import SentenceSplitter

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
    "barge_in", "barge_in_ignored", "turn_finished", "reply_paused", "reply_resumed",
}  # fmt: skip
# A paused or stopped speaker plays exact zeros for longer than any gap between sentences (0.15 s).
PAUSE_MIN_S = 0.3
SENTENCE_GAP_S = 0.15  # the daemon's default tts.sentence_silence_s
# The daemon's voice without generator noise, as the tests' own: the reply's audio is known
# sample for sample, so the bench can tell where a paused reply broke off and where it resumed.
DETERMINISTIC_VOICE = {"noise_scale": 0.0, "noise_w_scale": 0.0}
PLACE_S = 0.8  # of the reply's sound each side of a pause, placed in the reply's own audio
RESUME_WITHIN_S = 20.0  # the verdict on "uh-huh" may come late on a busy machine: wait this long
ASK = "What is the weather like today?"
LINES = {  # what is said over the reply, in another (higher) voice than the daemon's
    "over": ("Please turn on the kitchen light.", 1.15),
    "uh-huh": ("Uh-huh.", 1.25),
    "stop": ("Stop.", 1.25),
}


def _sound(samples: np.ndarray) -> np.ndarray:
    """`samples` without the exact zeros (a silent speaker) at either end."""
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > 1)
    return samples[loud[0] : loud[-1] + 1] if len(loud) else samples[:0]


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
    resumed_s: float | None = None  # "uh-huh": the end of the voice -> the reply sounds again
    kept_words: bool | None = None  # "uh-huh": the reply resumed at or before where it paused


class EchoRoom:
    def __init__(self, workdir: Path, pulse: PulseServer, daemon: LiveDaemon) -> None:
        self.workdir = workdir
        self.daemon = daemon
        self.speaker = MonitorRecorder(pulse, f"{SPEAKER_SINK}.monitor")
        self.mic = MonitorRecorder(pulse, f"{MIC_SINK}.monitor")
        self._lines: dict[str, tuple[Path, np.ndarray]] = {}
        self._reply: np.ndarray | None = None

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

    def _ended(self, turn: int) -> bool:
        return any(e["kind"] == "tts_stopped" and e["turn"] == turn for e in self.daemon.events())

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

    def silent_at(self, onset: float, within_s: float = 3.0) -> float | None:
        """When the speaker fell silent after a voice began over it at `onset`: the first run of
        the exact zeros a paused or stopped speaker plays; None: it kept playing."""
        silence = self.silence(onset, within_s)
        return None if silence is None else silence[0]

    def silence(self, onset: float, within_s: float) -> tuple[float, float | None, bool | None] | None:
        """The speaker's first silence after `onset`: when it began, when sound came back (None:
        not within `within_s`) and whether that sound began at or before where it broke off."""
        until_t = onset + within_s
        time.sleep(max(0.0, until_t + 0.1 - time.monotonic()))
        # From PLACE_S before the onset: the audio before the pause is placed in the reply.
        recording, first_t = self.speaker.between(onset - PLACE_S - 0.05, until_t)
        skip = int(PLACE_S * RATE)  # from 50 ms before the onset: a pause cannot come sooner
        run = silent_run(recording[skip:], min_s=PAUSE_MIN_S)
        if run is None:
            return None
        start, end = run[0] + skip, None if run[1] is None else run[1] + skip
        back = None if end is None else first_t + end / RATE
        return first_t + start / RATE, back, None if end is None else self._kept(recording, start, end)

    def reply_audio(self) -> np.ndarray:
        """The long reply exactly as the daemon plays it: piper is deterministic, each sentence
        is synthesized alone and resampled to 16 kHz, with the gap between sentences."""
        if self._reply is None:
            tts = synthesizer()
            splitter = SentenceSplitter()
            sentences = [*splitter.feed(LONG_REPLY), *splitter.flush()]
            gap = np.zeros(int(SENTENCE_GAP_S * RATE), dtype=np.int16)
            parts = [resample_band_limited(tts.synthesize(text), tts.sample_rate, RATE) for text in sentences]
            self._reply = np.concatenate([x for part in parts for x in (part, gap)][:-1])
        return self._reply

    def _kept(self, recording: np.ndarray, start: int, end: int) -> bool | None:
        """Did the reply resume at or before where it broke off? Both sides are found in the reply's
        own audio; what lies between them there must be silence (a gap between sentences), not
        words. None: either side could not be placed.

        Each side is PLACE_S of sound: a pause falls as often as not at the quiet end of a
        sentence, and 0.2 s of a fading tail or of a gap (-40 to -90 dB, the resampler's noise)
        matched the reply nowhere (normalised correlation 0.17-0.35 in all five trials that
        first ran; with 0.6 s or more every side was placed, and each reply had resumed where
        it broke off)."""
        reply, size = self.reply_audio(), int(PLACE_S * RATE)
        sound_before = _sound(recording[max(0, start - size) : start])
        sound_after = _sound(recording[end : end + size])
        before = find(sound_before, reply, min_match=0.8)
        after = find(sound_after, reply, min_match=0.8)
        if before is None or after is None:
            return None
        skipped = reply[before + len(sound_before) : after]
        return len(skipped) == 0 or not bool((blocks_db(skipped) > -45).any())

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
            silent = self.silent_at(onset)
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
            end_t = played_at + RESUME_WITHIN_S
            while time.monotonic() < end_t and not self._barge(turn) and not self._resumed_at(turn):
                time.sleep(0.05)
            resumed = self._resumed_at(turn)  # then the reply plays on a while before "stop"
            time.sleep(max(0.0, max(played_at + stop_after_s, (resumed or 0) + 2.0) - time.monotonic()))
            barge = self._barge(turn)
            if barge is not None:  # "uh-huh" stopped it: wrongly
                onset = self.onset("uh-huh", played_at)
                decided = None if onset is None else barge["t"] - onset
                return [Trial("uh-huh", True, self.reply_end(turn), decided_s=decided)]
            trials.append(self._resumed(turn, played_at))
            if self._ended(turn):  # "stop" would be a request of its own, not said over the reply
                return [*trials, Trial("stop", False, self.reply_end(turn), problem="the reply ended first")]
            played_at = self.daemon.play(self._line("stop")[0])
            reply_s = self.reply_end(turn)
            barge = self._barge(turn)
            onset = self.onset("stop", played_at)
            if barge is None or onset is None:
                problem = "" if onset is not None else "the voice was not found in the microphone"
                return [*trials, Trial("stop", barge is not None, reply_s, problem=problem)]
            heard, _reply_t = self._next_reply(turn, barge["t"] - 0.01, timeout=3)
            replied = heard is not None and _reply_t is not None
            silent = self.silent_at(onset)
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

    def _resumed_at(self, turn: int) -> float | None:
        resumed = [e for e in self.daemon.events() if e["kind"] == "reply_resumed" and e["turn"] == turn]
        return float(resumed[0]["t"]) if resumed else None

    def _resumed(self, turn: int, played_at: float) -> Trial:
        """ "Uh-huh" went by without stopping the reply: was it paused, and resumed whole, when?"""
        onset = self.onset("uh-huh", played_at)
        if onset is None:
            return Trial("uh-huh", False, 0.0, problem="the voice was not found in the microphone")
        _path, known = self._line("uh-huh")
        voice_end = onset - voice_start(known) + (last_sound(known) or 0.0)
        resumed = self._resumed_at(turn)
        silence = self.silence(onset, within_s=max(4.0, (resumed or 0) + PLACE_S + 0.7 - onset))
        paused = [e for e in self.daemon.events() if e["kind"] == "reply_paused" and e["turn"] == turn]
        if silence is None or not paused:
            return Trial("uh-huh", False, 0.0, problem="" if paused else "not paused")
        silent_t, back_t, kept = silence
        return Trial(
            "uh-huh",
            False,
            0.0,
            silent_s=silent_t - onset,
            resumed_s=None if back_t is None else back_t - voice_end,
            kept_words=kept,
            problem="" if back_t is not None else "not resumed",
        )
