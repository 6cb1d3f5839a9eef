"""No English reply is written in Python outside voiced/language/: what voiced says aloud is a
template in replies_en.yaml (tests/test_replies.py says each for one and for many).

Every string in voiced/ (a literal, or an f-string with each `{…}` read as "{}") is read with `ast`,
so nothing depends on formatting, and one that reads as a sentence is refused unless listed below
with why it is not a reply. A sentence: opening with a capitalised word followed by a space, a comma
or a colon, with two more words after it ("Turning {} {}.", "Sorry, the {}, so …") or one ending it
("Got it."), or holding a
reply's first person anywhere ("… I'll …", "… I can't …"). Not read: docstrings, what is raised,
what is logged, and a setting's `description=` / an option's `help=` (both for developers and
users reading the configuration, never said).

`ALLOWED` is matched by file and by the string's opening words, and an entry that matches nothing
fails too, so the list cannot keep what the code no longer has.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "voiced"
SENTENCE = re.compile(r"^[A-Z][a-z']*[ ,:]+(?:\S+ \S+|\S+[.?!]$)")
FIRST_PERSON = re.compile(r"\bI(?:'ll|'m|'ve| can't| couldn't| didn't| can)\b")
LOGGED = frozenset(("debug", "info", "warning", "error", "exception", "critical", "log"))
FOR_READERS = frozenset(("description", "help"))

# (file under voiced/, the string's opening): why it is not a reply said aloud
ALLOWED: dict[tuple[str, str], str] = {
    **{
        (path, opening): "an instruction to a language model, never said"
        for path, opening in (
            ("config_agents.py", "You are voiced, the voice"),
            ("brain/llm_thinkers.py", "You are the {} of a smart-home"),
            ("plans/llm_planner.py", "You plan for a smart home."),
            ("plans/llm_supervisor.py", "You supervise a smart-home plan"),
            ("vibe/llm_planner.py", "You are the vibe agent"),
            ("brain/judge.py", "The {} is offline: say so"),
            ("brain/judge.py", "The last command to the {} failed"),
            ("brain/judge.py", "Last turn '{}' was probably"),
            ("brain/judge.py", "The user said {} twice"),
            ("brain/judge.py", "The user repeated a request"),
            ("brain/judge.py", "Speech recognition was unsure"),
            ("brain/judge.py", "The interview has what it needs"),
            ("brain/judge.py", "The last request was not understood"),
            ("brain/judge.py", "Interview: still missing"),
            ("brain/delivery.py", "Before the scenes: {}"),
            ("brain/delivery.py", "The scenes could not be written"),
            ("vibe/messages.py", "The scene {} ({}) is ready."),
            ("vibe/messages.py", "The scene {} ({}) failed"),
            ("vibe/messages.py", "The scene {} ({}) was cancelled"),
            ("vibe/messages.py", "The user has already been told."),
        )
    },
    **{
        ("mouth/tools.py", opening): "a tool's description for a language model, never said"
        for opening in (
            "The devices' current states",
            "Set a whole mood or scene",
            "Cancel the mood or scene",
            "Switch or adjust a light.",
            "Switch or adjust the scent",
            "Play, pause or stop music",
        )
    },
    **{
        ("web/metrics.py", opening): "a Prometheus metric's help, read on /metrics"
        for opening in (
            "Latency of each stage",
            "Turns taken",
            "Turns the agent did not",
            "Replies stopped by the user",
            "Speech over a reply judged",
            "Device commands by device",
            "How long a turn waited",
            "Background task failures",
            "Background tasks failing",
        )
    },
    **{
        ("demo.py", opening): "what the demo says to voiced: the user's side"
        for opening in (
            "Turn on the kitchen light.",
            "Set the bedroom light to fifty",
            "Help me relax.",
            "What is the capital of France?",
            "Good night.",
        )
    },
    **{
        ("ear/whisper.py", opening): "Whisper's prompt: requests as they are said to voiced"
        for opening in (
            "Turn on the light.",
            "Play some jazz.",
            "Dim the kitchen light.",
            "Set the diffuser to {}.",
            "Lights: {}.",
            "Music: {}.",
        )
    },
    ("config_agents.py", "One moment."): "a setting's default (agents.filler): the user's to change",
    ("config_reference.py", "Each device is one YAML file"): "text of the generated docs/devices.md",
    ("config_reference.py", "Secrets never go in the file"): "text of the generated docs/configuration.md",
    ("sqlite_files.py", "Could not decode to UTF-8"): "SQLite's own error message, matched",
}


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def _not_read(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """A docstring, a piece of an f-string, or inside a raise, a logging call or a setting's help."""
    parent = parents.get(node)
    if isinstance(parent, ast.Expr | ast.JoinedStr | ast.FormattedValue):
        return True
    child, above = node, parent
    while above is not None:
        if isinstance(above, ast.Raise):
            return True
        if isinstance(above, ast.keyword) and above.arg in FOR_READERS:
            return True
        logged = isinstance(above, ast.Call) and isinstance(above.func, ast.Attribute)
        if logged and above.func.attr in LOGGED and child in above.args:
            return True
        child, above = above, parents.get(above)
    return False


def sentences(root: Path = ROOT) -> list[tuple[str, str]]:
    """(file under `root`, string) for every string in Python there that reads as a sentence."""
    found = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        if where.startswith("language/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            text = _text(node)
            if text is None or _not_read(node, parents):
                continue
            if SENTENCE.match(text.strip()) or FIRST_PERSON.search(text):
                found.append((where, text))
    return found


def _allowed(where: str, text: str) -> tuple[str, str] | None:
    return next((key for key in ALLOWED if key[0] == where and text.strip().startswith(key[1])), None)


def test_no_reply_is_written_in_python() -> None:
    written = [f"voiced/{where}: {text!r}" for where, text in sentences() if _allowed(where, text) is None]
    assert written == [], "a reply belongs in voiced/language/replies_en.yaml:\n" + "\n".join(written)


def test_every_allowed_string_is_still_there() -> None:
    used = {_allowed(where, text) for where, text in sentences()}
    assert sorted(set(ALLOWED) - used) == []


def test_a_reply_written_in_python_is_found(tmp_path: Path) -> None:
    """What the scan must catch, and what it must leave: each kind of string once."""
    (tmp_path / "language").mkdir()
    (tmp_path / "language" / "words.py").write_text('SAID = "Sorry, that is allowed here."\n')
    (tmp_path / "reply.py").write_text(
        '"""Docstring: Turning on the light."""\n'
        "import logging\n"
        "log = logging.getLogger(__name__)\n"
        "def reply(name: str, n: int) -> str:\n"
        '    """Turning on the light."""\n'
        '    log.info("Turning on the %s.", name)\n'
        "    if n < 0:\n"
        '        raise ValueError(f"Turning {n} is not a number of lights")\n'
        '    key = "plan_status_cancelled"\n'
        '    piece = f" with {name}"\n'
        '    said = f"Turning on the {name}."\n'
        '    also = "there, " + f"so I\'ll wait for {name}"\n'
        '    return said + f"{n} plans." + piece + key + also\n'
    )
    assert sentences(tmp_path) == [
        ("reply.py", "Turning on the {}."),
        ("reply.py", "so I'll wait for {}"),
    ]
