"""A turn's stages, from its events' monotonic `t`, as bench/latency.py measures them.

Hangover (end of voice to the segment closing), ASR (to the transcript), agent (to the first reply
sentence), first TTS chunk (to the first audio), and end of speech to first audio. Typed turns have
only the agent's and the first chunk's. Pure: the web's turn log and each satellite's room (whose turn
events stay on its own bus) mark their turns with it.
"""

from __future__ import annotations

from voiced.events import AgentText, Event, SpeechEnded, Transcript, TtsStarted

SPANS = {
    "hangover": ("voice_end", "speech_ended"),
    "asr": ("speech_ended", "transcript"),
    "agent": ("transcript", "agent_text"),
    "tts_first_chunk": ("agent_text", "tts_started"),
    "speech_end_to_audio": ("voice_end", "tts_started"),
}


def mark(marks: dict[str, float], event: Event) -> None:
    """Note in `marks` when `event`, one of its turn's, happened (the first of each kind counts)."""
    if isinstance(event, SpeechEnded):
        marks.setdefault("voice_end", event.voice_end_t)
        marks.setdefault("speech_ended", event.t)
    elif isinstance(event, Transcript):
        marks.setdefault("transcript", event.t)
    elif isinstance(event, AgentText):
        marks.setdefault("agent_text", event.t)
    elif isinstance(event, TtsStarted):
        marks.setdefault("tts_started", event.t)


def stages(marks: dict[str, float]) -> dict[str, float]:
    """Each stage whose two ends are marked, in seconds."""
    return {
        name: round(marks[b] - marks[a], 4) for name, (a, b) in SPANS.items() if a in marks and b in marks
    }
