"""Configuration: config.yaml parsed once, at the edge, into immutable pydantic models.

This is the only module that reads the environment (for secrets).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import (
    Field,
    ValidationError,
    model_validator,
)

from voiced.config_agents import AgentConfig, BrainConfig, LlmConfig, PlansConfig, VibeConfig
from voiced.config_checks import check_state_file
from voiced.config_home import (
    DevicesConfig,
    HomeAssistantConfig,
    MqttConfig,
    MqttTlsConfig,
    SafetyConfig,
    WebConfig,
)
from voiced.config_satellites import SatelliteConfig, check_unique
from voiced.config_sections import (
    AsrConfig,
    AudioConfig,
    MemoryConfig,
    SafePath,
    TtsConfig,
    VadConfig,
    WakeConfig,
    WakeWord,
    _Section,
)
from voiced.errors import ConfigError, describe_validation_error
from voiced.yamlfile import load_yaml

# The sections live in config_sections.py, config_home.py and config_agents.py; the rest of the
# package imports them from here.
__all__ = [
    "AgentConfig",
    "AsrConfig",
    "AudioConfig",
    "BrainConfig",
    "Config",
    "DevicesConfig",
    "HomeAssistantConfig",
    "LlmConfig",
    "MemoryConfig",
    "MqttConfig",
    "MqttTlsConfig",
    "PlansConfig",
    "SafetyConfig",
    "SatelliteConfig",
    "TtsConfig",
    "VadConfig",
    "VibeConfig",
    "WakeConfig",
    "WakeWord",
    "WebConfig",
    "load_config",
]


class Config(_Section):
    """config.yaml: every key is optional; a key left out takes its default."""

    devices_dir: SafePath = Field(
        Path("devices"),
        description="the device files (one YAML file per device), relative to the config file",
    )
    devices: DevicesConfig = DevicesConfig()
    models_dir: SafePath = Field(
        Path("models"), description="where Whisper and piper models other than the bundled ones are found"
    )
    audio: AudioConfig = AudioConfig()
    vad: VadConfig = VadConfig()
    asr: AsrConfig = AsrConfig()
    tts: TtsConfig = TtsConfig()
    mqtt: MqttConfig = MqttConfig()
    agent: AgentConfig = AgentConfig()
    llm: LlmConfig = LlmConfig()
    safety: SafetyConfig = SafetyConfig()
    vibe: VibeConfig = VibeConfig()
    brain: BrainConfig = BrainConfig()
    web: WebConfig = WebConfig()
    wake: WakeConfig = WakeConfig()
    memory: MemoryConfig = MemoryConfig()
    plans: PlansConfig = PlansConfig()
    homeassistant: HomeAssistantConfig = HomeAssistantConfig()
    satellites: tuple[SatelliteConfig, ...] = Field(
        (),
        description="Wyoming satellites voiced serves, one per room (each: name, uri, room); [] = none",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Config:
        if self.vad.hangover_ms < self.vad.frame_ms:
            raise ValueError("vad.hangover_ms must be at least one frame")
        if self.agent.kind in ("llm", "hybrid") and self.llm.base_url is None:
            raise ValueError(f"agent.kind is {self.agent.kind!r} but llm.base_url is not set")
        check_unique(self.satellites)
        return self

    @property
    def agent_kind(self) -> Literal["local", "llm", "hybrid"]:
        if self.agent.kind == "auto":
            return "hybrid" if self.llm.base_url else "local"
        return self.agent.kind


SECRET_ENV = {
    "VOICED_MQTT_PASSWORD": ("mqtt", "password"),
    "VOICED_LLM_API_KEY": ("llm", "api_key"),
    "VOICED_WEB_TOKEN": ("web", "token"),
}


def load_config(path: Path | None, environ: Mapping[str, str]) -> Config:
    """Parse a config file (or the defaults) and resolve relative paths against its folder."""
    data: dict[str, object] = {}
    base = Path.cwd()
    if path is not None:
        raw = load_yaml(path)
        raw = {} if raw is None else raw  # an empty file is the defaults; `0` or `false` is a mistake
        base = path.resolve().parent
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: expected a mapping at the top level, got {type(raw).__name__}")
        data = dict(raw)
    for var, (section, key) in SECRET_ENV.items():
        given = data.get(section)
        if isinstance(given, dict) and key in given:
            raise ConfigError(f"{path}: {section}.{key}: secrets belong in the environment ({var})")
        if var in environ:
            data[section] = {**(given if isinstance(given, dict) else {}), key: environ[var]}
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(path or "defaults", exc, schema=Config)) from None
    origin = path or "defaults"
    state_file = base / config.brain.state_file
    if config.brain.enabled:
        check_state_file(state_file, origin)
    presets_file = base / config.vibe.presets_file if config.vibe.presets_file else None
    if presets_file is not None and not presets_file.is_file():
        what = "not a regular file" if presets_file.exists() else "not found"
        raise ConfigError(f"{origin}: vibe.presets_file: {presets_file} {what}")
    return config.model_copy(
        update={
            "devices_dir": base / config.devices_dir,
            "models_dir": base / config.models_dir,
            "mqtt": config.mqtt.model_copy(update={"tls": _resolve_tls(config.mqtt.tls, base, origin)}),
            "brain": config.brain.model_copy(update={"state_file": state_file}),
            "tts": config.tts.model_copy(
                update={
                    "rehearsal_file": base / config.tts.rehearsal_file
                    if config.tts.rehearsal_file
                    else state_file.with_name("voiced-rehearsed.sqlite")
                }
            ),
            "vibe": config.vibe.model_copy(
                update={
                    "presets_file": presets_file,
                    "checkpoint_file": base / config.vibe.checkpoint_file
                    if config.vibe.checkpoint_file
                    else state_file.with_name("voiced-scenes.sqlite"),
                }
            ),
            "plans": config.plans.model_copy(
                update={
                    "checkpoint_file": base / config.plans.checkpoint_file
                    if config.plans.checkpoint_file
                    else state_file.with_name("voiced-plans.sqlite")
                }
            ),
        }
    )


def _resolve_tls(tls: MqttTlsConfig, base: Path, origin: object) -> MqttTlsConfig:
    update: dict[str, Path] = {}
    for field in ("ca_file", "cert_file", "key_file"):
        given: Path | None = getattr(tls, field)
        if given is None:
            continue
        update[field] = base / given
        if tls.enabled and not update[field].is_file():
            raise ConfigError(f"{origin}: mqtt.tls.{field}: {update[field]} is not a readable file")
    return tls.model_copy(update=update)
