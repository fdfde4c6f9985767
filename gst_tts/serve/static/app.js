// The gst-tts page: everything goes through the JSON/WAV API of this server; nothing is loaded
// from elsewhere, so the page works offline. Audio and images are fetched as blobs (not by URL)
// so that the API key, when the server needs one, travels in a header.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { model: null, references: [], key: sessionStorage.getItem("gst-tts-key") || "", lastUrls: [] };

// ---------------------------------------------------------------- API

async function api(path, { method = "GET", json, form, as = "json" } = {}) {
  const response = await send(path, { method, json, form });
  return as === "blob" ? response.blob() : response.json();
}

// The response of a request with the key, when there is one; a failure is thrown as the server's one line.
async function send(path, { method = "GET", json, form } = {}) {
  const headers = {};
  if (state.key) headers["X-API-Key"] = state.key;
  let body;
  if (json !== undefined) { headers["Content-Type"] = "application/json"; body = JSON.stringify(json); }
  if (form !== undefined) body = form;
  let response;
  try {
    response = await fetch(path, { method, headers, body });
  } catch (e) {
    throw new Error(`The server cannot be reached (${e.message}).`);
  }
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try { const err = await response.json(); if (err && err.error) message = err.error; } catch (e) { /* not JSON */ }
    if (response.status === 401) { $("key-section").hidden = false; $("api-key").focus(); }
    if (response.status === 503 && response.headers.get("Retry-After")) {
      message += ` (try again in ${response.headers.get("Retry-After")} s)`;
    }
    throw new Error(message);
  }
  return response;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
  setStatus("");
}

function clearError() { $("error").hidden = true; $("error").textContent = ""; }
function setStatus(text) { $("status").textContent = text; }

// ---------------------------------------------------------------- model and sliders

function sliderElement(id, label, value, { min = -1, max = 1, source = "sliders" } = {}) {
  const wrap = document.createElement("div");
  wrap.className = "slider";
  const lab = document.createElement("label");
  lab.htmlFor = id;
  const name = document.createElement("span");
  name.textContent = label;
  const out = document.createElement("output");
  out.id = id + "-out";
  out.textContent = value.toFixed(2);
  lab.append(name, out);
  const input = document.createElement("input");
  Object.assign(input, { type: "range", id, min: String(min), max: String(max), step: "0.01", value: String(value) });
  input.addEventListener("input", () => {
    out.textContent = Number(input.value).toFixed(2);
    chooseSource(source);
  });
  wrap.append(lab, input);
  return wrap;
}

// The neutral style's weight of a slider: the checkpoint's neutral_weights (the mean style of its
// training references; uniform for an old checkpoint), per head, or averaged over heads for "Token t".
function neutralOf(id) {
  const m = state.model;
  const rows = m.neutral_weights || m.heads.map(() => m.tokens.map(() => m.neutral_weight));
  const perHead = /^head-(\d+)-token-(\d+)$/.exec(id);
  if (perHead) return rows[Number(perHead[1])][Number(perHead[2])];
  const t = Number(/^token-(\d+)$/.exec(id)[1]);
  return rows.reduce((s, row) => s + row[t], 0) / rows.length;
}

function buildSliders() {
  const m = state.model;
  const all = $("sliders");
  all.replaceChildren();
  for (const t of m.tokens) all.append(sliderElement(`token-${t}`, `Token ${t}`, neutralOf(`token-${t}`)));
  const heads = $("head-sliders");
  heads.replaceChildren();
  for (const h of m.heads) {
    const box = document.createElement("fieldset");
    box.className = "head";
    const legend = document.createElement("legend");
    legend.textContent = `Head ${h}`;
    const grid = document.createElement("div");
    grid.className = "sliders";
    for (const t of m.tokens) grid.append(sliderElement(`head-${h}-token-${t}`, `Head ${h}, token ${t}`, neutralOf(`head-${h}-token-${t}`)));
    box.append(legend, grid);
    heads.append(box);
  }
}

// The dials probe-tokens named for this checkpoint (--save-dials), those with a noticeable effect,
// strongest first: each moves one head from neutral (0) toward one token (1).
function namedDials() {
  return (state.model.dials || []).filter((d) => d.effect >= 1);
}

function dialDetails(d) {
  const parts = [];
  if (d.d_f0_semitones !== null) parts.push(`${d.d_f0_semitones >= 0 ? "+" : ""}${d.d_f0_semitones.toFixed(1)} st`);
  if (d.rate_ratio !== null) parts.push(`rate ×${d.rate_ratio.toFixed(2)}`);
  if (d.d_energy_db !== null) parts.push(`${d.d_energy_db >= 0 ? "+" : ""}${d.d_energy_db.toFixed(1)} dB`);
  return `head ${d.head}, token ${d.token}: ${parts.join(", ")} at ${d.amount}`;
}

function buildDials() {
  const box = $("dials");
  box.replaceChildren();
  const dials = namedDials();
  for (const d of dials) {
    const el = sliderElement(`dial-${d.head}-${d.token}`, d.name, 0, { min: 0, max: 1, source: "dials" });
    el.title = dialDetails(d);
    const detail = document.createElement("span");
    detail.className = "muted";
    detail.textContent = ` (${dialDetails(d)})`;
    el.querySelector("label").insertBefore(detail, el.querySelector("output"));
    box.append(el);
  }
  $("dials-radio").disabled = dials.length === 0;
  $("reset-dials").hidden = dials.length === 0;
  $("dials-hint").textContent = dials.length
    ? "Each dial moves one head of the style from neutral (0) toward one token (1), named by what probe-tokens measured it do. Dials add up."
    : (state.model.dials || []).length
      ? "No dial of this model changed pitch, rate or energy noticeably when probed: use the raw token weights below."
      : "No dial names for this model: run gst-tts probe-tokens --checkpoint CHECKPOINT --save-dials, then restart the server. Raw token weights are below.";
}

function setSlider(id, value) {
  const input = $(id);
  input.value = String(value);
  $(id + "-out").textContent = Number(input.value).toFixed(2);
}

async function loadModel() {
  state.model = await api("/api/model");
  const m = state.model;
  $("strength").max = String(m.max_style_strength);
  if (m.max_f0_range_st !== undefined) $("f0-semitones").max = String(m.max_f0_range_st);
  $("model-line").textContent =
    `${m.n_tokens} style tokens × ${m.n_heads} heads · ${m.sample_rate} Hz`;
  $("vocoder-line").textContent = `Vocoder: ${m.vocoder}`;
  // What the model reads; a {…} pronunciation means something only to a phoneme model.
  const phonemes = m.frontend.frontend === "phonemes";
  $("reads-line").textContent = phonemes ? `This model reads phonemes (${m.frontend.language})` : "This model reads characters";
  $("override-hint").hidden = !phonemes;
  $("text").maxLength = m.limits.max_text_chars;
  $("text-limit").textContent = m.limits.max_text_chars;
  buildSliders();
  buildDials();
  updateCount();
  await loadReferences();
}

function updateCount() { $("text-count").textContent = $("text").value.length; }

// ---------------------------------------------------------------- references

async function loadReferences() {
  state.references = await api("/api/references");
  fillReferenceSelects();
}

function fillReferenceSelects(selected) {
  const refs = state.references;
  for (const id of ["ref-select", "mix-a", "mix-b"]) {
    const select = $(id);
    const keep = select.value;
    select.replaceChildren();
    if (!refs.length) select.append(new Option("(none uploaded)", ""));
    for (const r of refs) select.append(new Option(`${r.name} (${r.duration_s.toFixed(1)} s)`, r.id));
    if (refs.some((r) => r.id === keep)) select.value = keep;
  }
  if (selected) $("ref-select").value = selected;
  if (refs.length >= 2 && $("mix-a").value === $("mix-b").value) $("mix-b").value = refs.find((r) => r.id !== $("mix-a").value).id;
  drawReferenceChart();
}

function drawReferenceChart() {
  const ref = state.references.find((r) => r.id === $("ref-select").value);
  $("ref-chart-box").hidden = !ref;
  if (!ref) return;
  $("ref-chart-name").textContent = ref.name;
  const chart = $("ref-chart");
  chart.replaceChildren();
  // Weights of a reference are a softmax per head (0..1): a fixed scale keeps a flat style looking flat.
  const peak = Math.max(1, ...ref.weights.flat().map(Math.abs));
  ref.weights.forEach((row, h) => {
    const name = document.createElement("div");
    name.className = "muted";
    name.textContent = `Head ${h}`;
    const bars = document.createElement("div");
    bars.className = "bar-row";
    bars.setAttribute("role", "img");
    bars.setAttribute("aria-label", `Head ${h}: ` + row.map((w, t) => `token ${t} ${w.toFixed(2)}`).join(", "));
    row.forEach((w, t) => {
      const bar = document.createElement("div");
      bar.className = "bar";
      bar.style.height = `${(100 * Math.abs(w)) / peak}%`;
      bar.title = `token ${t}: ${w.toFixed(3)}`;
      const label = document.createElement("span");
      label.textContent = t;
      bar.append(label);
      bars.append(bar);
    });
    chart.append(name, bars);
  });
}

async function uploadReference(file, name) {
  clearError();
  setStatus(`Uploading ${name}…`);
  const form = new FormData();
  form.append("file", file, name);
  const ref = await api("/api/references", { method: "POST", form });
  state.references = state.references.filter((r) => r.id !== ref.id).concat([ref]);
  fillReferenceSelects(ref.id);
  chooseSource("reference");
  setStatus(`Reference ${ref.name} uploaded: ${ref.duration_s.toFixed(1)} s.`);
}

// In-browser recording: raw samples through Web Audio, written as a 16-bit WAV (MediaRecorder's
// WebM/Opus is not a format the server's audio reader takes).
const recorder = { stream: null, context: null, node: null, chunks: [] };

async function toggleRecording() {
  clearError();
  if (recorder.stream) return stopRecording();
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    return showError("This browser cannot record here (recording needs a secure page: localhost or https).");
  }
  try {
    recorder.stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  } catch (e) {
    return showError(`No microphone: ${e.message}`);
  }
  recorder.context = new AudioContext();
  const source = recorder.context.createMediaStreamSource(recorder.stream);
  recorder.node = recorder.context.createScriptProcessor(4096, 1, 1);
  recorder.chunks = [];
  recorder.node.onaudioprocess = (event) => recorder.chunks.push(new Float32Array(event.inputBuffer.getChannelData(0)));
  source.connect(recorder.node);
  recorder.node.connect(recorder.context.destination);
  $("record").textContent = "Stop recording";
  $("record-state").textContent = "Recording…";
}

async function stopRecording() {
  const rate = recorder.context.sampleRate;
  recorder.node.disconnect();
  recorder.stream.getTracks().forEach((t) => t.stop());
  await recorder.context.close();
  recorder.stream = null;
  $("record").textContent = "Record from microphone";
  const n = recorder.chunks.reduce((s, c) => s + c.length, 0);
  $("record-state").textContent = `Recorded ${(n / rate).toFixed(1)} s.`;
  const wav = encodeWav(recorder.chunks, n, rate);
  try { await uploadReference(wav, `recording-${new Date().toISOString().slice(11, 19)}.wav`); } catch (e) { showError(e.message); }
}

function encodeWav(chunks, n, rate) {
  const buffer = new ArrayBuffer(44 + 2 * n);
  const v = new DataView(buffer);
  const text = (at, s) => { for (let i = 0; i < s.length; i++) v.setUint8(at + i, s.charCodeAt(i)); };
  text(0, "RIFF"); v.setUint32(4, 36 + 2 * n, true); text(8, "WAVE"); text(12, "fmt ");
  v.setUint32(16, 16, true); v.setUint16(20, 1, true); v.setUint16(22, 1, true); v.setUint32(24, rate, true);
  v.setUint32(28, 2 * rate, true); v.setUint16(32, 2, true); v.setUint16(34, 16, true); text(36, "data"); v.setUint32(40, 2 * n, true);
  let at = 44;
  for (const c of chunks) for (const x of c) { v.setInt16(at, Math.max(-1, Math.min(1, x)) * 32767, true); at += 2; }
  return new Blob([buffer], { type: "audio/wav" });
}

// ---------------------------------------------------------------- synthesis

function chooseSource(value) { document.querySelector(`input[name=source][value=${value}]`).checked = true; }
function source() { return document.querySelector("input[name=source]:checked").value; }

function requestBody() {
  const m = state.model;
  const body = { text: $("text").value };
  const kind = source();
  if (kind === "sliders") {
    const weights = {};
    if ($("per-head-on").checked) {
      for (const h of m.heads) for (const t of m.tokens) weights[`${h}:${t}`] = Number($(`head-${h}-token-${t}`).value);
    } else {
      for (const t of m.tokens) weights[String(t)] = Number($(`token-${t}`).value);
    }
    body.style_weights = weights;
  } else if (kind === "dials") {
    const dials = {};
    for (const d of namedDials()) {
      const amount = Number($(`dial-${d.head}-${d.token}`).value);
      if (amount !== 0) dials[`${d.head}:${d.token}`] = amount;
    }
    if (Object.keys(dials).length) body.style_dials = dials;  // every dial at 0 is the neutral style
  } else if (kind === "reference") {
    if (!$("ref-select").value) throw new Error("Choose a reference first: upload or record a clip.");
    body.reference_id = $("ref-select").value;
  } else if (kind === "mix") {
    const a = $("mix-a").value, b = $("mix-b").value, share = Number($("mix-ratio").value);
    if (!a || !b) throw new Error("A mix needs two references: upload or record them first.");
    if (a === b) throw new Error("Choose two different references for the mix.");
    body.mix = { [a]: share, [b]: Math.round((1 - share) * 100) / 100 };
  }
  if (kind === "reference" || kind === "mix") body.style_strength = Number($("strength").value);
  // Copies after the model, only when asked for (the server's default is the model's own):
  // a reference's tempo or F0 range with a reference or mix, a given F0 range with any style.
  if ((kind === "reference" || kind === "mix") && $("tempo").value === "reference") body.tempo = "reference";
  if ((kind === "reference" || kind === "mix") && $("f0-range").value === "reference") body.f0_range = "reference";
  if ($("f0-range").value === "semitones") {
    const text = $("f0-semitones").value.trim(), st = Number(text), most = Number($("f0-semitones").max);
    if (text === "" || !Number.isFinite(st) || st < 0 || st > most) {
      throw new Error(`The F0 range must be a number of semitones from 0 to ${most}.`);
    }
    body.f0_range = st;
  }
  const seed = $("seed").value.trim();
  if (seed !== "") {
    if (!/^\d+$/.test(seed)) throw new Error("The seed must be a whole number ≥ 0.");
    body.seed = Number(seed);
  }
  return body;
}

async function speak() {
  clearError();
  let body;
  try { body = requestBody(); } catch (e) { return showError(e.message); }
  $("speak").disabled = true;
  setStatus("Synthesizing…");
  try {
    // A stream keeps the model's tempo and F0 range: a copy after the model needs the whole output.
    if ($("stream").checked && body.tempo === undefined && body.f0_range === undefined) await speakStreamed(body);
    else await speakWhole(body);
  } catch (e) {
    showError(e.message);
  } finally {
    $("speak").disabled = false;
  }
}

async function speakWhole(body) {
  const result = await api("/api/synthesize?format=json", { method: "POST", json: body });
  const [audio, image] = await Promise.all([api(result.audio_url, { as: "blob" }), api(result.alignment_url, { as: "blob" })]);
  const [audioUrl, imageUrl] = showAudio(audio, `gst-tts-${result.id}.wav`, image);
  $("alignment").src = imageUrl;
  $("alignment-box").hidden = false;
  showHealth(result);
  setStatus(`Done: ${result.duration_s.toFixed(2)} s of audio.`);
}

// The answer to ?stream=true is a WAV whose header says "length unknown", then 16-bit PCM as it is
// made: each piece is played through Web Audio as it arrives, scheduled right after the previous
// one, and the whole becomes a WAV for the player and the download link at the end.
// state.stream records when the first piece was scheduled and when the answer ended (the page test reads it).
async function speakStreamed(body) {
  const response = await send("/api/synthesize?stream=true", { method: "POST", json: body });
  const reader = response.body.getReader();
  const player = streamPlayer();
  state.stream = { firstPlayedAt: null, endedAt: null, pieces: 0 };
  let header = new Uint8Array(0), rate = 0, odd = null;
  const pcm = [];
  setStatus("Playing while synthesizing…");
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    let bytes = value;
    if (!rate) {  // the 44-byte header first: its rate is what the samples are played at
      header = concat(header, bytes);
      if (header.length < 44) continue;
      rate = new DataView(header.buffer, header.byteOffset).getUint32(24, true);
      bytes = header.subarray(44);
    }
    if (odd !== null) { bytes = concat(odd, bytes); odd = null; }
    if (bytes.length % 2) { odd = bytes.slice(-1); bytes = bytes.subarray(0, bytes.length - 1); }
    if (!bytes.length) continue;
    const ints = new Int16Array(bytes.slice().buffer);
    const samples = Float32Array.from(ints, (x) => x / 32768);
    pcm.push(samples);
    player.play(samples, rate);
    state.stream.pieces += 1;
    if (state.stream.firstPlayedAt === null) state.stream.firstPlayedAt = performance.now();
  }
  state.stream.endedAt = performance.now();
  const n = pcm.reduce((s, c) => s + c.length, 0);
  showAudio(encodeWav(pcm, n, rate || 22050), "gst-tts-streamed.wav", null);
  $("alignment-box").hidden = true;
  $("health").replaceChildren();
  setStatus(`Done: ${(n / (rate || 22050)).toFixed(2)} s of audio, played as it was made (turn streaming off for the alignment plot).`);
}

function concat(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

// One AudioContext for the page; each piece starts where the previous one ends (or now, after a gap).
function streamPlayer() {
  if (!state.audioContext) state.audioContext = new AudioContext();
  const context = state.audioContext;
  context.resume();
  let next = 0;
  return {
    play(samples, rate) {
      const buffer = context.createBuffer(1, samples.length, rate);
      buffer.copyToChannel(samples, 0);
      const node = context.createBufferSource();
      node.buffer = buffer;
      node.connect(context.destination);
      const at = Math.max(next, context.currentTime + 0.05);
      node.start(at);
      next = at + buffer.duration;
    },
  };
}

// The result's audio in the player and behind the download link; the image's object URL too, when given.
function showAudio(audio, name, image) {
  state.lastUrls.forEach((u) => URL.revokeObjectURL(u));
  const urls = [audio, image].filter(Boolean).map((blob) => URL.createObjectURL(blob));
  state.lastUrls = urls;
  $("audio").src = urls[0];
  const link = $("download");
  link.href = urls[0];
  link.download = name;
  link.classList.remove("disabled");
  link.removeAttribute("aria-disabled");
  $("play").disabled = false;
  return urls;
}

// How a summary's tempo / f0_range says what the output got: the model's own, or the copy after it.
function describeCopy(c, unit) {
  if (!c || c.source === "decoded") return "the model's own";
  if (c.source === "given") return `given: ${c.semitones} st`;
  const value = unit === "st" ? `${c.semitones} st` : `${c.letters_per_s} letters/s`;
  return `the reference's (${value}${c.strength !== 1 ? `, strength ${c.strength}` : ""}), after the model`;
}

function showHealth(r) {
  const h = r.health;
  const rows = [
    ["Verdict", h.verdict],
    ["Stop", r.stop_reason === "stop_token" ? "on the stop token" : "hit the step bound"],
    ["Focus", h.focus.toFixed(3)],
    ["Coverage", h.coverage.toFixed(3)],
    ["Duration", `${r.duration_s.toFixed(2)} s (${r.decoder_steps} decoder steps)`],
    ["Problems", r.problems.length ? r.problems.join("; ") : "none"],
    ["Tempo", describeCopy(r.tempo, "letters")],
    ["F0 range", describeCopy(r.f0_range, "st")],
  ];
  const dl = $("health");
  dl.replaceChildren();
  for (const [k, v] of rows) {
    const dt = document.createElement("dt"); dt.textContent = k;
    const dd = document.createElement("dd"); dd.textContent = v;
    dl.append(dt, dd);
  }
}

// ---------------------------------------------------------------- wiring

function init() {
  $("text").addEventListener("input", updateCount);
  $("text").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); speak(); } });
  $("speak").addEventListener("click", speak);
  $("play").addEventListener("click", () => $("audio").play().catch((e) => showError(`Cannot play: ${e.message}`)));
  $("reset-dials").addEventListener("click", () => {
    for (const d of namedDials()) setSlider(`dial-${d.head}-${d.token}`, 0);
  });
  $("reset-sliders").addEventListener("click", () => {
    document.querySelectorAll("#sliders input, #head-sliders input").forEach((i) => setSlider(i.id, neutralOf(i.id)));
  });
  $("ref-file").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    try { await uploadReference(file, file.name); } catch (err) { showError(err.message); }
    e.target.value = "";
  });
  $("record").addEventListener("click", toggleRecording);
  $("ref-select").addEventListener("change", () => { drawReferenceChart(); if ($("ref-select").value) chooseSource("reference"); });
  $("ref-to-sliders").addEventListener("click", () => {
    const ref = state.references.find((r) => r.id === $("ref-select").value);
    if (!ref) return showError("Choose a reference first.");
    ref.weights.forEach((row, h) => row.forEach((w, t) => setSlider(`head-${h}-token-${t}`, w)));
    state.model.tokens.forEach((t) => setSlider(`token-${t}`, ref.weights.reduce((s, row) => s + row[t], 0) / ref.weights.length));
    $("per-head-on").checked = true;
    $("raw-weights").open = true;
    $("per-head").open = true;
    chooseSource("sliders");
  });
  for (const id of ["mix-a", "mix-b"]) $(id).addEventListener("change", () => chooseSource("mix"));
  $("f0-range").addEventListener("change", () => { $("f0-semitones").disabled = $("f0-range").value !== "semitones"; });
  $("strength").addEventListener("input", () => { $("strength-out").textContent = Number($("strength").value).toFixed(2); });
  $("mix-ratio").addEventListener("input", () => { $("mix-ratio-out").textContent = Number($("mix-ratio").value).toFixed(2); chooseSource("mix"); });
  $("key-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    state.key = $("api-key").value;
    sessionStorage.setItem("gst-tts-key", state.key);
    clearError();
    try { await loadModel(); $("key-section").hidden = true; } catch (err) { showError(err.message); }
  });
  loadModel().catch((e) => showError(e.message));
}

init();
