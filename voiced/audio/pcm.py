"""PCM helpers shared by sources, sinks and tests: WAV I/O, mono, resampling."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

EAR_RATE = 16000


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """Read a 16-bit WAV as mono int16 samples and its rate; errors name the file."""
    try:
        with wave.open(str(path), "rb") as wav:
            width, channels, rate = wav.getsampwidth(), wav.getnchannels(), wav.getframerate()
            raw = wav.readframes(wav.getnframes())
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: audio file not found") from None
    except (wave.Error, EOFError) as exc:
        raise ValueError(f"{path}: not a readable WAV file: {exc or 'empty or truncated'}") from None
    if width != 2:
        raise ValueError(f"{path}: expected 16-bit PCM, got {8 * width}-bit (convert it, e.g. with sox)")
    samples = np.frombuffer(raw, dtype=np.int16)
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1).astype(np.int16)
    return samples, rate


def write_wav(path: Path, samples: np.ndarray, rate: int) -> None:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(np.asarray(samples, dtype=np.int16).tobytes())


def resample(samples: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """Linear-interpolation resampling; adequate for speech into a 16 kHz ASR."""
    if src_rate == dst_rate or len(samples) == 0:
        return np.asarray(samples, dtype=np.int16)
    count = round(len(samples) * dst_rate / src_rate)
    positions = np.linspace(0, len(samples) - 1, count)
    out = np.interp(positions, np.arange(len(samples)), samples.astype(np.float32))
    return np.clip(np.round(out), -32768, 32767).astype(np.int16)


def silence(seconds: float, rate: int) -> np.ndarray:
    return np.zeros(int(seconds * rate), dtype=np.int16)


def rms_dbfs(samples: np.ndarray) -> float:
    if len(samples) == 0:
        return -120.0
    rms = float(np.sqrt(np.mean(samples.astype(np.float64) ** 2)))
    return 20 * np.log10(max(rms, 1e-6) / 32768.0)


def resample_band_limited(samples: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """FFT resampling of a whole sentence: no aliasing, and one consistent timeline."""
    if src_rate == dst_rate or len(samples) == 0:
        return np.asarray(samples, dtype=np.int16)
    count = round(len(samples) * dst_rate / src_rate)
    spectrum = np.fft.rfft(samples.astype(np.float64))
    kept = np.zeros(count // 2 + 1, dtype=complex)
    bins = min(len(spectrum), len(kept))
    kept[:bins] = spectrum[:bins]
    out = np.fft.irfft(kept, count) * (count / len(samples))
    return np.clip(np.round(out), -32768, 32767).astype(np.int16)
