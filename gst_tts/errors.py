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
