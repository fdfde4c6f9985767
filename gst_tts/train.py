"""Training entry point (``gst-tts-train`` / ``python -m gst_tts.train``), a Hydra app.

    gst-tts-train data.root=/data/LJSpeech-1.1 model=tacotron2 hydra.run.dir=runs/lj

The run folder gets ``checkpoints/`` (``last.pt`` + periodic ones), TensorBoard event files and
Hydra's resolved config. Running again with the same ``hydra.run.dir`` resumes. Under torchrun
``hydra.run.dir`` is required: the default folder is named from each process's clock.
"""

from __future__ import annotations

import logging
from pathlib import Path
import sys
from typing import Callable

from omegaconf import DictConfig, OmegaConf

from gst_tts.errors import GstTtsError
from gst_tts.training.distributed import check_shared_run_dir
from gst_tts.training.trainer import Trainer, TrainState

# The configs are the package gst_tts.conf: conf/ in a checkout, package data in a wheel.
CONFIG_MODULE = "gst_tts.conf"


def run(cfg: DictConfig, run_dir: str | Path) -> TrainState:
    """Train with a composed config; the programmatic twin of the CLI."""
    trainer = Trainer(cfg, run_dir)
    state = trainer.fit()
    print(f"training finished at step {state.step}: checkpoint {trainer.ckpt_dir / 'last.pt'}, "
          f"TensorBoard: tensorboard --logdir {trainer.run_dir / 'tensorboard'}")
    return state


def main() -> None:
    hydra_app("config", run)


def hydra_app(config_name: str, run: Callable[[DictConfig, str], object]) -> None:
    """Runs ``run(cfg, run_dir)`` as a Hydra app on the packaged config ``config_name``: a
    GstTtsError ends it with one line and exit code 2, Ctrl-C with 130 (shared by the training
    entry points)."""
    import hydra
    from hydra.core.hydra_config import HydraConfig

    @hydra.main(version_base="1.3", config_path=f"pkg://{CONFIG_MODULE}", config_name=config_name)
    def _app(cfg: DictConfig) -> None:
        logging.getLogger("gst_tts").setLevel(logging.INFO)
        hydra_cfg = HydraConfig.get()
        try:
            check_shared_run_dir(str(OmegaConf.to_container(hydra_cfg.run, resolve=False)["dir"]))
            run(cfg, hydra_cfg.runtime.output_dir)
        except GstTtsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(2)
        except KeyboardInterrupt:
            sys.exit(130)

    _app()


if __name__ == "__main__":
    main()
