"""Whisper on a Wyoming server (`asr.backend: wyoming`), with the local Whisper as its fallback.

One utterance is one exchange: Transcribe, AudioStart, the audio in chunks, AudioStop, then the
server's Transcript. The audio goes while the user speaks (`stream`, fed by the ear: see
wyoming_stream.py), so at the first pause only AudioStop and the last frames remain to send.
A server that cannot be reached within `asr.connect_s` (2 s by default), or that fails
mid-answer, is logged and the local model transcribes the same audio; the server is tried again
RETRY_AFTER_S later. The remote text comes without Whisper's scores, so it is taken as confident
and has no other readings.
"""

from __future__ import annotations

from concurrent.futures import CancelledError

import numpy as np

from voiced.audio.pcm import EAR_RATE
from voiced.devices.vocabulary import HomeVocabulary
from voiced.ear.transcriber import Hearing
from voiced.ear.whisper import WhisperTranscriber
from voiced.ear.wyoming_stream import SpokenStream
from voiced.wyoming_link import RemoteOrLocal, exchange, parse_uri, within

CHUNK_SAMPLES = 1024


class WyomingTranscriber:
    def __init__(
        self, uri: str, local: WhisperTranscriber, *, language: str, connect_s: float, answer_s: float
    ) -> None:
        self._host, self._port = parse_uri(uri, "asr.uri")
        self._local = local
        self._language = language
        self._connect_s, self._answer_s = connect_s, answer_s
        self._health = RemoteOrLocal("Wyoming ASR", uri)
        self.stream = SpokenStream(self._host, self._port, language=language, connect_s=connect_s)
        self.streamed = 0  # transcripts of utterances sent while spoken

    def hear_home(self, vocabulary: HomeVocabulary) -> None:
        self._local.hear_home(vocabulary)

    def transcribe(self, samples: np.ndarray) -> str:
        return self.transcribe_scored(samples).text

    def close(self) -> None:
        self.stream.close()

    def glance(self, samples: np.ndarray) -> Hearing:
        """A barge-in cannot wait for a round trip: the local model takes a quick look."""
        return self._local.glance(samples)

    def transcribe_scored(self, samples: np.ndarray) -> Hearing:
        streamed = self.stream.take(samples.astype(np.int16).tobytes())
        if self._health.worth_trying():
            try:
                if streamed is not None:
                    text = streamed.result(timeout=self._answer_s)
                    self.streamed += 1
                else:
                    text = exchange(lambda: self._remote(samples), self._answer_s)
            except (OSError, TimeoutError, ConnectionError, EOFError, CancelledError) as exc:
                self._health.failed(exc)
            else:
                self._health.worked()
                return Hearing(text)
        return self._local.transcribe_scored(samples)

    async def _remote(self, samples: np.ndarray) -> str:
        from wyoming.asr import Transcribe, Transcript
        from wyoming.audio import AudioChunk, AudioStart, AudioStop
        from wyoming.client import AsyncTcpClient

        client = AsyncTcpClient(self._host, self._port)
        await within(client.connect(), self._connect_s, "not connected")
        try:
            await client.write_event(Transcribe(language=self._language).event())
            await client.write_event(AudioStart(rate=EAR_RATE, width=2, channels=1).event())
            audio = samples.astype(np.int16).tobytes()
            step = CHUNK_SAMPLES * 2
            for start in range(0, len(audio), step):
                chunk = AudioChunk(rate=EAR_RATE, width=2, channels=1, audio=audio[start : start + step])
                await client.write_event(chunk.event())
            await client.write_event(AudioStop().event())
            while True:
                event = await client.read_event()
                if event is None:
                    raise ConnectionError("the server closed the connection before its transcript")
                if Transcript.is_type(event.type):
                    return Transcript.from_event(event).text.strip()
        finally:
            await client.disconnect()
