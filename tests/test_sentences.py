"""Sentence splitting for streamed replies, and cleaning text meant for the eye."""

from voiced.mouth.sentences import SentenceSplitter, speakable, split_sentences


def stream(text: str, step: int) -> list[tuple[int, str]]:
    """Feed `text` in slices of `step` characters; report at which slice each sentence came out."""
    splitter = SentenceSplitter()
    out = []
    for index in range(0, len(text), step):
        out += [(index, s) for s in splitter.feed(text[index : index + step])]
    out += [(len(text), s) for s in splitter.flush()]
    return out


def test_plain_sentences() -> None:
    assert split_sentences("Hello there. How are you? Great!") == ["Hello there.", "How are you?", "Great!"]


def test_a_sentence_comes_out_as_soon_as_the_next_one_starts() -> None:
    text = "The kitchen light is on. Anything else?"
    out = stream(text, 3)
    assert out[0][1] == "The kitchen light is on."
    assert out[0][0] <= text.index("Anything")  # before the rest has streamed in
    assert out[1] == (len(text), "Anything else?")


def test_abbreviations_initials_and_numbers_do_not_split() -> None:
    text = "Dr. Smith set it to 3.5 degrees, e.g. warmer. J. R. R. Tolkien wrote it. Done."
    assert split_sentences(text) == [
        "Dr. Smith set it to 3.5 degrees, e.g. warmer.",
        "J. R. R. Tolkien wrote it.",
        "Done.",
    ]


def test_decimals_streamed_across_deltas_do_not_split() -> None:
    assert [s for _, s in stream("It is 21.5 degrees. Nice.", 1)] == ["It is 21.5 degrees.", "Nice."]


def test_numbers_can_end_a_sentence() -> None:
    assert split_sentences("I set it to 50. Anything else?") == ["I set it to 50.", "Anything else?"]


def test_closing_quotes_and_ellipses_stay_with_their_sentence() -> None:
    assert split_sentences('He said "hi." Then left... Really?! Yes.') == [
        'He said "hi."',
        "Then left...",
        "Really?!",
        "Yes.",
    ]


def test_line_breaks_end_a_sentence() -> None:
    assert split_sentences("Here is the plan:\n- lights on\n- music") == [
        "Here is the plan:",
        "lights on",
        "music",
    ]


def test_markdown_emoji_and_urls_are_not_read_aloud() -> None:
    assert speakable("**Sure!** I turned on the *kitchen* light 💡✨ `now`.") == (
        "Sure! I turned on the kitchen light now."
    )
    assert speakable("## Heading\nSee [the docs](https://x.y/z) 👍🏽") == "Heading See the docs"
    assert speakable("🎉🎉") == ""


def test_unfinished_text_waits_for_flush() -> None:
    splitter = SentenceSplitter()
    assert splitter.feed("No punctuation yet") == []
    assert splitter.feed(" and still going") == []
    assert splitter.flush() == ["No punctuation yet and still going"]
    assert splitter.flush() == []
