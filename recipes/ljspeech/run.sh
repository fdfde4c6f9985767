#!/usr/bin/env bash
# LJSpeech 1.1 recipe: prepare features, train (1 GPU, N GPUs, or CPU), synthesize.
#
#   recipes/ljspeech/run.sh /data/LJSpeech-1.1 runs/lj            # one GPU (or CPU when none)
#   NGPU=4 recipes/ljspeech/run.sh /data/LJSpeech-1.1 runs/lj     # 4 GPUs with torchrun
#   recipes/ljspeech/run.sh DATA RUN trainer.max_steps=10 ...      # extra Hydra overrides pass through
#
# Stages can be chosen with STAGES="prepare train synthesize" (default: all three).
set -euo pipefail
DATA=${1:?usage: run.sh LJSPEECH_DIR RUN_DIR [hydra overrides...]}
RUN=${2:?usage: run.sh LJSPEECH_DIR RUN_DIR [hydra overrides...]}
shift 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/.venv/bin}
NGPU=${NGPU:-1}
MODEL=${MODEL:-tacotron2}
STAGES=${STAGES:-"prepare train synthesize"}
CACHE=${CACHE:-$RUN/feature_cache}

if [[ ! -f "$DATA/metadata.csv" ]]; then
  echo "run.sh: $DATA/metadata.csv not found: download LJSpeech-1.1 and unpack it there (see README.md)" >&2
  exit 2
fi

if [[ " $STAGES " == *" prepare "* ]]; then
  "$BIN/gst-tts" prepare --corpus "$DATA" --cache-dir "$CACHE"
fi

if [[ " $STAGES " == *" train "* ]]; then
  args=(data.root="$DATA" data.cache_dir="$CACHE" model="$MODEL" hydra.run.dir="$RUN" "$@")
  if (( NGPU > 1 )); then
    "$BIN/torchrun" --standalone --nproc_per_node="$NGPU" -m gst_tts.training.train "${args[@]}"
  else
    "$BIN/gst-tts-train" "${args[@]}"
  fi
fi

if [[ " $STAGES " == *" synthesize "* ]]; then
  "$BIN/gst-tts" check-alignment --checkpoint "$RUN/checkpoints/last.pt" --corpus "$DATA" --limit "${EVAL_LIMIT:-8}" --out "$RUN/evaluation"
  "$BIN/gst-tts" synthesize --checkpoint "$RUN/checkpoints/last.pt" \
    --text "Printing, in the only sense with which we are at present concerned, differs from most arts." \
    --reference "$(ls "$DATA"/wavs/*.wav | head -n 1)" --out "$RUN/samples/example.wav" --plot
fi
echo "run.sh: done; outputs in $RUN (checkpoints/, tensorboard/, evaluation/, samples/)"
