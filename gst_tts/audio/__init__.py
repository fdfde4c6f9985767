"""Audio: file I/O (``io``), log-mel features and statistics (``features``), vocoders (``vocoders``)."""
