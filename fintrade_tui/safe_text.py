"""Safe-text room: text that came from outside (filings, benchmark files, imported answers, a
model's reply) made harmless to show on a terminal, whatever it contains.

Two dangers, both checked in tests/unit/test_evidence_is_data.py:
- **control characters**: an escape sequence (ESC ``[31m``, an OSC window title, a cursor move)
  written to the terminal changes it. `printable` swaps every C0/C1 control character except
  newline and tab for its visible Unicode "control picture" (ESC -> ␛), so the reader sees that
  the data held one and the terminal never receives it.
- **markup**: Rich and Textual parse ``[b]``, ``[/x]`` and ``[@click=app.quit]`` in plain
  strings (a DataTable's str cells, a Static's str, a rich Panel's str); a stray closing tag
  raises. `plain` returns a `rich.text.Text`, which is never parsed as markup.
"""

from __future__ import annotations

import re
from typing import Any

# C0 controls but \t (09) and \n (0a), DEL, and the C1 controls (0x80-0x9f: CSI is 0x9b)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _picture(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ .. ␟ (ESC is ␛)
    return "\u2421" if code == 0x7F else "\ufffd"  # ␡ for DEL; C1 has no pictures


def printable(text: str) -> str:
    """`text` with every control character but newline and tab shown as a visible symbol.
    Carriage returns are dropped rather than shown: CRLF files and streams split between CR
    and LF then read as plain newlines."""
    if not text:
        return text
    return _CONTROL.sub(_picture, text.replace("\r", ""))


def plain(text: Any, style: str = "", **kwargs: Any) -> Any:
    """`text` (anything; str() of it) as a rich Text: printable, never parsed as markup."""
    from rich.text import Text  # lazy: the core modules that use `printable` need no rich

    return Text(printable(str(text)), style=style, **kwargs)
