// Loads the math worker from its TypeScript source when running under tsx (tests, benches):
// a worker thread's entry is loaded without tsx's ESM hooks, but require() goes through its
// CommonJS hook, as it does for piscina's own entry. The compiled worker.js is started directly.
require(require("node:worker_threads").workerData.file);
