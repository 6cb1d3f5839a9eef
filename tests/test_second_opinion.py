"""The second ear: what is taken from two models' readings, and when the second one is asked."""

from __future__ import annotations

import asyncio

import numpy as np

from voiced.ear.asr_queue import AsrQueue, Priority
from voiced.ear.second_opinion import Rules, SecondEar, changes_meaning, likeness, reconsidered
from voiced.ear.transcriber import Hearing
from voiced.ear.whisper import PROMPT_EXAMPLES

ACTED_ON = {"set the diffuser intensity to 70%", "set the bedroom to 50%", "turn on the light"}


def acts(hearing: Hearing) -> bool:
    """Stands in for the local intents' dry run: acts on a few sentences, and on no doubted word."""
    return hearing.text.lower().rstrip(".,") in ACTED_ON and not hearing.doubtful


def test_a_reading_the_intents_act_on_and_like_the_first_is_taken() -> None:
    first = Hearing("Sandalwood, fuser, intensity to 70%.", 0.4)
    second = Hearing("Set the diffuser intensity to 70%,", 0.7)
    assert reconsidered(first, second, acts) is second
    bedroom = Hearing("Set the bedroom to 50%")
    assert reconsidered(Hearing("Set the room to 50%."), bedroom, acts) is bedroom


def test_the_first_stands_when_the_second_means_nothing_either_or_is_unlike_it() -> None:
    first = Hearing("Play the song Claire to Loom.", 0.5, ("claire",))
    assert reconsidered(first, Hearing("Play the song Clare de Lune."), acts) is first
    # `takes` says no to a search for a title: free text, which any mishearing is
    title = Hearing("Play the song planned at noon.", 0.5, ("planned",))
    assert reconsidered(title, Hearing("Play the song, play the room."), lambda h: False) is title
    # what the intents would act on, but sharing too little with the first: not the same words
    looped = Hearing("turn every lamp red, turn every lamp red,")
    assert likeness(looped.text, "Set the bedroom to 50%") < 0.6
    assert reconsidered(looped, Hearing("Set the bedroom to 50%"), acts) is looped


def test_a_reading_that_changes_a_number_or_on_off_is_never_taken() -> None:
    """Alike by their letters, not by what they ask: "off" heard by one model, "on" by the other."""
    off = Hearing("Turn off the kitchen lie.")
    on = Hearing("Turn on the kitchen light.")
    assert likeness(off.text, on.text) >= 0.6 and changes_meaning(off.text, on.text)
    assert reconsidered(off, on, lambda h: True) is off
    fifteen = Hearing("Set the bedroom to 15 percent please.")
    assert reconsidered(fifteen, Hearing("Set the bedroom to 50 percent please."), lambda h: True) is fifteen
    every = Hearing("turn every lamp red, turn every lamp red,")
    assert changes_meaning(every.text, "Turn bedroom lamp red.")
    assert not changes_meaning("Set the room to 50%.", "Set the bedroom to 50%")
    assert not changes_meaning("Kitchen at 4D and lounge at 7D.", "Kitchen at 40 and lounge at 70.")
    assert changes_meaning("Set the kitchen light.", "Set the kitchen light to 50.")


def test_a_sentence_of_the_prompt_is_never_taken_nor_agreed_on() -> None:
    """Whisper base recites "Turn on the light." for words it cannot make out ("turn on the oven")."""
    assert "Turn on the light." in PROMPT_EXAMPLES
    oven = Hearing("Turn on the open.")
    assert likeness(oven.text, "Turn on the light.") >= 0.6  # alike enough: only the prompt check stops it
    assert reconsidered(oven, Hearing("Turn on the light."), acts, Rules(0.6, PROMPT_EXAMPLES)) is oven
    doubted = Hearing("Turn on the light.", 0.6, (), ("Turn on the light bench.", "Turn on the lightben."))
    assert reconsidered(doubted, Hearing("Turn on the light."), acts, Rules(0.6, PROMPT_EXAMPLES)) is doubted


def test_two_models_hearing_the_same_words_outweigh_the_first_models_other_readings() -> None:
    first = Hearing("Put on the album Abbey Road.", 0.5, (), ("Put on the album Abby Road.",))
    agreed = reconsidered(
        first, Hearing("put on the album abbey road", 0.8), acts, Rules(0.6, PROMPT_EXAMPLES)
    )
    assert agreed.text == first.text
    assert agreed.alternatives == ("put on the album abbey road",) and agreed.confidence == 0.8
    # a word only the first doubted is settled; one both doubted stays doubtful
    doubted = Hearing("Play the song clear the moon.", 0.5, ("clear", "moon"))
    assert reconsidered(doubted, Hearing("Play the song clear the moon."), acts).doubtful == ()
    both = Hearing("Play the song clear the moon.", 0.6, ("clear",))
    assert reconsidered(doubted, both, acts).doubtful == ("clear",)
    # and so does one that is no word, which the first's readings did not all have: both models
    # hear "Norjones" alike, and wrongly
    norjones = Hearing("Put on some Norjones.", 0.9, (), ("Put on some Nor Jones.", "Put on some Norjones"))
    words = {"put", "on", "some", "nor", "jones", "album", "abbey", "road"}.__contains__
    assert reconsidered(norjones, Hearing("Put on some Norjones."), acts, Rules(0.6, (), words)).doubtful == (
        "norjones",
    )
    assert (
        reconsidered(first, Hearing("Put on the album Abbey Road."), acts, Rules(0.6, (), words)).doubtful
        == ()
    )


class ScriptedModel:
    """A second model that answers one text, and counts how often it was asked."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls = 0

    def transcribe(self, samples: np.ndarray) -> str:
        return self.transcribe_scored(samples).text

    def transcribe_scored(self, samples: np.ndarray) -> Hearing:
        self.calls += 1
        return Hearing(self.text, 0.8)

    def glance(self, samples: np.ndarray) -> Hearing:
        raise AssertionError("the second ear never glances")


def test_the_second_model_is_asked_only_when_the_first_reading_would_not_be_acted_on() -> None:
    model = ScriptedModel("Set the diffuser intensity to 70%,")
    ear = SecondEar(model, acts, acts, Rules(0.6, PROMPT_EXAMPLES))
    audio = np.zeros(1600, np.int16)
    sure = Hearing("Turn on the light.")
    assert ear.reconsider(audio, sure) is sure
    assert ear.reconsider(audio, Hearing("")).text == ""  # silence: nothing to hear again
    assert model.calls == 0
    assert ear.reconsider(audio, Hearing("Sandalwood, fuser, intensity to 70%.")).text == model.text
    assert model.calls == 1


class BrokenModel(ScriptedModel):
    def transcribe_scored(self, samples: np.ndarray) -> Hearing:
        raise RuntimeError("CTranslate2 ran out of memory")


def test_a_second_model_that_fails_leaves_the_first_reading() -> None:
    ear = SecondEar(BrokenModel(""), acts, acts)
    first = Hearing("Sandalwood, fuser, intensity to 70%.")
    assert ear.reconsider(np.zeros(1600, np.int16), first) is first


def test_no_second_hearing_while_an_answer_is_awaited_nor_when_the_judge_fails() -> None:
    model = ScriptedModel("Set the diffuser intensity to 70%,")
    audio = np.zeros(1600, np.int16)
    first = Hearing("The bedroom.")  # the answer to "did you mean the bedroom or the living room?"
    assert SecondEar(model, acts, acts, answering=lambda: True).reconsider(audio, first) is first
    assert model.calls == 0
    request = Hearing("Sandalwood, fuser, intensity to 70%.")  # a new request instead of an answer
    assert SecondEar(model, acts, acts, answering=lambda: True).reconsider(audio, request).text == model.text
    model.calls = 0

    def broken(_hearing: Hearing) -> bool:
        raise KeyError("a bug in the understanding")

    assert SecondEar(model, broken, acts).reconsider(audio, first) is first


class FirstModel(ScriptedModel):
    pass


def test_the_queue_asks_the_second_ear_for_turns_but_never_for_a_barge_in() -> None:
    first = FirstModel("Sandalwood, fuser, intensity to 70%.")
    second = ScriptedModel("Set the diffuser intensity to 70%,")
    ear = SecondEar(second, acts, acts)

    async def scenario() -> list[str]:
        queue = AsrQueue(first, ear.reconsider)
        worker = asyncio.create_task(queue.run(), name="asr")
        audio = np.zeros(1600, np.int16)
        jobs = [queue.submit(audio, p) for p in (Priority.BARGE_IN, Priority.UTTERANCE, Priority.SPECULATIVE)]
        results = await asyncio.wait_for(asyncio.gather(*jobs), 10)
        worker.cancel()
        await asyncio.wait([worker], timeout=5)
        return [hearing.text for hearing, _took in results]

    barge_in, utterance, guess = asyncio.run(scenario())
    assert barge_in == first.text  # decided on the first reading alone, at once
    assert utterance == guess == second.text
    assert second.calls == 2
