"""Vocoder training entry point (``gst-tts-train-vocoder`` / ``python -m gst_tts.training.train_vocoder``), a Hydra app.

    gst-tts-train-vocoder data.root=/data/LJSpeech-1.1 vocoder=hifigan_v1 hydra.run.dir=runs/voc
    gst-tts-train-vocoder data.root=… data.gta_dir=gta trainer.init_from=runs/voc/checkpoints/last.pt \\
        hydra.run.dir=runs/voc_gta
    # the spectral vocoder: minutes on a CPU
    gst-tts-train-vocoder data.root=… vocoder=cpu_small hydra.run.dir=runs/voc_cpu

The run folder gets ``checkpoints/`` (``last.pt`` + periodic ones; ``generator.pt`` for
``--vocoder``), TensorBoard event files and Hydra's resolved config. Running again with the same
``hydra.run.dir`` resumes, which torchrun requires (see ``gst_tts.training.train``).
"""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig

from gst_tts.training.train import hydra_app
from gst_tts.training.loop import TrainState
from gst_tts.training.vocoder_trainer import GENERATOR_EXPORT, VocoderTrainer

CONFIG_NAME = "vocoder_train"


def run(cfg: DictConfig, run_dir: str | Path) -> TrainState:
    """Train a vocoder with a composed config; the programmatic twin of the CLI."""
    trainer = VocoderTrainer(cfg, run_dir)
    state = trainer.fit()
    print(
        f"training finished at step {state.step}: vocoder {trainer.ckpt_dir / GENERATOR_EXPORT} "
        f"(--vocoder), checkpoint {trainer.ckpt_dir / 'last.pt'}, "
        f"TensorBoard: tensorboard --logdir {trainer.run_dir / 'tensorboard'}"
    )
    return state


def main() -> None:
    hydra_app(CONFIG_NAME, run)


if __name__ == "__main__":
    main()
