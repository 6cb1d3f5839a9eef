"""Typed turns (`voiced run --text FILE`): the file's lines, then the real program end to end."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import queue
import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import Broker
from tests.home import SimulatedHome, voiced
from tests.test_cli_errors import voiced as voiced_in
from tests.test_e2e_wav import Recorder, speech_seconds, write_config
from voiced.bus import EventBus
from voiced.config import BrainConfig
from voiced.ear.typed import MAX_LINE_CHARS, TypedEar, TypedLine, TypedTurns, TypedTurnsError
from voiced.ear.utterance import Utterance
from voiced.events import BrainFinished, Event, InputEnded, Ready, TurnFinished

KITCHEN_STATE = "zigbee2mqtt/kitchen_light"


def test_a_file_gives_one_turn_per_line_without_blanks_or_comments(tmp_path: Path) -> None:
    path = tmp_path / "turns.txt"
    lines = ["\ufeff# the morning", "", "turn on the kitchen light", "   ", "  # not this"]
    path.write_bytes("\n".join([*lines, " play some jazz \r", "séance", ""]).encode())
    turns = TypedTurns.from_file(path)

    async def read() -> list[TypedLine]:
        return [line async for line in turns.lines()]

    assert asyncio.run(read()) == [
        TypedLine(3, "turn on the kitchen light"),
        TypedLine(6, "play some jazz"),
        TypedLine(7, "séance"),
    ]


def test_a_line_too_long_is_an_error_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "turns.txt"
    path.write_text(f"turn on the kitchen light\n{'a' * MAX_LINE_CHARS}\n{'b' * (MAX_LINE_CHARS + 1)}\n")
    with pytest.raises(TypedTurnsError, match=re.escape(f"{path}, line 3: 2001 characters")):
        TypedTurns.from_file(path)


def test_text_that_is_not_utf8_is_an_error_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "turns.txt"
    path.write_bytes(b"turn on the kitchen light\nset the diffuser to lavande \xe0 100\n")
    with pytest.raises(TypedTurnsError, match=re.escape(f"{path}, line 2: not UTF-8")):
        TypedTurns.from_file(path)


def test_a_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(TypedTurnsError, match=re.escape("nothing.txt: text file not found")):
        TypedTurns.from_file(tmp_path / "nothing.txt")


def _typed_session(stream: bytes) -> tuple[list[Utterance], list[Event], BaseException | None]:
    """A TypedEar on `stream`, with this test in the daemon's place: it finishes each turn."""

    async def session() -> tuple[list[Utterance], list[Event], BaseException | None]:
        bus = EventBus()
        seen = bus.subscribe()
        delivered: asyncio.Queue[Utterance] = asyncio.Queue()
        ear = TypedEar(TypedTurns.from_stream(io.BytesIO(stream)), bus)
        running = asyncio.create_task(ear.run(delivered.put_nowait))
        got = []
        while True:
            getting = asyncio.create_task(delivered.get())
            done, _ = await asyncio.wait([getting, running], timeout=5, return_when=asyncio.FIRST_COMPLETED)
            if getting not in done:
                getting.cancel()
                break
            got.append(getting.result())
            await asyncio.sleep(0.2)
            assert delivered.empty(), "the next line came before the turn had finished"
            bus.publish(TurnFinished(turn=got[-1].turn))
        await asyncio.wait([running], timeout=5)
        if not running.done():
            running.cancel()
            raise AssertionError("the typed ear did not end with its input")
        events = []
        while not seen.empty():
            events.append(seen.get_nowait())
        return got, events, running.exception()

    return asyncio.run(session())


def test_each_line_is_handed_over_once_the_turn_before_it_has_finished() -> None:
    got, events, failure = _typed_session(b"turn on the kitchen light\n# later\n\nturn off the kitchen light")
    assert failure is None
    assert [u.turn for u in got] == [1, 2]
    heard = [u.transcript.result() for u in got]
    assert [h.text for h in heard] == ["turn on the kitchen light", "turn off the kitchen light"]
    assert all(h.asr_s == 0.0 and not h.early for h in heard)
    assert isinstance(events[0], Ready) and isinstance(events[-1], InputEnded)


def test_a_bad_line_from_a_stream_is_refused_by_name_and_the_next_is_taken(
    caplog: pytest.LogCaptureFixture,
) -> None:
    too_long = b"turn on " * 300
    lines = b"turn on the kitchen light\n\xff\xfe\n" + too_long + b"\nturn off the kitchen light\n"
    with caplog.at_level(logging.ERROR, logger="voiced.ear.typed"):
        got, _events, failure = _typed_session(lines)
    assert failure is None
    assert [u.transcript.result().text for u in got] == [
        "turn on the kitchen light",
        "turn off the kitchen light",
    ]
    assert [r.getMessage() for r in caplog.records] == [
        "<stdin>, line 2: not UTF-8 text (byte 1); skipped it",
        "<stdin>, line 3: 2400 characters; a typed turn has at most 2000; skipped it",
    ]


def test_lines_from_a_pipe_are_taken_as_they_come_not_at_its_end() -> None:
    async def session() -> list[str]:
        read_end, write_end = os.pipe()
        turns = TypedTurns.from_stream(io.FileIO(read_end, "rb"))
        lines = turns.lines()
        try:
            os.write(write_end, b"turn on the ki")
            first = asyncio.create_task(anext(lines))
            await asyncio.sleep(0.1)
            assert not first.done(), "half a line is not a turn"
            os.write(write_end, "tchen light\nséance".encode())
            got = [(await asyncio.wait_for(first, 5)).text]  # the pipe is still open
            os.close(write_end)
            write_end = -1
            got.append((await asyncio.wait_for(anext(lines), 5)).text)  # the last line needs no end
            with pytest.raises(StopAsyncIteration):
                await asyncio.wait_for(anext(lines), 5)
        finally:
            if write_end >= 0:  # the test failed before it closed the pipe
                os.close(write_end)
            await lines.aclose()
        return got

    assert asyncio.run(session()) == ["turn on the kitchen light", "séance"]


def test_with_a_brain_the_next_line_also_waits_for_its_analysis_of_the_turn() -> None:
    async def session() -> list[str]:
        bus = EventBus()
        delivered: asyncio.Queue[Utterance] = asyncio.Queue()
        ear = TypedEar(TypedTurns.from_stream(io.BytesIO(b"one\ntwo\nthree\n")), bus, brain_wait_s=0.5)
        running = asyncio.create_task(ear.run(delivered.put_nowait))
        try:
            first = await asyncio.wait_for(delivered.get(), 5)
            bus.publish(TurnFinished(turn=1))
            await asyncio.sleep(0.2)
            assert delivered.empty(), "the next line came before the brain had analysed the turn"
            bus.publish(BrainFinished(turn=1, run_s=0.2))
            second = await asyncio.wait_for(delivered.get(), 5)
            # The analysis can end before the reply does (it starts once the reply plays).
            bus.publish(BrainFinished(turn=2, run_s=0.01))
            bus.publish(TurnFinished(turn=2))
            third = await asyncio.wait_for(delivered.get(), 5)
            # A brain that never answers holds the next line back only `brain_wait_s`.
            started = time.monotonic()
            bus.publish(TurnFinished(turn=3))
            await asyncio.wait_for(running, 5)
            assert time.monotonic() - started >= 0.5
        finally:
            running.cancel()
        return [u.transcript.result().text for u in (first, second, third)]

    assert asyncio.run(session()) == ["one", "two", "three"]


def test_text_and_input_together_are_refused(tmp_path: Path) -> None:
    result = voiced_in(tmp_path, "", "run", "--text", "a.txt", "--input", "a.wav")
    assert result.returncode == 2
    assert "--input: not allowed with argument --text" in result.stderr


def test_an_unreadable_text_file_exits_3_before_the_models_load(tmp_path: Path) -> None:
    missing = voiced_in(tmp_path, "", "run", "--text", str(tmp_path / "nothing.txt"))
    assert missing.returncode == 3
    assert f"{tmp_path / 'nothing.txt'}: text file not found" in missing.stderr
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"play some jazz\nd\xe9j\xe0 vu\n")
    result = voiced_in(tmp_path, "", "run", "--text", str(bad), "--output", str(tmp_path / "o.wav"))
    assert result.returncode == 3
    assert f"{bad}, line 2: not UTF-8" in result.stderr
    assert "loading models" not in missing.stderr + result.stderr


def _light_states(recorder: Recorder, want: list[str], timeout: float) -> list[str]:
    """The light's reported states, repeats folded, until they end with `want` (or `timeout`)."""
    states: list[str] = []
    deadline = time.monotonic() + timeout
    while states[-len(want) :] != want:
        try:
            _topic, payload = recorder.messages.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        state = str(payload.get("state"))
        if not states or states[-1] != state:
            states.append(state)
    return states


@pytest.mark.e2e
def test_typed_turns_drive_the_home_one_after_another(tmp_path: Path, broker: Broker) -> None:
    config = write_config(tmp_path, broker.port)
    with config.open("a") as extra:
        extra.write(f"brain:\n  state_file: {tmp_path / 'state.sqlite'}\n")
    turns = tmp_path / "turns.txt"
    lines = ["# turns", "turn on the kitchen light", "", "turn off the kitchen light", "flibber the wob"]
    turns.write_text("\n".join(lines) + "\n")
    events_file, out = tmp_path / "events.jsonl", tmp_path / "out.wav"
    with SimulatedHome(config, broker.port):
        states = Recorder(broker.port, topics=(KITCHEN_STATE,))
        try:
            args = ["--text", str(turns), "--output", str(out), "--events", str(events_file)]
            run = voiced(config, "run", *args)
            done = subprocess.run(run, capture_output=True, text=True, timeout=180)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            light = _light_states(states, ["ON", "OFF"], timeout=10)
        finally:
            states.close()
    assert light[-2:] == ["ON", "OFF"], light
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    transcripts = [e for e in events if e["kind"] == "transcript"]
    assert [(e["turn"], e["text"], e["asr_s"]) for e in transcripts] == [
        (1, "turn on the kitchen light", 0.0),
        (2, "turn off the kitchen light", 0.0),
        (3, "flibber the wob", 0.0),
    ]
    # One turn after the other: the second line is taken only once the first turn has finished.
    spine = [(e["kind"], e["turn"]) for e in events if e["kind"] in ("transcript", "turn_finished")]
    assert spine == [(kind, turn) for turn in (1, 2, 3) for kind in ("transcript", "turn_finished")]
    assert not [e for e in events if e["kind"] in ("speech_started", "barge_in")]
    # Each line waited for the brain too: no turn met the barrier and its filler ("One moment.").
    assert not [e for e in events if e["kind"] == "barrier_wait"]
    said = [e["text"] for e in events if e["kind"] == "agent_text"]
    assert BrainConfig().filler not in said, said
    # The agent says whether it understood: nobody has to search the reply for "didn't catch that".
    understood = {e["turn"]: e["understood"] for e in events if e["kind"] == "agent_text"}
    assert understood == {1: True, 2: True, 3: False}, understood
    # What the assistant is doing, as it changes, with wall-clock time.
    modes = [(e["state"], e["turn"]) for e in events if e["kind"] == "assistant_state"]
    assert modes[0] == ("idle", 0) and modes[-1] == ("idle", 3), modes
    assert [m for m in modes if m[1] == 2] == [("thinking", 2), ("speaking", 2), ("thinking", 2), ("idle", 2)]
    assert all(abs(e["at"] - time.time()) < 600 for e in events)
    assert speech_seconds(out) > 1.0
