"""Training entry point (``gst-tts-train`` / ``python -m gst_tts.training.train``), a Hydra app.

    gst-tts-train data.root=/data/LJSpeech-1.1 hydra.run.dir=runs/lj

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
# Resolver that the help templates of conf/config.yaml and conf/vocoder_train.yaml call.
CONFIG_GROUPS_RESOLVER = "gst_tts.config_groups"


def run(cfg: DictConfig, run_dir: str | Path) -> TrainState:
    """Train with a composed config; the programmatic twin of the CLI."""
    trainer = Trainer(cfg, run_dir)
    state = trainer.fit()
    print(
        f"training finished at step {state.step}: checkpoint {trainer.ckpt_dir / 'last.pt'}, "
        f"TensorBoard: tensorboard --logdir {trainer.run_dir / 'tensorboard'}"
    )
    return state


def main() -> None:
    hydra_app("config", run)


def own_config_groups() -> str:
    """``--help``'s ``group: option, option`` lines for the groups this app's defaults list chose.

    Both trainers' primary configs share conf/, so Hydra's ``$APP_CONFIG_GROUPS`` would list the
    other trainer's groups too; the composed ``hydra.runtime.choices`` names only this app's. The
    options come from Hydra's own config loader, so a ``--config-dir`` adds its options as usual.
    """
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig
    from hydra.core.object_type import ObjectType

    loader = GlobalHydra.instance().config_loader()
    groups = sorted(group for group in HydraConfig.get().runtime.choices if group.split("/")[0] != "hydra")
    return "\n".join(
        f"{group}: {', '.join(sorted(loader.get_group_options(group, ObjectType.CONFIG)))}" for group in groups
    )


def hydra_app(config_name: str, run: Callable[[DictConfig, str], object]) -> None:
    """Runs ``run(cfg, run_dir)`` as a Hydra app on the packaged config ``config_name``: a
    GstTtsError ends it with one line and exit code 2, Ctrl-C with 130 (shared by the training
    entry points)."""
    import hydra
    from hydra.core.hydra_config import HydraConfig

    # The primary configs' help templates list their groups through this (see own_config_groups).
    OmegaConf.register_new_resolver(CONFIG_GROUPS_RESOLVER, own_config_groups, replace=True)

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
