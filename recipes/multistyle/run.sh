#!/usr/bin/env bash
# Multi-style recipe: any LJSpeech-format corpus with styles.csv (id|style), e.g. an
# expressive or multi-speaker set. Trains, then speaks one sentence in the style of one
# reference per style and plots the GST token weights of those references.
#
#   recipes/multistyle/run.sh /data/my-corpus runs/styles [hydra overrides...]
set -euo pipefail
DATA=${1:?usage: run.sh CORPUS_DIR RUN_DIR [hydra overrides...]}
RUN=${2:?usage: run.sh CORPUS_DIR RUN_DIR [hydra overrides...]}
shift 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/.venv/bin}
MODEL=${MODEL:-tacotron2}
NGPU=${NGPU:-1}
TEXT=${TEXT:-"The style of this sentence comes from a reference recording."}

if [[ ! -f "$DATA/styles.csv" ]]; then
  echo "run.sh: $DATA/styles.csv not found (one 'id|style' line per utterance)" >&2
  exit 2
fi

args=(data.root="$DATA" data.cache_dir="$RUN/feature_cache" model="$MODEL" hydra.run.dir="$RUN" "$@")
if (( NGPU > 1 )); then
  "$BIN/torchrun" --standalone --nproc_per_node="$NGPU" -m gst_tts.training.train "${args[@]}"
else
  "$BIN/gst-tts-train" "${args[@]}"
fi

# One reference per style: the first utterance listed for it.
refs=()
while IFS='|' read -r id style; do
  [[ -z "$id" || " ${seen:-} " == *" $style "* ]] && continue
  seen="${seen:-} $style"
  refs+=("$DATA/wavs/$id.wav")
  "$BIN/gst-tts" synthesize --checkpoint "$RUN/checkpoints/last.pt" --text "$TEXT" \
    --reference "$DATA/wavs/$id.wav" --out "$RUN/samples/$style.wav" --plot
done < "$DATA/styles.csv"
"$BIN/gst-tts" plot-style --checkpoint "$RUN/checkpoints/last.pt" --references "${refs[@]}" --out "$RUN/samples/style_weights.png"
echo "run.sh: done; samples per style and style_weights.png in $RUN/samples"
