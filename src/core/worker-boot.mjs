// Loads a worker thread's module from its TypeScript source when running under tsx (tests,
// benches): a worker thread's entry is loaded without tsx's hooks, so this one registers tsx's
// ESM hooks in the thread and imports the module (workerData.file) as the ES module it is, the
// same form the main thread runs. (Loading it through require() instead, tsx's CommonJS
// transform, made the math worker's grading ~1.4x slower than the same code in-process: every
// call across modules went through the transform's export getters. Issue 38.) The compiled .js
// workers (dist) are started directly. Used by the math pool and the json validation thread.
import { workerData } from "node:worker_threads";
import { pathToFileURL } from "node:url";
import { register } from "tsx/esm/api";

register();
await import(pathToFileURL(workerData.file).href);
