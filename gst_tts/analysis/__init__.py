"""Analysis: alignment health (the one definition of 'aligned'), plots, prosody measures."""
