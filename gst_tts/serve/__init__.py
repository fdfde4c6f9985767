"""``gst-tts serve``: an HTTP API and a web page for synthesis with style controls.

* :mod:`gst_tts.serve.batching`: the bounded queue whose one worker decodes the requests that
  arrive together as one batch (plain threads and torch; no web framework).
* :mod:`gst_tts.serve.app`: the FastAPI application (:func:`~gst_tts.serve.app.create_app`): its
  routes and error handlers, and the page under ``static/``;
* :mod:`gst_tts.serve.limits`: what a request may send (:class:`~gst_tts.serve.limits.ServeLimits`)
  and the ASGI guard that enforces it; :mod:`gst_tts.serve.models`: the request models;
  :mod:`gst_tts.serve.service`: the checks, the stores and the work handed to the queue;
  :mod:`gst_tts.serve.errors`: the ``{"error": …}`` answer.

FastAPI, uvicorn and python-multipart are the optional extra ``gst-tts[serve]``; this package's
``__init__`` imports none of them, so ``gst_tts.serve.batching`` works without them.
"""
