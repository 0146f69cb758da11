"""The package's build backend (PEP 517): the standard library only, so that
``pip install ./sdk/python`` works where pip reaches no package index.

It builds a pure-Python wheel of the ``handoff`` package (and an sdist, and
an editable wheel) from the ``[project]`` table of pyproject.toml, which it
reads for the few plain ``name = "value"`` lines it needs.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "handoff"
CLASSIFIERS = [
    "License :: OSI Approved :: Apache Software License",
    "Programming Language :: Python :: 3",
    "Typing :: Typed",
]
SDIST_FILES = ["pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE", "_backend/handoff_build.py"]


def _project() -> Dict[str, str]:
    """The [project] table's plain string members."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = re.search(r"^\[project\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if table is None:
        raise RuntimeError("pyproject.toml has no [project] table")
    return dict(re.findall(r'^([A-Za-z-]+)\s*=\s*"([^"]*)"\s*$', table.group(1), re.M))


def _metadata() -> str:
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        "Name: " + p["name"],
        "Version: " + p["version"],
        "Summary: " + p["description"],
        "License: Apache-2.0",
        "Requires-Python: " + p["requires-python"],
        "Project-URL: Documentation, https://github.com/opshandoff/handoff/blob/main/docs/api.md",
        "Project-URL: Source, https://github.com/opshandoff/handoff/tree/main/sdk/python",
    ]
    lines += ["Classifier: " + c for c in CLASSIFIERS]
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + (ROOT / p["readme"]).read_text(encoding="utf-8")


def _names() -> Tuple[str, str]:
    p = _project()
    name = re.sub(r"[-_.]+", "_", p["name"]).lower()
    return name, p["version"]


def _package_files() -> List[Path]:
    src = ROOT / PACKAGE
    return sorted(f for f in src.rglob("*") if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc")


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _wheel(wheel_directory: str, files: List[Tuple[str, bytes]]) -> str:
    name, version = _names()
    dist_info = f"{name}-{version}.dist-info"
    files = files + [
        (f"{dist_info}/METADATA", _metadata().encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: handoff_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        (f"{dist_info}/LICENSE", (ROOT / "LICENSE").read_bytes()),
    ]
    record = [_record_line(path, data) for path, data in files] + [f"{dist_info}/RECORD,,"]
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    filename = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as whl:
        for path, data in files:
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(info, data)
    return filename


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None,
                metadata_directory: Optional[str] = None) -> str:
    files = [(f.relative_to(ROOT).as_posix(), f.read_bytes()) for f in _package_files()]
    return _wheel(wheel_directory, files)


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None,
                   metadata_directory: Optional[str] = None) -> str:
    """A wheel whose .pth file puts this folder on sys.path: edits to the
    sources take effect without reinstalling."""
    return _wheel(wheel_directory, [(f"_{PACKAGE}_editable.pth", (str(ROOT) + "\n").encode())])


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    name, version = _names()
    base = f"{name}-{version}"
    filename = base + ".tar.gz"
    members = [(rel, (ROOT / rel).read_bytes()) for rel in SDIST_FILES]
    members += [(f.relative_to(ROOT).as_posix(), f.read_bytes()) for f in _package_files()]
    members.append(("PKG-INFO", _metadata().encode()))
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel, data in members:
            info = tarfile.TarInfo(f"{base}/{rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return filename
