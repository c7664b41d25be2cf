from __future__ import annotations

from pathlib import Path

import pytest
from thatch.paths import Paths
from thatch.plugin.config import DEFAULT_MODEL, STORAGE_PARTS, Config
from thatch.plugin.errors import ConfigError


def test_home_puts_every_folder_under_it(tmp_path: Path) -> None:
    paths = Paths.under_home(tmp_path)
    for folder in (
        paths.config_dir,
        paths.data_dir,
        paths.state_dir,
        paths.cache_dir,
        paths.runtime_dir,
    ):
        assert folder.is_relative_to(tmp_path)
    assert paths.default_db_path == tmp_path / "data" / "thatch.db"


def test_thatch_home_environment_is_used(tmp_path: Path) -> None:
    config = Config.load(environ={"THATCH_HOME": str(tmp_path)})
    assert config.paths.home == tmp_path.resolve()
    assert config.db_path == tmp_path.resolve() / "data" / "thatch.db"
    assert config.model == DEFAULT_MODEL


def test_without_home_platform_folders_are_used() -> None:
    config = Config.load(environ={})
    assert config.paths.home is None
    assert "thatch" in str(config.paths.data_dir)


def test_environment_overrides_file(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text(
        '[storage]\ndb_path = "/from/file.db"\n[embedder]\nmodel = "from-file"\n'
        '[plugins]\nblocked = ["receptor"]\n[thresholds]\nrecall = 0.4\n'
    )
    from_file = Config.load(tmp_path, environ={})
    assert from_file.db_path == Path("/from/file.db")
    assert from_file.model == "from-file"
    assert from_file.blocked_plugins == ("receptor",)
    assert from_file.recall_threshold == 0.4
    env = {
        "THATCH_DB_PATH": "/env.db",
        "THATCH_MODEL": "env-model",
        "THATCH_MODEL_PATH": "/m",
        "THATCH_PREDICTION_THRESHOLD": "0.5",
    }
    overridden = Config.load(tmp_path, environ=env)
    assert overridden.db_path == Path("/env.db")
    assert overridden.model == "env-model"
    assert overridden.model_path == Path("/m")
    assert overridden.prediction_threshold == 0.5
    assert from_file.prediction_threshold is None


def test_bad_prediction_threshold_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="THATCH_PREDICTION_THRESHOLD='high'"):
        Config.load(tmp_path, environ={"THATCH_PREDICTION_THRESHOLD": "high"})


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[plugins\n", "not valid TOML"),
        ('plugins = "x"\n', "[plugins] must be a table"),
        ("[plugins]\nblocked = 3\n", "blocked must be a list"),
        ("[thresholds]\nrecall = 7\n", "thresholds.recall = 7 is not a cosine"),
        ("[storage]\nbackend = 3\n", "storage.backend = 3 is not a backend name; name the"),
        ("[storage]\nmemories = ''\n", 'e.g. memories = "sqlite"'),
        ("[storage]\ndecisions = ['sqlite']\n", "storage.decisions = ['sqlite'] is not"),
        ("[storage]\npredictions = true\n", "storage.predictions = True is not"),
    ],
)
def test_bad_config_names_file_and_fix(tmp_path: Path, text: str, fragment: str) -> None:
    (tmp_path / "config").mkdir()
    config_file = tmp_path / "config" / "config.toml"
    config_file.write_text(text)
    with pytest.raises(ConfigError) as caught:
        Config.load(tmp_path, environ={})
    assert fragment in str(caught.value)
    assert str(config_file) in str(caught.value)


def test_every_storage_part_uses_the_backend_unless_it_names_its_own(tmp_path: Path) -> None:
    assert [Config.load(tmp_path, environ={}).backend_for(p) for p in STORAGE_PARTS] == [
        "sqlite"
    ] * 3
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text(
        '[storage]\nbackend = "postgres"\npredictions = " sqlite "\n'
    )
    config = Config.load(tmp_path, environ={})
    assert config.storage_backend == "postgres"
    assert {part: config.backend_for(part) for part in STORAGE_PARTS} == {
        "memories": "postgres",
        "decisions": "postgres",
        "predictions": "sqlite",
    }


def test_backend_for_names_the_parts_when_asked_for_another(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="the parts are: memories, decisions, predictions"):
        Config.load(tmp_path, environ={}).backend_for("vectors")  # type: ignore[arg-type]
