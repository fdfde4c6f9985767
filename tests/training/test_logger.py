import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from gst_tts.analysis.alignment import alignment_health
from gst_tts.training.logger import TrainingLogger, VocoderLogger


def test_logger_writes_scalars_images_and_audio(tmp_path):
    logger = TrainingLogger(tmp_path, sample_rate=22050, hop_seconds=256 / 22050, reduction_factor=2)
    logger.log_training(1, {"mel": 1.0, "stop": 0.5, "total": 1.5}, learning_rate=1e-3, grad_norm=2.0)
    logger.log_skipped_batch(2, "non-finite loss", 1)
    alignment = np.eye(6)[np.repeat(np.arange(6), 2)]
    sample = {
        "alignment": alignment,
        "mel": np.random.randn(24, 80),
        "target_mel": np.random.randn(20, 80),
        "stop_probs": np.linspace(0, 1, 12),
        "labels": list("hello~"),
        "style_weights": np.full((2, 5), 0.2),
        "audio": np.zeros(2205, np.float32),
        "health": alignment_health(alignment),
    }
    logger.log_validation(3, {"mel": 0.9}, {"focus": 1.0, "coverage": 1.0}, sample)
    logger.close()
    events = EventAccumulator(str(tmp_path), size_guidance={"images": 0, "audio": 0})
    events.Reload()
    tags = events.Tags()
    for name in (
        "train/mel",
        "train/stop",
        "train/learning_rate",
        "train/grad_norm",
        "train/skipped_batches",
        "val/mel",
        "val_alignment/focus",
        "val_alignment/coverage",
    ):
        assert name in tags["scalars"], name
    assert {"val/alignment", "val/mel", "val/style_weights"} <= set(tags["images"])
    assert "val/griffin_lim" in tags["audio"]
    assert events.Scalars("train/grad_norm")[0].value == 2.0


def test_vocoder_logger_writes_both_networks_and_audio_with_mel_images(tmp_path):
    logger = VocoderLogger(tmp_path, sample_rate=22050)
    logger.log_training(
        1,
        {"generator/mel_l1": 0.8, "discriminator/total": 1.9},
        learning_rate=2e-4,
        grad_norms={"generator": 3.0, "discriminator": 1.5},
    )
    sample = {
        "id": "LJ001-0001",
        "audio": np.zeros(2560, np.float32),
        "mel": np.random.randn(11, 80),
        "input_mel": np.random.randn(10, 80),
        "target_audio": np.zeros(2560, np.float32),
    }
    logger.log_validation(2, {"mel_l1": 0.7}, [sample, dict(sample, target_audio=None)])
    logger.close()
    events = EventAccumulator(str(tmp_path), size_guidance={"images": 0, "audio": 0})
    events.Reload()
    tags = events.Tags()
    assert {
        "train/generator/mel_l1",
        "train/discriminator/total",
        "train/grad_norm/generator",
        "train/grad_norm/discriminator",
        "train/learning_rate",
        "val/mel_l1",
    } <= set(tags["scalars"])
    assert set(tags["audio"]) == {"val/audio_0", "val/audio_1", "val/target_audio_0"}
    assert set(tags["images"]) == {"val/mel_0", "val/mel_1"}
