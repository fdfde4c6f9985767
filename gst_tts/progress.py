"""Progress bars for every long-running loop: the one place that makes them.

On a terminal, a tqdm bar redrawn in place. Anywhere else (``make demo > log``, CI, a pipe) a tqdm
bar would either be hidden or write one endless line of carriage returns; there it prints a whole
line every :data:`LOG_INTERVAL_S` seconds instead, with the count, the rate and the time left::

    train: 500/2000 step (25%) [06:10<18:30, 1.35 step/s, loss=0.412]
"""

from __future__ import annotations

import sys
from typing import IO, Any, Iterable

from tqdm import tqdm

__all__ = ["LOG_INTERVAL_S", "progress_bar"]

#: Seconds between progress lines when the output is not a terminal.
LOG_INTERVAL_S = 30.0
#: A log line: no bar, the figures that say how far along and how long to go.
LOG_FORMAT = "{desc}: {n_fmt}/{total_fmt} {unit} ({percentage:.0f}%) [{elapsed}<{remaining}, {rate_fmt}{postfix}]"
LOG_FORMAT_NO_TOTAL = "{desc}: {n_fmt} {unit} [{elapsed}, {rate_fmt}{postfix}]"


class _Lines:
    """A text stream that turns tqdm's in-place redraws (``\\r`` + text) into whole lines."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.last = ""

    def write(self, text: str) -> None:
        for part in text.split("\r"):
            part = part.strip()
            if part and part != self.last:
                self.stream.write(part + "\n")
                self.last = part

    def flush(self) -> None:
        self.stream.flush()


class _LogBar(tqdm):
    """A bar whose postfix and description wait for the next line instead of forcing one."""

    def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
        super().set_postfix(ordered_dict, refresh=False, **kwargs)

    def set_description(self, desc=None, refresh=True):
        super().set_description(desc, refresh=False)


def progress_bar(
    iterable: Iterable | None = None,
    *,
    total: int | None = None,
    initial: int = 0,
    desc: str,
    unit: str,
    enabled: bool = True,
    stream: IO[str] | None = None,
    interval: float | None = None,
) -> tqdm:
    """A tqdm bar over ``iterable`` (or updated by hand up to ``total``), on ``stream`` (stderr).

    Args:
        iterable, total, initial, desc, unit: as tqdm's.
        enabled: False gives a bar that shows nothing (the loop's ``--no-progress``). Default True.
        stream: where it writes. Default ``sys.stderr``.
        interval: seconds between lines when ``stream`` is not a terminal. Default
            :data:`LOG_INTERVAL_S`.

    ``logging_redirect_tqdm`` and ``bar.write`` work as with any tqdm bar.
    """
    stream = sys.stderr if stream is None else stream
    if total is None and iterable is not None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    common: dict[str, Any] = dict(total=total, initial=initial, desc=desc, unit=unit)
    if not enabled:
        return tqdm(iterable, disable=True, **common)
    if _is_terminal(stream):
        return tqdm(iterable, dynamic_ncols=True, file=stream, **common)
    seconds = LOG_INTERVAL_S if interval is None else interval
    return _LogBar(
        iterable,
        file=_Lines(stream),
        mininterval=seconds,
        maxinterval=max(seconds, 10.0),
        miniters=1,
        bar_format=LOG_FORMAT if total else LOG_FORMAT_NO_TOTAL,
        disable=False,
        **common,
    )


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
