"""The vocoder training loop: ``VocoderTrainer`` takes a composed ``conf/vocoder_train.yaml`` config
and a run folder (the entry point is :mod:`gst_tts.training.train_vocoder`).

``generator_kind`` picks what is trained. ``hifigan``, HiFi-GAN training (Kong et al. 2020): each
step the generator turns a batch of mel segments into waveforms; the discriminators (multi-period
and multi-scale) take one least-squares step on the recordings against those waveforms; then the
generator takes one step on the mel L1, feature matching and adversarial terms, judged by the
updated discriminators. ``spectral``, the spectral vocoder (:mod:`gst_tts.audio.vocoders.spectral`):
no discriminators; each step the magnitude estimator predicts the log STFT magnitude of each
segment's samples from its mel (:func:`~gst_tts.audio.vocoders.spectral.magnitude_loss`, the frames
at a segment's ends left out) and, with ``generator.pitch_head``, the F0 and voicing that
:func:`~gst_tts.audio.pitch.yin_f0` finds in the samples (:func:`~gst_tts.audio.vocoders.spectral.pitch_loss`);
validation vocodes with PGHI phase (after harmonic restoration), as inference does. Its input
normalisation is the training utterances' mel statistics, set once when a run starts (the
feature cache's, also with GTA mels) and carried by its checkpoints.

The segments are random windows of the corpus's utterances, the mels the acoustic model's
features (the feature cache) or its ground-truth-aligned outputs (``data.gta_dir``, from
``gst-tts dump-gta-mels``).

The run folder gets ``checkpoints/`` (``last.pt`` + periodic ``step_*.pt``, full training state;
``generator.pt``, the generator alone, what ``--vocoder PATH`` wants), TensorBoard event files and
Hydra's resolved config. Running again with the same ``hydra.run.dir`` resumes from ``last.pt``.
"""

from __future__ import annotations

from contextlib import nullcontext
import copy
from dataclasses import asdict
import logging
import math
from pathlib import Path
import time
from typing import Any, Callable, Mapping

from omegaconf import DictConfig, OmegaConf
import torch

from gst_tts.audio.features import MelExtractor
from gst_tts.audio.pitch import yin_f0
from gst_tts.audio.vocoders.checkpoint import (
    HIFIGAN_KIND,
    SPECTRAL_KIND,
    check_vocoder_checkpoint,
    generator_kind,
    is_vocoder_checkpoint,
    save_vocoder_checkpoint,
    vocoder_payload,
)
from gst_tts.audio.vocoders.hifigan import fold_weight_norm
from gst_tts.audio.vocoders.hifigan_io import generator_from_checkpoint, hifigan_vocoder
from gst_tts.audio.vocoders.spectral import (
    SpectralVocoder,
    edge_frames,
    magnitude_loss,
    pitch_loss,
    spectral_vocoder_from_checkpoint,
    stft_log_magnitude,
)
from gst_tts.data.cache import FeatureCache, default_cache_dir
from gst_tts.data.corpus import read_corpus
from gst_tts.data.gta import GtaMels
from gst_tts.data.segments import SegmentDataset, SegmentSampler, collate_segments
from gst_tts.compute import resolve_device
from gst_tts.errors import GstTtsError, VocoderError
from gst_tts.model import count_parameters
from gst_tts.progress import progress_bar
from gst_tts.compute import configure_threads
from gst_tts.training.data_builders import ResumePoint, build_split, find_resume_checkpoint
from gst_tts.training.vocoder_builders import (
    GENERATOR_CLASSES,
    build_discriminator,
    build_generator,
    build_vocoder_loss,
    build_vocoder_optimizers,
    check_vocoder_config,
    vocoder_kind,
)
from gst_tts.checkpoints.acoustic import rng_state
from gst_tts.training.distributed import DistributedContext
from gst_tts.training.logger import NullLogger, VocoderLogger
from gst_tts.training.loop import (
    TrainingLoop,
    TrainState,
    amp_dtype,
    remove_killed_writes,
    save_rotating,
    seed_everything,
    to_device,
)
from gst_tts.checkpoints.weights import load_weights_only

log = logging.getLogger("gst_tts.training.vocoder_trainer")

#: The generator-only export beside the training checkpoints.
GENERATOR_EXPORT = "generator.pt"
#: The progress bar's figures by generator kind: label → training term.
PROGRESS_TERMS = {
    HIFIGAN_KIND: {"mel_l1": "generator/mel_l1", "d": "discriminator/total"},
    SPECTRAL_KIND: {"log_l1": "generator/log_magnitude_l1", "sc": "generator/spectral_convergence"},
}


def load_vocoder_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """A gst-tts vocoder checkpoint, read without running code and checked (format, version, parts, kind)."""
    return check_vocoder_checkpoint(
        load_weights_only(path, error=VocoderError, what="gst-tts vocoder checkpoint", map_location=map_location), path
    )


class VocoderTrainer(TrainingLoop):
    """Builds everything from a resolved config and runs the loop of its ``generator_kind``. One
    process, one device (under ``torchrun``, one of several: see :mod:`gst_tts.training.distributed`)."""

    log = log

    def __init__(self, cfg: DictConfig, run_dir: str | Path) -> None:
        self.audio_config = check_vocoder_config(cfg)
        self.kind = vocoder_kind(cfg)
        self.cfg, tr, data, seed = cfg, cfg.trainer, cfg.data, int(cfg.seed)
        self.run_dir = Path(run_dir)
        self.ckpt_dir = self.run_dir / "checkpoints"
        self.dist = DistributedContext.from_environment(str(tr.device))
        self.device = self.dist.device or resolve_device(str(tr.device))
        self.threads = configure_threads(tr.get("threads"))
        seed_everything(seed)

        if not data.root:
            raise GstTtsError("data.root is not set: give data.root=/path/to/corpus (LJSpeech format)")
        utterances = read_corpus(data.root)
        self.cache = FeatureCache(
            Path(data.cache_dir) if data.cache_dir else default_cache_dir(data.root), self.audio_config
        )
        with self.dist.rank_zero_first():  # one process computes features, the others then read them
            n_frames = self.cache.prepare(utterances, progress=bool(tr.progress) and self.dist.is_main)
        self.gta = GtaMels(data.gta_dir, self.audio_config) if data.gta_dir else None
        if self.gta is not None:
            self.gta.check_covers(u.id for u in utterances)
        self.dist.check_shared_folder(self.run_dir)
        if self.dist.is_main:
            remove_killed_writes(self.ckpt_dir, log)
        resume = find_resume_checkpoint(self.ckpt_dir, self.device, load=load_vocoder_checkpoint) if tr.resume else None
        split = build_split(cfg, utterances, n_frames, resume)
        by_id = {u.id: u for u in utterances}

        def dataset(ids: list[str]) -> SegmentDataset:
            return SegmentDataset(
                [by_id[i] for i in ids],
                self.cache,
                segment_frames=int(data.segment_frames),
                mels=self.gta,
                mels_share=float(data.get("gta_share", 1.0)),
            )

        self.train_set, self.val_set = dataset(split.train_ids), dataset(split.val_ids)
        if not len(self.train_set):
            raise GstTtsError(
                f"{data.root}: no training utterances left after holding out data.val_size={data.val_size}"
            )

        self.generator, self.generator_config = build_generator(
            cfg.generator, audio_config=self.audio_config, kind=self.kind
        )
        # The spectral vocoder has no discriminators.
        self.discriminator, self.discriminator_config = (
            build_discriminator(cfg.discriminator) if self.kind == HIFIGAN_KIND else (None, None)
        )
        self.networks = {
            name: net
            for name, net in (("generator", self.generator), ("discriminator", self.discriminator))
            if net is not None
        }
        for net in self.networks.values():
            net.to(self.device)
        torch.manual_seed(seed + self.dist.rank)
        self.train_generator = self.dist.wrap(self.generator)
        self.train_discriminator = self.dist.wrap(self.discriminator) if self.discriminator is not None else None
        # HiFi-GAN's loss; both kinds' validation mel L1.
        self.criterion = build_vocoder_loss(cfg.loss, audio_config=self.audio_config).to(self.device)
        self.features = MelExtractor(self.audio_config).to(self.device)  # mels of generated audio, for the images
        self.optimizers, self.schedulers = build_vocoder_optimizers(self.networks, tr)
        self.amp_dtype = amp_dtype(str(tr.amp), self.device)
        self.scalers = {
            name: torch.amp.GradScaler("cuda", enabled=self.amp_dtype == torch.float16) for name in self.networks
        }
        self.grad_clip = float(tr.grad_clip) if tr.grad_clip is not None else math.inf
        self.sampler = SegmentSampler(
            len(self.train_set), int(data.batch_size), seed=seed, num_replicas=self.dist.world_size, rank=self.dist.rank
        )
        self.loader = torch.utils.data.DataLoader(
            self.train_set,
            batch_sampler=self.sampler,
            collate_fn=collate_segments,
            num_workers=int(data.num_workers),
            pin_memory=self.device.type == "cuda",
            # Its own generator, so that worker seeds do not draw from the global stream (resuming would shift it).
            generator=torch.Generator().manual_seed(seed),
        )
        self.state = TrainState()
        if resume is not None:
            self._resume(resume)
        elif tr.init_from:
            self._init_from(Path(str(tr.init_from)))
        elif self.kind == SPECTRAL_KIND:  # a fresh estimator: its input normalisation, once
            with self.dist.rank_zero_first():
                stats = self.cache.stats(split.train_ids)
            self.generator.set_mel_stats(stats.mean, stats.std)
        self.logger = (
            VocoderLogger(self.run_dir / "tensorboard", self.audio_config.sample_rate)
            if self.dist.is_main
            else NullLogger()
        )
        self._logged_targets = False

    # ----------------------------------------------------------------------------------------
    def fit(self) -> TrainState:
        tr = self.cfg.trainer
        max_steps = int(tr.max_steps)
        deadline = time.monotonic() + 60 * float(tr.max_minutes) if tr.max_minutes else math.inf
        what = (
            f"a {count_parameters(self.generator):,}-parameter spectral magnitude estimator"
            if self.kind == SPECTRAL_KIND
            else f"a {count_parameters(self.generator):,}-parameter generator against "
            f"{count_parameters(self.discriminator):,}-parameter discriminators"
        )
        if self.state.step >= max_steps:
            log.info(
                "%s is at step %d, trainer.max_steps is %d: nothing to train (raise trainer.max_steps to train on)",
                self.run_dir,
                self.state.step,
                max_steps,
            )
            self.logger.close()
            return self.state
        log.info(
            "training %s on %s (%d CPU thread%s): %d train / %d validation utterances%s, run dir %s",
            what,
            self.device,
            self.threads,
            "s" if self.threads != 1 else "",
            len(self.train_set),
            len(self.val_set),
            f", GTA mels from {self.gta.dir}" if self.gta else "",
            self.run_dir,
        )
        bar = progress_bar(
            total=max_steps,
            initial=self.state.step,
            desc="vocoder",
            unit="step",
            enabled=bool(tr.progress) and self.dist.is_main,
        )
        validated_at = None

        def update(batch: dict) -> bool:
            """One training step with its logging, validation and checkpoint; True when training should stop."""
            nonlocal validated_at
            terms = self._train_step(batch)
            if terms is None:
                return False
            bar.update(1)
            step = self.state.step
            norms = {name: terms.pop(f"{name}/grad_norm") for name in self.networks}
            if step % tr.log_every == 0:
                self.logger.log_training(step, terms, self.schedulers["generator"].get_last_lr()[0], norms)
            if self.dist.is_main and (step % tr.val_every == 0 or step == max_steps):
                self.validate()
                validated_at = step
            bar.set_postfix({label: f"{terms[term]:.3f}" for label, term in PROGRESS_TERMS[self.kind].items()})
            if step % tr.checkpoint_every == 0:
                self.save(periodic=True, every_rank=True)
            return step >= max_steps or self.dist.any(time.monotonic() >= deadline)

        try:
            while self.state.step < max_steps and not self.dist.any(time.monotonic() >= deadline):
                self.sampler.set_epoch(self.state.epoch, start=self.state.batch_in_epoch)
                for batch in self.loader:
                    self.state.batch_in_epoch += 1
                    if update(batch):
                        break
                else:
                    self.state.epoch += 1
                    self.state.batch_in_epoch = 0
        except KeyboardInterrupt:
            self._interrupted(bar)
            raise
        return self._finish(bar, validated_at)

    def _autocast(self):
        return torch.autocast(self.device.type, dtype=self.amp_dtype) if self.amp_dtype is not None else nullcontext()

    def _train_step(self, batch: dict) -> dict[str, float] | None:
        """One training step of the run's kind (:meth:`_gan_step`, :meth:`_magnitude_step`): its
        terms and gradient norms (``<network>/<term>``, ``<network>/grad_norm``), or None when the
        step was skipped (a non-finite loss or, without loss scaling, gradient)."""
        batch = to_device(batch, self.device)
        terms = self._gan_step(batch) if self.kind == HIFIGAN_KIND else self._magnitude_step(batch)
        if terms is None:
            return None
        for scheduler in self.schedulers.values():
            scheduler.step()
        self.state.step += 1
        return terms

    def _gan_step(self, batch: dict) -> dict[str, float] | None:
        """HiFi-GAN: one discriminator update, then one generator update."""
        mel, real = batch["mel"], batch["audio"]
        self.generator.train()
        self.discriminator.train()
        with self._autocast():
            fake = self.train_generator(mel)
        fake = fake.float()

        # Discriminators: the recordings against the generated audio (no gradient into the generator).
        optimizer_d = self.optimizers["discriminator"]
        optimizer_d.zero_grad(set_to_none=True)
        with self._autocast():
            judged = self.train_discriminator(real, fake.detach())
        d_terms = self.criterion.discriminator_terms(judged)
        # Every rank must agree to skip, or the others would wait forever in all-reduce.
        if self.dist.any(not torch.isfinite(d_terms["total"])):
            return self._skip(f"non-finite discriminator loss in batch {batch['ids'][:3]}…")
        d_norm = self._apply(d_terms["total"], "discriminator")
        if d_norm is None:
            return self._bad_gradient(
                "discriminator", f"non-finite discriminator gradient in batch {batch['ids'][:3]}…"
            )

        # Generator, judged by the updated discriminators. They run outside DDP with their weights
        # frozen: this backward pass reaches the generator only.
        optimizer_g = self.optimizers["generator"]
        optimizer_g.zero_grad(set_to_none=True)
        self.discriminator.requires_grad_(False)
        try:
            with self._autocast():
                judged = self.discriminator(real, fake)
            g_terms = self.criterion.generator_terms(real, fake, judged)
        finally:
            self.discriminator.requires_grad_(True)
        if self.dist.any(not torch.isfinite(g_terms["total"])):
            optimizer_g.zero_grad(set_to_none=True)
            return self._skip(
                f"non-finite generator loss in batch {batch['ids'][:3]}… (the discriminators had stepped)"
            )
        g_norm = self._apply(g_terms["total"], "generator")
        if g_norm is None:
            return self._bad_gradient(
                "generator",
                f"non-finite generator gradient in batch {batch['ids'][:3]}… (the discriminators had stepped)",
            )
        terms = {f"generator/{k}": float(v.detach()) for k, v in g_terms.items()}
        terms.update({f"discriminator/{k}": float(v.detach()) for k, v in d_terms.items()})
        terms.update({"generator/grad_norm": g_norm, "discriminator/grad_norm": d_norm})
        return terms

    def _magnitude_step(self, batch: dict) -> dict[str, float] | None:
        """The spectral vocoder: one estimator update on :func:`magnitude_loss` of its log magnitude
        of each mel segment against that of the segment's samples (frame ``t`` of both is centred
        on sample ``t · hop``), without the frames at each end whose window reaches into the STFT's padding."""
        mel, real = batch["mel"], batch["audio"]
        edge, frames = edge_frames(self.audio_config), mel.shape[2]
        with_pitch = self.generator.pitch_head
        with torch.no_grad():
            target = stft_log_magnitude(real.squeeze(1).float(), self.audio_config)[:, edge : frames - edge]
            if with_pitch:  # the recording's F0 and voicing, framed like the target
                f0, voiced = (t[:, edge : frames - edge] for t in yin_f0(real.squeeze(1).float(), self.audio_config))
        self.generator.train()
        optimizer = self.optimizers["generator"]
        optimizer.zero_grad(set_to_none=True)
        with self._autocast():
            predicted = self.train_generator(mel.transpose(1, 2), with_pitch=with_pitch)
        if with_pitch:
            predicted, pitch = predicted
        terms = magnitude_loss(predicted.float()[:, edge : frames - edge], target)
        if with_pitch:
            pitch_terms = pitch_loss(pitch.float()[:, edge : frames - edge], f0, voiced)
            terms = {
                **terms,
                "log_f0_l1": pitch_terms["log_f0_l1"],
                "voicing_bce": pitch_terms["voicing_bce"],
                "total": terms["total"] + pitch_terms["total"],
            }
        if self.dist.any(not torch.isfinite(terms["total"])):
            return self._skip(f"non-finite magnitude loss in batch {batch['ids'][:3]}…")
        norm = self._apply(terms["total"], "generator")
        if norm is None:
            return self._bad_gradient("generator", f"non-finite estimator gradient in batch {batch['ids'][:3]}…")
        return {**{f"generator/{k}": float(v.detach()) for k, v in terms.items()}, "generator/grad_norm": norm}

    def _apply(self, loss: torch.Tensor, name: str) -> float | None:
        """Backward, clip (``trainer.grad_clip``) and step one network; its gradient norm, or None
        when the gradient is non-finite and nothing was applied (with fp16 loss scaling, the
        scale is lowered). Gradients are all-reduced, so every rank sees the same norm."""
        optimizer, scaler, module = self.optimizers[name], self.scalers[name], self.networks[name]
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        norm = torch.nn.utils.clip_grad_norm_(module.parameters(), self.grad_clip)
        if not torch.isfinite(norm):
            optimizer.zero_grad(set_to_none=True)
            scaler.update()  # lowers the loss scale (nothing to do without scaling)
            return None
        scaler.step(optimizer)
        scaler.update()
        return float(norm)

    def _bad_gradient(self, name: str, reason: str) -> None:
        """A step ended by a non-finite gradient: under fp16 loss scaling an overflow, routine while
        the GradScaler finds its scale (debug log); otherwise a bad batch (skipped, counted)."""
        if self.scalers[name].is_enabled():
            log.debug(
                "step %d: fp16 gradient overflow of the %s at loss scale %g lowered it; update skipped",
                self.state.step,
                name,
                self.scalers[name].get_scale(),
            )
            return None
        return self._skip(reason)

    def validate(self) -> dict[str, float]:
        """Every validation utterance vocoded whole, as inference would (the spectral vocoder with
        its phase reconstruction): the mean loss-mel L1 against the recording; audio and mel images
        of the first ``trainer.val_audio`` to TensorBoard (and their recordings, once per process).
        Random streams are left as they were (exact resume)."""
        devices = [self.device] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices), torch.no_grad():
            summary = self._validate()
        log.info("step %d: %s", self.state.step, "  ".join(f"{k} {v:.3f}" for k, v in summary.items()))
        return summary

    def _validate(self) -> dict[str, float]:
        self.generator.eval()
        vocode = self._validation_vocoder()
        total, samples = 0.0, []
        for i in range(len(self.val_set)):
            item = self.val_set.utterance(i)
            audio = vocode(item["mel"])[None, None]
            # The spectral vocoder makes a hop fewer samples than the recording has (frames - 1 hops).
            real = item["audio"][: audio.shape[-1]][None, None].to(self.device)
            total += float(self.criterion.mel_l1(real, audio))
            if i < int(self.cfg.trainer.val_audio):
                samples.append(
                    {
                        "id": item["id"],
                        "audio": audio.reshape(-1).cpu().numpy(),
                        "mel": self.features(audio.reshape(-1)).cpu().numpy(),
                        "input_mel": item["mel"].numpy(),
                        "target_audio": None if self._logged_targets else item["audio"].numpy(),
                    }
                )
        self._logged_targets = True
        self.generator.train()
        summary = {"mel_l1": total / max(1, len(self.val_set))}
        self.logger.log_validation(self.state.step, summary, samples)
        self.logger.flush()
        return summary

    def _validation_vocoder(self) -> Callable[[torch.Tensor], torch.Tensor]:
        """``(frames, n_mels)`` log-mel → ``(samples,)`` float32 waveform on the device, from the
        network as it is now."""
        if self.kind == SPECTRAL_KIND:
            # A copy: the vocoder freezes the network it is given.
            vocoder = SpectralVocoder(copy.deepcopy(self.generator), audio_config=self.audio_config, device=self.device)
            return lambda mel: torch.from_numpy(vocoder(mel)).to(self.device)

        def generate(mel: torch.Tensor) -> torch.Tensor:
            with self._autocast():
                return self.generator(mel.T[None].to(self.device)).float().reshape(-1)

        return generate

    # ----------------------------------------------------------------------------------------
    def checkpoint(self, rng: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """This run's full checkpoint (layout: :mod:`gst_tts.audio.vocoders.checkpoint`); ``rng``: its
        random states (default: this process's, :func:`rng_state`)."""
        return vocoder_payload(
            generator_state=self.generator.state_dict(),
            generator_config=self.generator_config,
            audio_config=self.audio_config,
            step=self.state.step,
            config=OmegaConf.to_container(self.cfg, resolve=True),
            discriminator_state=self.discriminator.state_dict() if self.discriminator is not None else None,
            discriminator_config=self.discriminator_config,
            val_ids=[u.id for u in self.val_set.utterances],
            train_ids=[u.id for u in self.train_set.utterances],
            optimizer=_states(self.optimizers),
            scheduler=_states(self.schedulers),
            scaler=_states(self.scalers),
            train_state=asdict(self.state),
            rng=rng_state() if rng is None else rng,
            generator_kind=self.kind,
        )

    def save(self, periodic: bool, *, every_rank: bool) -> Path:
        """``last.pt`` (and a periodic checkpoint when ``periodic``), then ``generator.pt``, the
        generator alone with its weight norm (HiFi-GAN's) folded (rank 0 only); ``every_rank``: every
        rank is saving at this step, and the checkpoint gets every rank's random states."""
        path = self.ckpt_dir / "last.pt"
        rng = self._checkpoint_rng(every_rank=every_rank)
        if not self.dist.is_main:
            return path
        save_rotating(
            self.ckpt_dir,
            self.checkpoint(rng),
            step=self.state.step,
            periodic=periodic,
            keep=int(self.cfg.trainer.keep_checkpoints),
            save=save_vocoder_checkpoint,
        )
        save_vocoder_checkpoint(
            self.ckpt_dir / GENERATOR_EXPORT,
            vocoder_payload(
                generator_state=fold_weight_norm(self.generator.state_dict()),
                generator_config=self.generator_config,
                audio_config=self.audio_config,
                step=self.state.step,
                generator_kind=self.kind,
            ),
        )
        return path

    def _resume(self, resume: ResumePoint) -> None:
        """Continue a run from its checkpoint: weights, optimisers, schedules, loss scales, the
        loop's position and every random stream (on CPU in one process, bit-identical to an
        uninterrupted run; see :meth:`gst_tts.training.trainer.Trainer._resume` for CUDA and DDP)."""
        path, ckpt = resume
        if generator_kind(ckpt) != self.kind:
            raise GstTtsError(
                f"{path}: a {generator_kind(ckpt)} vocoder's checkpoint, but this run's generator_kind is "
                f"{self.kind}; use another hydra.run.dir"
            )
        for name, ours in (("generator", self.generator_config), ("discriminator", self.discriminator_config)):
            if name in self.networks and ckpt.get(f"{name}_config") != ours:
                raise GstTtsError(f"{path}: the {name} config differs from this run's; use another hydra.run.dir")
        others = [name for name in self.networks if name != "generator"]
        self._check_resumable(path, ckpt, (*others, "optimizer", "scheduler", "train_state", "rng"))
        for name, net in self.networks.items():
            net.load_state_dict(ckpt[name])
        _load_states(self.optimizers, ckpt["optimizer"])
        _load_states(self.schedulers, ckpt["scheduler"])
        if "scaler" in ckpt:
            _load_states(self.scalers, ckpt["scaler"])
        self._restore_position(path, ckpt)

    def _init_from(self, path: Path) -> None:
        """Starts from another vocoder's weights (fine-tuning, e.g. on GTA mels): the generator of a
        gst-tts vocoder checkpoint of this run's kind (a spectral one brings its mel statistics) or
        of a published HiFi-GAN file (its ``config.json`` beside it), and the discriminators too when
        the file holds them with this run's discriminator config. Optimisers, schedules and the step
        start fresh."""
        stored = load_weights_only(path, error=VocoderError, what="vocoder file")
        if is_vocoder_checkpoint(stored):
            stored = check_vocoder_checkpoint(stored, path)
            source = (
                generator_from_checkpoint(stored, path, self.audio_config)
                if self.kind == HIFIGAN_KIND
                else spectral_vocoder_from_checkpoint(
                    stored, path, audio_config=self.audio_config, device="cpu"
                ).estimator
            )
        elif self.kind == HIFIGAN_KIND:
            stored, source = {}, hifigan_vocoder(stored, path, audio_config=self.audio_config, device="cpu").generator
        else:
            raise GstTtsError(
                f"{path}: not a gst-tts vocoder checkpoint; the spectral vocoder's trainer.init_from needs one"
            )
        # Folded weights into a plain generator of this run's config (then, for HiFi-GAN, weight norm again).
        plain = GENERATOR_CLASSES[self.kind](**self.generator_config)
        # A spectral estimator without a pitch head may start one with a pitch head (which starts
        # untrained): `make demo` fine-tunes its recordings' vocoder into the GTA one that way.
        fresh_pitch_head = self.kind == SPECTRAL_KIND and self.generator.pitch_head and not source.pitch_head
        try:
            missing, unexpected = plain.load_state_dict(source.state_dict(), strict=False)
            if unexpected or any(not (fresh_pitch_head and key.startswith("pitch_output.")) for key in missing):
                raise RuntimeError
        except RuntimeError:
            raise GstTtsError(f"{path}: trainer.init_from needs a generator of this run's generator config") from None
        self.generator.load_state_dict((plain.apply_weight_norm() if self.kind == HIFIGAN_KIND else plain).state_dict())
        if self.discriminator is None:
            what = "magnitude estimator (its pitch head starts afresh)" if fresh_pitch_head else "magnitude estimator"
        elif stored.get("discriminator_config") == self.discriminator_config and "discriminator" in stored:
            self.discriminator.load_state_dict(stored["discriminator"])
            what = "generator and discriminators"
        else:
            what = "generator (the discriminators start afresh: the file holds none of this run's config)"
        log.info("initialised the %s from %s; training starts at step 0", what, path)


def _states(parts: dict[str, Any]) -> dict[str, Any]:
    return {name: part.state_dict() for name, part in parts.items()}


def _load_states(parts: dict[str, Any], states: dict[str, Any]) -> None:
    for name, part in parts.items():
        part.load_state_dict(states[name])
