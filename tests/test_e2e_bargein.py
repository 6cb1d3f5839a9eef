"""Barge-in through a real echo path: the virtual speaker loops back into the virtual microphone.

The daemon answers with a long LLM reply (scripted server over real HTTP). Several trials of:
(a) its own echo alone never interrupts it; (b) another voice talking over it stops it and is
the next turn; (c) "uh-huh" does not stop it; (d) "stop" does, and starts no turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Broker
from tests.live import LiveDaemon, spoken_request
from tests.openai_server import ScriptedServer, Text
from tests.pulse import PulseServer

pytestmark = pytest.mark.e2e
TRIALS = 3
ECHO_MS = 80
LONG_REPLY = (
    "Here is the forecast for today. The morning starts cool and cloudy, with a light breeze from "
    "the west. By noon the clouds break up and the sun comes out for a few hours. In the afternoon "
    "the temperature climbs to about twenty degrees, which is mild for the season. Toward evening "
    "a band of showers moves in from the coast, so keep an umbrella near the door. Tomorrow looks "
    "drier, with sunshine most of the day."
)


@pytest.fixture
def echo_room(tmp_path: Path) -> Iterator[PulseServer]:
    server = PulseServer(tmp_path, echo_ms=ECHO_MS)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def daemon(
    tmp_path: Path, echo_room: PulseServer, broker: Broker, llm: ScriptedServer
) -> Iterator[LiveDaemon]:
    live = LiveDaemon(
        tmp_path,
        echo_room,
        {"mqtt": {"port": broker.port}, "llm": {"base_url": llm.base_url}, "agent": {"kind": "hybrid"}},
        log_level="DEBUG",
    )
    live.start()
    try:
        yield live
    finally:
        assert live.stop() == 0


def ask_for_a_long_reply(daemon: LiveDaemon, llm: ScriptedServer, tmp_path: Path, trial: int) -> int:
    """Returns the turn whose long reply has just started playing."""
    llm.push(Text(LONG_REPLY, token_delay_s=0.01))
    request = spoken_request(tmp_path / f"ask{trial}.wav", "What is the weather like today?")
    before = len(daemon.events())
    daemon.play(request)
    started = daemon.wait_for("tts_started", lambda e: daemon.events().index(e) >= before, timeout=30)
    return int(started["turn"])


def reply_outcome(daemon: LiveDaemon, turn: int) -> tuple[float, bool]:
    stopped = daemon.wait_for("tts_stopped", lambda e: e["turn"] == turn, timeout=60)
    interrupted = any(e["kind"] == "barge_in" and e["turn"] == turn for e in daemon.events())
    return float(stopped["audio_s"]), interrupted


def test_own_echo_never_interrupts_the_reply(daemon: LiveDaemon, llm: ScriptedServer, tmp_path: Path) -> None:
    lengths = []
    for trial in range(TRIALS):
        turn = ask_for_a_long_reply(daemon, llm, tmp_path, trial)
        audio_s, interrupted = reply_outcome(daemon, turn)
        daemon.wait_for("turn_finished", lambda e, t=turn: e["turn"] == t)
        assert not interrupted, daemon.report()
        lengths.append(audio_s)
    assert min(lengths) > 20, lengths  # every sentence of the long reply was played
    events = daemon.events()
    onsets = sum(1 for e in events if e["kind"] == "speech_started" and e["over_reply"] is True)
    dropped = sum(1 for e in events if e["kind"] == "barge_in_ignored" and e["heard"] == "")
    print(
        f"echo trials: replies {[round(x, 1) for x in lengths]} s, barge-ins 0 of {TRIALS}; "
        f"echo onsets {onsets}, dropped at onset {dropped}, ducked {onsets - dropped}"
    )


@pytest.mark.bargein_trials
def test_another_voice_stops_the_reply_and_is_the_next_turn(
    daemon: LiveDaemon, llm: ScriptedServer, tmp_path: Path
) -> None:
    latencies = []
    for trial in range(TRIALS):
        turn = ask_for_a_long_reply(daemon, llm, tmp_path, trial)
        daemon.wait_for("agent_text", lambda e, t=turn: e["turn"] == t)
        interjection = spoken_request(
            tmp_path / f"over{trial}.wav", "Please turn on the kitchen light.", pitch=1.15
        )
        # Talk over the reply a couple of seconds in.
        daemon.wait_for("tts_started", lambda e, t=turn: e["turn"] == t)
        import time

        time.sleep(2.0)
        said_at = daemon.play(interjection)
        barge = daemon.wait_for("barge_in", lambda e, t=turn: e["turn"] == t, timeout=15)
        audio_s, _ = reply_outcome(daemon, turn)
        latencies.append(barge["t"] - said_at)
        assert audio_s < 20, daemon.report()
        # The interjection is the next turn (what the agent makes of it depends on Whisper's ear).
        heard = daemon.wait_for(
            "transcript", lambda e, b=barge: e["t"] > b["t"] and "kitchen light" in e["text"].lower()
        )
        daemon.wait_for("turn_finished", lambda e, h=heard: e["turn"] == h["turn"])
    print(f"barge-in trials: decision {[round(x, 2) for x in latencies]} s after the voice began")
    assert len(latencies) == TRIALS


@pytest.mark.bargein_trials
def test_backchannel_does_not_stop_the_reply_but_stop_does(
    daemon: LiveDaemon, llm: ScriptedServer, tmp_path: Path
) -> None:
    import time

    for trial in range(TRIALS):
        turn = ask_for_a_long_reply(daemon, llm, tmp_path, trial)
        time.sleep(1.5)
        daemon.play(spoken_request(tmp_path / f"uh{trial}.wav", "Uh-huh.", pitch=1.25))
        audio_s, interrupted = reply_outcome(daemon, turn)
        assert not interrupted, daemon.report()
        assert audio_s > 20, daemon.report()
        daemon.wait_for("turn_finished", lambda e, t=turn: e["turn"] == t)
    turn = ask_for_a_long_reply(daemon, llm, tmp_path, TRIALS)
    time.sleep(1.5)
    daemon.play(spoken_request(tmp_path / "stop.wav", "Stop.", pitch=1.25))
    audio_s, interrupted = reply_outcome(daemon, turn)
    assert interrupted and audio_s < 15, daemon.report()
    daemon.wait_for("turn_finished", lambda e: e["turn"] == turn)
    assert not [e for e in daemon.events() if e["kind"] == "command_sent"]
