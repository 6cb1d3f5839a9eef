"""The paused-commands set: a fixed split, pauses within the range the issue asks for."""

from __future__ import annotations

from bench.paused.spoken_set import Said, load, pauses_for, score, split


def test_the_halves_are_fixed_disjoint_and_whole() -> None:
    seed, _range, commands = load()
    tuning, held_out = split(commands, seed)
    assert (tuning, held_out) == split(commands, seed)
    assert not set(tuning) & set(held_out)
    assert sorted(tuning + held_out) == sorted(commands) and len(commands) >= 60


def test_every_pause_lasts_200_to_600_ms_and_is_the_same_each_run() -> None:
    seed, pause_ms, commands = load()
    for command in commands:
        for voice in ("joe", "joe-fast"):
            pauses = pauses_for(command, voice, seed, pause_ms)
            assert len(pauses) == command.count("|")
            assert all(200 <= p <= 600 for p in pauses)
            assert pauses == pauses_for(command, voice, seed, pause_ms)


def test_a_turn_closed_before_the_last_part_is_a_premature_end() -> None:
    said = [Said("a, | b.", "joe", (300,), (1.0, 2.0), 2.5), Said("c, | d.", "joe", (300,), (5.0, 6.0), 6.5)]
    premature, latencies = score(said, [1.8, 2.9, 6.8])
    assert premature == [said[0]]
    assert [round(t, 3) for t in latencies] == [0.3]
