"""Exceptions that the command line turns into a one-line message and exit code 2."""


class GstTtsError(Exception):
    """Base class for user-facing errors (bad input, bad files, bad configuration)."""


class TextError(GstTtsError):
    """A text that cannot be turned into symbols (empty after cleaning, no usable symbol)."""


class DataError(GstTtsError):
    """A corpus problem; the message starts with ``file:line`` where one applies."""


class AudioError(GstTtsError):
    """An audio file that is missing, unreadable, silent or too short."""


class CheckpointError(GstTtsError):
    """A file that is not a gst-tts checkpoint, or one that does not match the model."""


class VocoderError(GstTtsError):
    """A vocoder file or config that is missing, holds no vocoder, or does not match the acoustic
    model's feature settings."""


class OutputError(GstTtsError, OSError):
    """A file that cannot be written: no space left on the device, a read-only or unwritable
    folder, a path that is not a folder. Also an :class:`OSError` (its ``errno`` that of the
    cause), so code that handles a failed write as one still does."""


def first_line(error: BaseException, limit: int = 160) -> str:
    """The first line of ``error``'s message, at most ``limit`` characters (default 160); its type
    name when the message is empty. For one-line reports of exceptions that come from libraries."""
    lines = str(error).strip().splitlines()
    return lines[0][:limit] if lines else type(error).__name__


class ExportError(GstTtsError):
    """A model that cannot be exported to ONNX (an attention kind without an exported step), or an
    export folder that is missing, incomplete or from another format version."""
