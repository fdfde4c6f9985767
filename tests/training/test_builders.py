"""Config → training pieces: `_target_` honoured, config keys checked against the constructors in
one line, data-derived sizes wired in, the packaged presets valid."""

from dataclasses import asdict
import inspect
from pathlib import Path
import subprocess
import sys

from conftest import TINY_MODEL, write_corpus
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf
import pytest

from gst_tts.audio.features import AudioConfig
from gst_tts.errors import GstTtsError
from gst_tts.model import GSTTacotron
from gst_tts.training.train import CONFIG_MODULE
from gst_tts.training.builders import MODEL_FROM_DATA, build_loss, build_model, complete_model_config
from gst_tts.training.config_args import constructor_kwargs
from gst_tts.training.data_builders import build_audio_config
from gst_tts.training.losses import TacotronLoss
from gst_tts.training.trainer import Trainer

REPO = Path(__file__).resolve().parents[2]
SIZES = dict(n_symbols=40, n_mels=80, pad_id=0)


class ScaledLoss(TacotronLoss):
    """A loss of the test's own, to show that ``loss._target_`` picks the class."""

    def __init__(self, scale: float = 1.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.scale = scale


def _model_cfg(**changes):
    return OmegaConf.create(
        dict(
            {"_target_": "gst_tts.model.GSTTacotron"},
            **{k: list(v) if isinstance(v, tuple) else v for k, v in TINY_MODEL.items()},
            **changes,
        )
    )


def test_model_target_is_instantiated_with_the_data_derived_sizes():
    model, config = build_model(_model_cfg(), n_symbols=40, n_mels=64, pad_id=0)
    assert type(model) is GSTTacotron
    assert model.n_mels == 64 and model.encoder.embedding.num_embeddings == 40
    assert config["n_symbols"] == 40 and config["n_mels"] == 64 and config["pad_id"] == 0
    # Complete constructor arguments: keys the config leaves out come from the signature.
    assert config["encoder_n_convs"] == 3 and "_target_" not in config
    assert config["gst_reference_channels"] == list(TINY_MODEL["gst_reference_channels"])
    assert type(GSTTacotron(**config)) is GSTTacotron


def test_unknown_model_key_is_one_line_naming_it():
    with pytest.raises(GstTtsError) as info:
        build_model(_model_cfg(decoder_rnn_dimm=32), **SIZES)
    message = str(info.value)
    assert "'decoder_rnn_dimm'" in message and "gst_tts.model.GSTTacotron" in message
    assert "did you mean 'decoder_rnn_dim'" in message and "\n" not in message


def test_model_keys_that_the_data_decides_are_refused():
    with pytest.raises(GstTtsError, match=r"model\.n_mels comes from data\.audio\.n_mels"):
        build_model(_model_cfg(n_mels=40), **SIZES)
    with pytest.raises(
        GstTtsError, match=r"model\.style_prosody_dim comes from the prosody measures \(data\.prosody\)"
    ):
        build_model(_model_cfg(style_prosody_dim=2), **SIZES)


def test_model_target_must_be_the_class_checkpoints_rebuild():
    with pytest.raises(GstTtsError, match="rebuilt as gst_tts.model.GSTTacotron"):
        build_model(_model_cfg(_target_="torch.nn.Linear"), **SIZES)
    with pytest.raises(GstTtsError, match="cannot import"):
        build_model(_model_cfg(_target_="gst_tts.model.NoSuchModel"), **SIZES)
    # The same class under its module path is fine.
    model, _ = build_model(_model_cfg(_target_="gst_tts.model.tacotron.GSTTacotron"), **SIZES)
    assert type(model) is GSTTacotron


def test_a_value_the_model_refuses_is_one_line():
    with pytest.raises(GstTtsError) as info:
        build_model(_model_cfg(style_combine="multiply"), **SIZES)
    assert "style_combine" in str(info.value) and "\n" not in str(info.value)


def test_loss_target_is_honoured_and_gets_the_models_reduction_factor():
    loss = build_loss({"_target_": f"{__name__}.ScaledLoss", "scale": 0.5, "mel_loss": "l1"}, reduction_factor=3)
    assert type(loss) is ScaledLoss and loss.scale == 0.5 and loss.reduction_factor == 3
    default = build_loss({"guided_attention_weight": 0.0}, reduction_factor=2)  # no _target_: TacotronLoss
    assert type(default) is TacotronLoss and default.guided_attention_weight == 0.0
    with pytest.raises(GstTtsError, match=r"loss\.reduction_factor comes from the model"):
        build_loss({"reduction_factor": 2}, reduction_factor=2)
    with pytest.raises(GstTtsError, match="unknown key 'stop_weight'"):
        build_loss({"stop_weight": 2.0}, reduction_factor=2)
    with pytest.raises(GstTtsError, match="mel_loss"):
        build_loss({"mel_loss": "huber"}, reduction_factor=2)


def test_audio_settings_are_checked_too():
    assert build_audio_config({"sample_rate": 16000}).sample_rate == 16000
    with pytest.raises(GstTtsError, match=r"data\.audio config: unknown key 'hop_size'.*'hop_length'"):
        build_audio_config({"hop_size": 200})


def test_constructor_kwargs_reports_missing_required_arguments():
    class Needs:
        def __init__(self, size: int, scale: float = 1.0) -> None:
            pass

    assert constructor_kwargs(Needs, {"size": 2}, "group") == {"size": 2}
    with pytest.raises(GstTtsError, match="group config: missing size"):
        constructor_kwargs(Needs, {"scale": 2.0}, "group")


def test_complete_model_config_makes_older_configs_compare_equal():
    _, config = build_model(_model_cfg(), **SIZES)
    older = {k: v for k, v in config.items() if k != "pad_id"}  # checkpoints written before pad_id was recorded
    assert complete_model_config(older) == config
    assert complete_model_config(dict(older, encoder_dim=64)) != config


@pytest.mark.parametrize("preset", ["tiny", "tacotron2"])
def test_packaged_presets_are_constructor_arguments(preset):
    with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
        cfg = compose("config", overrides=[f"model={preset}"])
    config = OmegaConf.to_container(cfg.model)
    assert config.pop("_target_") == "gst_tts.model.GSTTacotron"
    assert constructor_kwargs(GSTTacotron, config, "model", from_elsewhere=MODEL_FROM_DATA) == config
    assert type(build_loss(cfg.loss, reduction_factor=cfg.model.reduction_factor)) is TacotronLoss
    build_audio_config(cfg.data.audio)


def test_trainer_refuses_an_unknown_model_key_before_reading_the_corpus(make_cfg, tmp_path):
    cfg = make_cfg(tmp_path / "no-corpus-here", tmp_path / "cache", max_steps=1)
    OmegaConf.set_struct(cfg, False)
    cfg.model.postnet_layers = 3
    with pytest.raises(GstTtsError) as info:
        Trainer(cfg, tmp_path / "run")
    assert "'postnet_layers'" in str(info.value) and "\n" not in str(info.value)
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    "key, value",
    [
        ("lr_decay_steps", 0),
        ("val_every", 0),
        ("log_every", -1),
        ("checkpoint_every", 0),
        ("keep_checkpoints", 0),
        ("amp", "fp8"),
        ("max_minutes", 0),
    ],
)
def test_trainer_settings_that_would_crash_later_are_refused_first(make_cfg, tmp_path, key, value):
    cfg = make_cfg(tmp_path / "no-corpus-here", tmp_path / "cache", max_steps=1)
    cfg.trainer[key] = value
    with pytest.raises(GstTtsError) as info:
        Trainer(cfg, tmp_path / "run")
    assert f"trainer.{key}" in str(info.value) and "\n" not in str(info.value)
    assert not (tmp_path / "cache").exists()


def test_train_command_reports_an_unknown_model_key_in_one_line_with_exit_code_2(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", n=4)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gst_tts.training.train",
            f"data.root={corpus}",
            f"data.cache_dir={tmp_path / 'cache'}",
            f"hydra.run.dir={tmp_path / 'run'}",
            "+model.encoder_dimm=64",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: model config: unknown key 'encoder_dimm'"), result.stderr[-2000:]
    assert "Traceback" not in result.stderr


def _defaults(cls, leave_out=()) -> dict:
    return {
        name: list(p.default) if isinstance(p.default, tuple) else p.default
        for name, p in inspect.signature(cls).parameters.items()
        if p.default is not inspect.Parameter.empty and name not in leave_out
    }


def test_presets_that_list_every_key_restate_the_constructor_defaults():
    # These presets list every key so that each can be overridden on the command line; the
    # constructors' signatures stay the one source of the values.
    with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
        cfg = compose("config", overrides=["model=tacotron2", "loss=default", "data=ljspeech"])
    model = OmegaConf.to_container(cfg.model)
    model.pop("_target_")
    assert model == _defaults(GSTTacotron, leave_out=MODEL_FROM_DATA)
    loss = OmegaConf.to_container(cfg.loss)
    loss.pop("_target_")
    assert loss == _defaults(TacotronLoss, leave_out=("reduction_factor",))
    assert OmegaConf.to_container(cfg.data.audio) == asdict(AudioConfig())


def test_attention_kind_is_chosen_from_the_command_line():
    from gst_tts.model.attention import DotAttention, LocationSensitiveAttention

    with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
        default = compose("config", overrides=["model=tiny"])
        dot = compose("config", overrides=["model=tiny", "model.attention=dot", "model.attention_location=true"])
    assert type(build_model(default.model, **SIZES)[0].decoder.attention) is LocationSensitiveAttention
    model, config = build_model(dot.model, **SIZES)
    assert type(model.decoder.attention) is DotAttention and model.decoder.attention.location is not None
    assert config["attention"] == "dot" and config["attention_location"] is True
    with pytest.raises(GstTtsError) as info:
        build_model(_model_cfg(attention="luong"), **SIZES)
    assert "unknown attention 'luong'" in str(info.value) and "scaled_dot" in str(info.value)
    assert "\n" not in str(info.value)


def test_gst_tts_train_with_only_the_corpus_builds_the_tacotron2_sizes(tmp_path):
    # The LJSpeech recipe's one-liner (gst-tts-train data.root=...) is for a GPU: the paper's sizes,
    # not the CPU demo's. Built on the meta device: the sizes are the point, not the weights.
    import torch
    import yaml

    with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
        cfg = compose("config", overrides=[f"data.root={tmp_path / 'LJSpeech-1.1'}"])
    preset = yaml.safe_load((REPO / "conf" / "model" / "tacotron2.yaml").read_text())
    preset.pop("_target_")
    with torch.device("meta"):
        model, config = build_model(cfg.model, **SIZES)
        expected = GSTTacotron(**preset, **SIZES)
    assert {k: config[k] for k in preset} == preset
    shapes = {name: tuple(p.shape) for name, p in model.state_dict().items()}
    assert shapes == {name: tuple(p.shape) for name, p in expected.state_dict().items()}
    assert model.reduction_factor == 1 and model.encoder.embedding.embedding_dim == 512
    assert 28e6 < sum(p.numel() for p in model.parameters()) < 30e6
