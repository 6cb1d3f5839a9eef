"""The analyst without a model: the state updated from a finished turn's words and events.

Preferences come from the commands given and from what the user says they like; pain points from
turns not understood, repeated requests, interruptions and devices that failed or were offline.
It flags what the judge should look at; the judge only runs when something is flagged.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from voiced.brain.state import (
    INTERVIEW_STATUSES,
    ConversationState,
    LightHabit,
    PainPoint,
    Preferences,
    TurnRecord,
    utcnow,
)
from voiced.brain.words import misheard, read
from voiced.devices.vocabulary import HomeVocabulary
from voiced.language.whites import white_name

LOW_CONFIDENCE = 0.45  # Whisper's mean token probability below this: it was guessing
REPEAT_WINDOW = 2  # a request said again within this many turns is a repeat
MAX_PAIN_POINTS = 30
INTERVIEW_SLOTS = ("rooms", "routine", "scents", "genres", "lights")
# What a slot is of use for: asked only in a home with a device of that kind (issue 28).
SLOT_KINDS = {"scents": "diffuser", "genres": "music", "lights": "light"}


@dataclass(frozen=True)
class Flag:
    kind: str  # misunderstood | misheard | repeated | device_failed | device_offline | status
    detail: str


def part_of_day(at: datetime) -> str:
    hour = at.astimezone().hour
    return "morning" if 5 <= hour < 12 else "afternoon" if hour < 17 else "evening" if hour < 22 else "night"


def _front(items: list[str], new: list[str], limit: int = 8) -> list[str]:
    return list(dict.fromkeys([*new, *items]))[:limit]


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]+", " ", text.lower()).split())


def interview_slots(kinds: Collection[str]) -> tuple[str, ...]:
    """What the interview asks about in a home whose devices are of `kinds`: the rooms and the
    routine always, the scents, the music and the lights only where there is a device for them."""
    return tuple(slot for slot in INTERVIEW_SLOTS if slot not in SLOT_KINDS or SLOT_KINDS[slot] in kinds)


def missing_slots(state: ConversationState, slots: Sequence[str]) -> list[str]:
    """The interview's `slots` (this home's) that the state has nothing for yet."""
    profile, prefs = state.user_profile, state.preferences
    filled = {
        "rooms": bool(profile.rooms),
        "routine": bool(profile.wake_time or profile.bed_time),
        "scents": bool(prefs.scents or prefs.disliked_scents),
        "genres": bool(prefs.genres or prefs.disliked_genres),
        "lights": bool(prefs.lights or prefs.device_lights),
    }
    return [slot for slot in slots if not filled[slot]]


def _learn_from_commands(prefs: Preferences, record: TurnRecord) -> Preferences:
    """What the turn's commands say of the user's tastes; a light's habit is kept for that light."""
    scents, genres = list(prefs.scents), list(prefs.genres)
    lights = {device: dict(parts) for device, parts in prefs.device_lights.items()}
    volume = prefs.volume
    part = part_of_day(record.at)
    for command in record.commands:
        payload: dict[str, Any] = command.get("payload", {})
        if isinstance(payload.get("scent"), str):
            scents = _front(scents, [payload["scent"]])
        if isinstance(payload.get("genre"), str):
            genres = _front(genres, [payload["genre"]])
        if isinstance(payload.get("volume"), int):
            volume = payload["volume"]
        device = command.get("device")
        if isinstance(device, str) and (
            "brightness" in payload or "color_temp" in payload or "color" in payload
        ):
            habits = lights.setdefault(device, {})
            habit = habits.get(part, LightHabit()).model_copy()
            if isinstance(payload.get("brightness"), int):
                habit.brightness_pct = round(payload["brightness"] * 100 / 254)
            temp = payload.get("color_temp")
            if isinstance(temp, int):
                habit.warmth = white_name(temp)
            color = payload.get("color")
            if isinstance(color, dict) and isinstance(color.get("hex"), str):
                habit.color = color["hex"]
            habits[part] = habit
    update = {"scents": scents, "genres": genres, "device_lights": lights, "volume": volume}
    return prefs.model_copy(update=update)


def _learn_from_words(
    state: ConversationState, record: TurnRecord, vocabulary: HomeVocabulary
) -> ConversationState:
    heard = read(record.user, vocabulary)
    prefs = state.preferences
    scents = [s for s in _front(prefs.scents, heard.liked_scents) if s not in heard.disliked_scents]
    genres = [g for g in _front(prefs.genres, heard.liked_genres) if g not in heard.disliked_genres]
    lights = dict(prefs.lights)
    for part, fields in heard.light.items():
        lights[part] = lights.get(part, LightHabit()).model_copy(update=fields)
    prefs = prefs.model_copy(
        update={
            "scents": scents,
            "disliked_scents": _front(prefs.disliked_scents, heard.disliked_scents),
            "genres": genres,
            "disliked_genres": _front(prefs.disliked_genres, heard.disliked_genres),
            "lights": lights,
        }
    )
    profile = state.user_profile.model_copy(
        update={
            "rooms": list(dict.fromkeys([*state.user_profile.rooms, *heard.rooms])),
            "wake_time": heard.wake_time or state.user_profile.wake_time,
            "bed_time": heard.bed_time or state.user_profile.bed_time,
        }
    )
    return state.model_copy(update={"preferences": prefs, "user_profile": profile})


class OfflineAnalyst:
    def __init__(self, vocabulary: HomeVocabulary, max_turns: int, *, slots: Sequence[str]) -> None:
        """`max_turns`: recent turns kept until the summary compresses them (a hard cap); `slots`:
        what the interview asks about in this home (`interview_slots`)."""
        self._vocabulary = vocabulary
        self._max_turns = max_turns
        self._slots = tuple(slots)

    async def analyse(
        self, state: ConversationState, record: TurnRecord
    ) -> tuple[ConversationState, list[Flag]]:
        flags: list[Flag] = []
        pains: list[PainPoint] = []
        # a repeat is said again in the same room: the same words in another room are another request
        here = [t for t in state.recent_turns if t.room == record.room]
        earlier = [_normal(t.user) for t in here[-REPEAT_WINDOW:]]
        if record.user.strip() and _normal(record.user) in earlier:
            pains.append(PainPoint(turn=record.turn, kind="repeated", detail=record.user))
            flags.append(Flag("repeated", record.user))
        if not record.understood:
            pains.append(PainPoint(turn=record.turn, kind="misunderstood", detail=record.user))
            guess = misheard(record.user, self._vocabulary)
            flags.append(
                Flag("misheard", f"{guess[0]}|{guess[1]}") if guess else Flag("misunderstood", record.user)
            )
        if record.user.strip() and record.asr_confidence < LOW_CONFIDENCE:
            pains.append(PainPoint(turn=record.turn, kind="low_confidence", detail=record.user))
            flags.append(Flag("low_confidence", f"{record.user}|{record.asr_confidence:.2f}"))
        if record.interrupted:
            pains.append(PainPoint(turn=record.turn, kind="interrupted", detail=record.reply[:120]))
        for failure in record.failures:
            kind = "device_offline" if "offline" in failure else "device_failed"
            pains.append(PainPoint(turn=record.turn, kind=kind, detail=failure))  # type: ignore[arg-type]
            flags.append(Flag(kind, failure))
        updated = _learn_from_words(state, record, self._vocabulary)
        updated = updated.model_copy(
            update={
                "preferences": _learn_from_commands(updated.preferences, record),
                "pain_points": [*state.pain_points, *pains][-MAX_PAIN_POINTS:],
                "processed_turns": state.processed_turns + 1,
                "recent_turns": [*state.recent_turns, record][-self._max_turns :],
                "last_updated": utcnow(),
            }
        )
        if state.status in INTERVIEW_STATUSES:
            updated, moved = self._interview_progress(updated)
            if moved:
                flags.append(Flag("status", updated.status))
        return updated, flags

    def _interview_progress(self, state: ConversationState) -> tuple[ConversationState, bool]:
        missing = missing_slots(state, self._slots)
        score = round(100 * (len(self._slots) - len(missing)) / max(1, len(self._slots)))
        status = state.status
        if not ({"rooms", "routine"} & set(missing)) and status == "Profiling":
            status = "DeepDive"
        if not ({"rooms", "routine", "scents", "genres"} & set(missing)) and status in (
            "Profiling",
            "DeepDive",
        ):
            status = "Solutioning"
        if not missing:
            status = "Completed"  # the judge approves, then the architect writes the scenes
        return state.model_copy(
            update={"status": status, "completeness_score": score}
        ), status != state.status
