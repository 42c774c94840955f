"""The exceptions vantage raises; the native module makes them with where each error happened."""

from __future__ import annotations

from typing import Optional


class VantageError(Exception):
    """Any error vantage reports; `file`, `line` and `field` say where, when known."""

    def __init__(
        self,
        message: str,
        file: Optional[str] = None,
        line: Optional[int] = None,
        field: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.field = field


class LoadError(VantageError):
    """A run that could not be read, with the file, line and field `vantage check` names."""


class RunNotFound(LoadError, FileNotFoundError):
    """A path that does not exist."""


class SchemeError(VantageError, ValueError):
    """An unknown scheme or preset, or a parameter it does not take or a value out of its range."""


class ShapeError(VantageError, ValueError):
    """Arrays whose lengths do not fit together (credit_batch)."""
