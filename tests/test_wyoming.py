"""Remote ASR and TTS over Wyoming, against the real wyoming-faster-whisper and wyoming-piper servers
from PyPI (with our bundled models), and the fallback to the local engines when a server is away."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import free_port
from tests.speech_fixtures import synthesizer
from tests.wyoming_servers import wyoming_servers
from voiced.audio.pcm import EAR_RATE, resample_band_limited, write_wav
from voiced.audio.sources import WavFileSource
from voiced.bus import EventBus
from voiced.config import AsrConfig, TtsConfig, VadConfig, load_config
from voiced.ear.listener import Ear
from voiced.ear.utterance import Utterance
from voiced.ear.whisper import WhisperTranscriber
from voiced.ear.wyoming_asr import WyomingTranscriber
from voiced.errors import ConfigError
from voiced.mouth.piper_tts import PiperSynthesizer
from voiced.mouth.wyoming_tts import WyomingSynthesizer

MODELS = Path("models")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    with wyoming_servers(tmp_path_factory.mktemp("wyoming")) as uris:
        yield uris


@pytest.fixture(scope="module")
def local_whisper() -> WhisperTranscriber:
    return WhisperTranscriber(AsrConfig(), MODELS)


@pytest.fixture(scope="module")
def local_piper() -> PiperSynthesizer:
    return PiperSynthesizer(TtsConfig(), MODELS)


def spoken(text: str) -> np.ndarray:
    voice = synthesizer()
    speech = resample_band_limited(voice.synthesize(text), voice.sample_rate, EAR_RATE)
    quiet = np.zeros(EAR_RATE // 4, np.int16)
    return np.concatenate([quiet, speech, quiet])


def words(text: str) -> str:
    text = text.lower().replace("%", " percent")
    return " ".join("".join(c for c in text if c.isalnum() or c == " ").split())


def test_the_server_hears_a_command_and_no_fallback_is_logged(
    servers: tuple[str, str], local_whisper: WhisperTranscriber, caplog: pytest.LogCaptureFixture
) -> None:
    remote = WyomingTranscriber(servers[0], local_whisper, language="en", connect_s=2, answer_s=30)
    with caplog.at_level(logging.INFO, logger="voiced.wyoming_link"):
        heard = remote.transcribe_scored(spoken("Turn on the kitchen light."))
    assert words(heard.text) == "turn on the kitchen light"
    assert "failed" not in caplog.text


def test_the_server_speaks_a_sentence_at_the_local_voice_rate(
    servers: tuple[str, str], local_piper: PiperSynthesizer, caplog: pytest.LogCaptureFixture
) -> None:
    remote = WyomingSynthesizer(servers[1], local_piper, voice=None, connect_s=2, answer_s=30)
    with caplog.at_level(logging.INFO, logger="voiced.wyoming_link"):
        audio = remote.synthesize("Turning on the kitchen light.")
    assert remote.sample_rate == local_piper.sample_rate
    assert 0.8 < len(audio) / remote.sample_rate < 4.0 and np.abs(audio).max() > 1000
    assert "failed" not in caplog.text


def test_an_unreachable_server_falls_back_to_the_local_engines_within_2_s(
    local_whisper: WhisperTranscriber, local_piper: PiperSynthesizer, caplog: pytest.LogCaptureFixture
) -> None:
    nobody = f"tcp://127.0.0.1:{free_port()}"
    remote_ear = WyomingTranscriber(nobody, local_whisper, language="en", connect_s=2, answer_s=30)
    remote_voice = WyomingSynthesizer(nobody, local_piper, voice=None, connect_s=2, answer_s=30)
    audio = spoken("Play some jazz.")
    with caplog.at_level(logging.INFO, logger="voiced.wyoming_link"):
        started = time.monotonic()
        heard = remote_ear.transcribe(audio)
        took = time.monotonic() - started
        said = remote_voice.synthesize("Playing jazz.")
    assert words(heard) == "play some jazz"
    assert took < 2 + 2.0  # the refusal is at once; the local Whisper's own time on a busy box
    assert len(said) > 0.5 * local_piper.sample_rate
    assert f"Wyoming ASR server {nobody} failed" in caplog.text
    assert f"Wyoming TTS server {nobody} failed" in caplog.text


def test_a_server_that_accepts_but_never_answers_gives_way_after_answer_s(
    local_whisper: WhisperTranscriber, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        accepted: list[socket.socket] = []
        stop = threading.Event()

        def hold() -> None:
            silent.settimeout(0.2)
            while not stop.is_set():
                try:
                    accepted.append(silent.accept()[0])
                except TimeoutError:
                    continue

        holder = threading.Thread(target=hold, name="silent-server")
        holder.start()
        try:
            uri = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
            remote = WyomingTranscriber(uri, local_whisper, language="en", connect_s=2, answer_s=1.0)
            with caplog.at_level(logging.INFO, logger="voiced.wyoming_link"):
                started = time.monotonic()
                heard = remote.transcribe(spoken("Pause the music."))
            assert words(heard) == "pause the music"
            assert time.monotonic() - started < 1.0 + 2.0
            assert f"Wyoming ASR server {uri} failed (not done within 1 s)" in caplog.text
        finally:
            stop.set()
            holder.join(timeout=5)
            for connection in accepted:
                connection.close()


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("asr:\n  backend: wyoming\n", "asr"),
        ("asr:\n  backend: wyoming\n  uri: http://gpu-box:10300\n", "asr.uri"),
        ("tts:\n  backend: wyoming\n  uri: tcp://gpu-box\n", "tts.uri"),
        ("tts:\n  backend: remote\n", "tts.backend"),
    ],
)
def test_a_bad_wyoming_config_names_the_field(text: str, named: str, tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        load_config(path, {})


def test_a_server_that_never_accepts_gives_way_within_connect_s(
    local_whisper: WhisperTranscriber, local_piper: PiperSynthesizer, caplog: pytest.LogCaptureFixture
) -> None:
    """A host that drops the connection request (a server whose backlog is full, as a box that is
    down or firewalled would) hangs the connect; the local engines take over after connect_s."""
    with socket.socket() as full:
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        waiting = [socket.socket() for _ in range(3)]  # never accepted: the backlog stays full
        try:
            for pending in waiting:
                pending.setblocking(False)
                pending.connect_ex(full.getsockname())
            time.sleep(0.2)
            uri = f"tcp://127.0.0.1:{full.getsockname()[1]}"
            remote_ear = WyomingTranscriber(uri, local_whisper, language="en", connect_s=2, answer_s=30)
            remote_voice = WyomingSynthesizer(uri, local_piper, voice=None, connect_s=2, answer_s=30)
            with caplog.at_level(logging.INFO, logger="voiced.wyoming_link"):
                started = time.monotonic()
                heard = remote_ear.transcribe(spoken("Stop the music."))
                heard_s = time.monotonic() - started
                started = time.monotonic()
                said = remote_voice.synthesize("Stopping the music.")
                said_s = time.monotonic() - started
        finally:
            for pending in waiting:
                pending.close()
    assert words(heard) == "stop the music"
    assert len(said) > 0.5 * local_piper.sample_rate
    # The connect hung until connect_s (so it was not refused), then the local engine answered.
    assert 1.9 < heard_s < 2 + 2.0 and 1.9 < said_s < 2 + 2.0
    assert f"Wyoming ASR server {uri} failed (not connected within 2 s)" in caplog.text
    assert f"Wyoming TTS server {uri} failed (not connected within 2 s)" in caplog.text


def test_the_ear_streams_an_utterance_as_it_is_spoken(
    servers: tuple[str, str],
    local_whisper: WhisperTranscriber,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    quiet = np.zeros(EAR_RATE // 2, np.int16)
    write_wav(
        tmp_path / "in.wav",
        np.concatenate([quiet, spoken("Set the bedroom light to 40 percent."), quiet, quiet]),
        EAR_RATE,
    )
    remote = WyomingTranscriber(servers[0], local_whisper, language="en", connect_s=2, answer_s=30)

    async def scenario() -> list[str]:
        bus = EventBus()
        ear = Ear(
            WavFileSource(tmp_path / "in.wav", realtime=True), VadConfig(), remote, bus, stream=remote.stream
        )
        utterances: list[Utterance] = []
        await asyncio.wait_for(ear.run(utterances.append), timeout=60)
        return [(await asyncio.wait_for(u.transcript, timeout=30)).text for u in utterances]

    try:
        with caplog.at_level(logging.INFO, logger="voiced.wyoming_link"):
            texts = asyncio.run(scenario())
    finally:
        remote.close()
    assert [words(t) for t in texts] == ["set the bedroom light to 40 percent"]
    assert remote.streamed == 1  # the transcript came from the audio sent while it was spoken
    assert "failed" not in caplog.text
