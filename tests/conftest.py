"""Shared fixtures and helpers: a tiny random-weight checkpoint, a tiny synthetic corpus, a training
config for both, the shared data path. Test modules share code through this file only."""

from __future__ import annotations

import logging
from pathlib import Path

from hydra import compose, initialize_config_dir, initialize_config_module
import numpy as np
from omegaconf import DictConfig, OmegaConf
import pytest
import soundfile as sf
import torch

from gst_tts.audio.features import AudioConfig, MelStats
from gst_tts.model import GSTTacotron
from gst_tts.text.symbols import SymbolTable
from gst_tts.training.train import CONFIG_MODULE
from gst_tts.checkpoints.acoustic import checkpoint_payload, save_checkpoint

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
# This checkout's configs. The packaged ones (CONFIG_MODULE) are the same files in a checkout with
# an editable install of itself; an install made from another checkout would hide new ones.
CONF_DIR = Path(__file__).resolve().parents[1] / "conf"

_ROOT_ENTRIES: set[str] = set()


def pytest_sessionstart(session):
    _ROOT_ENTRIES.update(p.name for p in Path.cwd().iterdir())


def pytest_sessionfinish(session, exitstatus):
    """Tests write under tmp_path only: a new visible entry in the working directory (a path
    argument taken for a file name, a forgotten ``--out``) fails the run."""
    left = sorted(p.name for p in Path.cwd().iterdir() if p.name not in _ROOT_ENTRIES and not p.name.startswith("."))
    if left:
        print(f"\ntests left {', '.join(left)} in {Path.cwd()}; write under tmp_path")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# A model small enough that a test builds and runs it in well under a second.
TINY_MODEL = dict(
    reduction_factor=2,
    embedding_dim=32,
    encoder_dim=32,
    attention_dim=16,
    attention_location_filters=4,
    attention_location_kernel_size=5,
    attention_rnn_dim=32,
    decoder_rnn_dim=32,
    prenet_dim=16,
    postnet_dim=16,
    postnet_n_convs=2,
    gst_reference_channels=(4, 4, 8, 8, 8, 8),
    gst_reference_dim=16,
    gst_n_tokens=5,
    gst_token_dim=16,
    gst_n_heads=2,
)


def tiny_model(n_symbols: int, n_mels: int = 80, **overrides) -> GSTTacotron:
    return GSTTacotron(n_symbols=n_symbols, n_mels=n_mels, **{**TINY_MODEL, **overrides})


def seconds_for_steps(
    steps: int,
    *,
    reduction_factor: int = TINY_MODEL["reduction_factor"],
    sample_rate: int = 22050,
    hop_length: int = 256,
) -> float:
    """The ``max_seconds`` that bounds decoding at exactly ``steps`` decoder steps of a model with
    ``reduction_factor`` at ``sample_rate`` / ``hop_length`` (default: the tiny checkpoint's): the
    random models never stop on their token, so this bound is how long they decode."""
    return steps * reduction_factor * hop_length / sample_rate


def write_tiny_checkpoint(path: Path, seed: int = 0, step: int = 0) -> Path:
    """A valid checkpoint of an untrained tiny model (good for wiring and error tests), as if
    written after ``step`` steps."""
    torch.manual_seed(seed)
    symbols = SymbolTable()
    config = dict(TINY_MODEL, n_symbols=len(symbols), n_mels=80)
    model = GSTTacotron(**config)
    return save_checkpoint(
        path,
        checkpoint_payload(
            model_state=model.state_dict(),
            model_config=config,
            symbols=symbols,
            audio_config=AudioConfig(),
            mel_stats=MelStats(torch.full((80,), -5.0), torch.full((80,), 2.0)),
            step=step,
        ),
    )


def _train_config(root: Path, cache: Path, **trainer) -> DictConfig:
    """The packaged training config with the tiny model, batches of 2, 2 validation utterances and
    a fast schedule on ``root``, on the CPU; ``trainer`` overrides ``trainer.*`` keys.

    CPU even where CUDA is present: tests compare runs bit for bit (resume against an uninterrupted
    run, DDP ranks), which CUDA's non-deterministic kernels do not promise, and two gloo ranks cannot
    share one GPU. ``benchmarks/gpu_check.sh`` trains on CUDA."""
    with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                "model=tiny",
                f"data.root={root}",
                f"data.cache_dir={cache}",
                "data.batch_size=2",
                "data.val_size=2",
                "trainer.progress=false",
            ],
        )
    cfg.model = OmegaConf.merge(cfg.model, {k: list(v) if isinstance(v, tuple) else v for k, v in TINY_MODEL.items()})
    cfg.trainer = OmegaConf.merge(
        cfg.trainer,
        dict(
            {
                "device": "cpu",
                "learning_rate": 3e-3,
                "warmup_steps": 1,
                "log_every": 1,
                "val_every": 1000,
                "checkpoint_every": 1000,
                "val_inference_utterances": 2,
            },
            **trainer,
        ),
    )
    return cfg


# A generator and discriminators small enough that a training step takes well under a second.
TINY_GENERATOR = dict(
    resblock="2",
    upsample_rates=[8, 8, 4],
    upsample_kernel_sizes=[16, 16, 8],
    upsample_initial_channel=16,
    resblock_kernel_sizes=[3],
    resblock_dilation_sizes=[[1, 2]],
    istft_n_fft=None,
    istft_hop_length=None,
)
TINY_DISCRIMINATOR = dict(
    periods=[2, 3], period_channels=[4, 8], n_scales=2, scale_channels=[16] * 7, scale_groups=[1, 4, 16, 16, 16, 16, 1]
)


def vocoder_config(root: Path, cache: Path, *overrides: str, tiny: bool = True, **trainer) -> DictConfig:
    """This checkout's ``conf/vocoder_train.yaml`` on ``root`` on the CPU: batches of 2 segments of
    8 frames, one validation utterance, no loader workers; with ``tiny`` the tiny generator and
    discriminators. ``overrides``: Hydra overrides (``vocoder=hifigan_v2``); ``trainer``:
    ``trainer.*`` keys (default: log every step, no periodic validation or checkpoint)."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(
            "vocoder_train",
            overrides=[
                f"data.root={root}",
                f"data.cache_dir={cache}",
                "data.batch_size=2",
                "data.val_size=1",
                "data.num_workers=0",
                "data.segment_frames=8",
                "trainer.progress=false",
                "trainer.device=cpu",
                *overrides,
            ],
        )
    if tiny:
        cfg.generator = OmegaConf.merge(cfg.generator, TINY_GENERATOR)
        cfg.discriminator = OmegaConf.merge(cfg.discriminator, TINY_DISCRIMINATOR)
    cfg.trainer = OmegaConf.merge(
        cfg.trainer, dict({"log_every": 1, "val_every": 1000, "checkpoint_every": 1000, "val_audio": 1}, **trainer)
    )
    OmegaConf.set_struct(cfg, False)  # tests may add keys (mistakes included)
    return cfg


@pytest.fixture(autouse=True)
def _root_logging_restored():
    """The root logger's handlers and level as they were before each test: an entry point run
    in-process (``gst-tts-train``'s Hydra main) installs handlers on streams that pytest closes
    after the test, and a later test's log line would then print a "Logging error" traceback."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
def make_vocoder_cfg():
    """A function (root, cache, *overrides, tiny=True, **trainer) → a small vocoder training config
    (see :func:`vocoder_config`)."""
    return vocoder_config


@pytest.fixture
def make_cfg():
    """A function (root, cache, **trainer overrides) → a small training config (see :func:`_train_config`)."""
    return _train_config


@pytest.fixture(scope="module")
def one_torch_thread():
    """Torch on one thread for a module of tiny-model tests (``pytestmark = pytest.mark.usefixtures(...)``):
    a second thread only adds synchronisation, and spins on a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "tiny.pt")


def tone(seconds: float, rate: int = 22050, freq: float = 220.0, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t) * (1 + 0.3 * np.sin(2 * np.pi * 3 * t))).astype(np.float32)


def write_corpus(root: Path, n: int = 6, rate: int = 22050, styles: bool = False) -> Path:
    """A small LJSpeech-format corpus of tones (valid audio, made-up text)."""
    (root / "wavs").mkdir(parents=True, exist_ok=True)
    lines, style_lines = [], []
    for i in range(n):
        utt = f"UT-{i:03d}"
        sf.write(root / "wavs" / f"{utt}.wav", tone(0.6 + 0.1 * i, rate, 150 + 20 * i), rate, subtype="PCM_16")
        lines.append(f"{utt}|Sentence number {i}.|sentence number {i}.")
        style_lines.append(f"{utt}|{'low' if i % 2 else 'high'}")
    (root / "metadata.csv").write_text("\n".join(lines) + "\n")
    if styles:
        (root / "styles.csv").write_text("\n".join(style_lines) + "\n")
    return root


@pytest.fixture
def corpus(tmp_path) -> Path:
    return write_corpus(tmp_path / "corpus")


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (it sits beside the repo in CI and dev machines)")
    return SHARED_DATA


def write_spectral_vocoder(path: Path, *, pitch_head: bool, seed: int = 0) -> Path:
    """A small random spectral vocoder checkpoint (``generator_kind`` spectral) for the default
    AudioConfig: its output layers are drawn (an untrained one is the pseudo-inverse exactly) and
    its pitch head, if any, says voiced at about 120 Hz, so harmonic restoration runs."""
    from gst_tts.audio.vocoders.checkpoint import SPECTRAL_KIND, save_vocoder_checkpoint, vocoder_payload
    from gst_tts.audio.vocoders.spectral import MagnitudeEstimator

    torch.manual_seed(seed)
    config = {"channels": 16, "dilations": [1, 2], "pitch_head": pitch_head}
    estimator = MagnitudeEstimator(**config)
    with torch.no_grad():
        estimator.output_conv.weight.normal_(0.0, 0.05)
        if pitch_head:
            estimator.pitch_output.weight.normal_(0.0, 0.02)
            estimator.pitch_output.bias.copy_(torch.tensor([-0.2, 3.0]))  # log(150 Hz) − 0.2, voicing logit 3
    return save_vocoder_checkpoint(
        path,
        vocoder_payload(
            generator_state=estimator.state_dict(),
            generator_config=config,
            audio_config=AudioConfig(),
            generator_kind=SPECTRAL_KIND,
        ),
    )
