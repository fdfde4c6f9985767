"""Training: the loop (``trainer``), losses, distributed context, resume, TensorBoard logger;
the vocoder's loop (``vocoder_trainer``) and losses (``vocoder_losses``); what both loops share (``loop``);
the Hydra entry points ``train`` (``gst-tts-train``) and ``train_vocoder`` (``gst-tts-train-vocoder``).
The checkpoint schema lives below, in :mod:`gst_tts.checkpoints`."""
