"""The judge without a model: flagged risks become the notice that steers the next reply.

A notice has two forms: a line for the LLM's context, and (when it makes sense to the user) a
short sentence the local path says before its answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import takewhile

from voiced.brain.analyst import Flag, missing_slots
from voiced.brain.state import ConversationState
from voiced.devices.registry import DeviceRegistry
from voiced.language.replies import say


@dataclass(frozen=True)
class Notice:
    for_model: str
    say: str | None = None
    confirm: bool = False  # the next reply should wait for the devices' own word and say it
    device: str | None = None  # the device it says is offline (the notice goes once it is back)


# The user said a request again, or a device failed: "okay" is not enough, the device's report is.
CONFIRM_AFTER = ("repeated", "device_failed")


def wants_confirmation(flags: list[Flag]) -> bool:
    kinds = {flag.kind for flag in flags}
    return bool(kinds & set(CONFIRM_AFTER)) and "misunderstood" not in kinds


def offline_device(flags: list[Flag]) -> str | None:
    """The device a `device_offline` flag names ("desk_lamp: desk lamp is offline; nothing sent")."""
    return next((f.detail.split(":")[0] for f in flags if f.kind == "device_offline"), None)


def _human(name: str) -> str:
    return name.replace("_", " ")


# The kind of device whose "turn on the …" is offered as an example after misses, in order of choice.
EXAMPLE_KINDS = ("light", "switch", "diffuser", "music")


def example_device(registry: DeviceRegistry) -> str | None:
    """The device a request offered as an example names: this home's first light, else its first
    device of the next kind in `EXAMPLE_KINDS`; None in a home with none of them."""
    devices = list(registry)  # as it is now: discovery adds and removes devices
    return next((d.name for kind in EXAMPLE_KINDS for d in devices if d.kind == kind), None)


def second_miss_in_a_row(state: ConversationState) -> bool:
    """The turn just analysed (the state's last) and the one before it in its room were not
    understood, and the one before those was: a run of misses is offered its example once."""
    if not state.recent_turns:
        return False
    room = state.recent_turns[-1].room
    here = [turn for turn in state.recent_turns if turn.room == room]
    misses = takewhile(lambda turn: not turn.understood, reversed(here))
    return len(list(misses)) == 2


class OfflineJudge:
    def __init__(self, *, slots: Sequence[str], registry: DeviceRegistry | None = None) -> None:
        """`slots`: what the interview asks about in this home (`analyst.interview_slots`);
        `registry`: this home's devices, one of which an example offered after misses names (None:
        no example is offered)."""
        self._slots = tuple(slots)
        self._registry = registry

    def _said_twice(self) -> str:
        """What the local path says to a request not understood twice: an example of this home's,
        never a list of kinds it may not have."""
        example = None if self._registry is None else example_device(self._registry)
        if example is None:
            return say("notice_not_understood_twice_bare")
        return say("notice_not_understood_twice", device=_human(example))

    async def approve(self, state: ConversationState) -> str | None:
        """None if the interview's result can become scenes; otherwise why not."""
        prefs = state.preferences
        clash = set(prefs.scents) & set(prefs.disliked_scents) or set(prefs.genres) & set(
            prefs.disliked_genres
        )
        if clash:
            return f"liked and disliked at once: {', '.join(sorted(clash))}"
        if missing := missing_slots(state, self._slots):
            return f"still missing {', '.join(missing)}"
        return None

    async def judge(self, state: ConversationState, flags: list[Flag]) -> Notice | None:
        notice = self._notice(state, flags)
        if notice is not None and wants_confirmation(flags):
            notice = Notice(notice.for_model, notice.say, confirm=True, device=notice.device)
        return notice

    def _notice(self, state: ConversationState, flags: list[Flag]) -> Notice | None:
        by_kind = {flag.kind: flag for flag in flags}
        if (device := offline_device(flags)) is not None:
            return Notice(
                f"The {_human(device)} is offline: say so before offering anything that needs it.",
                say("notice_offline", device=_human(device)),
                device=device,
            )
        if "device_failed" in by_kind:
            device = by_kind["device_failed"].detail.split(":")[0]
            return Notice(
                f"The last command to the {_human(device)} failed ({by_kind['device_failed'].detail}): "
                "tell the user plainly and check its state before claiming it changed."
            )
        if "misheard" in by_kind:
            heard, meant = by_kind["misheard"].detail.split("|", 1)
            return Notice(
                f"Last turn '{heard}' was probably a mishearing of '{meant}': if the user repeats it, "
                f"read it as '{meant}'.",
                say("notice_misheard", heard=heard, meant=meant),
            )
        if "repeated" in by_kind and "misunderstood" in by_kind:
            said = by_kind["repeated"].detail
            return Notice(
                f"The user said {said!r} twice and it was not understood either time: apologise and say "
                "briefly what you can do.",
                self._said_twice(),
            )
        if "repeated" in by_kind:
            said = by_kind["repeated"].detail
            return Notice(f"The user repeated a request ({said!r}): confirm the device state aloud.")
        if "low_confidence" in by_kind:
            heard, _confidence = by_kind["low_confidence"].detail.rsplit("|", 1)
            return Notice(
                f"Speech recognition was unsure last turn (heard {heard!r}): if the user seems to "
                "correct it, follow the correction, and confirm what you did."
            )
        if "status" in by_kind and state.status == "Solutioning":
            return Notice("The interview has what it needs: propose the scenes and ask to confirm.")
        if "misunderstood" in by_kind:
            # The second in a row: the local path, with no model to offer one, says an example too.
            home = self._registry if second_miss_in_a_row(state) else None
            example = None if home is None else example_device(home)
            return Notice(
                "The last request was not understood: keep this answer short and offer an example.",
                None if example is None else say("notice_not_understood", device=_human(example)),
            )
        if state.status in ("Profiling", "DeepDive") and (missing := missing_slots(state, self._slots)):
            return Notice(f"Interview: still missing {', '.join(missing)}.")
        return None
