"""Where a GPU training step's time goes: ours and torchaudio's Tacotron 2, one step under torch.profiler.

Usage::

    python benchmarks/profile_gpu_step.py [BATCH] [FRAMES]     # defaults 32 300

Both models as ``bench_speed.py`` builds them (``conf/model/tacotron2.yaml``, random weights), one
random batch of BATCH utterances of up to FRAMES frames; per model and precision (bf16 autocast,
then TF32): the median of 3 timed steps after 2 warm-ups, then one profiled step: GPU busy time
(the sum of kernel times) against the step's wall time, kernel launches (in all and per decoder
step), aten ops, host-device copies and synchronisations, peak memory, and the top ops by CPU time
and kernels by GPU time. On a CPU it runs too (no kernel figures), as a check of the script.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from common import build_models, load_config, ours_train_step, peer_train_step  # noqa: E402
from bench_speed import random_batch  # noqa: E402
from gst_tts.text.symbols import SymbolTable  # noqa: E402
from gst_tts.training.losses import TacotronLoss  # noqa: E402


def main() -> None:
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    batch_size = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    frames = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    config = load_config(ROOT / "conf" / "model" / "tacotron2.yaml")
    n_symbols = len(SymbolTable())
    ours, peer = build_models(config, n_symbols, seed=0)
    batch = random_batch(
        batch_size, (min(frames // 6, 100), max(frames // 5, 12)), (frames - frames // 10, frames), n_symbols, seed=0
    )
    batch = {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}
    loss_fn = TacotronLoss(guided_attention_weight=0.0)
    n_frames = int(batch["mel_lengths"].sum())
    print(
        f"device {device} {torch.cuda.get_device_name(0) if device.type == 'cuda' else ''} torch {torch.__version__}; "
        f"batch {batch_size}, frames max {batch['mel'].shape[1]}, text max {batch['text'].shape[1]}, {n_frames} frames"
    )
    for name, model, step in (("ours", ours, ours_train_step), ("torchaudio", peer, peer_train_step)):
        model.to(device).train()
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)
        for dtype in (torch.bfloat16, None):
            label = f"{name} {'bf16' if dtype else 'tf32'}"
            ctx = (
                (lambda: torch.autocast(device.type, dtype=dtype))
                if dtype
                else (lambda: torch.autocast(device.type, enabled=False))
            )

            def run():
                with ctx():
                    return step(model, opt, loss_fn, batch)

            for _ in range(2):
                run()
            sync()
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                run()
                sync()
                times.append(time.perf_counter() - t0)
            wall = sorted(times)[1]
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])) as prof:
                run()
                sync()
            events = prof.key_averages()
            launches = sum(
                e.count
                for e in events
                if e.key in ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx")
            )
            syncs = sum(
                e.count
                for e in events
                if e.key in ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaMemcpyAsync")
            )
            gpu_us = sum(
                getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0))
                for e in events
                if e.device_type == torch.autograd.DeviceType.CUDA
            )
            aten = sum(e.count for e in events if e.key.startswith("aten::"))
            print(
                f"\n== {label}: step {wall * 1000:.1f} ms median of 3 ({n_frames / wall:,.0f} mel frames/s); "
                f"GPU busy {gpu_us / 1000:.1f} ms ({gpu_us / 1e6 / wall:.0%} of the step); kernel launches "
                f"{launches:,} "
                f"({launches / batch['mel'].shape[1]:.0f} per decoder step); aten ops {aten:,}; memcpy/sync "
                f"calls {syncs}; "
                f"peak memory {(torch.cuda.max_memory_allocated() / 2**30 if cuda else 0):.2f} GiB"
            )
            print(events.table(sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=50))
            sort_key = (
                "self_device_time_total" if hasattr(events[0], "self_device_time_total") else "self_cuda_time_total"
            )
            print(events.table(sort_by=sort_key, row_limit=10, max_name_column_width=50))
            if cuda:
                torch.cuda.reset_peak_memory_stats()
        model.cpu()
        if cuda:
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
