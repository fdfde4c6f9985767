"""``python -m gst_tts.cli``: the same as the ``gst-tts`` command."""

import sys

from gst_tts.cli import main

sys.exit(main())
