"""Training: the loop (``trainer``), losses, the checkpoint schema, distributed context, TensorBoard logger."""
