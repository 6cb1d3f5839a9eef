"""The web's config at the edge: refused before anything starts, with exit 2 and a clear message."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.conftest import free_port
from tests.test_cli_errors import voiced


def test_off_loopback_without_a_token_check_config_and_run_exit_2(tmp_path: Path) -> None:
    config = "web:\n  host: 0.0.0.0\n  port: 8765\n"
    for args in (("check-config",), ("run", "--text", "-")):
        result = voiced(tmp_path, config, *args)
        assert result.returncode == 2, result.stderr
        assert "web.host is '0.0.0.0', not loopback: set VOICED_WEB_TOKEN" in result.stderr
        assert "loading models" not in result.stderr


def test_a_taken_web_port_exits_2_naming_it_before_the_models_load(tmp_path: Path) -> None:
    port = free_port()
    with socket.socket() as held:
        held.bind(("127.0.0.1", port))
        held.listen()
        turns = tmp_path / "turns.txt"
        turns.write_text("turn on the kitchen light\n")
        result = voiced(tmp_path, f"web:\n  port: {port}\n", "run", "--text", str(turns), "--output", "x.wav")
    assert result.returncode == 2, result.stderr
    assert f"web: cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "loading models" not in result.stderr


def test_loopback_needs_no_token_anything_else_does() -> None:
    import pytest
    from pydantic import ValidationError

    from voiced.config import WebConfig

    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        assert WebConfig(host=host).loopback, host
    assert WebConfig(host="0.0.0.0", port=0).loopback is False  # off: no token needed
    assert WebConfig(host="192.168.1.20", token=" x" * 8 + "yz \n").token == "x x x x x x x xyz"
    assert WebConfig(host="127.0.0.1", token="t").token == "t"  # unused on loopback: not checked
    with pytest.raises(ValidationError, match=r"'192\.168\.1\.20', not loopback"):
        WebConfig(host="192.168.1.20")


def test_a_short_or_blank_token_beyond_loopback_is_refused_saying_how_to_make_one(tmp_path: Path) -> None:
    config = "web:\n  host: 0.0.0.0\n  port: 8765\n"
    for token, said in (
        ("a", "is 1 character long"),
        ("   ", "is blank"),
        (" 0123456789abcde ", "is 15 characters"),
    ):
        result = voiced(tmp_path, config, "check-config", env={"VOICED_WEB_TOKEN": token})
        assert result.returncode == 2, result.stderr
        assert f"web.token (VOICED_WEB_TOKEN) {said}" in result.stderr
        assert "must be at least 16 characters" in result.stderr
        assert "python3 -c 'import secrets; print(secrets.token_urlsafe(24))'" in result.stderr
        assert "0123456789abcde" not in result.stderr  # the secret itself is never echoed
    fine = voiced(tmp_path, config, "check-config", env={"VOICED_WEB_TOKEN": "0123456789abcdef"})
    assert fine.returncode == 0, fine.stderr


def test_run_says_where_the_web_page_is(tmp_path: Path) -> None:
    port = free_port()
    turns = tmp_path / "turns.txt"
    turns.write_text("# nothing to say\n")
    result = voiced(tmp_path, f"web:\n  port: {port}\n", "run", "--text", str(turns), "--output", "x.wav")
    assert result.returncode == 0, result.stderr
    assert f"loading models… (then the web page: http://127.0.0.1:{port}/)" in result.stderr, result.stderr
