"""Zip member room: the bytes of one member of a zip archive (inspect's .eval logs), including
the Zstandard-compressed members (zip method 93) recent inspect-ai writes, which Python's
zipfile reads only from 3.14 on: those are decompressed here with the zstandard package.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

from fintrade_tui.errors import UserError

AGAIN = "the file is truncated or damaged: copy or export it again"
_ZSTD = 93  # zip compression method id of Zstandard
_LOCAL_HEADER = 30  # bytes of a local file header before its name and extra field
# a zip bomb posing as a log: one member, or all of them, expanding past these is refused from
# the sizes the archive declares, before anything is decompressed (reads stop there too)
MEMBER_CAP = 256 * 1024 * 1024
TOTAL_CAP = 4 * 1024 * 1024 * 1024
_BOMB = "split the log (inspect log dump), or check the file is the log you meant"


def check_sizes(path: Path, zf: zipfile.ZipFile) -> None:
    """Refuse an archive whose declared uncompressed sizes pass the caps."""
    total = 0
    for info in zf.infolist():
        total += info.file_size
        if info.file_size > MEMBER_CAP:
            size = f"expands to {info.file_size / 2**20:,.0f} MB (over {MEMBER_CAP >> 20} MB)"
            raise UserError(f"{path} {info.filename}", size, _BOMB)
    if total > TOTAL_CAP:
        size = f"expands to {total / 2**30:,.1f} GB in all (over {TOTAL_CAP >> 30} GB)"
        raise UserError(str(path), size, _BOMB)


def open_zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as err:
        raise UserError(str(path), f"not a readable zip ({err})", AGAIN) from None


def read_member(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The member's uncompressed bytes, CRC-checked; a damaged member is a UserError."""
    where = f"{path} {info.filename}"
    if info.file_size > MEMBER_CAP:
        size = f"expands to {info.file_size / 2**20:,.0f} MB (over {MEMBER_CAP >> 20} MB)"
        raise UserError(where, size, _BOMB)
    try:
        # zipfile stops at the declared size (then checks the CRC): a member lying about its
        # size cannot expand past what check_sizes allowed
        return zf.read(info)
    except NotImplementedError:  # zstd on Python < 3.14: decompress the raw member ourselves
        if info.compress_type != _ZSTD:
            method = f"zip compression method {info.compress_type}"
            raise UserError(where, method, "repack the zip with deflate") from None
    except (zipfile.BadZipFile, zlib.error, EOFError) as err:
        raise UserError(where, f"damaged zip member ({err})", AGAIN) from None
    return _unzstd(path, info, where)


def _unzstd(path: Path, info: zipfile.ZipInfo, where: str) -> bytes:
    try:
        import zstandard
    except ImportError:
        zstd = "the log is zstd-compressed (zip method 93, newer inspect-ai)"
        raise UserError(where, zstd, "pip install zstandard, or inspect-ai") from None
    with path.open("rb") as f:
        f.seek(info.header_offset)
        local = f.read(_LOCAL_HEADER)  # its name and extra field lengths precede the data
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        f.seek(info.header_offset + _LOCAL_HEADER + name_len + extra_len)
        raw = f.read(info.compress_size)
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        parts, got = [], 0
        while chunk := reader.read(1 << 20):  # never past the declared size (+1 to notice)
            parts.append(chunk)
            got += len(chunk)
            if got > info.file_size:
                break
        data = b"".join(parts)
    except zstandard.ZstdError as err:
        raise UserError(where, f"damaged zstd data ({err})", AGAIN) from None
    if zlib.crc32(data) != info.CRC:
        raise UserError(where, "CRC mismatch: the member is damaged", AGAIN)
    return data
