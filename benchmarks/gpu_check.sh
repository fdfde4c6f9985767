#!/usr/bin/env bash
# The CUDA paths in one short run on a GPU machine: bench_gpu_train.py (ours, its decoder as CUDA
# graphs, against torchaudio's Tacotron 2), acoustic training under bf16 and fp16 autocast
# (model=tacotron2 and model=tiny) with its steps a minute, resume, torchrun/NCCL, synthesis on
# CUDA, and the tests that have CUDA cases; on request also HiFi-GAN training under bf16 and fp16
# and bench_speed.py --device cuda. Each step has its own time limit, so one that hangs does not
# hide the others; a table of what passed, with each step's figures, ends the output. The default
# steps are sized for about 8 minutes of device time (their limits add up to 19; this list has not
# yet been timed on a GPU).
#
#   benchmarks/gpu_check.sh CORPUS OUT     # CORPUS: LJSpeech format (e.g. ljspeech-mini)
#   SKIP= benchmarks/gpu_check.sh CORPUS OUT   # every step, the vocoders and bench_speed too
#
# Needs the project's dependencies importable by python3 (PYTHON=... to choose another); runs
# from a checkout without installing it. SKIP="name ..." leaves steps out (names as in the summary;
# default: vocoder_v1_bf16 vocoder_v2_fp16 bench_speed_cuda), to fit a device budget; synthesis
# then uses whichever acoustic and vocoder runs exist.
set -uo pipefail
CORPUS=${1:?usage: gpu_check.sh CORPUS OUT}
OUT=${2:?usage: gpu_check.sh CORPUS OUT}
PY=${PYTHON:-python3}
SKIP=${SKIP-vocoder_v1_bf16 vocoder_v2_fp16 bench_speed_cuda}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
mkdir -p "$OUT"
RUNS=$(mktemp -d)
export PYTHONUNBUFFERED=1 PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
# Hydra finds the configs as the package gst_tts.conf; an install maps it onto conf/, a bare
# checkout needs a link, removed again on exit so the checkout stays as it was.
LINK=
if ! $PY -c 'import gst_tts.conf' 2>/dev/null; then
  ln -s ../conf gst_tts/conf && LINK=gst_tts/conf
fi
trap '[[ -n "$LINK" ]] && rm -f "$LINK"; rm -rf "$RUNS"' EXIT
declare -a SUMMARY

# The figures of a step's log that the table shows: throughput lines, steps a minute, resume,
# skipped batches, test counts; each once, with a count where it repeats.
figures() {
  grep -o -E 'gpu_train_(frames_per_s|ratio_vs_torchaudio)=[^ ]+|[0-9.]+ steps a minute|resumed from .* at step [0-9]+|skipped a batch|[0-9]+ (passed|failed|skipped|errors?)|^rtf[a-z_]*=[^ ]+' "$1" \
    | sed -E 's/resumed from .* at step/resumed at step/' | LC_ALL=C sort | uniq -c \
    | awk '{n = $1; $1 = ""; sub(/^ /, ""); printf "%s%s%s", sep, $0, (n > 1 ? " (x" n ")" : ""); sep = "; "}'
}

# Every step's whole output goes to one file, $OUT/steps.log (the device tool brings back few files).
step() {  # step NAME LIMIT_S COMMAND...: runs it, appends its output to $OUT/steps.log, records rc and seconds
  local name=$1 limit=$2; shift 2
  if [[ " $SKIP " == *" $name "* ]]; then SUMMARY+=("$(printf '%-22s skipped' "$name")"); return; fi
  local t0=$SECONDS
  echo "== $name: $*" | tee -a "$OUT/steps.log"
  timeout "$limit" "$@" >"$RUNS/$name.log" 2>&1
  local rc=$?
  cat "$RUNS/$name.log" >>"$OUT/steps.log"
  tail -n 4 "$RUNS/$name.log"
  local found; found=$(figures "$RUNS/$name.log")
  SUMMARY+=("$(printf '%-22s rc %-3s %4ss%s' "$name" "$rc" "$((SECONDS - t0))" "${found:+  $found}")")
}

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
$PY -c 'import torch, torchaudio; print("torch", torch.__version__, "torchaudio", torchaudio.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'

TRAIN=($PY -m gst_tts.training.train data.root="$CORPUS" data.cache_dir="$RUNS/cache" data.val_size=8 trainer.progress=false
       trainer.val_every=100 trainer.checkpoint_every=100)
step bench_gpu_train 300 $PY benchmarks/bench_gpu_train.py --corpus "$CORPUS" --repeats 3 --warmup 1
step prepare 120 $PY -m gst_tts.cli prepare --corpus "$CORPUS" --cache-dir "$RUNS/cache"
step train_t2_bf16 150 "${TRAIN[@]}" model=tacotron2 data.batch_size=32 trainer.amp=bf16 trainer.max_minutes=1 hydra.run.dir="$RUNS/t2"
# Budgets in minutes, not steps: the decoder's step loop is launch-bound on a GPU (2026-11-27, H100:
# model=tiny did under 100 steps of batch 16 in 75 s), so a step count says nothing about the time.
step train_tiny_fp16 90 "${TRAIN[@]}" model=tiny trainer.amp=fp16 trainer.max_minutes=0.3 hydra.run.dir="$RUNS/tiny"
step resume_tiny_fp16 90 "${TRAIN[@]}" model=tiny trainer.amp=fp16 trainer.max_minutes=0.15 hydra.run.dir="$RUNS/tiny"
step torchrun_nccl 90 $PY -m torch.distributed.run --standalone --nproc_per_node=1 -m gst_tts.training.train \
  "${TRAIN[@]:3}" model=tiny trainer.amp=none trainer.max_minutes=0.3 hydra.run.dir="$RUNS/ddp"
VOC=($PY -m gst_tts.training.train_vocoder data.root="$CORPUS" data.cache_dir="$RUNS/cache" data.val_size=4 trainer.progress=false)
step vocoder_v1_bf16 120 "${VOC[@]}" trainer.amp=bf16 trainer.max_minutes=0.75 hydra.run.dir="$RUNS/voc"
step vocoder_v2_fp16 90 "${VOC[@]}" vocoder=hifigan_v2 trainer.amp=fp16 trainer.max_minutes=0.4 hydra.run.dir="$RUNS/voc2"
step pytest_cuda 150 $PY -m pytest -q -p no:cacheprovider tests/model tests/test_compute.py tests/inference/test_synthesizer.py tests/cli/test_cli_synthesize.py
REF=$(ls "$CORPUS"/wavs/*.wav | head -n 1)
ACOUSTIC=$(ls "$RUNS"/t2/checkpoints/last.pt "$RUNS"/tiny/checkpoints/last.pt 2>/dev/null | head -n 1)
VOCODER=$(ls "$RUNS"/voc/checkpoints/generator.pt "$RUNS"/voc2/checkpoints/generator.pt 2>/dev/null | head -n 1)
step synthesize_cuda 90 $PY -m gst_tts.cli synthesize --device cuda --checkpoint "${ACOUSTIC:-none}" \
  ${VOCODER:+--vocoder "$VOCODER"} --reference "$REF" --max-seconds 2.5 \
  --text "Printing, in the only sense with which we are at present concerned." --out "$OUT/synthesized.wav"
step bench_speed_cuda 120 $PY benchmarks/bench_speed.py --device cuda --repeats 2

# Where each run ended (and whether the second tiny run resumed), for the note.
grep -H -i -E "finished|resum|trained [0-9]+ steps|skipped" "$RUNS"/train_*.log "$RUNS"/resume_*.log "$RUNS"/torchrun_*.log "$RUNS"/vocoder_*.log 2>/dev/null | tail -n 20
echo "== summary"
printf '%s\n' "${SUMMARY[@]}"
