"""LlmAgent: an OpenAI-compatible chat model with tools, streamed into speech.

Content deltas are yielded as they arrive; tool calls are accumulated from the stream, run through
the ToolBox (and so through DeviceActions), their results appended, and the model asked again, at
most `max_tool_rounds` times. Any failure of the endpoint (unreachable, no first token in time, a
stall between tokens, no first sentence in time, an HTTP error, a garbled stream) raises
LlmUnavailable; cancellation is never swallowed and closes the HTTP stream. Text is passed on a
sentence at a time, so a reply cut short never leaves half a sentence for the apology to glue onto.
History keeps the last `max_history_turns` turns, trimmed to what was actually spoken.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar, cast

import openai
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam

from voiced.bus import EventBus
from voiced.config import LlmConfig
from voiced.devices.actions import DeviceActions
from voiced.devices.registry import DeviceRegistry
from voiced.devices.tools import MAX_ARGUMENT_CHARS, excerpt
from voiced.llm_client import borrow, open_client
from voiced.mouth.llm_errors import LlmUnavailable
from voiced.mouth.tools import ToolBox, VibeControl
from voiced.safe_text import clean

_LOGGER = logging.getLogger(__name__)
_T = TypeVar("_T")

INTERRUPTED = "[interrupted]"
Message = dict[str, Any]
_NAME_CHARS = 64  # tool names and call ids: OpenAI's own limit is 64
_MAX_CALLS = 1024  # calls kept from one response; the rate limit refuses most of them anyway
# Where the text so far may be cut: after a sentence's end (and its closing quotes) or a newline.
_SENTENCE_END = re.compile(r"(?:[.!?…][\"')\]\u201d\u2019]*|\n)")


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""

    def add(self, part_id: str | None, name: str | None, arguments: str | None) -> None:
        """One streamed delta; all three are bounded, so a hostile model can't fill our memory."""
        self.id = self.id or (part_id or "")[:_NAME_CHARS]
        self.name = self.name or (name or "")[: _NAME_CHARS + 1]
        room = MAX_ARGUMENT_CHARS + 1 - len(self.arguments)  # one over: parsing refuses it, naming why
        if arguments and room > 0:
            self.arguments += arguments[:room]


@dataclass
class _Round:
    """One streamed response: its text and the tool calls assembled from the deltas."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    chunks: int = 0
    held: str = ""  # text after the last sentence end: passed on only once it is whole
    said: list[str] = field(default_factory=list)  # what was passed on

    def whole(self, text: str, *, end: bool = False) -> str:
        """Add `text`; return what is now whole (everything, at the end of the stream)."""
        self.held += text
        cut = len(self.held) if end else max((m.end() for m in _SENTENCE_END.finditer(self.held)), default=0)
        whole, self.held = self.held[:cut], self.held[cut:]
        if whole:
            self.said.append(whole)
        return whole


@dataclass
class _Exchange:
    """One turn as the model sees it: the user's words, any tool rounds, the reply."""

    turn: int
    messages: list[Message]
    context: list[str] = field(default_factory=list)  # this turn's brain context, not kept in history
    said: bool = False  # some text was yielded
    finished: bool = False  # the last message is the reply

    def finish(self, text: str) -> None:
        self.messages.append({"role": "assistant", "content": text})
        self.finished = True

    def replace_reply(self, text: str) -> None:
        """Keep the tool calls and results (they happened); the only words are `text`."""
        kept: list[Message] = []
        for message in self.messages:
            if message["role"] == "assistant":
                if not message.get("tool_calls"):
                    continue
                message = {"role": "assistant", "content": None, "tool_calls": message["tool_calls"]}
            kept.append(message)
        self.messages = kept
        self.finish(text)


def _json_object_or_empty(arguments: str) -> str:
    """What to echo back in history: servers may re-parse it, so never replay malformed JSON, nor
    megabytes that every later request would carry."""
    if len(arguments) > MAX_ARGUMENT_CHARS:
        return "{}"
    try:
        return arguments if isinstance(json.loads(arguments), dict) else "{}"
    except (ValueError, RecursionError):  # not JSON, too many digits, nested too deep
        return "{}"


class LlmAgent:
    def __init__(
        self,
        config: LlmConfig,
        registry: DeviceRegistry,
        actions: DeviceActions,
        *,
        client: openai.AsyncOpenAI | None = None,
        clock: Callable[[], datetime] = datetime.now,
        vibe: VibeControl | None = None,
        bus: EventBus | None = None,
    ) -> None:
        if client is None and config.base_url is None:
            raise ValueError("LlmAgent needs llm.base_url (or a client)")
        self._config = config
        self._tools = ToolBox(registry, actions, clock, vibe=vibe, bus=bus)
        self._owns_client = client is None
        self._client = (
            open_client(config, config.total_timeout_s)
            if client is None
            else borrow(client, config, config.total_timeout_s)
        )
        self._history: deque[_Exchange] = deque(maxlen=config.max_history_turns or None)
        self._keep_history = config.max_history_turns > 0

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()

    @staticmethod
    def _opening(text: str, news: list[str]) -> list[Message]:
        """News (finished scenes) goes in just before the user's words, as seed 001 injects it."""
        told = [{"role": "system", "content": f"[news since the last turn] {item}"} for item in news]
        return [*told, {"role": "user", "content": text}]

    def remember(self, turn: int, text: str, reply: str, news: Sequence[str] = ()) -> None:
        """A turn answered elsewhere (the local intents): the model should still know it happened."""
        exchange = _Exchange(turn, self._opening(text, list(news)), said=True)
        exchange.finish(reply)
        self._keep(exchange)

    def spoken(self, turn: int, text: str, *, interrupted: bool) -> None:
        if interrupted:
            self.revise(turn, f"{text.strip()} {INTERRUPTED}".lstrip())

    def revise(self, turn: int, reply: str) -> None:
        """The reply of `turn` is now `reply` (it went on, or was cut short)."""
        for exchange in self._history:
            if exchange.turn == turn:
                exchange.replace_reply(reply)

    async def reply(
        self, turn: int, text: str, news: Sequence[str] = (), context: Sequence[str] = ()
    ) -> AsyncGenerator[str, None]:
        """`news`: finished scenes (kept in history); `context`: the brain's lines for this turn only."""
        exchange = _Exchange(turn, self._opening(text, list(news)), context=list(context))
        deadline = asyncio.get_running_loop().time() + self._config.total_timeout_s
        rounds = self._config.max_tool_rounds
        current = _Round()
        try:
            for index in range(rounds + 1):
                current = _Round()
                gap = exchange.said  # a new round's text must not glue onto the last sentence
                stream = self._stream(exchange, current, deadline, last=index == rounds)
                async with aclosing(stream):  # closing reply() closes the HTTP stream at once
                    async for piece in stream:
                        exchange.said = True
                        yield " " + piece if gap and not piece[0].isspace() else piece
                        gap = False
                if current.calls and index < rounds:
                    await self._run_tools(turn, index, exchange, current)
                    continue
                if current.calls:
                    _LOGGER.warning("turn %d: model still calling tools after %d rounds", turn, rounds)
                if not exchange.said:
                    raise LlmUnavailable("the model returned no text")
                exchange.finish("".join(current.text))
                return
        except LlmUnavailable as exc:
            _LOGGER.warning("turn %d: LLM unavailable: %s", turn, excerpt(exc.reason, 300))
            raise
        except asyncio.CancelledError:
            _LOGGER.info("turn %d: reply cancelled", turn)
            raise
        finally:
            # Keep what happened (tool calls, news the model was given) even when the reply failed.
            happened = any(message["role"] != "user" for message in exchange.messages)
            if not exchange.finished and (exchange.said or happened):
                exchange.finish("".join(current.said))  # not the unfinished sentence nobody heard
            if exchange.finished:
                self._keep(exchange)

    def _keep(self, exchange: _Exchange) -> None:
        if self._keep_history:
            self._history.append(exchange)

    def _messages(self, exchange: _Exchange) -> list[ChatCompletionMessageParam]:
        messages: list[Message] = [{"role": "system", "content": self._config.system_prompt}]
        for past in self._history:
            messages.extend(past.messages)
        messages.extend({"role": "system", "content": line} for line in exchange.context)
        messages.extend(exchange.messages)
        return cast("list[ChatCompletionMessageParam]", messages)

    async def _stream(
        self, exchange: _Exchange, current: _Round, deadline: float, *, last: bool
    ) -> AsyncGenerator[str, None]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        first_by = min(deadline, started + self._config.first_token_timeout_s)
        # A user who gave a slow model more time to start gave it that long for a sentence too.
        first_sentence_s = max(self._config.first_sentence_timeout_s, self._config.first_token_timeout_s)
        sentence_by = min(deadline, started + first_sentence_s)
        request = self._client.chat.completions.create(
            model=self._config.model,
            messages=self._messages(exchange),
            tools=self._tools.schemas(),
            tool_choice="none" if last else "auto",
            temperature=self._config.temperature,
            stream=True,
        )
        stream = await self._within(request, first_by, "response")
        async with stream:
            while True:
                by, what = first_by, "token"
                if current.chunks:  # a trickle or a stall: the user must not wait on it in silence
                    by, what = min(deadline, loop.time() + self._config.stall_timeout_s), "next token"
                if not exchange.said and not current.calls and sentence_by < by:
                    by, what = sentence_by, "first sentence"
                try:
                    chunk = await self._within(anext(stream), by, what)
                except StopAsyncIteration:
                    break
                current.chunks += 1
                try:
                    piece = current.whole(self._absorb(chunk, current))
                except (AttributeError, TypeError, ValueError) as exc:
                    raise LlmUnavailable(f"malformed stream chunk: {excerpt(str(exc))}") from exc
                if piece:
                    yield piece
        rest = current.whole("", end=True)
        if rest:
            yield rest

    async def _within(self, awaitable: Awaitable[_T], deadline: float, what: str = "token") -> _T:
        """Await one step of the request by `deadline`; every endpoint failure becomes LlmUnavailable.

        asyncio.timeout_at, not wait_for: on Python 3.11 wait_for swallows a cancellation that lands
        just as the awaited step completes, and barge-in would then keep streaming.
        """
        try:
            async with asyncio.timeout_at(deadline):
                return await awaitable
        except TimeoutError:
            raise LlmUnavailable(f"no {what} from the model within the timeout") from None
        except openai.APIStatusError as exc:
            raise LlmUnavailable(f"HTTP {exc.status_code} from {self._client.base_url}") from exc
        except openai.APIConnectionError as exc:
            raise LlmUnavailable(
                f"connection to {self._client.base_url} failed: {exc.__cause__ or exc}"
            ) from exc
        except openai.OpenAIError as exc:
            raise LlmUnavailable(f"model error: {exc}") from exc
        except ValueError as exc:  # the SSE data was not JSON
            raise LlmUnavailable(f"garbled stream: {exc}") from exc

    @staticmethod
    def _absorb(chunk: ChatCompletionChunk, current: _Round) -> str:
        pieces: list[str] = []
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            for part in delta.tool_calls or ():
                if part.index not in current.calls and len(current.calls) >= _MAX_CALLS:
                    continue
                call = current.calls.setdefault(part.index, _Call())
                function = part.function
                if function is None:
                    call.add(part.id, None, None)
                else:
                    call.add(part.id, function.name, function.arguments)
            if delta.content:
                pieces.append(clean(delta.content, keep_breaks=True))
        text = "".join(pieces)
        if text:
            current.text.append(text)
        return text

    async def _run_tools(self, turn: int, index: int, exchange: _Exchange, current: _Round) -> None:
        calls = [current.calls[key] for key in sorted(current.calls)]
        for number, call in enumerate(calls):
            call.id = call.id or f"call_{turn}_{index}_{number}"
        exchange.messages.append(
            {
                "role": "assistant",
                "content": "".join(current.text) or None,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": _json_object_or_empty(call.arguments)},
                    }
                    for call in calls
                ],
            }
        )
        for call in calls:
            result = await self._tools.run(turn, call.name, call.arguments)
            exchange.messages.append({"role": "tool", "tool_call_id": call.id, "content": result.content})
