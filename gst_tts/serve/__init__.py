"""``gst-tts serve``: an HTTP API and a web page for synthesis with style controls.

* :mod:`gst_tts.serve.batching`: the bounded queue whose one worker decodes the requests that
  arrive together as one batch (plain threads and torch; no web framework).
* :mod:`gst_tts.serve.app`: the FastAPI application (:func:`~gst_tts.serve.app.create_app`),
  its limits (:class:`~gst_tts.serve.app.ServeLimits`) and the page under ``static/``.

FastAPI, uvicorn and python-multipart are the optional extra ``gst-tts[serve]``; this package's
``__init__`` imports none of them, so ``gst_tts.serve.batching`` works without them.
"""
