"""What the package's classes share: AgoraError from a libagora code, the strings and JSON crossing into
C, the handle that a with block closes, and the check for calls newer than the loaded library."""
from __future__ import annotations

import ctypes
import json
from typing import Any, Callable, Dict, Optional, TypeVar

from . import _lib
from ._lib import lib

Event = Dict[str, Any]

_CODE_NAMES = {
    _lib.ERR_NOMEM: "NOMEM", _lib.ERR_INVALID: "INVALID", _lib.ERR_IO: "IO", _lib.ERR_STORAGE: "STORAGE",
    _lib.ERR_LLM: "LLM", _lib.ERR_NOT_FOUND: "NOT_FOUND", _lib.ERR_TOO_BIG: "TOO_BIG", _lib.ERR_EXISTS: "EXISTS",
    _lib.ERR_VERSION: "VERSION", _lib.ERR_CANCELLED: "CANCELLED", _lib.ERR_STATE: "STATE",
}


class AgoraError(Exception):
    """An error from libagora: message (what went wrong, naming the file, field or chat) and code
    (AGORA_ERR_*, negative; name is its short name, e.g. "INVALID")."""

    __module__ = "agora"  # help() and tracebacks name it as the package exports it

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.name = _CODE_NAMES.get(code, str(code))
        self.message = message

    def __str__(self) -> str:
        return f"{self.message} ({self.name})"


def _check(rc: int) -> int:
    if rc < 0:
        raise AgoraError(rc, lib.agora_errmsg().decode("utf-8", "replace") or lib.agora_strerror(rc).decode())
    return rc


def _b(s: Optional[str]) -> Optional[bytes]:
    return None if s is None else s.encode("utf-8")


_H = TypeVar("_H", bound="_Handle")


class _Handle:
    """What World and Database share: a with block closes, and so does the garbage collector; JSON a
    call hands back is parsed."""

    def close(self) -> None:
        """Frees what the handle holds in libagora; idempotent (each class says what more it does)."""
        raise NotImplementedError

    def _h(self) -> ctypes.c_void_p:
        raise NotImplementedError

    def __enter__(self: _H) -> _H:
        """`with ... as x:` closes x at the end of the block, whatever happens in it."""
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _json_out(self, fn: Callable[..., int], *args: Any) -> Any:
        return _json_call(fn, self._h(), *args)


def _json_call(fn: Callable[..., int], *args: Any) -> Any:
    """fn(*args, &json) checked, and the JSON it handed back parsed (and released)."""
    return json.loads(_text_call(fn, *args))


def _text_call(fn: Callable[..., int], *args: Any) -> str:
    """fn(*args, &text) checked, and the text it handed back (released)."""
    ptr = ctypes.c_void_p()
    _check(fn(*args, ctypes.byref(ptr)))
    return _lib.take_string(ptr)


def _id_call(fn: Callable[..., int], *args: Any) -> str:
    """fn(*args, id) checked, id an AGORA_ID_MAX buffer: the id it wrote ("" when none)."""
    out = (ctypes.c_char * _lib.ID_MAX)()
    _check(fn(*args, out))
    return out.value.decode()


def _json_text(doc: Any) -> str:
    """A document given as a dict (or list) or as JSON text, as JSON text."""
    return doc if isinstance(doc, str) else json.dumps(doc)


def _need(api: int, what: str) -> None:
    """AgoraError (ERR_STATE) when the libagora loaded is older than API version api."""
    if lib.agora_api_version() < api:
        raise AgoraError(_lib.ERR_STATE, f"{what} needs libagora API {api}; {lib.agora_version().decode()} has "
                                         f"{lib.agora_api_version()}")
