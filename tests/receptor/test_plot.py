"""``--plot``'s figure: a PNG of each session's axes, firings and deliveries; its clear errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from thatch.plugin import AXES, InvalidInputError, PluginMissingError
from thatch_receptor.plot import MAX_SESSIONS, SessionTrace, check_plot_target, draw_sessions

PNG = b"\x89PNG\r\n\x1a\n"
MODES = ("active", "passive", "notification", "silent")


def trace(name: str, events: int = 12) -> SessionTrace:
    at = tuple(1_800_000_000.0 + 20.0 * i for i in range(events))
    return SessionTrace(
        session_id=name,
        at=at,
        axes={axis: tuple((i % 5) / 5 for i in range(events)) for axis in AXES},
        firings=at[3::5],
        decisions=tuple(zip(at[3::2], MODES, strict=False)),
    )


def test_several_sessions_make_one_png(tmp_path: Path) -> None:
    path = tmp_path / "receptor.png"
    assert draw_sessions([trace("one"), trace("two", 3)], path) == path
    assert path.read_bytes().startswith(PNG)


def test_a_session_without_events_still_draws(tmp_path: Path) -> None:
    path = tmp_path / "empty.png"
    draw_sessions([trace("none", 0)], path)
    assert path.read_bytes().startswith(PNG)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("plot.jpg", "does not end in .png"),
        ("missing/plot.png", "does not exist"),
        ("folder.png", "is a folder"),
    ],
)
def test_a_bad_target_is_refused_before_drawing(tmp_path: Path, name: str, says: str) -> None:
    (tmp_path / "folder.png").mkdir()
    with pytest.raises(InvalidInputError, match=says):
        check_plot_target(tmp_path / name, 1)


def test_too_many_sessions_are_refused(tmp_path: Path) -> None:
    check_plot_target(tmp_path / "fine.png", MAX_SESSIONS)
    with pytest.raises(InvalidInputError, match=f"at most {MAX_SESSIONS} sessions"):
        check_plot_target(tmp_path / "many.png", MAX_SESSIONS + 1)
    assert not (tmp_path / "many.png").exists()


def test_without_matplotlib_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    with pytest.raises(PluginMissingError, match=r"pip install 'thatch-receptor\[plot\]'"):
        draw_sessions([trace("one")], tmp_path / "plot.png")
    assert not (tmp_path / "plot.png").exists()
