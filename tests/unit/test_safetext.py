"""Control characters made visible, for terminals, nudges and JSON alike."""

from __future__ import annotations

import json
import random
import re

from thatch.safetext import visible

RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def test_controls_become_escapes_and_layout_is_kept() -> None:
    assert visible("\x1b]0;pwned\x07") == "\\x1b]0;pwned\\x07"
    assert visible("\x1b[2J\r\x00") == "\\x1b[2J\\x0d\\x00"
    assert visible("\x9b31m\x7f\x85") == "\\u009b31m\\u007f\\u0085"
    assert visible("line one\n\tindented") == "line one\n\tindented"


def test_printable_text_is_unchanged_and_a_second_pass_changes_nothing() -> None:
    text = "café … 日本 🙂 <<x>> \\x1b already escaped"
    assert visible(text) == text
    once = visible("a\x1bb\x9bc")
    assert visible(once) == once


def test_every_control_but_newline_and_tab_is_escaped() -> None:
    everything = "".join(chr(code) for code in range(0xA0))
    assert not RAW_CONTROL.search(visible(everything))


def test_json_text_stays_valid_and_exact() -> None:
    rng = random.Random(3)
    for _ in range(200):
        data = {"content": "".join(chr(rng.randrange(0, 0x180)) for _ in range(40))}
        for indent in (None, 2):
            shown = visible(json.dumps(data, ensure_ascii=False, indent=indent))
            assert not RAW_CONTROL.search(shown)
            assert json.loads(shown) == data


def test_bidirectional_overrides_are_escaped_and_right_to_left_letters_kept() -> None:
    # "Trojan Source": an override makes the shown text differ from the stored one.
    assert visible("run \u202etxt.exe") == "run \\u202etxt.exe"
    assert visible("\u2066x\u2069 \u202a") == "\\u2066x\\u2069 \\u202a"
    hebrew_and_marks = "שלום עולם \u200f مرحبا \u200e"
    assert visible(hebrew_and_marks) == hebrew_and_marks


def test_json_with_bidirectional_controls_stays_valid_and_exact() -> None:
    data = {"content": "a\u202eb\u2067c"}
    shown = visible(json.dumps(data, ensure_ascii=False))
    assert "\u202e" not in shown
    assert json.loads(shown) == data
