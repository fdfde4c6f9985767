# Makes conf/ the importable package gst_tts.conf (see pyproject.toml), so Hydra finds the
# configs through pkg://gst_tts.conf in an installed wheel and in an editable checkout alike.
