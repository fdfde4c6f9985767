"""Text: cleaners (normalisation), the symbol table, sentence splitting for long inputs."""
