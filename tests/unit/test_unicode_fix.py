"""Lone surrogates become U+FFFD; clean data comes back as the same objects."""

import json

from thatch.unicode_fix import REPLACEMENT, has_surrogate_escape, scrub, scrub_text


def test_lone_surrogates_are_replaced_everywhere_keys_included() -> None:
    data = json.loads('{"a\\ud800": ["x\\ud83c", {"k": "\\udfff y"}], "n": 3}')
    cleaned = scrub(data)
    assert cleaned == {f"a{REPLACEMENT}": [f"x{REPLACEMENT}", {"k": f"{REPLACEMENT} y"}], "n": 3}
    json.dumps(cleaned, ensure_ascii=False).encode("utf-8")  # encodable now


def test_a_whole_pair_is_kept_and_clean_data_is_the_same_object() -> None:
    data = json.loads('{"emoji": "\\ud83c\\udf89", "text": "caf\\u00e9", "list": [1, "a"]}')
    assert scrub(data) is data
    assert scrub_text("plain") == "plain"


def test_the_cheap_test_finds_escapes_in_either_case() -> None:
    assert has_surrogate_escape(b'"\\uD83C"')
    assert has_surrogate_escape('"\\ud83c"')
    assert not has_surrogate_escape(b'"\\u00e9"')
