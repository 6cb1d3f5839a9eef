"""Request bodies checked by hand, so each error names the field and what is wrong with it.

Every body is parsed by `voiced.safe_text.loads`: nesting and number length are bounded (a deep
or huge body is a 400, never a RecursionError), and every string comes back without lone
surrogates or control characters, so nothing downstream (SQLite, MQTT, the JSON reply) fails to
encode it.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from voiced.safe_text import UnsafeJson, clean, loads

MAX_BODY_BYTES = 16_384
MAX_TEXT_CHARS = 2000  # as a typed line (voiced/ear/typed.py)


class BadRequest(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def path_text(request: Request, name: str) -> str:
    """A path parameter, cleaned (the path is percent-decoded: %00 is a NUL)."""
    return clean(str(request.path_params[name]))


def query_text(request: Request, name: str, default: str | None = None) -> str | None:
    """A query-string parameter, cleaned."""
    value = request.query_params.get(name, default)
    return None if value is None else clean(value)


async def _read(request: Request) -> bytes:
    """The body, refused as soon as it passes MAX_BODY_BYTES (never held whole when huge)."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise BadRequest(f"request body is {int(declared)} bytes; at most {MAX_BODY_BYTES}", 413)
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise BadRequest(f"request body is over {MAX_BODY_BYTES} bytes, the most taken", 413)
    except ClientDisconnect:  # gone, or cut off by the body deadline (voiced/web/deadlines.py)
        raise BadRequest("the client went away before sending the whole body") from None
    return bytes(body)


async def json_object(request: Request) -> dict[str, Any]:
    body = await _read(request)
    if not body.strip():
        raise BadRequest("request body is empty; expected a JSON object")
    try:
        text = body.decode("utf-8")  # json.loads(bytes) would guess UTF-16 from a BOM
    except UnicodeDecodeError as exc:
        raise BadRequest(f"request body is not UTF-8 text (byte {exc.start})") from None
    try:
        data = loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise BadRequest(f"request body is not valid JSON: {exc.msg} ({where})") from None
    except UnsafeJson as exc:
        raise BadRequest(f"request body is refused: {exc}") from None
    if not isinstance(data, dict):
        raise BadRequest(f"request body must be a JSON object, got {_type(data)}")
    return data


def field(data: dict[str, Any], name: str, kind: type, *, max_chars: int = MAX_TEXT_CHARS) -> Any:
    """`data[name]`, which must be of `kind`; a string must be non-blank and at most `max_chars`."""
    if name not in data:
        raise BadRequest(f"missing field {name!r}")
    value = data[name]
    # bool is an int in Python, and an int is no bool in JSON: check exactly.
    if type(value) is not kind:
        raise BadRequest(f"field {name!r} must be {_type_name(kind)}, got {_type(value)}")
    if isinstance(value, str):
        if not value.strip():
            raise BadRequest(f"field {name!r} is blank")
        if len(value) > max_chars:
            raise BadRequest(f"field {name!r} is {len(value)} characters long; at most {max_chars}", 413)
        return value.strip()
    return value


def _type_name(kind: type) -> str:
    return {str: "a string", bool: "true or false", int: "an integer"}.get(kind, kind.__name__)


def _type(value: object) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}.get(
        type(value), "an object"
    )
