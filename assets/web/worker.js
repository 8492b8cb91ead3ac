"use strict";
// A Web Worker of Attractor Lab's page: the app's WebAssembly, started as
// `attractorlab worker`, runs the parts of population jobs (the Ensemble,
// the Basin map), the training runs and their epochs' validations, and the steps of the
// engine's look-ahead the page sends it, so that the page's own thread only
// draws. The page's first message brings the compiled module (no second
// download or compile), the weights it has fetched and files.json; then
// come jobs {id, kind, job} (a validation's with its couplings beside,
// {net}), cancellations {id, cancel} and a training run's pause
// {id, pause}, and {warm, models} (the worker the page starts once its
// window is built: prepare, say {up}, then load the models of the weights
// files named). A weights file the app needs is asked of
// the page ({wantWeights}). The app answers {id, done} (a part's image-steps finished)
// or {id, event} (a training run's; an epoch's with the couplings to
// validate beside, {net}), then {id, answer} or {id, error}.
importScripts("wasm_exec.js");

let inbox = []; // messages that came before the app was up

// The app's last lines of output (Go writes them through console.log):
// a worker that stops says why with them.
const said = [];
const log = console.log.bind(console);
console.log = (...args) => {
  said.push(args.join(" "));
  if (said.length > 4) said.shift();
  log(...args);
};
const why = () => (said.length ? ": " + said.join(" ").trim() : "");

async function fetchBytes(url) {
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(url + ": the server answered " + resp.status + " " + resp.statusText);
  return new Uint8Array(await resp.arrayBuffer());
}

self.attractorlab = {
  weights: new Map(), // name → Uint8Array (transport form), from the page
  files: null,
  hasWeights(name) { return this.weights.has(name); },
  weightsHead(name) {
    const h = this.files && this.files.heads && this.files.heads[name];
    if (!h) return null;
    const bin = atob(h);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  },
  // fetchWeights asks the page for a weights file: the page fetches each
  // once, for itself and its workers ({wantWeights} → {gotWeights, bytes}
  // or {gotWeights, error}).
  asked: new Map(), // name → {resolve, reject, promise}
  fetchWeights(name) {
    if (this.weights.has(name)) return Promise.resolve(this.weights.get(name));
    let a = this.asked.get(name);
    if (!a) {
      a = {};
      a.promise = new Promise((resolve, reject) => { a.resolve = resolve; a.reject = reject; });
      this.asked.set(name, a);
      postMessage({ wantWeights: name });
    }
    return a.promise;
  },
  gotWeights(m) {
    const a = this.asked.get(m.gotWeights);
    if (!a) return;
    this.asked.delete(m.gotWeights);
    if (m.bytes) {
      this.weights.set(m.gotWeights, m.bytes);
      a.resolve(m.bytes);
    } else {
      a.reject(new Error("weights/" + m.gotWeights + ".web: " + m.error));
    }
  },
  fetchData(path) { return fetchBytes("data/" + path); },
  serve: null, // set by the app
  // started: the app is ready for parts.
  started() {
    const waiting = inbox;
    inbox = null;
    for (const m of waiting) this.serve(m);
  },
};

// The app's binary holds the window's toolkit too, whose start-up looks at
// the page's document (its cursor style, its text field for keys); a worker
// has none, so it gets one that does nothing. The worker never draws.
self.document = {
  body: { style: { setProperty() {} } },
  getElementById() { return null; },
};

// Every message the worker sends says how large its WebAssembly memory
// is (bytes) and what its Go heap holds and had live at its last
// collection ({live, total}), for the page's account of its memory.
let memory = null;
const send = self.postMessage.bind(self);
self.postMessage = (m, transfer) => {
  if (memory && m && typeof m === "object") m.mem = memory.buffer.byteLength;
  if (m && typeof m === "object" && typeof self.attractorlab.goMemory === "function") m.go = self.attractorlab.goMemory();
  send(m, transfer);
};

onmessage = async (e) => {
  const m = e.data;
  if (m.module) {
    for (const [name, b] of m.weights) self.attractorlab.weights.set(name, b);
    self.attractorlab.files = m.files;
    try {
      const go = new Go();
      go.argv = ["attractorlab", "worker"];
      const instance = await WebAssembly.instantiate(m.module, go.importObject);
      memory = instance.exports.mem;
      go.run(instance).then(() => postMessage({ stopped: "the worker's app stopped" + why() }));
    } catch (err) {
      postMessage({ stopped: "the worker could not start: " + (err && err.message ? err.message : err) });
    }
    return;
  }
  if (m.gotWeights) {
    self.attractorlab.gotWeights(m);
    return;
  }
  if (inbox) inbox.push(m);
  else self.attractorlab.serve(m);
};
