"""The daemon: ear → transcriber → agent → devices and speech, one turn at a time."""

from __future__ import annotations

import asyncio
import logging
import time

from voiced.devices.gateway import DeviceGateway
from voiced.ear.listener import Ear, Utterance
from voiced.errors import BrokerUnavailable, DeviceError
from voiced.events import (
    AgentText,
    CommandRefused,
    CommandSent,
    EventBus,
    Transcript,
    TurnFinished,
)
from voiced.mouth.agent import Agent, AgentReply
from voiced.mouth.speech import SpeechOutput

_LOGGER = logging.getLogger(__name__)

NO_BROKER_REPLY = "Sorry, I can't reach the devices right now, so I didn't change anything."
FAILURE_REPLY = "Sorry, something went wrong on my side."
# The tail of our own voice still in the room after the last sample is handed over.
ECHO_TAIL_S = 0.3


class Daemon:
    def __init__(
        self,
        *,
        bus: EventBus,
        ear: Ear,
        agent: Agent,
        gateway: DeviceGateway,
        speech: SpeechOutput,
    ) -> None:
        self._bus = bus
        self._ear = ear
        self._agent = agent
        self._gateway = gateway
        self._speech = speech
        self._utterances: asyncio.Queue[Utterance | None] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self.turns_done = 0

    async def run(self) -> None:
        """Run until the audio source ends and every turn has finished (or until cancelled)."""
        ear_task = asyncio.create_task(self._listen(), name="ear")
        turns_task = asyncio.create_task(self._take_turns(), name="turns")
        self._tasks = [ear_task, turns_task]
        try:
            await turns_task
            await ear_task
        finally:
            await self.stop()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            _done, pending = await asyncio.wait(self._tasks, timeout=5)
            for task in pending:
                _LOGGER.error("task %s did not stop within 5 s", task.get_name())

    async def _listen(self) -> None:
        try:
            await self._ear.run(self._utterances.put_nowait)
        finally:
            self._utterances.put_nowait(None)

    async def _take_turns(self) -> None:
        while (utterance := await self._utterances.get()) is not None:
            try:
                await self._turn(utterance)
            except asyncio.CancelledError:
                raise
            except Exception:
                _LOGGER.exception("turn %d failed", utterance.turn)
                await self._speech.speak(utterance.turn, FAILURE_REPLY)
            finally:
                self._bus.publish(TurnFinished(turn=utterance.turn))
                self.turns_done += 1

    async def _turn(self, utterance: Utterance) -> None:
        heard = await utterance.transcript
        text = heard.text
        self._bus.publish(Transcript(turn=utterance.turn, text=text, asr_s=heard.asr_s, early=heard.early))
        if not text.strip():
            return
        reply = await self._agent.respond(text)
        spoken = self._execute(utterance.turn, reply)
        self._bus.publish(AgentText(turn=utterance.turn, text=spoken, understood=reply.understood))
        await self._speech.speak(utterance.turn, spoken)

    def _execute(self, turn: int, reply: AgentReply) -> str:
        """Publish the reply's commands; returns what to say, honest about what failed."""
        failed: list[str] = []
        for command in reply.commands:
            try:
                topic, payload = self._gateway.send(command)
            except BrokerUnavailable as exc:
                _LOGGER.warning("turn %d: %s", turn, exc)
                self._bus.publish(CommandRefused(turn=turn, device=command.device, reason=str(exc)))
                return NO_BROKER_REPLY
            except DeviceError as exc:
                _LOGGER.warning("turn %d: %s", turn, exc)
                self._bus.publish(CommandRefused(turn=turn, device=command.device, reason=str(exc)))
                failed.append(command.device.replace("_", " "))
                continue
            self._bus.publish(CommandSent(turn=turn, device=command.device, topic=topic, payload=payload))
        if failed:
            return f"{reply.text} But I couldn't set the {', '.join(failed)}."
        return reply.text


class HalfDuplexGuard:
    """The ear is deaf while we speak and for a short echo tail after (until barge-in exists)."""

    def __init__(self, speech: SpeechOutput) -> None:
        self._speech = speech
        self._deaf_until = 0.0

    def __call__(self) -> bool:
        now = time.monotonic()
        if self._speech.speaking:
            self._deaf_until = now + ECHO_TAIL_S
            return True
        return now < self._deaf_until
