"""The sections of config.yaml, each an immutable pydantic model (config.py puts them together)."""

from __future__ import annotations

import contextlib
import ipaddress
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    field_validator,
    model_validator,
)

from voiced.config_checks import check_host, check_mqtt_text, check_path_text, not_a_bool
from voiced.topics import check_topic

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
        description='the room the daemon is in ("turn off the lights in here"); null = not set',
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
        60, ge=0, le=5000, description="start ASR after this much silence (0 = at the end)"
    )
    early_asr_over_reply_ms: Int = Field(
        150, ge=0, le=5000, description="the same for speech over our reply: a gap in a word is not its end"
    )
    complete_hangover_ms: int = Field(
        300, ge=0, le=5000, description="silence that ends a whole, confident local command (0 = off)"
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
        "(not understood, or asked back); its reading is taken when they would act on it; None = none",
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


class MqttTlsConfig(_Section):
    """TLS to the broker."""

    enabled: bool = Field(False, description="connect to the broker over TLS")
    ca_file: SafePath | None = Field(
        None, description="CA certificate(s), relative to the config file; null = the system's"
    )
    cert_file: SafePath | None = Field(None, description="client certificate, for brokers that ask for one")
    key_file: SafePath | None = Field(None, description="the client certificate's key (with cert_file)")
    insecure: bool = Field(False, description="skip the host name check (self-signed test brokers only)")

    @model_validator(mode="after")
    def _pair(self) -> MqttTlsConfig:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("cert_file and key_file go together")
        return self


class MqttConfig(_Section):
    """The MQTT broker the devices are on."""

    host: str = Field("127.0.0.1", description="the MQTT broker's host name or address")
    port: Int = Field(1883, ge=1, le=65535, description="the MQTT broker's port")
    client_id: str = Field(
        "voiced",
        description="MQTT client id; each process adds a random suffix, so several can share a broker",
    )
    username: str | None = Field(None, description="MQTT user name; null = anonymous")
    password: str | None = Field(None, exclude=True, description="the MQTT password")
    keepalive_s: Int = Field(30, ge=5, le=3600, description="MQTT keep-alive interval")
    connect_timeout_s: Float = Field(
        5.0, gt=0, le=120, description="how long start-up (and `voiced devices`) waits for the broker"
    )
    availability_topic: str = Field(
        "voiced/availability", description="retained online on connect; offline as the last will"
    )

    @field_validator("host")
    @classmethod
    def _host(cls, value: str) -> str:
        return check_host(value)

    @field_validator("client_id", "username", "password", "availability_topic")
    @classmethod
    def _mqtt_text(cls, value: str | None) -> str | None:
        return None if value is None else check_mqtt_text(value)

    @field_validator("availability_topic")
    @classmethod
    def _plain_topic(cls, value: str) -> str:
        return check_topic(value)

    ack_timeout_s: Float = Field(5.0, gt=0, le=60, description="how long to wait for the broker's PUBACK")
    tls: MqttTlsConfig = MqttTlsConfig()
    command_expiry_s: int = Field(
        5, ge=1, le=3600, description="MQTT v5 message expiry on commands: never delivered later than this"
    )


class SafetyConfig(_Section):
    """Limits every device command passes, whoever sends it."""

    scent_max_intensity: Int = Field(80, ge=1, le=100, description="cap on any diffuser intensity")
    scent_max_minutes: Int = Field(120, ge=1, le=1440, description="cap on any diffuser duration")
    max_commands: Int = Field(30, ge=1, le=1000, description="device commands allowed per window")
    per_seconds: Float = Field(10.0, gt=0, le=3600, description="the rate limit's window")


class VibeConfig(_Section):
    """Scenes: the vibe agent sets lights, scent and music in the background."""

    confirm_timeout_s: Float = Field(
        5.0,
        gt=0,
        le=120,
        description="how long a device has to show a command in its state (a scene's step, or a command "
        "the brain asked the reply to confirm)",
    )
    plan_timeout_s: Float = Field(20.0, gt=0, le=300, description="the LLM planner's time budget")
    planner_model: str | None = Field(
        None, description="the model that plans scenes and plans; null = llm.model"
    )
    max_steps: Int = Field(
        16, ge=1, le=64, description="a scene planned by the LLM keeps at most this many steps"
    )
    narrate_wait_s: Float = Field(
        20.0, ge=0, le=300, description="how long a narration waits for the conversation to pause"
    )
    default_preset: str = Field("relax", description="used when no preset matches the request")
    presets_file: SafePath | None = Field(
        None, description="your scene presets (YAML, like voiced/vibe/presets.yaml); null = the built-in ones"
    )
    checkpoint_file: SafePath | None = Field(
        None,
        description="scenes' checkpoints (SQLite), so a scene cut off by a restart resumes; "
        "null = voiced-scenes.sqlite beside brain.state_file",
    )
    resume_within_s: Float = Field(
        300.0,
        ge=0,
        le=86400,
        description="a scene cut off by a restart resumes only if it began less than this long ago",
    )


DEFAULT_SYSTEM_PROMPT = (
    "You are voiced, the voice of a smart home. Your words are spoken aloud: answer in one or two "
    "short sentences of plain speech, no markdown, lists or emoji. Change devices only through the "
    "tools, and never say a change happened unless the tool result says it was sent."
)


class LlmConfig(_Section):
    """An OpenAI-compatible language model, when you want one."""

    base_url: str | None = Field(
        None,
        pattern=r"^https?://",
        description="an OpenAI-compatible endpoint (http:// or https://); null = no LLM",
    )
    model: str = Field("gpt-4o-mini", description="the model the main agent asks")
    api_key: str | None = Field(None, exclude=True, description="the endpoint's API key")
    connect_timeout_s: Float = Field(3.0, gt=0, le=60, description="connecting to the endpoint")
    first_token_timeout_s: Float = Field(
        4.0, gt=0, le=120, description="no first token by then: a short apology instead"
    )
    total_timeout_s: Float = Field(30.0, gt=0, le=600, description="one whole request to the endpoint")
    max_history_turns: Int = Field(8, ge=0, le=200, description="turns of conversation sent to the model")
    max_tool_rounds: Int = Field(4, ge=1, le=20, description="tool calls and answers in one turn, at most")
    temperature: Float = Field(0.4, ge=0, le=2, description="the model's sampling temperature")
    system_prompt: str = Field(
        DEFAULT_SYSTEM_PROMPT, min_length=1, description="the main agent's instructions to the model"
    )
    stall_timeout_s: float = Field(
        3.0, gt=0, le=120, description="the longest pause between two pieces of a reply once it has begun"
    )
    first_sentence_timeout_s: float = Field(
        4.5,
        gt=0,
        le=600,
        description="the longest the user waits for a first sentence before an apology "
        "(never less than first_token_timeout_s)",
    )


class AgentConfig(_Section):
    """Which agent answers: the local intents, the LLM, or both."""

    kind: Literal["auto", "local", "llm", "hybrid"] = Field(
        "auto", description="auto = hybrid when llm.base_url is set, else local"
    )
    brightness_step_pct: Int = Field(
        25, ge=1, le=100, description='how much "dimmer" or "brighter" changes a light, in percent'
    )


class BrainConfig(_Section):
    """The analyst, judge and summary that think about each turn while the reply plays."""

    enabled: bool = Field(True, description="analyst, judge and summary in the background")
    state_file: SafePath = Field(
        Path("voiced-state.sqlite"),
        description="the conversation state (SQLite), relative to the config file; `voiced state` prints it",
    )
    new_session: bool = Field(False, description="start a new session instead of resuming the last")
    barrier_timeout_s: Float = Field(
        30.0, gt=0, le=600, description="the longest a turn waits for the last turn's analysis"
    )
    filler: str = Field("One moment.", min_length=1, description="said when a turn has to wait")
    summary_every: Int = Field(5, ge=1, le=100, description="compress older turns every N turns")
    keep_turns: Int = Field(4, ge=1, le=50, description="turns kept word for word in the context")
    memory_lines: Int = Field(30, ge=1, le=500, description="fact lines kept in compressed_memory")
    use_llm: bool = Field(True, description="think with the LLM when llm.base_url is set")
    model: str | None = Field(None, description="the model the brain uses; null = llm.model")
    timeout_s: Float = Field(
        8.0, gt=0, le=600, description="one brain request's budget; three fit in the barrier's"
    )


MIN_WEB_TOKEN_CHARS = 16  # guessing one of 16 URL-safe characters takes 2**96 tries
MAKE_A_TOKEN = "python3 -c 'import secrets; print(secrets.token_urlsafe(24))'"


class WebConfig(_Section):
    """The dashboard, HTTP API, event stream and /metrics, served by the daemon."""

    host: str = Field("127.0.0.1", min_length=1, description="address the dashboard and API listen on")
    port: int = Field(8765, ge=0, le=65535, description="0 = no web server")
    token: str | None = Field(None, exclude=True, description="the bearer token clients send")
    headers_timeout_s: Float = Field(
        10.0, ge=0.1, le=300, description="a request's headers must arrive within this, or 408 and closed"
    )
    body_timeout_s: Float = Field(
        10.0, ge=0.1, le=300, description="a request's body must arrive within this of its headers"
    )

    @property
    def loopback(self) -> bool:
        with contextlib.suppress(ValueError):
            return ipaddress.ip_address(self.host).is_loopback
        return self.host == "localhost"

    @field_validator("token")
    @classmethod
    def _stripped(cls, token: str | None) -> str | None:
        # An env file's stray space or newline: no client could send it in a header.
        return token.strip() if isinstance(token, str) else token

    @model_validator(mode="after")
    def _token_off_loopback(self) -> WebConfig:
        # Anyone on the network could drive the house. (Checked here, not on Config: the error
        # then never echoes the other sections' secrets, nor the token itself.)
        if not self.port or self.loopback:
            return self
        if self.token is None:
            raise ValueError(
                f"web.host is {self.host!r}, not loopback: set VOICED_WEB_TOKEN (clients send"
                " 'Authorization: Bearer <token>'), or use host 127.0.0.1, or port 0 for no web server"
            )
        if len(self.token) < MIN_WEB_TOKEN_CHARS:
            plural = "s" if len(self.token) > 1 else ""
            size = f"{len(self.token)} character{plural} long" if self.token else "blank"
            raise ValueError(
                f"web.token (VOICED_WEB_TOKEN) is {size}; with web.host {self.host!r}, not loopback,"
                f" it must be at least {MIN_WEB_TOKEN_CHARS} characters (spaces around it do not"
                f" count). Make one with: {MAKE_A_TOKEN}"
            )
        return self


class DevicesConfig(_Section):
    """Devices found on the broker, besides the YAML files in devices_dir (which win)."""

    discovery: list[Literal["homeassistant", "zigbee2mqtt"]] = Field(
        [], description="homeassistant: HA MQTT discovery configs; zigbee2mqtt: its bridge/devices"
    )
    homeassistant_prefix: str = Field(
        "homeassistant",
        pattern=r"^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$",
        description="the topic prefix Home Assistant discovery configs are read under",
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


class HomeAssistantConfig(_Section):
    """voiced's own entities in Home Assistant, by MQTT discovery."""

    discovery: bool = Field(
        True, description="publish voiced's own entities (state, transcript, mute, wake word) for HA"
    )
    prefix: str = Field(
        "homeassistant", pattern=r"^[A-Za-z0-9_-]{1,64}$", description="HA's discovery prefix"
    )
    node_id: str = Field(
        "voiced", pattern=r"^[A-Za-z0-9_-]{1,64}$", description="this daemon in HA: one per room"
    )


class PlansConfig(_Section):
    """Several commands, or timed ones, become plans: read back, confirmed, run step by step."""

    enabled: bool = Field(True, description="multi-step and timed requests become plans (voiced/plans)")
    checkpoint_file: SafePath | None = Field(
        None,
        description="LangGraph's checkpoints (SQLite); null = voiced-plans.sqlite beside brain.state_file",
    )
    confirm_over_steps: Int = Field(2, ge=0, le=64, description="plans with more steps are read back first")
    confirm_timeout_s: Float = Field(60.0, gt=0, le=3600, description="no answer by then cancels the plan")
    grace_s: Float = Field(
        120.0, ge=0, le=86400, description="a timed step that fell due while down still runs if this late"
    )
    llm_supervisor: bool = Field(
        True, description="with llm.base_url, the LLM decides after each step (within the rules' bounds)"
    )
    supervisor_timeout_s: Float = Field(
        10.0, gt=0, le=120, description="the LLM supervisor's time per decision; past it the rules decide"
    )
    keep_days: Int = Field(
        30, ge=1, le=3650, description="finished plans and scenes older than this are deleted"
    )
    keep_finished: Int = Field(
        300,
        ge=1,
        le=100_000,
        description="at most this many finished plans (and scenes) are kept, the newest",
    )
