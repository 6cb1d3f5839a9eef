"""Piper on a Wyoming server (`tts.backend: wyoming`), with the local piper voice as its fallback.

The mouth synthesizes a reply sentence by sentence, so each sentence is one exchange: Synthesize,
then the server's AudioStart, AudioChunks and AudioStop; the sentence plays as soon as it is back.
Audio at another rate than the local voice's is resampled to it (the speaker was opened at that
rate). A server that cannot be reached within `tts.connect_s`, or that fails mid-answer, is logged
and the local voice says the sentence; the server is tried again RETRY_AFTER_S later.
"""

from __future__ import annotations

import numpy as np

from voiced.audio.pcm import resample_band_limited
from voiced.mouth.piper_tts import PiperSynthesizer
from voiced.wyoming_link import RemoteOrLocal, exchange, parse_uri, within


class WyomingSynthesizer:
    def __init__(
        self, uri: str, local: PiperSynthesizer, *, voice: str | None, connect_s: float, answer_s: float
    ) -> None:
        self._host, self._port = parse_uri(uri, "tts.uri")
        self._local = local
        self._voice = voice
        self._connect_s, self._answer_s = connect_s, answer_s
        self._health = RemoteOrLocal("Wyoming TTS", uri)

    @property
    def sample_rate(self) -> int:
        return self._local.sample_rate

    def synthesize(self, text: str) -> np.ndarray:
        if self._health.worth_trying():
            try:
                audio, rate = exchange(lambda: self._remote(text), self._answer_s)
            except (OSError, TimeoutError, ConnectionError, EOFError, ValueError) as exc:
                self._health.failed(exc)
            else:
                self._health.worked()
                same = rate == self.sample_rate
                return audio if same else resample_band_limited(audio, rate, self.sample_rate)
        return self._local.synthesize(text)

    async def _remote(self, text: str) -> tuple[np.ndarray, int]:
        from wyoming.audio import AudioChunk, AudioStart, AudioStop
        from wyoming.client import AsyncTcpClient
        from wyoming.tts import Synthesize, SynthesizeVoice

        client = AsyncTcpClient(self._host, self._port)
        await within(client.connect(), self._connect_s, "not connected")
        try:
            voice = SynthesizeVoice(name=self._voice) if self._voice else None
            await client.write_event(Synthesize(text=text, voice=voice).event())
            chunks: list[bytes] = []
            rate = self.sample_rate
            while True:
                event = await client.read_event()
                if event is None:
                    raise ConnectionError("the server closed the connection before the end of the audio")
                if AudioStart.is_type(event.type):
                    rate = AudioStart.from_event(event).rate
                elif AudioChunk.is_type(event.type):
                    chunk = AudioChunk.from_event(event)
                    if chunk.width != 2 or chunk.channels != 1:
                        raise ValueError(f"audio of width {chunk.width} and {chunk.channels} channels")
                    rate = chunk.rate
                    chunks.append(chunk.audio)
                elif AudioStop.is_type(event.type):
                    return np.frombuffer(b"".join(chunks), dtype=np.int16).copy(), rate
        finally:
            await client.disconnect()
