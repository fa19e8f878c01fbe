/**
 * The warm PHP (issue 31, sandbox/runner/php_server.php), on Docker and on bwrap warm slots: a
 * `php -d … main.php` run is forked from the slot's long-lived php, not started (the process was
 * made before its job came, and its CPU at the program's first line is a fork's, not a start's
 * 20+ ms), and is `php -d … main.php` to the program (its `-d` settings, $argv, __FILE__,
 * $_SERVER, getenv, stdin, exit statuses, an uncaught exception's status 255). A run leaves
 * nothing for the next on the same one-slot sandbox (a function, ini settings, the environment,
 * the random seed, files in scratch and /tmp, an open descriptor, a child process, a signal
 * handler), and hostile runs score as before.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import type { Sandbox } from "../sandbox/types.js";
import { heapMb } from "../sandbox/languages.js";
import { openDockerForTests, openBwrapForTests, assertCleanAfterPollution, type Opened } from "./sandboxes.js";

const LIMITS = { wallMs: 10_000, cpuMs: 5000, memoryMb: 256 };

const POLLUTE = String.raw`<?php
function leaked_function() { return 1; }
$GLOBALS["leaked"] = 1;
ini_set("precision", "5");
putenv("LEAKED=env");
mt_srand(1234);
pcntl_signal(SIGUSR1, function () {});
file_put_contents("/sandbox/run/leaked.txt", "x");
foreach (["/tmp/leaked.txt", "/dev/shm/leaked.txt", "/sandbox/leaked.txt"] as $p) @file_put_contents($p, "x");
$keep = fopen("/sandbox/run/leaked.txt", "r");
if (pcntl_fork() === 0) { sleep(60); exit(0); }
echo "polluted ", mt_rand(), "\n";
`;

const PROBE = String.raw`<?php
$fds = [];
foreach (scandir("/proc/self/fd") as $f) if (ctype_digit($f) && @readlink("/proc/self/fd/$f") !== false) $fds[] = @readlink("/proc/self/fd/$f");
$others = [];
foreach (scandir("/proc") as $q) if (ctype_digit($q) && (int) $q !== getmypid() && @fileowner("/proc/$q") === posix_getuid()) $others[] = (int) $q;
echo json_encode([
  "function" => function_exists("leaked_function"), "global" => isset($GLOBALS["leaked"]), "precision" => ini_get("precision"),
  "env" => getenv("LEAKED"), "usr1" => pcntl_signal_get_handler(SIGUSR1), "files" => array_values(array_diff(scandir("."), [".", ".."])),
  "tmp" => file_exists("/tmp/leaked.txt"), "shm_files" => file_exists("/dev/shm/leaked.txt"), "sandbox" => file_exists("/sandbox/leaked.txt"),
  "leaked_fd" => in_array("/sandbox/run/leaked.txt", $fds, true), "others" => $others,
  "argv" => $argv, "argc" => $argc, "file" => __FILE__, "script" => $_SERVER["SCRIPT_NAME"], "home" => getenv("HOME"),
  "memory_limit" => ini_get("memory_limit"), "display_errors" => ini_get("display_errors"), "uid" => posix_getuid(), "groups" => posix_getgroups(),
  "random" => mt_rand(),
]), "\n";
`;

const CLEAN = {
  function: false, global: false, precision: "14", env: false, usr1: 0, files: ["main.php"], tmp: false, shm_files: false, sandbox: false,
  leaked_fd: false, others: [], argv: ["main.php"], argc: 1, file: "/sandbox/run/main.php", script: "main.php", home: "/sandbox/run",
  memory_limit: `${heapMb(LIMITS.memoryMb)}M`, display_errors: "stderr", uid: 65534, groups: [],
};

const START = String.raw`<?php
$r = getrusage();
$cpu = ($r["ru_utime.tv_sec"] + $r["ru_stime.tv_sec"]) * 1000 + ($r["ru_utime.tv_usec"] + $r["ru_stime.tv_usec"]) / 1000;
$st = preg_split('/\s+/', trim(substr(strrchr(file_get_contents("/proc/self/stat"), ")"), 1)));
$up = (float) explode(" ", file_get_contents("/proc/uptime"))[0];
echo $cpu, " ", $up - $st[19] / 100, "\n";
`;

function suite(name: string, open: () => Promise<Opened>) {
  return async () => {
    const opened = await open();
    const skip = opened.skip || (opened.sandbox?.languages.includes("php") ? false : "the scripting image (php) is not built: assay sandbox build --lang php");
    describe(`${name}: the warm PHP`, { skip }, () => {
      const sb = opened.sandbox as Sandbox;
      after(() => sb?.close());
      const run = (code: string, limits = LIMITS, stdin?: string) => sb.run({ language: "php", code, limits, stdin });
      const ok = (r: Awaited<ReturnType<typeof run>>) => assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);

      test("a run is forked from the warm php, between runs: under 14 ms of CPU at its first line, 20+ when php starts", async () => {
        ok(await run("<?php echo 1;"));
        await new Promise((r) => setTimeout(r, 1500));
        const cpus: number[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await run(START);
          ok(r);
          const [cpu, age] = r.stdout.trim().split(" ").map(Number);
          cpus.push(cpu);
          if (i === 0) assert.ok(age >= 1.0, `the run's process is ${age.toFixed(3)} s old: it was made when its job came, not ahead`);
        }
        const med = [...cpus].sort((a, b) => a - b)[1];
        // A fork's 5-9 ms against a start's 20+: the bound sits between (8 failed at 8.0-9.6 ms on a loaded CI host).
        assert.ok(med < 14, `${med.toFixed(2)} ms of CPU before the program's first line (${cpus.map((c) => c.toFixed(2)).join(", ")}): not a fork`);
      });

      test("a polluting run is followed by a clean one on the same slot, with a fresh random seed, and a run is `php -d … main.php`", async () => {
        await assertCleanAfterPollution(run, POLLUTE, PROBE, CLEAN);
      });

      test("stdin, exit statuses and an uncaught exception as under php", async () => {
        const sum = await run("<?php\n[$a, $b] = array_map('intval', explode(' ', trim(fgets(STDIN))));\necho $a + $b, \"\\n\";\n", LIMITS, "2 3\n");
        ok(sum);
        assert.equal(sum.stdout, "5\n");
        const code = await run("<?php\nregister_shutdown_function(function () { echo \"bye\\n\"; });\necho \"hi\\n\";\nexit(3);\n");
        assert.equal(code.exitCode, 3);
        assert.equal(code.stdout, "hi\nbye\n");
        const boom = await run("<?php\nthrow new Exception('boom');\n");
        assert.equal(boom.exitCode, 255);
        assert.match(boom.stderr, /PHP Fatal error: {2}Uncaught Exception: boom in \/sandbox\/run\/main\.php:2/);
        const parse = await run("<?php\nfunction f( {\n");
        assert.equal(parse.exitCode, 255);
        assert.match(parse.stderr, /Parse error: .* in \/sandbox\/run\/main\.php on line 2/);
      });

      test("hostile runs score as before: a loop, a memory bomb, a fork bomb, endless output", async () => {
        const loop = await run("<?php\nwhile (true) {}\n", { wallMs: 2000, cpuMs: 1000, memoryMb: 256 });
        assert.equal(loop.status, "time_limit");
        const mem = await run("<?php\n$l = [];\nwhile (true) $l[] = str_repeat('x', 1 << 24);\n", { wallMs: 10_000, cpuMs: 5000, memoryMb: 128 });
        assert.equal(mem.status, "memory_limit", `${mem.message ?? ""} ${mem.stderr.slice(-200)}`);
        const bomb = await run("<?php\nwhile (true) { @pcntl_fork(); }\n", { wallMs: 3000, cpuMs: 2000, memoryMb: 256 });
        assert.notEqual(bomb.status, "sandbox_error", bomb.message);
        assert.notEqual(bomb.status, "finished");
        const out = await run("<?php\nwhile (true) echo str_repeat('x', 1000), \"\\n\";\n");
        assert.equal(out.status, "output_limit");
        const after = await run(PROBE);
        ok(after);
        const seen = JSON.parse(after.stdout);
        delete seen.random;
        assert.deepEqual(seen, CLEAN);
      });
    });
  };
}

await suite("docker", () => openDockerForTests(1))();
await suite("bwrap", () => openBwrapForTests(1))();
