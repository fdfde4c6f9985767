# gst-tts: `make demo` and `make test` work on a fresh machine (they set up .venv first).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_DIR ?= demo_out
DEMO_MINUTES ?= 15
DEMO_UTTERANCES ?= 600

.PHONY: setup demo test bench clean-demo

setup: $(VENV)/.installed

# Re-installs only when pyproject.toml changes; the project is installed editable.
$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

demo: setup
	$(BIN)/gst-tts make-demo-corpus $(DEMO_DIR)/corpus --utterances $(DEMO_UTTERANCES)
	$(BIN)/gst-tts-train data.root=$(DEMO_DIR)/corpus data.cache_dir=$(DEMO_DIR)/feature_cache \
		data=demo trainer=demo trainer.max_minutes=$(DEMO_MINUTES) hydra.run.dir=$(DEMO_DIR)
	$(BIN)/gst-tts demo-report --checkpoint $(DEMO_DIR)/checkpoints/last.pt --corpus $(DEMO_DIR)/corpus \
		--out $(DEMO_DIR)/samples
	@echo
	@echo "Demo outputs in $(DEMO_DIR)/:"
	@echo "  checkpoint        $(DEMO_DIR)/checkpoints/last.pt"
	@echo "  TensorBoard       $(BIN)/tensorboard --logdir $(DEMO_DIR)/tensorboard"
	@echo "  held-out samples  $(DEMO_DIR)/samples/<style>/NN.wav (+ .alignment.png)"
	@echo "  references        $(DEMO_DIR)/samples/references/<style>.wav"
	@echo "  health summary    $(DEMO_DIR)/samples/summary.txt (summary.json)"

test: setup
	$(BIN)/pytest -q

bench: setup
	@set -e; for script in benchmarks/bench_*.py; do echo "== $$script"; $(BIN)/python $$script; done

clean-demo:
	rm -rf $(DEMO_DIR)
