"""The sections of config.yaml about hearing and speaking, and the types every section uses.

Each section is an immutable pydantic model; config_home.py and config_agents.py hold the others, and
config.py puts them together."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    model_validator,
)

from voiced.config_checks import check_path_text, not_a_bool

# `true` is not 1, and "5" is not 5: numbers in the config are written as numbers.
Int = StrictInt
Float = Annotated[float, BeforeValidator(not_a_bool)]
# A NUL or an unencodable character in a path would only fail when the file is opened, much later.
SafePath = Annotated[Path, BeforeValidator(check_path_text)]
PathText = Annotated[str, BeforeValidator(check_path_text)]  # a name or a path


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AudioConfig(_Section):
    """The microphone, the speaker, the daemon's room, and how it tells its own echo from you."""

    room: str | None = Field(
        None,
        min_length=1,
        max_length=60,
        description='the room the daemon is in ("turn off the lights in here"); null = "here" is asked',
    )
    input_device: str | Int | None = Field(
        None, description="the microphone: a sounddevice name or index; null = the system default"
    )
    output_device: str | Int | None = Field(
        None, description="the speaker: a sounddevice name or index; null = the system default"
    )
    echo: Literal["cancel", "half_duplex", "off"] = Field(
        "cancel",
        description="cancel: echo cancellation + barge-in; half_duplex: deaf while speaking; off: neither",
    )
    echo_tail_ms: Int = Field(
        200, ge=50, le=2000, description="echo length the canceller models, after delay alignment"
    )
    echo_margin_db: Float = Field(10.0, ge=0, le=40, description="how far above our echo user speech must be")
    echo_unexplained_db: Float = Field(
        -10.0, ge=-40, le=0, description="speech our echo explains to this level is our echo"
    )
    barge_in_confirm_ms: Int = Field(
        700, ge=150, le=5000, description="speech over a reply this long is judged; shorter is a backchannel"
    )


class VadConfig(_Section):
    """Voice activity detection: when an utterance begins and ends."""

    aggressiveness: Int = Field(2, ge=0, le=3, description="webrtcvad's strictness: 0 lenient .. 3 strict")
    frame_ms: Literal[10, 20, 30] = Field(30, description="the length of one VAD frame")
    pre_roll_ms: Int = Field(300, ge=0, le=2000, description="audio kept from before speech began")
    onset_ms: Int = Field(90, ge=10, le=1000, description="speech needed to open an utterance")
    hangover_ms: Int = Field(600, ge=90, le=5000, description="silence needed to close it")
    min_speech_ms: Int = Field(
        250, ge=0, le=5000, description='shorter bursts are noise (over a reply, still checked for "stop")'
    )
    max_utterance_s: Float = Field(15.0, gt=1, le=120, description="an utterance is cut at this length")
    early_asr_ms: Int = Field(
        30, ge=0, le=5000, description="start ASR after this much silence (0 = at the end)"
    )
    early_asr_over_reply_ms: Int = Field(
        150, ge=0, le=5000, description="the same for speech over our reply: a gap in a word is not its end"
    )
    complete_hangover_ms: int = Field(
        300, ge=0, le=5000, description="silence that ends a whole, confident local command (0 = off)"
    )
    careful_turns: Int = Field(
        1000,
        ge=0,
        le=10000,
        description="after a speaker went on within the hangover from a turn ended early (it was cut), "
        "this many turns wait the full hangover (0 = never)",
    )


WYOMING_URI = r"^tcp://[A-Za-z0-9._-]+:[0-9]{1,5}$"


class _Remote(_Section):
    """A Wyoming server for the engine, with the local engine as its fallback."""

    backend: Literal["local", "wyoming"] = Field(
        "local", description="local: the engine on this box; wyoming: the server at `uri` first"
    )
    uri: str | None = Field(None, pattern=WYOMING_URI, description="the Wyoming server, tcp://host:port")
    connect_s: Float = Field(2.0, gt=0, le=30, description="a server not connected by then: the local engine")
    answer_s: Float = Field(10.0, gt=0, le=120, description="a server not done by then: the local engine")

    @model_validator(mode="after")
    def _uri_for_wyoming(self) -> _Remote:
        if self.backend == "wyoming" and self.uri is None:
            raise ValueError("backend wyoming needs uri: tcp://host:port")
        return self


class AsrConfig(_Remote):
    """Speech recognition: Whisper on this box, or a Wyoming server with Whisper as its fallback."""

    model: PathText = Field(
        "tiny.en", description="'tiny.en', 'base' (pip packages) or a CTranslate2 model dir"
    )
    second_model: PathText | None = Field(
        "base",
        description="heard only when the local intents would not act on the first model's words "
        "(not understood, or asked back); its reading is taken when they would act on it; null = none",
    )
    second_model_loads: Literal["at_start", "when_needed"] = Field(
        "when_needed",
        description="when the second model is loaded: at start, or the first time a turn needs it "
        "(that turn waits ~1 s once; ~190 MB less resident until then)",
    )
    second_min_similarity: Float = Field(
        0.6, ge=0, le=1, description="how alike (0..1) the second reading must be to the first to be taken"
    )
    compute_type: Literal["int8", "int8_float32", "int16", "float32", "default"] = Field(
        "int8", description="CTranslate2's number type for Whisper on the CPU"
    )
    beam_size: Int = Field(
        1, ge=1, le=10, description="Whisper's beam for utterances longer than short_utterance_s"
    )
    short_beam_size: Int = Field(
        5, ge=1, le=10, description="beam for utterances up to short_utterance_s (commands are short)"
    )
    short_utterance_s: Float = Field(
        4.0, ge=0, le=30, description="utterances up to this long are commands: short beam, short window"
    )
    short_window_s: Float = Field(
        10.0,
        ge=2,
        le=30,
        description="Whisper's encoder window for a short utterance (speech + silence); 30 = Whisper's own",
    )
    fit_batch: Int = Field(
        8,
        ge=1,
        le=64,
        description="sentences weighed on the sound at once (rooms, titles); each holds ~8 MB meanwhile",
    )
    language: str = Field("en", pattern=r"^[a-z]{2,3}$", description="the language Whisper hears")
    threads: Int = Field(2, ge=1, le=64, description="CPU threads for one Whisper run")
    initial_prompt: str | None = Field(
        None, description="Whisper's prompt; null = built from the home's devices, rooms and names"
    )
    hotwords: str | None = Field(
        None, max_length=400, description="names Whisper should favour; null = the home's; '' = none"
    )


class TtsConfig(_Remote):
    """Speech synthesis: piper on this box, or a Wyoming server with piper as its fallback."""

    remote_voice: str | None = Field(None, description="the Wyoming server's voice to use; null = its own")
    voice: PathText = Field("en_US-joe-medium", description="bundled voice name or path to a .onnx")
    length_scale: Float = Field(1.0, gt=0.3, le=3.0, description="piper's speaking pace: above 1 is slower")
    noise_scale: Float | None = Field(
        None, ge=0, le=2, description="piper's voice variation; null = the voice's own; 0 = repeatable"
    )
    noise_w_scale: Float | None = Field(
        None, ge=0, le=2, description="piper's timing variation; null = the voice's own; 0 = repeatable"
    )
    sentence_silence_s: Float = Field(0.15, ge=0, le=2, description="silence between two spoken sentences")
    rehearse: Literal["likely", "familiar", "none"] = Field(
        "none",
        description="the replies synthesized at start, ahead of any request: 'likely' those of the "
        "requests this home's devices get most (~130 for the sample home, ~0.2 s of CPU each, once: "
        "they are kept in rehearsal_file), 'familiar' only each device turned on and off, 'none' none. "
        "Whatever this says, a local reply is synthesized while the ear waits for its turn's end, and "
        "kept once said",
    )
    rehearsal_file: SafePath | None = Field(
        None,
        description="the replies rehearsed ahead of time (SQLite, ~60-110 KB each), so a restart need not "
        "synthesize them again; null = voiced-rehearsed.sqlite beside brain.state_file. With voiced "
        "stopped it may be deleted: the replies are synthesized again",
    )
    memory_arena: bool = Field(
        True,
        description="onnxruntime's memory arena for piper: false = ~140 MB less resident between "
        "turns (not at their peak), a reply not rehearsed synthesized ~10 % slower",
    )


class MemoryConfig(_Section):
    """How the daemon gives back memory it freed (glibc's malloc on Linux; elsewhere these do nothing)."""

    give_back_after_turn: bool = Field(
        True,
        description="after the models load, each Whisper job and each turn, hand the freed memory "
        "back (malloc_trim, ~4 ms, off the turn's path): ~200 MB less resident",
    )
    malloc_arenas: Int | None = Field(
        None, ge=1, le=64, description="at most this many malloc arenas (M_ARENA_MAX); null = glibc's own"
    )


WakeWord = Literal["okay_nabu", "hey_jarvis", "hey_mycroft", "alexa"]  # the models pymicro-wakeword ships


class WakeConfig(_Section):
    """The wake word (microWakeWord's models, from pymicro-wakeword) and mute."""

    word: WakeWord | None = Field(
        None, description="null = always listening; else a turn starts only after this word"
    )
    follow_up_s: Float = Field(
        8.0, ge=0, le=600, description="after a reply, how long speech goes on without the wake word"
    )
    listen_s: Float = Field(5.0, gt=0, le=60, description="after the wake word, how long speech has to begin")
    muted: bool = Field(False, description="start with the microphone muted (SIGUSR1 toggles it)")
