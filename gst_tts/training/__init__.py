"""Training: the loop (``trainer``), losses, the checkpoint schema, distributed context, TensorBoard logger;
the vocoder's loop (``vocoder_trainer``) and losses (``vocoder_losses``); what both loops share (``loop``)."""
