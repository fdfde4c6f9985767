"""The built-in demo corpus: espeak-ng through ctypes, a seeded sentence generator, the corpus writer."""
