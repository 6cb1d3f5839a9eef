"""Wake word benchmark: detections over spoken tries, false wakes over a stretch of other speech.

The detector is the daemon's own (`voiced.ear.wake.MicroWakeDetector`, fed 30 ms frames as the
ear feeds it; with a file input the ear hands it the microphone's frames as they are), and the
false wakes are counted through the daemon's `WakeWindow` (one detection, then its refractory
time). Nothing is downloaded: every voice is synthesized here, by piper's joe (the daemon's own
voice, at three speeds, without generator noise) and by espeak-ng voices (at two rates).

Tries: the wake word alone and at the head of a request, said in one breath or after a comma,
each voice in turn, a third of them under pink noise (10 or 5 dB SNR); `--voices hard`: the
espeak-ng variants the model hears least, for the record. Other speech: the
understanding corpora's home commands and English prose (the licence texts Debian ships in
/usr/share/common-licenses), sentence by sentence, voices in turn, a quarter under pink noise,
as one continuous stream until `--minutes` of audio. Assertions: none.
Run: scripts/bench.sh wake [--word okay_nabu] [--tries 50] [--voices main|hard] [--minutes 30]
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
import time
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.understanding.spoken_voices import Speaker, Voice, _pink, _rms, ensure_espeak  # noqa: E402
from voiced.audio.pcm import EAR_RATE, silence  # noqa: E402
from voiced.ear.wake import MicroWakeDetector, Step, WakeSettings, WakeWindow  # noqa: E402

FRAME_MS = 30
FRAME = EAR_RATE * FRAME_MS // 1000
JOE = "en_US-joe-medium"
VOICES = (
    Voice("piper", JOE, "normal"),
    Voice("espeak", "en-us", "normal", wpm=160),
    Voice("espeak", "en-gb+f3", "normal", wpm=160),
    Voice("piper", JOE, "fast", length_scale=0.85),
    Voice("espeak", "en-us+m3", "fast", wpm=200),
    Voice("espeak", "en-029+m2", "normal", wpm=170),
    Voice("piper", JOE, "slow", length_scale=1.15),
    Voice("espeak", "en-gb-x-rp", "normal", wpm=170),
    Voice("espeak", "en-us+m1", "fast", wpm=190),
    Voice("espeak", "en-gb-x-gbclan", "normal", wpm=160),
)
# espeak-ng's formant-shifted variants the model hears least (okay_nabu, 0-1 of 9 clean tries
# each in a probe of 18 variants): `--voices hard` runs the tries with these instead.
HARD_VOICES = (
    Voice("espeak", "en-us+f2", "normal", wpm=160),
    Voice("espeak", "en-us+f1", "normal", wpm=170),
    Voice("espeak", "en-us+f4", "fast", wpm=200),
    Voice("espeak", "en-gb-x-rp+f4", "normal", wpm=170),
    Voice("espeak", "en-gb-scotland+m4", "normal", wpm=160),
)
PHRASES = {
    "okay_nabu": (
        "Okay Nabu",
        "Okay Nabu, turn on the kitchen light",
        "OK Nabu turn off the lights",
        "Okay Nabu, what time is it",
        "Okay Nabu play some jazz",
    ),
    "hey_jarvis": (
        "Hey Jarvis",
        "Hey Jarvis, turn on the kitchen light",
        "Hey Jarvis turn off the lights",
        "Hey Jarvis, what time is it",
        "Hey Jarvis play some jazz",
    ),
    "hey_mycroft": (
        "Hey Mycroft",
        "Hey Mycroft, turn on the kitchen light",
        "Hey Mycroft turn off the lights",
        "Hey Mycroft, what time is it",
        "Hey Mycroft play some jazz",
    ),
    "alexa": (
        "Alexa",
        "Alexa, turn on the kitchen light",
        "Alexa turn off the lights",
        "Alexa, what time is it",
        "Alexa play some jazz",
    ),
}
NOISES = (None, None, 10.0, None, None, 5.0)  # SNR in dB under the try; None: clean
PROSE = ("GPL-3", "Apache-2.0", "GPL-2", "MPL-2.0", "LGPL-3", "Artistic")
SEED = 11


def _noisy(speech: np.ndarray, track: np.ndarray, snr_db: float | None, seed: int) -> np.ndarray:
    if snr_db is None:
        return track
    noise = _pink(len(track), seed)
    gain = _rms(speech) / 10 ** (snr_db / 20) / max(_rms(noise), 1e-9)
    return np.clip(np.round(track + noise * gain), -32768, 32767).astype(np.int16)


def _feed(detector: MicroWakeDetector, window: WakeWindow, audio: np.ndarray) -> list[int]:
    """Frames at which the daemon would wake."""
    woke = []
    for index in range(len(audio) // FRAME):
        frame = audio[index * FRAME : (index + 1) * FRAME].tobytes()
        if window.frame(detected=detector.feed(frame), busy=False) is Step.WOKE:
            woke.append(index)
    return woke


def tries(speaker: Speaker, word: str, count: int, voices: tuple[Voice, ...]) -> None:
    phrases = PHRASES[word]
    detected = 0
    latencies = []
    by_voice: dict[str, list[int]] = {}
    for index in range(count):
        voice = voices[index % len(voices)]
        phrase = phrases[(index // len(voices) + index) % len(phrases)]
        snr = NOISES[index % len(NOISES)]
        speech = speaker.say(voice, phrase + ("." if "," not in phrase else ""))
        lead = silence(1.0, EAR_RATE)
        track = _noisy(speech, np.concatenate([lead, speech, silence(1.5, EAR_RATE)]), snr, SEED + index)
        woke = _feed(MicroWakeDetector(word), WakeWindow(WakeSettings(frame_ms=FRAME_MS)), track)
        hit = bool(woke)
        detected += hit
        seen = by_voice.setdefault(f"{voice.label} {voice.rate_label}", [0, 0])
        seen[0] += hit
        seen[1] += 1
        if hit:
            latencies.append((woke[0] + 1) * FRAME_MS - len(lead) * 1000 // EAR_RATE)
        noise = "clean" if snr is None else f"pink {snr:g} dB"
        print(
            f"  try {index + 1:2d}: {'woke ' if hit else 'MISSED'} {voice.label:26s} {noise:12s} {phrase!r}"
        )
    print(f"\n{word}: detected {detected} of {count} spoken tries")
    for label, (hits, total) in by_voice.items():
        print(f"  {label:40s} {hits}/{total}")
    if latencies:
        print(f"  detection, from the start of the phrase: median {int(np.median(latencies))} ms")


def _sentences() -> list[str]:
    lines: list[str] = []
    for name in ("corpus_ours.yaml", "corpus_ha.yaml"):
        data = yaml.safe_load((REPO / "bench" / "understanding" / name).read_text())
        lines += [case["text"] for case in data["cases"]]
    prose: list[str] = []
    for name in PROSE:
        path = Path("/usr/share/common-licenses") / name
        if path.is_file():
            text = re.sub(r"\s+", " ", path.read_text(errors="replace"))
            prose += [s.strip() for s in re.split(r"(?<=[.;:?!])\s+", text) if 3 <= len(s.split()) <= 40]
    # Home commands and prose in turn: a conversation in the room, a television reading aloud.
    mixed = [s for pair in itertools.zip_longest(lines, prose) for s in pair if s]
    return [re.sub(r"[^A-Za-z0-9 ,.'?!-]", " ", s) for s in mixed]


def false_wakes(speaker: Speaker, word: str, minutes: float) -> None:
    detector = MicroWakeDetector(word)
    window = WakeWindow(WakeSettings(frame_ms=FRAME_MS))
    target = minutes * 60 * EAR_RATE
    fed = 0
    spent = 0.0
    wakes: list[tuple[float, str, str]] = []
    count = 0
    started = time.monotonic()
    for index, sentence in enumerate(itertools.cycle(_sentences())):
        if fed >= target:
            break
        voice = (*VOICES, *HARD_VOICES)[index % (len(VOICES) + len(HARD_VOICES))]
        speech = speaker.say(voice, sentence)
        track = np.concatenate([speech, silence(0.4, EAR_RATE)])
        track = _noisy(speech, track, 10.0 if index % 4 == 3 else None, SEED + index)
        track = track[: len(track) // FRAME * FRAME]
        clock = time.perf_counter()
        woke = _feed(detector, window, track)
        spent += time.perf_counter() - clock
        for _ in woke:
            wakes.append((fed / EAR_RATE, voice.label, sentence))
        fed += len(track)
        count += 1
        if index % 100 == 99:
            print(f"  {fed / EAR_RATE / 60:5.1f} min of speech, {len(wakes)} false wakes", flush=True)
    audio_s = fed / EAR_RATE
    print(f"\n{word}: {len(wakes)} false wakes in {audio_s / 60:.1f} min of other speech ({count} sentences)")
    for at, label, sentence in wakes:
        print(f"  at {at / 60:5.1f} min, {label}: {sentence!r}")
    print(
        f"  detector CPU: {spent / audio_s * 100:.2f} % of one core ({spent:.1f} s for {audio_s:.0f} s"
        f" of audio); the whole run took {time.monotonic() - started:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--word", default="okay_nabu", choices=sorted(PHRASES))
    parser.add_argument("--tries", type=int, default=50)
    parser.add_argument("--voices", choices=("main", "hard"), default="main", help="the voices of the tries")
    parser.add_argument("--minutes", type=float, default=30.0, help="other speech for the false wakes")
    args = parser.parse_args()
    ensure_espeak()
    speaker = Speaker(REPO / "models")
    try:
        print(f"wake word {args.word}: {args.tries} spoken tries")
        tries(speaker, args.word, args.tries, VOICES if args.voices == "main" else HARD_VOICES)
        if args.minutes > 0:
            print(f"\nfalse wakes over {args.minutes:g} min of other speech")
            false_wakes(speaker, args.word, args.minutes)
    finally:
        speaker.close()


if __name__ == "__main__":
    main()
