"""Fresh typed conversations, scored by what each turn does to the home.

The conversations in `fresh/*.yaml` were written by people (helpers given only the device list in
`fresh/HOME.md`, never the grammar or the code) as a new user talks. They are split once, by a fixed
seed and per kind, into a **tuning** half (rules may be written from it) and a **held-out** half
(reported, never read while writing rules): `split()`.

Every turn says what it must change, device by device, in plain terms (`fresh/FORMAT.md`): a light's
power, brightness percent or direction, colour name, warm or cool white; the diffuser's power, scent,
intensity, minutes; the music's action, genre, search words, volume; or a whole-home mood. A turn
is scored from the commands really published on a private broker (`score.Home`):

- exact: every device asked for got what was asked (and the mood's scene was chosen), and no
  other device was commanded; for `expect: nothing`, nothing was commanded and no scene started;
- miss: nothing was commanded and no scene started, although something was asked for;
- wrong: anything else (a device nobody named, a wrong value, a scene nobody asked for).

A conversation is right when every turn is exact. Figures are per turn and per conversation.
"""

from __future__ import annotations

import colorsys
import contextlib
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench.understanding import score
from voiced.devices.colours import COLOR_TEMPS, COLORS
from voiced.devices.registry import DeviceRegistry
from voiced.mouth.agent import AgentReply
from voiced.mouth.local_agent import carry_out
from voiced.vibe.presets import PresetPlanner

FRESH = Path(__file__).resolve().parent / "fresh"
SPLIT_SEED = 25
KINDS = ("plain", "mood", "context", "two_devices", "must_not_act", "lacks")
# Moods a writer may name that one scene serves (a date night is a dinner, a film a movie).
SAME_SCENE = {"romantic": "dinner", "bedtime": "good_night"}
BRIGHTNESS_MAX = 254  # Zigbee2MQTT's scale
PERCENT_SLACK = 2  # percent points: 15 % is brightness 38 of 254, read back as 14.96 %
SCENT_CAP = 80  # the safety gate's cap on the diffuser's intensity (config safety.max_scent_intensity)
# Colours a writer may name beyond the lights' own table: what they look like.
EXTRA_COLOURS = {
    "amber": "#FFBF00",
    "gold": "#FFD700",
    "lime": "#32CD32",
    "teal": "#008080",
    "lilac": "#C8A2C8",
    "lavender": "#E6E6FA",
    "indigo": "#4B0082",
    "crimson": "#DC143C",
    "navy": "#000080",
    "peach": "#FFDAB9",
    "warm white": "#FFD8A8",
}


@dataclass(frozen=True)
class Turn:
    say: str
    expect: dict[str, dict[str, Any]]  # device (or "scene") -> wanted; {} = nothing may change


@dataclass(frozen=True)
class Conversation:
    ident: str  # file:index
    kind: str
    turns: tuple[Turn, ...]
    room: str | None = None
    start: dict[str, dict[str, Any]] = field(default_factory=dict)


def _expect(raw: Any, where: str, names: set[str]) -> dict[str, dict[str, Any]]:
    if raw in (None, "nothing", "none", [], {}):
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expect must be a mapping of devices, or 'nothing' (got {raw!r})")
    out: dict[str, dict[str, Any]] = {}
    for device, wanted in raw.items():
        if device == "scene":
            out["scene"] = {"mood": str(wanted)}
            continue
        if device not in names:
            raise ValueError(f"{where}: no such device {device!r}")
        if not isinstance(wanted, dict):
            raise ValueError(f"{where}: {device}: expected a mapping, got {wanted!r}")
        out[device] = {str(k): (v.lower() if isinstance(v, str) else v) for k, v in wanted.items()}
        for key in ("power", "play"):  # YAML reads a bare on/off as a boolean
            if isinstance(out[device].get(key), bool):
                out[device][key] = "on" if out[device][key] else "off"
    return out


def load(paths: Sequence[Path] | None = None, registry: DeviceRegistry | None = None) -> list[Conversation]:
    registry = registry or DeviceRegistry.load(score.DEVICES)
    names = {d.name for d in registry}
    out: list[Conversation] = []
    for path in paths or sorted(FRESH.glob("set_*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for i, raw in enumerate(data["conversations"]):
            where = f"{path.name} conversation {i + 1}"
            kind = str(raw.get("kind"))
            if kind not in KINDS:
                raise ValueError(f"{where}: kind must be one of {', '.join(KINDS)} (got {kind!r})")
            turns = tuple(
                Turn(str(t["say"]), _expect(t.get("expect"), f"{where} turn {j + 1}", names))
                for j, t in enumerate(raw["turns"])
            )
            start = _expect(raw.get("start"), f"{where} start", names)
            out.append(Conversation(f"{path.stem}:{i + 1}", kind, turns, raw.get("room"), start))
    return out


def split(conversations: Sequence[Conversation], seed: int = SPLIT_SEED) -> dict[str, list[Conversation]]:
    """Half of each kind of each file for tuning, half held out: fixed by `seed`; a file added later
    leaves the halves of the others as they were."""
    halves: dict[str, list[Conversation]] = {"tuning": [], "heldout": []}
    files = sorted({c.ident.split(":")[0] for c in conversations})
    for name in files:
        for kind in KINDS:
            mine = [c for c in conversations if c.kind == kind and c.ident.split(":")[0] == name]
            mine.sort(key=lambda c: int(c.ident.split(":")[1]))  # the file's order, whatever came in
            random.Random(f"{seed}:{name}:{kind}").shuffle(mine)
            cut = len(mine) // 2
            halves["tuning"] += mine[:cut]
            halves["heldout"] += mine[cut:]
    return halves


# -- what a turn did, against what was asked ------------------------------------------------------


def _pct(brightness: Any) -> float:
    return float(brightness) * 100 / BRIGHTNESS_MAX if brightness is not None else 0.0


def _hue(hex_colour: str) -> tuple[float, float]:
    digits = hex_colour.lstrip("#")
    r, g, b = (int(digits[i : i + 2], 16) / 255 for i in (0, 2, 4))
    h, _l, s = colorsys.rgb_to_hls(r, g, b)
    return h * 360, s


def colour_like(sent_hex: str | None, name: str) -> bool:
    """Whether the colour sent looks like the colour named (hue within 30 degrees; whites alike)."""
    wanted = COLORS.get(name) or EXTRA_COLOURS.get(name)
    if sent_hex is None or wanted is None:
        return False
    (h1, s1), (h2, s2) = _hue(sent_hex), _hue(wanted)
    if s2 < 0.2 or s1 < 0.2:
        return s1 < 0.35 and s2 < 0.35
    return min(abs(h1 - h2), 360 - abs(h1 - h2)) <= 30


def _direction(new: Any, old: Any, wanted: str) -> bool:
    if new is None or old is None:
        return False
    return (new > old) if wanted == "up" else (new < old)


def _number_ok(new: Any, old: Any, wanted: Any, scale: Callable[[Any], float], cap: int = 100) -> bool:
    if wanted in ("up", "down"):
        return new is not None and _direction(scale(new), scale(old), wanted)
    return new is not None and abs(scale(new) - min(float(wanted), cap)) <= PERCENT_SLACK


def light_ok(effect: dict[str, Any], before: dict[str, Any], wanted: dict[str, Any]) -> bool:
    power = effect.get("state", before.get("state"))
    for key, value in wanted.items():
        if key == "power" and power != ("ON" if value == "on" else "OFF"):
            return False
        if key == "brightness":
            if value != "down" and power != "ON":
                return False
            if not _number_ok(effect.get("brightness"), before.get("brightness"), value, _pct):
                return False
        if key == "color" and not colour_like((effect.get("color") or {}).get("hex"), str(value)):
            return False
        if key == "white":
            temp, old = effect.get("color_temp"), before.get("color_temp")
            if temp is None:
                return False
            if value in ("warmer", "cooler") and not _direction(
                temp, old, "up" if value == "warmer" else "down"
            ):
                return False
            if value == "warm" and temp < COLOR_TEMPS["neutral"]:
                return False
            if value == "cool" and temp > 300:
                return False
    return True


def diffuser_ok(effect: dict[str, Any], before: dict[str, Any], wanted: dict[str, Any]) -> bool:
    power = effect.get("state", before.get("state"))
    for key, value in wanted.items():
        if key == "power" and power != ("ON" if value == "on" else "OFF"):
            return False
        if key == "scent" and (effect.get("scent") != value or power != "ON"):
            return False
        if key == "intensity" and not _number_ok(
            effect.get("intensity"), before.get("intensity"), value, float, SCENT_CAP
        ):
            return False
        if key == "minutes" and effect.get("duration_min") != int(value):
            return False
    return True


def _words(text: Any) -> set[str]:
    return {w.strip(".,!?'\"").lower() for w in str(text or "").split()} - {"the", "a", "by", "some"}


def music_ok(effect: dict[str, Any], before: dict[str, Any], wanted: dict[str, Any]) -> bool:
    action = effect.get("action")
    for key, value in wanted.items():
        if key == "play":
            want = {"on": "play", "resume": "play"}.get(str(value), str(value))
            if action != want:
                return False
        if key == "genre" and (effect.get("genre") != value or action != "play"):
            return False
        if key == "search" and not (_words(value) <= _words(effect.get("query"))):
            return False
        if key == "volume" and not _number_ok(effect.get("volume"), before.get("volume"), value, float):
            return False
    return True


CHECKS = {"light": light_ok, "diffuser": diffuser_ok, "music": music_ok}


def effects(published: Sequence[score.Command]) -> dict[str, dict[str, Any]]:
    """Each device's commands of one turn, merged in order (the last value of a field stands)."""
    merged: dict[str, dict[str, Any]] = {}
    for device, payload in published:
        merged.setdefault(device, {}).update(payload)
    return merged


_STATE_OF_ACTION = {"play": "playing", "pause": "paused", "stop": "stopped"}


def changes(done: dict[str, dict[str, Any]], before: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """What the commands change: a field already as commanded ("keep the lounge light on" to a light
    that is on) is no effect, and a device left as it was is not counted."""
    out: dict[str, dict[str, Any]] = {}
    for device, effect in done.items():
        was = before.get(device, {})
        kept = {
            k: v
            for k, v in effect.items()
            if not (was.get(k) == v or (k == "action" and was.get("state") == _STATE_OF_ACTION.get(v)))
        }
        if kept:
            out[device] = effect
    return out


def judge(
    turn: Turn,
    published: Sequence[score.Command],
    scene: str | None,
    before: dict[str, dict[str, Any]],
    kinds: dict[str, str],
) -> tuple[str, str | None]:
    """The turn's outcome ("exact", "miss" or "wrong") and, when wrong, why (see `wrong_why`)."""
    done = changes(effects(published), before)
    if not done and scene is None:
        return ("exact" if not turn.expect else "miss"), None
    why = wrong_why(turn, done, scene, before, kinds)
    return ("exact" if why is None else "wrong"), why


def wrong_why(
    turn: Turn,
    done: dict[str, dict[str, Any]],
    scene: str | None,
    before: dict[str, dict[str, Any]],
    kinds: dict[str, str],
) -> str | None:
    """Why a turn that changed something (`done`, from `changes`) is wrong (None: it is exact), as
    one of a few sorts, so the held-out half's wrong effects can be counted by sort without reading
    them."""
    if not turn.expect:
        return "acted when nothing was asked"
    wanted_scene = turn.expect.get("scene", {}).get("mood")
    if (scene is None) != (wanted_scene is None):
        return "a scene nobody asked for" if scene is not None else "devices for a mood"
    if wanted_scene is not None and SAME_SCENE.get(wanted_scene, wanted_scene) != SAME_SCENE.get(
        str(scene), scene
    ):
        return "another scene"
    devices = {d for d in turn.expect if d != "scene"}
    if scene is not None and not devices:
        return None  # the scene's own commands come from the vibe agent, not this turn
    if set(done) - devices:
        return "a device not asked about"
    if devices - set(done):
        return "a device left out"
    for device, effect in done.items():
        if not CHECKS[kinds[device]](effect, before.get(device, {}), turn.expect[device]):
            return "a wrong value"
    return None


# -- the start of a conversation, as device states ------------------------------------------------


def start_states(conversation: Conversation, kinds: dict[str, str]) -> dict[str, dict[str, Any]]:
    states: dict[str, dict[str, Any]] = {}
    for device, wanted in conversation.start.items():
        kind = kinds.get(device)
        state: dict[str, Any] = {}
        if kind == "light":
            if "power" in wanted:
                state["state"] = "ON" if wanted["power"] == "on" else "OFF"
            if isinstance(wanted.get("brightness"), int | float):
                state["brightness"] = round(float(wanted["brightness"]) * BRIGHTNESS_MAX / 100)
            if wanted.get("white") in COLOR_TEMPS:
                state["color_temp"] = COLOR_TEMPS[wanted["white"]]
        elif kind == "diffuser":
            if "power" in wanted:
                state["state"] = "ON" if wanted["power"] == "on" else "OFF"
            if "scent" in wanted:
                state["scent"] = wanted["scent"]
            if isinstance(wanted.get("intensity"), int | float):
                state["intensity"] = int(wanted["intensity"])
        elif kind == "music":
            play = wanted.get("play")
            if play in ("on", "resume"):
                state["state"] = "playing"
            elif play in ("pause", "stop"):
                state["state"] = {"pause": "paused", "stop": "stopped"}[play]
            if "genre" in wanted:
                state["genre"] = wanted["genre"]
                state.setdefault("state", "playing")
            if isinstance(wanted.get("volume"), int | float):
                state["volume"] = int(wanted["volume"])
        states[device] = state
    return states


# -- running ----------------------------------------------------------------------------------------


@dataclass
class TurnResult:
    conversation: Conversation
    index: int
    outcome: str
    published: list[score.Command]
    scene: str | None
    said: str
    understand_ms: float
    why: str | None = None  # the sort of wrong effect (wrong_why)

    def as_dict(self) -> dict[str, Any]:
        turn = self.conversation.turns[self.index]
        return {
            "conversation": self.conversation.ident,
            "kind": self.conversation.kind,
            "turn": self.index + 1,
            "say": turn.say,
            "expect": turn.expect,
            "outcome": self.outcome,
            "why": self.why,
            "published": [{"device": d, "payload": p} for d, p in self.published],
            "scene": self.scene,
            "said": self.said,
            "understand_ms": self.understand_ms,
        }


async def run(
    conversations: Sequence[Conversation],
    port: int,
    registry: DeviceRegistry | None = None,
    make_agent: score.AgentFactory | None = None,
) -> list[TurnResult]:
    """`make_agent(registry, states, room)`: the agent for a conversation (default: a fresh local one)."""
    registry = registry or DeviceRegistry.load(score.DEVICES)
    kinds = {d.name: d.kind for d in registry}
    planner = PresetPlanner(None, registry, "relax")
    agents = make_agent or score.FreshAgents()
    results: list[TurnResult] = []
    async with score.Home(port, registry) as home:
        for number, conversation in enumerate(conversations, start=1):
            await home.prepare(start_states(conversation, kinds))
            agent = agents(home.registry, home.states, conversation.room)
            for index, turn in enumerate(conversation.turns):
                before = {d.name: dict(home.states(d.name) or {}) for d in registry}
                started = time.perf_counter()
                reply = agent.understand(turn.say)
                elapsed = (time.perf_counter() - started) * 1000
                assert isinstance(reply, AgentReply)
                done = await carry_out(number * 10 + index, reply, home.actions)
                assert home.recorder is not None
                published = await home.recorder.collect()
                home.touched(device for device, _ in published)
                await _settled(home, published)
                scene = planner.choose(reply.scene)[0] if reply.scene else None
                outcome, why = judge(turn, published, scene, before, kinds)
                results.append(
                    TurnResult(conversation, index, outcome, published, scene, done.said, elapsed, why)
                )
    return results


async def _settled(home: score.Home, published: Sequence[score.Command]) -> None:
    """Until the gateway shows what was published (the next turn's "brighter" starts from it)."""
    wanted = effects(published)

    def shown() -> bool:
        for device, payload in wanted.items():
            state = home.states(device) or {}
            for key in ("state", "brightness", "color_temp", "scent", "intensity", "volume"):
                if key in payload and key in state and state[key] != payload[key]:
                    return False
        return True

    # the simulator capped or refused a value: the next turn starts from what it shows
    with contextlib.suppress(TimeoutError):
        await home.until(shown, "the states the turn set")


# -- figures ----------------------------------------------------------------------------------------


def summary(results: Sequence[TurnResult]) -> dict[str, Any]:
    per_kind: dict[str, Counter[str]] = {}
    conversations: dict[str, bool] = {}
    for r in results:
        per_kind.setdefault(r.conversation.kind, Counter())[r.outcome] += 1
        ident = r.conversation.ident
        conversations[ident] = conversations.get(ident, True) and r.outcome == "exact"
    total = Counter[str]()
    for counts in per_kind.values():
        total.update(counts)
    n = sum(total.values())
    times = [r.understand_ms for r in results]
    return {
        "turns": n,
        "exact": total["exact"],
        "miss": total["miss"],
        "wrong": total["wrong"],
        "exact_rate": total["exact"] / n if n else 0.0,
        "conversations": len(conversations),
        "conversations_right": sum(conversations.values()),
        "kinds": {k: dict(c) for k, c in per_kind.items()},
        "understand_ms": {"p50": score.percentile(times, 50), "p95": score.percentile(times, 95)},
    }


def report(results: Sequence[TurnResult], title: str, *, show: bool) -> str:
    figures = summary(results)
    lines = ["", f"{title}: {figures['conversations']} conversations, {figures['turns']} turns"]
    row = "  {:14} {:>5} {:>6} {:>7} {:>5} {:>6}"
    lines.append(row.format("kind", "turns", "exact", "exact%", "miss", "wrong"))
    for kind in KINDS:
        c = Counter(figures["kinds"].get(kind, {}))
        n = sum(c.values())
        if n:
            lines.append(
                row.format(kind, n, c["exact"], f"{100 * c['exact'] / n:.1f}%", c["miss"], c["wrong"])
            )
    lines.append(
        row.format(
            "TOTAL",
            figures["turns"],
            figures["exact"],
            f"{100 * figures['exact_rate']:.1f}%",
            figures["miss"],
            figures["wrong"],
        )
    )
    lines.append(
        f"  conversations right (every turn exact): {figures['conversations_right']} of "
        f"{figures['conversations']}; understand() p50 {figures['understand_ms']['p50']:.2f} ms, "
        f"p95 {figures['understand_ms']['p95']:.2f} ms"
    )
    sorts = Counter(r.why for r in results if r.outcome == "wrong")
    if sorts:
        lines.append("  wrong effects by sort: " + "; ".join(f"{w} {n}" for w, n in sorts.most_common()))
    if show:
        for r in results:
            if r.outcome == "exact":
                continue
            turn = r.conversation.turns[r.index]
            lines.append(
                f"  {r.outcome.upper():5} [{r.conversation.kind} {r.conversation.ident}] {turn.say!r}"
            )
            lines.append(f"        expected:  {json.dumps(turn.expect)}")
            lines.append(
                f"        published: {score._commands(r.published)} scene={r.scene}; said {r.said!r}"
            )
    return "\n".join(lines)
