"""The local agent's answer from what it understood: what it did, what it missed, and when a part it
missed means it should do nothing at all."""

from __future__ import annotations

import logging

from voiced.devices.model import DeviceCommand, MusicSet
from voiced.devices.registry import DeviceRegistry
from voiced.devices.vocabulary import HomeVocabulary
from voiced.language import english, find, words
from voiced.language.replies import knows, say
from voiced.mouth.agent import AgentReply
from voiced.mouth.understanding.answers import cannot_do
from voiced.mouth.understanding.handlers import RESET_SCENE
from voiced.mouth.understanding.home import WHICH_ONE, Home, Outcome
from voiced.mouth.understanding.lacking import lacking
from voiced.mouth.understanding.matcher import Matcher
from voiced.mouth.understanding.spoken_of import states_how_things_are
from voiced.mouth.understanding.text import clean, split_utterance

log = logging.getLogger(__name__)

NOT_UNDERSTOOD = say("not_understood")
CANNOT = say("only_control", verb="\x00", what="").split("\x00")[0]  # "I can't ": the refusal's opening
REPORTED = say("reported")
NEGATED = say("negated")
LATER = say("later_unsupported")
CONDITIONAL = say("conditional_unsupported")
POINTING = english().word_sets["pointing_said"]
KIND_WORDS = english().word_sets["kind_words"]


def plays_anything(command: DeviceCommand) -> bool:
    return isinstance(command, MusicSet) and command.action == "play" and not (command.query or command.genre)


_NUMBER_WORDS = [p for p in english().numbers if not set(p) <= english().word_sets["not_a_level"]]


def value_or_part(segment: str) -> bool:
    """A number, in figures or words ("seventy five should do it"), or a piece of a kind of device
    ("fuser" for "diffuser")."""
    words = segment.split()
    return (
        any(c.isdigit() for c in segment)
        or bool(find(words, _NUMBER_WORDS))
        or any(len(w) >= 4 and w != k and w in k for w in words for k in KIND_WORDS)
    )


_WHOSE = english().word_sets["whose"]


def _who_said(segment: str, text: str) -> bool:
    """A short noun phrase missed at the very start ("my brother, turn off all the lights", "the
    manual, set the diffuser to 100 percent"): who said the rest, its "said" lost to the ear."""
    words = segment.split()
    return 1 < len(words) <= 3 and words[0] in _WHOSE and clean(text).startswith(segment)


def searches(command: DeviceCommand) -> bool:
    return isinstance(command, MusicSet) and command.action == "play" and bool(command.query)


def names_vocabulary(segment: str, registry: DeviceRegistry, rooms: set[str]) -> bool:
    """Whether `segment` names a device, a room, a kind of device, or a colour, scent or genre."""
    words = f" {segment} "
    named = {d.name.replace("_", " ") for d in registry} | rooms | KIND_WORDS
    if any(f" {n} " in words for n in named):
        return True
    # a colour, scent or genre ("…, blues"): what the rest of the request was about
    vocabulary = HomeVocabulary.of(registry)
    values = {w for v in (*vocabulary.colours, *vocabulary.scents, *vocabulary.genres) for w in v.split()}
    return any(w in values or w.rstrip("s") in values for w in segment.split())


def thanked(text: str) -> bool:
    """Whether `text` says a courtesy ("thanks", "please") anywhere."""
    return bool(find(words(text), english().courtesy_phrases))


def compose(
    text: str, outcomes: list[Outcome], missed: list[str], matcher: Matcher, home: Home, rooms: set[str]
) -> AgentReply:
    registry = home.registry
    if any(o.farewell for o in outcomes) and (len(outcomes) > 1 or thanked(text)):
        # "thank you, night night", "lights out in here please, goodnight!": a farewell, no scene
        outcomes = [Outcome(say("farewell"), acted=False) if o.farewell else o for o in outcomes]
    if not outcomes:
        # courtesy words are dropped from the parts: "thank you" alone is matched whole
        refusal = matcher.unsupported(" ".join(split_utterance(text))) or matcher.unsupported(clean(text))
        if refusal is not None and refusal.get("welcome"):  # "thanks, that's all": nothing to do
            return AgentReply(text=str(refusal.get("said")), understood=True)
        if refusal is not None and refusal.get("repeat"):  # heard fine; with an LLM, the model answers
            return AgentReply(text=str(refusal.get("said")), understood=False, repeat=True)
        if refusal is not None:
            # "I can't turn on the lights gear": a thing named like this home's is likely misheard
            named = " ".join(str(refusal.get(slot) or "") for slot in ("thing", "value")).lower()
            if refusal.get("thing") is not None and clean(str(refusal.get("thing"))) in POINTING:
                return AgentReply(text=WHICH_ONE, understood=True)  # "set it to 60 %" with no "it" yet
            lacked = lacking(words(named), {d.kind for d in registry}, english())
            if lacked is not None and not refusal.get("said"):  # "turn on the diffuser", and none here
                return AgentReply(text=say("kind_lacking", thing=lacked), understood=True)
            misheard = "brightness" in named or names_vocabulary(f" {named} ", registry, rooms)
            refused = cannot_do(home, refusal).reply
            if refused.startswith(CANNOT) and (misheard or POINTING.intersection(words(named))):
                # "I can't set the volume to what thirty": a thing this home has, or "it", is no thing
                # we cannot do; the words around it are what we missed
                log.info("not understood, though it names something here: %r", text)
                return AgentReply(text=NOT_UNDERSTOOD, understood=False, missed=True)
            return AgentReply(text=refused, understood=False, missed=misheard)
        log.info("not understood: %r", text)
        return AgentReply(text=NOT_UNDERSTOOD, understood=False, missed=True)
    # a part missed that names a thing here, or holds a number (a value meant for something: "the
    # view from intensity 30 percent", "000 cakes"), makes the rest a guess
    unsure = [
        m
        for m in missed
        if (names_vocabulary(m, registry, rooms) or value_or_part(m) or _who_said(m, text))
        and not states_how_things_are(m)
    ]
    titles = {t.lower() for t in HomeVocabulary.of(registry).titles}
    played = [c for o in outcomes for c in o.commands if plays_anything(c) or searches(c)]
    # a title of the library said whole is no guess: the rest is talk ("…, it's stopped raining")
    known = (
        played
        and all(isinstance(c, MusicSet) and (c.query or "").lower() in titles for c in played)
        and not any(m in titles for m in missed)  # "play Pink Floyd, The Dark Side of the Moon": which?
    )
    if missed and played and not known:
        unsure = (
            missed  # "play the song, glad to loom", "play the sun, clear the moon": the rest was what to play
        )
    if unsure and any(o.commands or o.scene for o in outcomes):
        log.info("part of %r names a device or room but was not understood: %s", text, unsure)
        said = say("part_not_understood", part=unsure[0])
        return AgentReply(text=said, understood=False, missed=True)
    replies = list(dict.fromkeys(o.reply for o in outcomes if o.reply))
    if missed:
        log.info("understood only part of %r; missed %s", text, missed)
        replies.append(say("part_missed", part=missed[0]))
    scene = next((o.scene for o in reversed(outcomes) if o.scene), None)
    # "Turn on the living room. Lights on.": one request heard twice is sent once.
    commands = tuple(dict.fromkeys(c for o in outcomes for c in o.commands))
    clash = contradiction(outcomes)
    if clash is not None:  # "sandalwood, eucalyptus, …": which one was meant is a guess
        device, what = clash
        log.info("%r sets two different %s for %s: not acted on", text, what, device)
        named = device.replace("_", " ")
        said = say("two_values", what=what, device=named)
        return AgentReply(text=said, understood=False, missed=True)
    return AgentReply(
        text=" ".join(replies),
        commands=commands,
        understood=True,
        missed=bool(missed),
        scene=None if scene == RESET_SCENE else scene,
        reset_scene=scene == RESET_SCENE,
    )


def _setting(name: str) -> str:
    """A setting as a reply says it: "scents", "colours", "brightness values"."""
    key = f"two_values_{name}"
    return (
        say(key)
        if key != "two_values_other" and knows(key)
        else say("two_values_other", setting=name.replace("_", " "))
    )


def contradiction(outcomes: list[Outcome]) -> tuple[str, str] | None:
    """A device and a setting that two parts of one utterance, each about the same devices, give
    different values (two scents, two colours): the device and the setting's name, or None. A
    narrower part after a wider one is no contradiction: "all the lights red and the kitchen blue"."""
    seen: dict[tuple[str, str], tuple[object, frozenset[str]]] = {}
    for outcome in outcomes:
        scope = frozenset(c.device for c in outcome.commands)
        for command in outcome.commands:
            for name, value in command.model_dump().items():
                if name == "device" or value is None:
                    continue
                earlier = seen.get((command.device, name))
                if earlier is not None and earlier[0] != value and earlier[1] == scope:
                    return command.device, _setting(name)
                seen[(command.device, name)] = (value, scope)
    return None
