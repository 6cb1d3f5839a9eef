"""Indirect phrasings said as the direct request they stand for, before any template sees them.

"Would you mind lighting up the kitchen" is "light up the kitchen"; "could you possibly turn off
the bedroom light" is "turn off the bedroom light"; "4000 K" is "4000 kelvin"; a value said alone
after a request ("about sixty percent") is "set it to sixty percent", so "it" decides what it is
for (and asks which one when nothing was acted on before).
"""

from __future__ import annotations

import re

_ASKING = re.compile(
    r"^(?:(?:could|can|would|will) you (?:please |possibly |kindly |maybe |perhaps |just )+"
    r"|(?:would|do) you mind (?:if you )?|would you be so kind as to |be a dear and "
    r"|(?:i'd|i would) like you to |i (?:want|need) you to |i was wondering if you could |maybe "
    r"|(?:actually|oh|oops|sorry|wait|no wait|hmm) (?=\w+ (?:on|off|up|down|the|some|it|to)\b))"
)
# "Would you mind lighting up the kitchen": the request's verb as it is said in a command.
_GERUNDS = {
    "lighting": "light",
    "turning": "turn",
    "switching": "switch",
    "setting": "set",
    "dimming": "dim",
    "brightening": "brighten",
    "making": "make",
    "putting": "put",
    "playing": "play",
    "changing": "change",
    "starting": "start",
    "stopping": "stop",
    "pausing": "pause",
    "skipping": "skip",
}
_NUMBER = (
    r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty"
    r"|fifty|sixty|seventy|eighty|ninety|a hundred|one hundred|hundred)(?: (?:one|two|three|four|five"
    r"|six|seven|eight|nine))?"
)
_ABOUT = re.compile(rf"\b(?:about|around|roughly|approximately|maybe|like) (?={_NUMBER} percent\b)")
_KELVIN = re.compile(r"\b(\d{4,5}) ?k\b")
# A value alone: what it is for is the device just acted on ("it").
_BARE_VALUE = re.compile(rf"^(?:(?:to|at|say|make it|set it to|go to|more like|no) )?({_NUMBER} percent)$")


def direct(segment: str) -> str:
    """The segment as the direct request it stands for (cleaned text in, cleaned text out)."""
    asked = _ASKING.sub("", segment, count=1)
    if asked != segment:
        first, _, rest = asked.partition(" ")
        asked = f"{_GERUNDS.get(first, first)} {rest}".strip()
    text = _ABOUT.sub("", asked)
    text = _KELVIN.sub(r"\1 kelvin", text)
    bare = _BARE_VALUE.match(text)
    return f"set it to {bare.group(1)}" if bare else text
