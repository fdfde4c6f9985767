#!/usr/bin/env bash
# LJSpeech 1.1 recipe: prepare features, train the acoustic model and a HiFi-GAN vocoder (CPU, one
# GPU, N GPUs, or several nodes), synthesize.
#
#   recipes/ljspeech/run.sh /data/LJSpeech-1.1 runs/lj            # one GPU (or CPU when none)
#   NGPU=4 recipes/ljspeech/run.sh /data/LJSpeech-1.1 runs/lj     # 4 GPUs with torchrun
#   recipes/ljspeech/run.sh DATA RUN trainer.max_steps=10 ...      # extra Hydra overrides of the acoustic model
#   DRY_RUN=1 recipes/ljspeech/run.sh DATA RUN                     # print the commands, run none
#
# Several nodes (the same command on each; RUN must be one folder on a shared file system):
#   NNODES=2 NGPU=8 MASTER_ADDR=node0.example MASTER_PORT=29500 NODE_RANK=0 recipes/ljspeech/run.sh DATA RUN   # on node0
#   NNODES=2 NGPU=8 MASTER_ADDR=node0.example MASTER_PORT=29500 NODE_RANK=1 recipes/ljspeech/run.sh DATA RUN   # on node1
#
# Environment:
#   STAGES       stages to run (default "prepare train vocoder synthesize")
#   MODEL        acoustic model config (default tacotron2)
#   NGPU         processes (GPUs) per node (default 1)
#   NNODES       nodes (default 1); above 1, torchrun meets the other nodes through its c10d rendezvous
#   NODE_RANK    this node's number, 0..NNODES-1 (default 0); node 0 alone runs the synthesize stage
#   MASTER_ADDR  with NNODES > 1: the address of the node whose torchrun hosts the rendezvous (node 0's)
#   MASTER_PORT  its port (default 29500)
#   RDZV_ID      the rendezvous id, the same on every node (default: the run folder's name)
#   VOCODER      vocoder preset of conf/vocoder/ (default hifigan_v1)
#   VOCODER_ARGS extra Hydra overrides of the vocoder, space-separated (e.g. "trainer.max_steps=200000")
#   CACHE        feature cache (default RUN/feature_cache)
#   EVAL_LIMIT   sentences check-alignment grades (default 8)
#   DRY_RUN=1    print each command (shell-quoted) instead of running it
set -euo pipefail
DATA=${1:?usage: run.sh LJSPEECH_DIR RUN_DIR [hydra overrides...]}
RUN=${2:?usage: run.sh LJSPEECH_DIR RUN_DIR [hydra overrides...]}
shift 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/.venv/bin}
NGPU=${NGPU:-1}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-}
MASTER_PORT=${MASTER_PORT:-29500}
MODEL=${MODEL:-tacotron2}
VOCODER=${VOCODER:-hifigan_v1}
STAGES=${STAGES:-"prepare train vocoder synthesize"}
CACHE=${CACHE:-$RUN/feature_cache}
DRY_RUN=${DRY_RUN:-0}

fail() {
  echo "run.sh: $*" >&2
  exit 2
}

for name in NGPU NNODES MASTER_PORT; do
  [[ ${!name} =~ ^[1-9][0-9]*$ ]] || fail "$name=${!name} is not a positive whole number"
done
[[ $NODE_RANK =~ ^[0-9]+$ ]] && (( NODE_RANK < NNODES )) || fail "NODE_RANK=$NODE_RANK is not a node of 0..$((NNODES - 1)) (NNODES=$NNODES)"
if (( NNODES > 1 )) && [[ -z $MASTER_ADDR ]]; then
  fail "NNODES=$NNODES needs MASTER_ADDR: the address of node 0 (its torchrun hosts the rendezvous), reachable from every node"
fi
for stage in $STAGES; do
  [[ " prepare train vocoder synthesize " == *" $stage "* ]] || fail "unknown stage '$stage' in STAGES (prepare train vocoder synthesize)"
done
if [[ ! -f "$DATA/metadata.csv" ]]; then
  fail "$DATA/metadata.csv not found: download LJSpeech-1.1 and unpack it there (see README.md)"
fi

# A command, or with DRY_RUN=1 its shell-quoted line.
run() {
  if [[ $DRY_RUN == 1 ]]; then
    printf '%q ' "$@" | sed 's/ $//'
    echo
  else
    "$@"
  fi
}

# One training: MODULE (a Hydra entry point) and CONSOLE_SCRIPT (its command), then overrides; on
# NGPU processes of NNODES nodes through torchrun where there are several.
train() {
  local module=$1 script=$2 stage=$3
  shift 3
  if (( NNODES > 1 )); then
    # c10d assigns the ranks as the nodes join (--node_rank is the static rendezvous's; torch
    # ignores it here). The id must be the same on every node and differ per stage.
    local id=${RDZV_ID:-$(basename "$RUN")}
    run "$BIN/torchrun" --nnodes="$NNODES" --nproc_per_node="$NGPU" --rdzv_backend=c10d \
      --rdzv_endpoint="$MASTER_ADDR:$MASTER_PORT" --rdzv_id="${id//[^A-Za-z0-9._-]/_}-$stage" -m "$module" "$@"
  elif (( NGPU > 1 )); then
    run "$BIN/torchrun" --standalone --nproc_per_node="$NGPU" -m "$module" "$@"
  else
    run "$BIN/$script" "$@"
  fi
}

has_stage() { [[ " $STAGES " == *" $1 "* ]]; }

# Every node prepares (cached entries are skipped and every write is atomic, so nodes sharing the
# cache only repeat work); training would otherwise wait in the rendezvous past its timeout.
if has_stage prepare; then
  run "$BIN/gst-tts" prepare --corpus "$DATA" --cache-dir "$CACHE"
fi

if has_stage train; then
  train gst_tts.training.train gst-tts-train train \
    data.root="$DATA" data.cache_dir="$CACHE" model="$MODEL" hydra.run.dir="$RUN" "$@"
fi

if has_stage vocoder; then
  # The same corpus, cache and feature settings as the acoustic model: its data.audio overrides too.
  audio=()
  for arg in "$@"; do
    [[ $arg == data.audio.* || $arg == +data.audio.* ]] && audio+=("$arg")
  done
  read -r -a extra <<< "${VOCODER_ARGS:-}"
  train gst_tts.training.train_vocoder gst-tts-train-vocoder vocoder \
    data.root="$DATA" data.cache_dir="$CACHE" vocoder="$VOCODER" hydra.run.dir="$RUN/vocoder" \
    ${audio[@]+"${audio[@]}"} ${extra[@]+"${extra[@]}"}
fi

if has_stage synthesize && (( NODE_RANK == 0 )); then
  generator=$RUN/vocoder/checkpoints/generator.pt
  vocoder=griffin-lim
  if [[ -f $generator ]] || { [[ $DRY_RUN == 1 ]] && has_stage vocoder; }; then
    vocoder=$generator
  fi
  reference=$DATA/wavs/$(head -n 1 "$DATA/metadata.csv" | cut -d '|' -f 1).wav
  run "$BIN/gst-tts" check-alignment --checkpoint "$RUN/checkpoints/last.pt" --corpus "$DATA" \
    --limit "${EVAL_LIMIT:-8}" --vocoder "$vocoder" --out "$RUN/evaluation"
  run "$BIN/gst-tts" synthesize --checkpoint "$RUN/checkpoints/last.pt" \
    --text "Printing, in the only sense with which we are at present concerned, differs from most arts." \
    --reference "$reference" --vocoder "$vocoder" --out "$RUN/samples/example.wav" --plot
fi
if [[ $DRY_RUN != 1 ]]; then
  echo "run.sh: done; outputs in $RUN (checkpoints/, tensorboard/, vocoder/, evaluation/, samples/)"
fi
