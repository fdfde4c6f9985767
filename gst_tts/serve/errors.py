"""The one shape of every refusal the server gives: ``{"error": "<one line>"}`` with a status.

:class:`ApiError` is what the service and the routes raise; :func:`error_response` is the answer
both the app's error handlers and the ASGI guard (which answers before the app runs) send.
"""

from typing import Mapping

from fastapi.responses import JSONResponse


class ApiError(Exception):
    """An answer ``{"error": message}`` with ``status`` (and extra headers)."""

    def __init__(self, status: int, message: str, *, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    # One line whatever a client put in the names it sent (dict keys, file names, paths).
    message = message.replace("\r", "\\r").replace("\n", "\\n")
    return JSONResponse({"error": message}, status_code=status, headers=dict(headers or {}))


def quote(value: str, limit: int = 40) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "…")
