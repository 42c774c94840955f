"""vantage from Python: open any RL rollout log vantage reads as Arrow tables, and recompute credit
under any of its schemes, presets and formulas with the same numbers as the app and the command line.

    import vantage
    run = vantage.open("runs/step_0042/")
    steps = run.steps()                          # a pyarrow Table, one row per step
    a = run.credit("grpo", preset="verl")        # numpy.asarray(a), pyarrow.table(a)
    b = run.credit("treerl", gamma=0.99)
    vantage.compare(a, b).top(20)                # the steps where they differ most

The Rust core does every computation; this layer only converts (docs/PYTHON.md). The docstrings
come from the same declarations as the command line's help (`vantage._native.docstring`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import warnings
from typing import Any, Dict, Hashable, List, Optional, Sequence, Union

import numpy as np
import pyarrow as pa

from . import _native
from ._errors import LoadError, RunNotFound, SchemeError, ShapeError, VantageError

__version__: str = _native.__version__

__all__ = [
    "Comparison",
    "Credit",
    "LoadError",
    "Run",
    "RunNotFound",
    "SchemeError",
    "ShapeError",
    "VantageError",
    "compare",
    "convert",
    "credit_batch",
    "formats",
    "open",
    "open_all",
    "schemes",
    "show",
]

PathLike = Union[str, "os.PathLike[str]"]

def _strings(offsets: np.ndarray, data: np.ndarray, valid: Optional[np.ndarray] = None) -> pa.Array:
    # Nulls where `valid` is false: Arrow's validity bitmap, least significant bit first.
    nulls = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    count = -1 if valid is None else int(len(valid) - np.count_nonzero(valid))
    return pa.LargeStringArray.from_buffers(
        len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data), null_bitmap=nulls, null_count=count
    )


def _array(kind: str, arrays: List[np.ndarray], valid: Optional[np.ndarray]) -> pa.Array:
    # Each numpy array owns the core's vector; pyarrow wraps numbers and strings without a copy
    # (booleans are packed into bits, as Arrow stores them).
    if kind == "text":
        return _strings(arrays[0], arrays[1], valid)
    if kind == "labels":
        # Keys below 2³¹: the same bits read as Arrow's preferred signed indices.
        keys = pa.array(arrays[0].view(np.int32))
        return pa.DictionaryArray.from_arrays(keys, _strings(arrays[1], arrays[2]))
    if valid is None:
        return pa.array(arrays[0])
    return pa.array(arrays[0], mask=~valid)


def _table(columns: list) -> pa.Table:
    names = [name for name, _, _, _ in columns]
    arrays = [_array(kind, buffers, valid) for _, kind, buffers, valid in columns]
    return pa.Table.from_arrays(arrays, names=names)


def _steps(steps: Union[str, int, None]) -> Optional[str]:
    return None if steps is None else str(steps)


def _size(size: Union[str, int, None]) -> Optional[str]:
    return None if size is None else str(size)


class Run:
    __slots__ = ("_native",)

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def path(self) -> str:
        return self._native.path

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def format(self) -> str:
        return self._native.format

    @property
    def notes(self) -> List[str]:
        return self._native.notes

    @property
    def warnings(self) -> List[Dict[str, Any]]:
        keys = ("file", "line", "field", "message", "skipped")
        return [dict(zip(keys, w)) for w in self._native.warnings()]

    def __len__(self) -> int:
        return self._native.num_trajectories()

    def __repr__(self) -> str:
        return f"<vantage.Run {self.path!r} ({self.format}): {len(self)} trajectories>"

    def summary(self) -> Dict[str, Any]:
        return self._native.summary()

    def forensics(self, spike_bound: float = 10.0) -> Dict[str, Any]:
        return self._native.forensics(spike_bound)

    def label(
        self,
        name: str,
        value: Union[str, float, bool, None] = None,
        *,
        trajectory: str,
        step: Optional[int] = None,
        note: Optional[str] = None,
        by: Optional[str] = None,
    ) -> str:
        if value is None or value is True:
            text = ""
        elif isinstance(value, bool):
            raise VantageError("a label's value is a word, a number or True (a flag)")
        else:
            text = str(value)
        return self._native.label(name, text, trajectory, step, note, by, False)

    def unlabel(self, name: str, *, trajectory: str, step: Optional[int] = None) -> str:
        return self._native.label(name, "", trajectory, step, None, None, True)

    def labels(self) -> pa.Table:
        columns, notes = self._native.labels()
        for note in notes:
            warnings.warn(note, stacklevel=2)
        return _table(columns)

    def steps(self, text: bool = False, labels: bool = False) -> pa.Table:
        return _table(self._native.table("steps", text, labels))

    def trajectories(self) -> pa.Table:
        return _table(self._native.table("trajectories"))

    def tokens(self) -> pa.Table:
        return _table(self._native.table("tokens"))

    def credit(self, scheme: str, preset: Optional[str] = None, *, tokens: bool = False, **params: Any) -> "Credit":
        return Credit(self, self._native.credit(scheme, preset, tokens, params))


class Credit:
    __slots__ = ("run", "_native")

    def __init__(self, run: Run, native: Any) -> None:
        self.run = run
        self._native = native

    @property
    def scheme(self) -> str:
        return self._native.scheme

    @property
    def preset(self) -> Optional[str]:
        return self._native.preset

    @property
    def params(self) -> Dict[str, str]:
        return dict(self._native.params)

    @property
    def level(self) -> str:
        return self._native.level

    def __len__(self) -> int:
        return len(self._native)

    def __repr__(self) -> str:
        preset = f", preset={self.preset!r}" if self.preset else ""
        return f"<vantage.Credit {self.scheme}{preset} per {self.level}: {len(self)} values on {self.run.path!r}>"

    def to_numpy(self) -> np.ndarray:
        # The core's vector itself, read-only (the table and comparisons read it): no copy.
        return self._native.values()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        values = self.to_numpy()
        if dtype is not None and np.dtype(dtype) != values.dtype:
            return values.astype(dtype)
        return values.copy() if copy else values

    def table(self) -> pa.Table:
        return _table(self._native.table())

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.table().__arrow_c_stream__(requested_schema)


_ROWS = pa.schema(
    [
        ("trajectory", pa.string()),
        ("group", pa.string()),
        ("step", pa.int64()),
        ("kind", pa.string()),
        ("a", pa.float64()),
        ("b", pa.float64()),
        ("text", pa.string()),
    ]
)
_GROUPS = pa.schema(
    [("group", pa.string()), ("steps", pa.int64()), ("spearman", pa.float64()), ("sign_disagreement", pa.float64())]
)


class Comparison:
    __slots__ = ("_native", "_head")

    def __init__(self, a: Credit, b: Credit) -> None:
        # Computed once in the core; each page of rows or groups is read from it.
        self._native = a._native.compare(b._native)
        self._head = self._native.page(0, 0)

    def __getattr__(self, name: str) -> Any:
        if name in ("a", "b", "paired", "spearman", "sign_disagreement", "differing", "disagreements"):
            return self._head[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        rho = "—" if self.spearman is None else f"{self.spearman:.4f}"
        return (
            f"<vantage.Comparison A {self.a} vs B {self.b}: {self.paired} steps, Spearman ρ {rho}, "
            f"signs differ on {100 * self.sign_disagreement:.1f}%>"
        )

    def to_dict(self, n: int = 20, offset: int = 0) -> Dict[str, Any]:
        return self._native.page(n, offset)

    def top(self, n: int = 20, offset: int = 0) -> pa.Table:
        return pa.Table.from_pylist(self.to_dict(n, offset)["rows"], schema=_ROWS)

    def groups(self, n: int = 20, offset: int = 0) -> pa.Table:
        return pa.Table.from_pylist(self.to_dict(n, offset)["groups"], schema=_GROUPS)

    def by_label(self) -> List[Dict[str, Any]]:
        rows, notes = self._native.by_label()
        for note in notes:
            warnings.warn(note, stacklevel=2)
        return rows


def open_all(
    path: PathLike,
    *,
    format: Optional[str] = None,
    steps: Union[str, int, None] = None,
    outcomes: Sequence[PathLike] = (),
    memory_budget: Union[str, int, None] = None,
) -> List[Run]:
    opened = _native.open_all(
        os.fspath(path), format, _steps(steps), [os.fspath(o) for o in outcomes], _size(memory_budget)
    )
    runs = [Run(run) for run, _ in opened if run is not None]
    if not runs:
        raise next(error for _, error in opened if error is not None)
    return runs


def open(
    path: PathLike,
    *,
    format: Optional[str] = None,
    steps: Union[str, int, None] = None,
    outcomes: Sequence[PathLike] = (),
    memory_budget: Union[str, int, None] = None,
) -> Run:
    opened = _native.open_all(
        os.fspath(path), format, _steps(steps), [os.fspath(o) for o in outcomes], _size(memory_budget)
    )
    if len(opened) == 1:
        run, error = opened[0]
        if error is not None:
            raise error
        return Run(run)
    loaded = [os.path.relpath(run.path, os.fspath(path)) for run, _ in opened if run is not None]
    if not loaded:
        raise next(error for _, error in opened if error is not None)
    raise LoadError(
        f"{os.fspath(path)}: a folder of {len(loaded)} runs ({', '.join(loaded)}): open one of them, or use open_all",
        os.fspath(path),
    )


def schemes() -> List[Dict[str, Any]]:
    return _native.schemes_json()


def formats() -> Dict[str, str]:
    return dict(_native.formats())


def compare(a: Credit, b: Credit) -> Comparison:
    if not isinstance(a, Credit) or not isinstance(b, Credit):
        raise TypeError("compare takes two Credit objects (Run.credit)")
    return Comparison(a, b)


def convert(
    path: PathLike,
    out: PathLike,
    *,
    format: Optional[str] = None,
    steps: Union[str, int, None] = None,
    outcomes: Sequence[PathLike] = (),
    memory_budget: Union[str, int, None] = None,
) -> str:
    return _native.convert(
        os.fspath(path),
        os.fspath(out),
        format,
        _steps(steps),
        [os.fspath(o) for o in outcomes],
        _size(memory_budget),
    )


def credit_batch(
    rewards: Any,
    group_ids: Sequence[Hashable],
    scheme: str = "grpo",
    preset: Optional[str] = None,
    *,
    mask: Any = None,
    values: Any = None,
    log_probs: Any = None,
    ref_log_probs: Any = None,
    **params: Any,
) -> np.ndarray:
    given = np.asarray(rewards)
    dtype = np.float64 if given.dtype == np.float64 else np.float32
    r = np.ascontiguousarray(given, dtype=dtype)
    if r.ndim == 1:
        rows, length = r.shape[0], 1
    elif r.ndim == 2:
        rows, length = r.shape
    else:
        raise ShapeError(f"rewards must be 1-D (one per sequence) or 2-D (batch × length), not {r.ndim}-D")

    def column(name: str, x: Any) -> Optional[bytes]:
        if x is None:
            return None
        if r.ndim == 1:
            raise ShapeError(f"{name} goes with per-token rewards (2-D); rewards are 1-D")
        a = np.ascontiguousarray(np.asarray(x), dtype=dtype)
        if a.shape != r.shape:
            raise ShapeError(f"{name} has shape {a.shape}, rewards {r.shape}")
        return a.tobytes()

    ids: Dict[Hashable, int] = {}
    group = [ids.setdefault(g, len(ids)) for g in (group_ids.tolist() if hasattr(group_ids, "tolist") else group_ids)]
    if len(group) != rows:
        raise ShapeError(f"{len(group)} group ids for {rows} sequences")
    out = _native.credit_batch(
        rows,
        length,
        r.tobytes(),
        group,
        scheme,
        preset,
        dtype == np.float64,
        column("mask", mask),
        column("values", values),
        column("log_probs", log_probs),
        column("ref_log_probs", ref_log_probs),
        params,
    )
    return out.reshape(r.shape)


def show(
    run: Run,
    scheme_a: Optional[str] = None,
    scheme_b: Optional[str] = None,
    *,
    view: Optional[str] = None,
    app: bool = True,
) -> str:
    # The deep link checks the schemes and the view (an unknown one is a SchemeError).
    link = "#" + _native.deep_link(None, scheme_a, scheme_b, view)
    program = os.environ.get("VANTAGE_BIN") or shutil.which("vantage")
    args = [program or "vantage", run.path]
    for flag, value in (("--scheme-a", scheme_a), ("--scheme-b", scheme_b), ("--view", view)):
        if value:
            args += [flag, value]
    command = shlex.join(args)
    display = sys.platform in ("darwin", "win32") or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    if app and program and display:
        subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    else:
        why = "the vantage program is not on PATH" if not program else ("app=False" if not app else "no display")
        print(f"vantage ({why}): {command}")
        print(f"deep link (the app's --link, or after a served run's URL): {link}")
    return command


def _document() -> None:
    """Each function's, class's and method's docstring, from the core's declarations."""
    for name, target in list(globals().items()):
        if name.startswith("_"):
            continue
        if callable(target) and getattr(target, "__module__", None) == __name__:
            doc = _native.docstring(name)
            if doc is not None:
                target.__doc__ = doc
            if isinstance(target, type):
                for attribute, member in vars(target).items():
                    doc = _native.docstring(f"{name}.{attribute}")
                    if doc is not None and callable(member):
                        member.__doc__ = doc


_document()
