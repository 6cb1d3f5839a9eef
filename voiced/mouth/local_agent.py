"""The local path as an Agent: intents matched offline, commands executed, one honest sentence back."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass

from voiced.devices.actions import DeviceActions
from voiced.devices.gateway import Sent
from voiced.language.replies import say, the
from voiced.mouth.agent import NO_CONTEXT, AgentReply, TurnContext
from voiced.mouth.intents import LocalIntentAgent
from voiced.mouth.scene_undo import Before, SceneUndo
from voiced.mouth.vibe_control import SceneNews, VibeControl

NO_BROKER_REPLY = say("no_broker")
NO_SCENES_REPLY = say("no_scenes")
STOPPED_REPLY = say("scene_stopped")
NOTHING_TO_STOP_REPLY = say("no_scene_running")


def mentions(messages: Sequence[SceneNews]) -> str:
    """What the local path says about finished scenes: news not yet told, cancellations left out."""
    lines = [m.spoken() for m in messages if not m.told]  # a cancellation says nothing
    return " ".join(line for line in lines if line)


@dataclass(frozen=True)
class CarriedOut:
    said: str  # what to say, honest about what failed
    sent: tuple[Sent, ...] = ()  # the commands the broker took


async def carry_out(
    turn: int, reply: AgentReply, actions: DeviceActions, vibe: VibeControl | None = None
) -> CarriedOut:
    """Execute a local reply's commands and scene."""
    if reply.scene is not None and vibe is not None and not actions.connected:
        return CarriedOut(NO_BROKER_REPLY)  # a scene that cannot reach a single device is not "coming up"
    failed: list[str] = []
    offline: list[str] = []
    unacked: list[str] = []
    sent: list[Sent] = []
    for command in reply.commands:
        result = await actions.execute_acked(turn, command)
        if result.broker_down:
            return CarriedOut(NO_BROKER_REPLY)
        if result.sent is not None:
            sent.append(result.sent)
        if result.unacked:
            unacked.append(command.device.replace("_", " "))
        if not result.ok:
            name = command.device.replace("_", " ")
            (failed if actions.is_online(command.device) else offline).append(name)
    said = [reply.text] if reply.text else []
    if offline:
        said.append(say("device_offline", [the(name) for name in offline]))
    if failed:
        said.append(say("device_failed", [the(name) for name in failed]))
    if unacked:
        said.append(say("device_unacked", [the(name) for name in unacked]))
    if reply.reset_scene:
        stopped = vibe is not None and vibe.running is not None
        if vibe is not None:
            await vibe.cancel("the user asked to stop the scene")
        said.append(STOPPED_REPLY if stopped else NOTHING_TO_STOP_REPLY)
    if reply.scene is not None:
        if vibe is None:
            said.append(NO_SCENES_REPLY)
        else:
            await vibe.start(reply.scene, turn)
            said.append(vibe.acknowledgement(reply.scene))
    return CarriedOut(" ".join(said), tuple(sent))


async def act(
    turn: int,
    reply: AgentReply,
    actions: DeviceActions,
    vibe: VibeControl | None,
    undo: SceneUndo,
    just_set: Before | None,
) -> CarriedOut:
    """`carry_out`, and a scene taken back: "never mind" right after one (`just_set`: the home before
    the scene the last turn started) stops it if it still runs and puts back what it changed."""
    if reply.reset_scene and just_set is not None and vibe is not None:
        stopped = vibe.running is not None
        if stopped:
            await vibe.cancel("the user took the scene back")
        back = undo.take_back(just_set, stopped)
        return await carry_out(turn, AgentReply(text=back.said, commands=back.commands), actions)
    if reply.scene is not None and vibe is not None:
        undo.scene_starts(reply.scene)  # before it changes anything
    done = await carry_out(turn, reply, actions, vibe)
    if done.said == NO_BROKER_REPLY:
        undo.forget()
    return done


async def confirmations(turn: int, actions: DeviceActions, sent: tuple[Sent, ...]) -> str:
    """What the devices themselves report, once they have (all waited for at once)."""
    lines = await asyncio.gather(*(actions.confirm(turn, one) for one in sent))
    return " ".join(lines)


class LocalAgent:
    def __init__(
        self, intents: LocalIntentAgent, actions: DeviceActions, vibe: VibeControl | None = None
    ) -> None:
        self._intents = intents
        self._actions = actions
        self._vibe = vibe
        self._understood: tuple[int, bool] = (0, True)  # the last turn and whether it was
        self._last_said = ""  # for "say that again"
        self._undo = SceneUndo(actions)  # "never mind" right after a scene takes it back

    async def reply(
        self, turn: int, text: str, context: TurnContext = NO_CONTEXT
    ) -> AsyncGenerator[str, None]:
        news = mentions(self._vibe.poll_messages()) if self._vibe is not None else ""
        just_set = self._undo.turn_begins()
        understood = await self._intents.understand_fresh(
            text, self._actions.refresh, context.doubtful, context.alternatives, heard=context.heard
        )
        self._understood = (turn, understood.understood)
        done = await act(turn, understood, self._actions, self._vibe, self._undo, just_set)
        if understood.repeat and self._last_said:
            done = CarriedOut(say("i_said", said=self._last_said))
        said = " ".join(part for part in (context.say, news, done.said) if part)
        if not understood.repeat:
            self._last_said = said
        if not (context.confirm and done.sent):
            yield said
            return
        yield f"{said}\n"  # a finished sentence: it plays while the devices report
        yield await confirmations(turn, self._actions, done.sent)

    def spoken(self, turn: int, text: str, *, interrupted: bool) -> None:
        return None  # the local path keeps no conversation history

    def understood(self, turn: int) -> bool:
        return self._understood != (turn, False)

    async def aclose(self) -> None:
        if self._vibe is not None:
            await self._vibe.aclose()
