#!/usr/bin/env bash
# Adapt a trained model to a small real corpus on a CPU: the demo's model (by default) fine-tuned
# on an LJSpeech-format corpus of one speaker, its vocoder of the recordings too; the checkpoint
# that speaks the held-out sentences best is chosen and a report written.
#
#   recipes/adapt/run.sh /data/my-voice runs/my-voice                 # INIT: demo_out/checkpoints/best.pt
#   INIT=runs/other/checkpoints/best.pt recipes/adapt/run.sh DATA RUN  # another starting model
#   recipes/adapt/run.sh DATA RUN trainer.learning_rate=2e-4 ...       # extra Hydra overrides of the acoustic model
#   DRY_RUN=1 recipes/adapt/run.sh DATA RUN                            # print the commands, run none
#
# Running it again resumes: finished stages are skipped, an interrupted training continues.
#
# Environment:
#   INIT         the starting acoustic checkpoint (default demo_out/checkpoints/best.pt, made by
#                `make demo` when missing); its vocoder of the recordings is the vocoder's start
#   INIT_VOCODER the starting vocoder generator (default: INIT's run folder's vocoder/checkpoints/generator.pt)
#   STEPS        acoustic fine-tuning steps (default 2500)
#   VOCODER_STEPS vocoder fine-tuning steps (default 1500; trained alongside on the second core)
#   VAL_SIZE     held-out utterances (default 24): never trained on, none of them a sentence INIT's corpus said
#   REFERENCES   folders of recordings of other speakers to measure style transfer from (default none)
#   TRANSFER_CLIPS held-out recordings whose style (and shifted, stretched copies') is measured (default 6)
#   THREADS      threads per process (default 1: the vocoder trains beside the acoustic model on 2 cores)
#   STAGES       stages to run (default "split prepare train vocoder select report")
#   DRY_RUN=1    print each command (shell-quoted) instead of running it
set -euo pipefail
DATA=${1:?usage: run.sh CORPUS_DIR RUN_DIR [hydra overrides...]}
RUN=${2:?usage: run.sh CORPUS_DIR RUN_DIR [hydra overrides...]}
shift 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/.venv/bin}
INIT=${INIT:-$ROOT/demo_out/checkpoints/best.pt}
STEPS=${STEPS:-2500}
VOCODER_STEPS=${VOCODER_STEPS:-1500}
VAL_SIZE=${VAL_SIZE:-24}
THREADS=${THREADS:-1}
STAGES=${STAGES:-"split prepare train vocoder select report"}
REFERENCES=${REFERENCES:-}
TRANSFER_CLIPS=${TRANSFER_CLIPS:-6}
DRY_RUN=${DRY_RUN:-0}
CACHE=$RUN/feature_cache
VAL_IDS=$RUN/val_ids.txt

fail() {
  echo "run.sh: $*" >&2
  exit 2
}

for name in STEPS VOCODER_STEPS VAL_SIZE THREADS TRANSFER_CLIPS; do
  [[ ${!name} =~ ^[1-9][0-9]*$ ]] || fail "$name=${!name} is not a positive whole number"
done
for stage in $STAGES; do
  [[ " split prepare train vocoder select report " == *" $stage "* ]] ||
    fail "unknown stage '$stage' in STAGES (split prepare train vocoder select report)"
done
[[ -f "$DATA/metadata.csv" ]] || fail "$DATA/metadata.csv not found: an LJSpeech-format corpus (docs/data.md)"

run() {
  if [[ $DRY_RUN == 1 ]]; then
    printf '%q ' "$@" | sed 's/ $//'
    echo
  else
    "$@"
  fi
}
has_stage() { [[ " $STAGES " == *" $1 "* ]]; }

if [[ ! -f $INIT ]]; then
  [[ $INIT == "$ROOT/demo_out/checkpoints/best.pt" ]] || fail "INIT=$INIT: no such checkpoint"
  echo "run.sh: $INIT is missing: making the demo first (make demo)"
  run make -C "$ROOT" demo
fi
INIT_VOCODER=${INIT_VOCODER:-$(dirname "$(dirname "$INIT")")/vocoder/checkpoints/generator.pt}
[[ -f $INIT_VOCODER || $DRY_RUN == 1 ]] || fail "INIT_VOCODER=$INIT_VOCODER: no such vocoder (give INIT_VOCODER=)"

echo "run.sh: adapting $INIT to $DATA in $RUN: $STEPS acoustic steps, $VOCODER_STEPS vocoder steps," \
  "$VAL_SIZE held-out utterances; each training prints its ETA"

# The held-out split, drawn once and kept: utterances whose sentence INIT's own corpus said are
# left out of it, so that the held-out figures are on sentences the model never read.
if has_stage split && [[ ! -f $VAL_IDS ]]; then
  run "$BIN/python" - "$DATA" "$INIT" "$VAL_SIZE" "$VAL_IDS" <<'PY'
import sys
from pathlib import Path

from gst_tts.checkpoints.acoustic import load_checkpoint
from gst_tts.data.corpus import read_corpus
from gst_tts.data.split import split_train_val
from gst_tts.files import write_text

data, init, size, out = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
root = (load_checkpoint(init).get("config") or {}).get("data", {}).get("root")
# A relative data.root is relative to where that training ran: beside its run folder, as the demo's.
run_dir = init.resolve().parent.parent
places = [Path(root), run_dir.parent / root, run_dir / Path(root).name] if root else []
found = next((p for p in places if (p / "metadata.csv").is_file()), None)
seen = {u.text for u in read_corpus(found)} if found else set()
if not seen:
    print(f"run.sh: {init} names no corpus that is here; the held-out split cannot leave out what it read")
utterances = read_corpus(data)
fresh = [u.id for u in utterances if u.text not in seen]
if len(fresh) <= size:
    sys.exit(f"run.sh: {data}: {len(fresh)} utterances that {init}'s corpus did not say; VAL_SIZE={size} leaves none to train on")
held_out = split_train_val(fresh, size, 0)[1]
out.parent.mkdir(parents=True, exist_ok=True)
write_text(out, "".join(f"{i}\n" for i in held_out))
print(f"run.sh: held out {len(held_out)} of {len(utterances)} utterances ({len(utterances) - len(fresh)} said by {init}'s corpus kept for training): {out}")
PY
fi

if has_stage prepare; then
  # What data=demo reads: espeak-ng phonemes in en-us (cached beside the features for training).
  run "$BIN/gst-tts" prepare --corpus "$DATA" --cache-dir "$CACHE" --frontend phonemes --language en-us \
    --threads "$THREADS"
fi

# The demo's recipe (model, loss, trainer, phonemes, reference augmentation) on the new corpus,
# without the demo corpus's prosody labels: the start's prosody read-out is left out.
train_args=(model=tiny data=demo trainer=demo loss=demo data.root="$DATA" data.cache_dir="$CACHE"
  data.prosody=null data.val_ids="$VAL_IDS" trainer.init_from="$INIT" trainer.max_steps="$STEPS"
  trainer.max_minutes=null trainer.threads="$THREADS" hydra.run.dir="$RUN" "$@")
vocoder_args=(vocoder=cpu_small generator.pitch_head=false data.root="$DATA" data.cache_dir="$CACHE"
  data.val_ids="$VAL_IDS" trainer.init_from="$INIT_VOCODER" trainer.max_steps="$VOCODER_STEPS"
  trainer.max_minutes=null trainer.threads="$THREADS" hydra.run.dir="$RUN/vocoder")
if has_stage train && has_stage vocoder && [[ $DRY_RUN != 1 ]]; then
  # The vocoder on the second core, its log in a file; the acoustic model's progress on the terminal.
  mkdir -p "$RUN"
  "$BIN/gst-tts-train-vocoder" "${vocoder_args[@]}" trainer.progress=false > "$RUN/vocoder.log" 2>&1 &
  vocoder_pid=$!
  "$BIN/gst-tts-train" "${train_args[@]}" || { kill "$vocoder_pid" 2>/dev/null; fail "the acoustic model's training failed"; }
  wait "$vocoder_pid" || fail "the vocoder's training failed: $RUN/vocoder.log"
elif has_stage train && has_stage vocoder; then
  run "$BIN/gst-tts-train-vocoder" "${vocoder_args[@]}" trainer.progress=false
  run "$BIN/gst-tts-train" "${train_args[@]}"
elif has_stage train; then
  run "$BIN/gst-tts-train" "${train_args[@]}"
elif has_stage vocoder; then
  run "$BIN/gst-tts-train-vocoder" "${vocoder_args[@]}"
fi

vocoder=$RUN/vocoder/checkpoints/generator.pt
if has_stage select; then
  run "$BIN/gst-tts" select-checkpoint --checkpoints "$RUN"/checkpoints/step_*.pt "$RUN/checkpoints/last.pt" \
    --corpus "$DATA" --held-out "$VAL_SIZE" --vocoder "$vocoder" --out "$RUN/checkpoints/best.pt" \
    --seed 1 --threads "$THREADS"
  run "$BIN/python" -c 'import sys; from pathlib import Path; from gst_tts.inference.vocoder_choice import record_vocoder; print("run.sh: recorded", record_vocoder(Path(sys.argv[1]), Path(sys.argv[2])))' \
    "$RUN/checkpoints" "$vocoder"
fi

if has_stage report; then
  best=$RUN/checkpoints/best.pt
  for mode in free-running teacher-forced; do
    run "$BIN/gst-tts" measure-intelligibility --checkpoint "$best" --corpus "$DATA" --cache-dir "$CACHE" \
      --mode "$mode" --split val --limit "$VAL_SIZE" --seed 1 --threads "$THREADS" --out "$RUN/samples/$mode" \
      --no-progress
  done
  # Sentences of words that neither corpus says, neutral: the model reading new text.
  run "$BIN/python" -c 'import sys; from gst_tts.demo.sentences import NEW_WORD_SENTENCES; from gst_tts.files import write_text; write_text(sys.argv[1], "\n".join(NEW_WORD_SENTENCES) + "\n")' \
    "$RUN/new_sentences.txt"
  run "$BIN/gst-tts" measure-intelligibility --checkpoint "$best" --text-file "$RUN/new_sentences.txt" --limit 100 \
    --seed 1 --threads "$THREADS" --out "$RUN/samples/new-sentences" --no-progress
  # Alignment and duration of the held-out sentences, and the vocoder's copy synthesis of their recordings.
  run "$BIN/gst-tts" check-alignment --checkpoint "$best" --corpus "$DATA" --split val --limit "$VAL_SIZE" \
    --vocoder-quality "$VAL_SIZE" --seed 1 --threads "$THREADS" --out "$RUN/evaluation" --no-progress
  # The held-out sentences against their recordings, frame by frame, each in its recording's style.
  run "$BIN/gst-tts" measure-parallel --checkpoint "$best" --corpus "$DATA" --seed 1 --threads "$THREADS" \
    --out "$RUN/evaluation/parallel.json" --no-progress
  # Style from recordings the model never trained on: held-out ones of this voice with pitch-shifted
  # and time-stretched copies (a known spread), then REFERENCES' folders of other voices.
  run "$BIN/python" - "$DATA" "$VAL_IDS" "$RUN/held_out_references" "$TRANSFER_CLIPS" <<'PY'
import os
import sys
from pathlib import Path

from gst_tts.data.corpus import read_corpus
from gst_tts.files import write_text

data, val_ids, out, n = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
wanted = val_ids.read_text(encoding="utf-8").split()[:n]
by_id = {u.id: u for u in read_corpus(data)}
(out / "wavs").mkdir(parents=True, exist_ok=True)
for i in wanted:
    audio = by_id[i].audio_path
    link = out / "wavs" / audio.name
    if not link.exists():
        os.symlink(audio.resolve(), link)
write_text(out / "metadata.csv", "".join(f"{i}|{by_id[i].text}\n" for i in wanted))
PY
  run "$BIN/gst-tts" measure-transfer --checkpoint "$best" --references "$RUN/held_out_references" --augment-real \
    --sentences 2 --seed 1 --threads "$THREADS" --out "$RUN/evaluation/transfer-held-out" --no-progress
  if [[ -n $REFERENCES ]]; then
    # shellcheck disable=SC2086  # REFERENCES is a list of folders
    run "$BIN/gst-tts" measure-transfer --checkpoint "$best" --references $REFERENCES --sentences 2 --seed 1 \
      --threads "$THREADS" --out "$RUN/evaluation/transfer-references" --no-progress
  fi
fi
if [[ $DRY_RUN != 1 ]] && has_stage select; then
  echo "run.sh: done; the chosen model $RUN/checkpoints/best.pt (its vocoder recorded beside it), samples in $RUN/samples"
fi
