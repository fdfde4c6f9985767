"""Prosody targets: per-utterance measures (median F0, intonation width, speaking rate, …) that
supervise the style embedding, read from a corpus's optional ``prosody.csv``.

Why: a GST trained on reconstruction alone may encode a style by whatever identifies it in the
corpus (a voice's timbre) rather than by the pitch and tempo a new reference has. A small linear
read-out of the style embedding, trained to predict these measures of the reference, makes the
embedding carry them on a scale the decoder sees for every reference, seen or not.

``prosody.csv`` is comma-separated with a header: an ``id`` column (the ids of ``metadata.csv``)
and numeric columns, e.g. the demo corpus's ``f0_hz``, ``intonation``, ``rate_wpm``, ``word_gap``
(its generator's settings). Which columns supervise, and how each is transformed before it is
standardised, is the ``data.prosody`` config (``{column: log | linear}``); an empty mapping (the
default) trains without prosody targets.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
import math
from pathlib import Path
from typing import Mapping, Sequence

import torch

from gst_tts.errors import DataError, GstTtsError

__all__ = ["PROSODY", "TRANSFORMS", "ProsodyTargets", "prosody_spec", "read_prosody"]

PROSODY = "prosody.csv"

#: How a column is mapped before standardising: ``log`` for ratio-scale measures (F0, rate), so
#: that equal ratios are equal steps; ``linear`` otherwise.
TRANSFORMS = ("log", "linear")


def prosody_spec(config: Mapping[str, str] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``data.prosody`` (``{column: transform}``) → column names and transforms, checked.

    Raises:
        GstTtsError: a transform other than those of :data:`TRANSFORMS`, or a column named ``id``.
    """
    columns, transforms = [], []
    for column, transform in dict(config or {}).items():
        if str(column) == "id":
            raise GstTtsError("data.prosody: 'id' is the key column of prosody.csv, not a measure")
        if transform not in TRANSFORMS:
            raise GstTtsError(
                f"data.prosody.{column}: transform must be one of {', '.join(TRANSFORMS)}, got {transform!r}"
            )
        columns.append(str(column))
        transforms.append(str(transform))
    return tuple(columns), tuple(transforms)


def read_prosody(path: str | Path, ids: Sequence[str], columns: Sequence[str]) -> dict[str, tuple[float, ...]]:
    """The ``columns`` of ``path`` for each of ``ids``.

    Raises:
        DataError: ``file:line: problem`` for a missing file, a header without ``id`` or one of
            ``columns``, a value that is not a finite number, an unknown or repeated id, or an id of
            ``ids`` that has no row.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(
            f"{path}: prosody file not found (data.prosody names columns of it; set data.prosody=null to train without)"
        )
    wanted = set(ids)
    rows: dict[str, tuple[float, ...]] = {}
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = [h.strip() for h in next(reader, [])]
            missing = [c for c in ("id", *columns) if c not in header]
            if missing:
                raise DataError(
                    f"{path}:1: header has no column {missing[0]!r} (it has {', '.join(header) or 'nothing'})"
                )
            where = [header.index(c) for c in columns]
            key = header.index("id")
            for line_no, fields in enumerate(reader, start=2):
                if not fields or not "".join(fields).strip():
                    continue
                if len(fields) != len(header):
                    raise DataError(f"{path}:{line_no}: expected {len(header)} columns, got {len(fields)}")
                utt_id = fields[key].strip()
                if utt_id not in wanted:
                    raise DataError(f"{path}:{line_no}: id {utt_id!r} is not in the corpus's metadata.csv")
                if utt_id in rows:
                    raise DataError(f"{path}:{line_no}: duplicate id {utt_id!r}")
                rows[utt_id] = tuple(_number(fields[i], path, line_no, name) for i, name in zip(where, columns))
    except UnicodeDecodeError:
        raise DataError(f"{path}: not valid UTF-8") from None
    absent = [i for i in ids if i not in rows]
    if absent:
        raise DataError(f"{path}: no row for {len(absent)} utterance(s) of metadata.csv, first {absent[0]!r}")
    return rows


def _number(text: str, path: Path, line_no: int, column: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise DataError(f"{path}:{line_no}: {column} must be a finite number, got {text.strip()!r}")
    return value


@dataclass(frozen=True)
class ProsodyTargets:
    """Columns, their transforms, and the training set's mean and spread of each transformed
    column: :meth:`encode` maps raw measures to standardised targets (zero mean, unit variance over
    the training utterances)."""

    columns: tuple[str, ...]
    transforms: tuple[str, ...]
    mean: tuple[float, ...]
    std: tuple[float, ...]

    @classmethod
    def fit(
        cls, columns: Sequence[str], transforms: Sequence[str], rows: Sequence[Sequence[float]], where: str = PROSODY
    ) -> "ProsodyTargets":
        """Statistics of ``rows`` (the training utterances' raw measures).

        Raises:
            DataError: a ``log`` column with a value <= 0, or a column that does not vary (it
                cannot be standardised, and would teach nothing).
        """
        values = torch.tensor([list(r) for r in rows], dtype=torch.float64).reshape(len(rows), len(columns))
        for j, (column, transform) in enumerate(zip(columns, transforms)):
            if transform == "log" and bool((values[:, j] <= 0).any()):
                raise DataError(f"{where}: {column} is log-transformed (data.prosody) but has values <= 0")
        transformed = _transform(values, transforms)
        std = transformed.std(dim=0, unbiased=False) if len(rows) else torch.zeros(len(columns), dtype=torch.float64)
        for column, s in zip(columns, std.tolist()):
            if not s > 1e-9:
                raise DataError(
                    f"{where}: {column} has the same value for every training utterance; leave it out of data.prosody"
                )
        mean = transformed.mean(dim=0)
        return cls(tuple(columns), tuple(transforms), tuple(mean.tolist()), tuple(std.tolist()))

    def encode(self, raw: Sequence[float]) -> torch.Tensor:
        """One utterance's raw measures → ``(len(columns),)`` float32 standardised targets."""
        values = _transform(torch.tensor([list(raw)], dtype=torch.float64), self.transforms)[0]
        return (
            (values - torch.tensor(self.mean, dtype=torch.float64)) / torch.tensor(self.std, dtype=torch.float64)
        ).float()


def _transform(values: torch.Tensor, transforms: Sequence[str]) -> torch.Tensor:
    """``(n, columns)`` raw → transformed, column by column."""
    out = values.clone()
    for j, transform in enumerate(transforms):
        if transform == "log":
            out[:, j] = torch.log(values[:, j])
    return out
