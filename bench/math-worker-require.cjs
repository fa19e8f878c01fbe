// bench/math-worker-vs-main.ts: starts a worker's module through require() (tsx's CommonJS hook),
// the way verifiers/math/worker-boot.cjs started the math worker before issue 38's fix.
require(require("node:worker_threads").workerData.file);
