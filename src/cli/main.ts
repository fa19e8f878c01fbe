#!/usr/bin/env node
/** The `assay` command: serve, score a JSONL file, and build sandbox images. */
import { Command, InvalidArgumentError } from "commander";

const program = new Command();
program.name("assay").description("Reward server for RL with verifiable rewards").version("0.1.0");

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a positive integer");
  return n;
};

program
  .command("serve")
  .description("serve the HTTP API (settings from ASSAY_* environment variables)")
  .option("--host <host>", "address to listen on (ASSAY_HOST, default 127.0.0.1)")
  .option("--port <port>", "port to listen on (ASSAY_PORT, default 8787)", (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("must be a port number 0-65535");
    return n;
  })
  .action(async (opts: { host?: string; port?: number }) => {
    const { loadConfig } = await import("../core/config.js");
    const { startServer } = await import("../server/start.js");
    const config = loadConfig(process.env, { ...(opts.host ? { host: opts.host } : {}), ...(opts.port !== undefined ? { port: opts.port } : {}) });
    const running = await startServer(config);
    // A stray rejection is a bug to log, not a reason to drop every request in flight.
    process.on("unhandledRejection", (err) => running.log.error({ err }, "unhandled rejection"));
    for (const sig of ["SIGINT", "SIGTERM"] as const) {
      process.once(sig, () => {
        running.close().then(() => process.exit(0));
      });
    }
  });

program
  .command("score")
  .description("score a JSONL file of items, in this process or (--server) as a batch job on a running server; results in input order")
  .argument("[input]", "JSONL file: one {verifier, response, reference, options, id} per line")
  .option("-o, --output <file>", "where to write results (JSONL); needed without --server")
  .option("--verifier <name>", "verifier for lines that do not name one")
  .option("-c, --concurrency <n>", "items scored at once (in this process)", positiveInt, 64)
  .option("--deadline-ms <ms>", "per-item deadline", positiveInt)
  .option("--resume", "keep results already in the output file and continue after them (in this process)", false)
  .option("--server <url>", "submit to this Assay server as a batch job and follow it (progress, ETA, summary)")
  .option("--job <id>", "with --server: follow this job (no input needed)")
  .option("--group-by <field>", "with --server: the field grouping samples of one prompt for pass@k (default prompt)")
  .option("--k <list>", "with --server: the k of pass@k, comma-separated (default 1,5,10)")
  .option("--no-progress", "no progress bar (default: shown on a terminal)")
  .action(async (input: string | undefined, opts: { output?: string; verifier?: string; concurrency: number; deadlineMs?: number; resume: boolean; progress: boolean; server?: string; job?: string; groupBy?: string; k?: string }) => {
    if (opts.server) {
      const { remoteScore } = await import("./remote.js");
      const view = await remoteScore({
        input,
        server: opts.server,
        output: opts.output,
        job: opts.job,
        verifier: opts.verifier,
        groupBy: opts.groupBy,
        k: opts.k,
        deadlineMs: opts.deadlineMs,
        apiKey: process.env.ASSAY_API_KEY,
        progress: opts.progress && !!process.stderr.isTTY,
      });
      if (view.status !== "done") process.exitCode = 1;
      if (view.total > 0 && view.counts.invalid === view.total) {
        process.stderr.write(`assay: every item was invalid; fix the input (or --verifier) as the results' reasons say\n`);
        process.exitCode = 1;
      }
      return;
    }
    if (!input) throw new Error("score needs an input file (or --server URL --job ID)");
    if (!opts.output) throw new Error("score needs -o FILE for its results (or --server URL to score on a server)");
    const { score } = await import("./score.js");
    const s = await score({
      input,
      output: opts.output,
      verifier: opts.verifier,
      concurrency: opts.concurrency,
      deadlineMs: opts.deadlineMs,
      resume: opts.resume,
      progress: opts.progress && !!process.stderr.isTTY,
    });
    const ok = s.counts.ok ?? 0;
    const invalid = s.counts.invalid ?? 0;
    for (const line of s.invalidLines) process.stderr.write(`invalid: ${line}\n`);
    if (invalid > s.invalidLines.length) process.stderr.write(`invalid: … and ${invalid - s.invalidLines.length} more (status "invalid" in ${opts.output})\n`);
    process.stderr.write(
      `scored ${s.lines} lines in ${s.seconds.toFixed(1)}s` +
        (s.skipped ? ` (resumed after ${s.skipped})` : "") +
        `: ${ok} ok, ${s.counts.error ?? 0} error, ${invalid} invalid; mean reward ${ok ? (s.rewardSum / ok).toFixed(4) : "n/a"}\n`,
    );
    if (s.goldEmpty) {
      process.stderr.write(
        `${s.goldEmpty} item${s.goldEmpty === 1 ? " has" : "s have"} an empty gold result (details.gold_empty): with the default options.empty_gold "match" any query that returns nothing scores 1 on them; set empty_gold to "zero" or "invalid" to close that\n`,
      );
    }
    // Every line invalid is a mistake in the command or the file (a wrong verifier, the wrong
    // file), never a result: fail, so a script or a pipeline stops here.
    if (s.lines > 0 && invalid === s.lines) {
      process.stderr.write(`assay: every line was invalid; fix the input (or --verifier) as the reasons above say\n`);
      process.exitCode = 1;
    }
  });

program
  .command("worker")
  .description("score batch-job chunks from the Redis queue (ASSAY_REDIS_URL); run any number, anywhere that reaches the Redis")
  .option("-c, --concurrency <n>", "chunks held at once (each scored ASSAY_BATCH_CONCURRENCY items at a time)", positiveInt, 2)
  .action(async (opts: { concurrency: number }) => {
    const { runWorker } = await import("./worker.js");
    await runWorker(opts);
  });

program
  .command("config")
  .description("print every setting: its variable, default and meaning (--markdown for the README table)")
  .option("--markdown", "as the README's Markdown table", false)
  .action(async (opts: { markdown: boolean }) => {
    const { settingsList, settingsMarkdown, loadConfig } = await import("../core/config.js");
    if (opts.markdown) return void process.stdout.write(settingsMarkdown() + "\n");
    loadConfig(); // fails here, naming the variable, if a value is bad
    for (const s of settingsList()) {
      const now = process.env[s.env];
      process.stdout.write(`${s.env}=${now ?? ""}${now === undefined ? `  # default ${s.shown ?? JSON.stringify(s.default)}` : ""}\n    ${s.doc}\n`);
    }
  });

const sandbox = program.command("sandbox").description("sandbox images and backends");
sandbox
  .command("build")
  .description("build sandbox images from sandbox/images/*/recipe.json (skips images that exist); by default python and cpp")
  .option("--force", "rebuild even if the image exists", false)
  .option("--lang <languages>", "build the images these languages need (comma-separated: java,go,rust,typescript,...; `all` for every language)")
  .argument("[names...]", "only these recipes, by image name")
  .action(async (names: string[], opts: { force: boolean; lang?: string }) => {
    const { buildAll } = await import("../../sandbox/images.js");
    const { defaultImages, imagesFor } = await import("../../sandbox/languages.js");
    const { loadConfig } = await import("../core/config.js");
    const langs = (opts.lang ?? "").split(",").map((l) => l.trim()).filter(Boolean);
    // imagesFor throws on an unknown language, naming the known ones.
    const only = [...new Set([...names, ...imagesFor(langs)])];
    const t0 = Date.now();
    const tags = await buildAll(loadConfig().sandbox, (line) => process.stderr.write(`sandbox build: ${line}\n`), { force: opts.force, only: only.length ? only : defaultImages() });
    process.stderr.write(`sandbox build: ${tags.length} image(s) ready in ${((Date.now() - t0) / 1000).toFixed(1)}s\n`);
  });

const image = program.command("image").description("the Assay server's Docker image, built without a registry");
image
  .command("build")
  .description("build assay-server:<hash> (and :latest) on the sandbox images' Debian base with Node from npm (Dockerfile); skipped when this checkout's image exists. Prints the tag")
  .option("--force", "rebuild even if the image exists", false)
  .option("--compose", "also build deploy/compose.yaml's load balancer, Redis and PostgreSQL images (Debian packages on the same base)", false)
  .action(async (opts: { force: boolean; compose: boolean }) => {
    const { buildServerImage, buildDeployImages } = await import("../deploy/image.js");
    const { loadConfig } = await import("../core/config.js");
    const c = loadConfig().sandbox;
    const log = (line: string) => process.stderr.write(`image build: ${line}\n`);
    const t0 = Date.now();
    const tags = [await buildServerImage(c, log, { force: opts.force })];
    if (opts.compose) tags.push(...(await buildDeployImages(c, log)));
    log(`${tags.length} image(s) ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
    process.stdout.write(tags.join("\n") + "\n");
  });

program.parseAsync().catch((err) => {
  process.stderr.write(`assay: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
