"""ConversationState: what the brain knows, persisted after every analysis and shown live."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["Conversation", "Profiling", "DeepDive", "Solutioning", "Completed"]
PartOfDay = Literal["morning", "afternoon", "evening", "night"]
# Seed 000's interview statuses; "Conversation" is everyday use outside an interview.
INTERVIEW_STATUSES: tuple[Status, ...] = ("Profiling", "DeepDive", "Solutioning")


def utcnow() -> datetime:
    return datetime.now(UTC)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LightHabit(_Model):
    brightness_pct: int | None = Field(None, ge=0, le=100)
    warmth: Literal["warm", "neutral", "cool"] | None = None
    color: str | None = None


class Preferences(_Model):
    scents: list[str] = []
    disliked_scents: list[str] = []
    genres: list[str] = []
    disliked_genres: list[str] = []
    # by part of day (morning, afternoon, evening, night), from what the user said of the lights
    lights: dict[str, LightHabit] = {}
    # by device, then part of day, from the commands given: two lights are never merged into one
    device_lights: dict[str, dict[str, LightHabit]] = {}
    volume: int | None = Field(None, ge=0, le=100)


class PainPoint(_Model):
    turn: int
    kind: Literal[
        "misunderstood", "repeated", "device_failed", "device_offline", "low_confidence", "interrupted"
    ]
    detail: str


class UserProfile(_Model):
    rooms: list[str] = []
    wake_time: str | None = None
    bed_time: str | None = None
    notes: list[str] = []


class TurnRecord(_Model):
    """One finished turn, as the brain sees it."""

    turn: int
    user: str
    reply: str = ""
    understood: bool = True
    interrupted: bool = False
    commands: list[dict[str, Any]] = []  # {"device", "payload"} that were sent
    failures: list[str] = []  # "device: reason" that were refused or failed
    asr_s: float = 0.0
    asr_confidence: float = 1.0
    at: datetime = Field(default_factory=utcnow)
    room: str = ""  # where it was said: audio.room for the daemon's own microphone, a satellite's room


class ConversationState(_Model):
    session_id: str
    processed_turns: int = 0
    status: Status = "Conversation"
    user_profile: UserProfile = UserProfile()
    preferences: Preferences = Preferences()
    pain_points: list[PainPoint] = []
    constraints: list[str] = []
    completeness_score: int = Field(0, ge=0, le=100)
    system_notice: str | None = None  # steers the next reply (for the model)
    notice_say: str | None = None  # the same notice in words for the local path, if it has any
    notice_confirm: bool = False  # the next reply waits for the devices to show what it did
    notice_device: str | None = None  # the device the notice says is offline: dropped once it is back
    # the room whose turn the notice came from: only that room's next turn uses it (None: any room's)
    notice_room: str | None = None
    compressed_memory: str = ""
    recent_turns: list[TurnRecord] = []
    interview_slot: str | None = None  # what the last interview question asked about
    interview_room: str | None = None  # where the interview is held: only its turns answer it (None: any)
    scenes_file: str | None = None  # what the architect wrote
    last_updated: datetime = Field(default_factory=utcnow)
