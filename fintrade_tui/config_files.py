"""Config location room: which config.yaml a command reads, and what `config init` writes.

In order: `--config` / `FINTRADE_CONFIG`; inside a checkout, the checkout's own `config.yaml`;
the user's config (platformdirs: `~/.config/fintrade-tui/config.yaml` on Linux); else the
packaged default (the checkout's `config.yaml`, shipped in the wheel), its relative data paths
then in the user's data folder (`~/.local/share/fintrade-tui`) instead of beside the file. So
an install as a tool (`uv tool install`, `pipx install`, a wheel) works from any folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

APP = "fintrade-tui"
# in git a link to the checkout's config.yaml (one text to keep), in a wheel a copy of it
PACKAGED = Path(__file__).with_name("config.yaml")
_ROOT = Path(__file__).resolve().parent.parent


def checkout_config() -> Path | None:
    """The checkout's config.yaml when this package runs from its checkout (an editable
    install or the source tree), None for an installed wheel."""
    cfg = _ROOT / "config.yaml"
    inside = (_ROOT / "pyproject.toml").is_file() and (_ROOT / "screens").is_dir()
    return cfg if inside and cfg.is_file() else None


def user_config() -> Path:
    import platformdirs

    return platformdirs.user_config_path(APP) / "config.yaml"


def user_data() -> Path:
    import platformdirs

    return platformdirs.user_data_path(APP)


def locate(path: Path | str | None = None) -> tuple[Path, Path | None]:
    """The config file to read, and the folder its relative paths resolve against when that
    is not the file's own (the packaged default: the user's data folder)."""
    chosen = path or os.environ.get("FINTRADE_CONFIG")
    if chosen:
        return Path(chosen).expanduser(), None
    if (cfg := checkout_config()) is not None:
        return cfg, None
    if (cfg := user_config()).is_file():
        return cfg, None
    return PACKAGED, user_data()


# a top-level or nested setting whose value is a path under data/ (store, workspace, model_dir,
# retrieval.index, retrieval.exports)
_DATA_PATH = re.compile(r"^(\s*[a-z_]+:\s+)data/", re.MULTILINE)
_BUNDLE = re.compile(r"^bundle:.*$", re.MULTILINE)


def init_text(bundle: Path | None) -> str:
    """The annotated default config with its data paths in the user's data folder and the
    bundle given (else a line saying where to set it)."""
    text = PACKAGED.read_text(encoding="utf-8")
    data = user_data()
    text = _DATA_PATH.sub(lambda m: f"{m.group(1)}{data}/", text)
    line = (
        f"bundle: {bundle}  # the data bundle (read-only); overridden by --bundle / FINTRADE_BUNDLE"
        if bundle
        else f"bundle: {data / 'bundle'}  # set this to the data bundle, or pass --bundle /"
        " FINTRADE_BUNDLE"
    )
    text = _BUNDLE.sub(lambda _: line, text, count=1)
    return text.replace(
        "# fintrade-tui configuration. Relative paths resolve against this file's folder.",
        "# fintrade-tui configuration (written by `fintrade-tui config init`). Relative paths"
        " resolve against this file's folder.",
        1,
    )


def write_user_config(bundle: Path | None, force: bool = False) -> Path:
    """Write `init_text` to the user's config file (aside, then renamed: never half a file);
    an existing one is kept unless `force`."""
    from fintrade_tui.errors import UserError

    target = user_config()
    if target.exists() and not force:
        raise UserError(str(target), "already exists", "edit it, or pass --force to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(f".{target.name}.{os.getpid()}.part")
    part.write_text(init_text(bundle), encoding="utf-8")
    part.replace(target)
    return target
