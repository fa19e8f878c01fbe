/**
 * The server follows its sandbox (issue 26): an image built while it runs is used by the next
 * item that needs it, without a restart. The test never touches the real images other tests use:
 * the sandbox is pointed (DockerOptions.tagOf) at tags of its own, `assay-test-live-<name>:<run>`,
 * made with `docker tag` from the real images and removed at the end.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import request from "supertest";
import { openDocker, dockerOptions, IMAGE_RECHECK_MS } from "../sandbox/docker/index.js";
import { imageTag, recipeFor, type Recipe } from "../sandbox/images.js";
import { loadConfig } from "../src/core/config.js";
import { lazy } from "../src/core/services.js";
import type { Sandbox } from "../sandbox/types.js";
import { testApp } from "./helpers.js";
import { IN_CI } from "./sandboxes.js";

const run = `${process.pid}-${Date.now().toString(36)}`;
const testTag = (r: Recipe) => `assay-test-live-${r.name}:${run}`;
const docker = (...args: string[]) => execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

function available(): string | false {
  try {
    for (const name of ["python", "cpp"]) docker("image", "inspect", "--format", "{{.Id}}", imageTag(recipeFor(name)!));
    return false;
  } catch (e) {
    if (IN_CI) throw new Error(`CI=true but docker or the python/cpp sandbox images are unavailable: ${(e as Error).message}`);
    return "docker with the python and cpp sandbox images is not available here";
  }
}

const CPP = '#include <cstdio>\nint main() { std::printf("built later\\n"); return 0; }\n';

test("an image built after start is used by the next item, through /run_code, without a restart", { skip: available() }, async () => {
  // Only python's image is "built" (tagged) when the sandbox starts; cpp's is not.
  docker("tag", imageTag(recipeFor("python")!), testTag(recipeFor("python")!));
  let sandbox: Sandbox | null = null;
  try {
    const opened = await openDocker({ ...dockerOptions(loadConfig().sandbox), poolSize: 1, tagOf: testTag });
    sandbox = opened.sandbox;
    assert.ok(sandbox, opened.note);
    assert.match(opened.note, /not built: assay-test-live-cpp/, "the start-up note names the missing image");
    assert.ok(!sandbox.languages.includes("cpp"));
    const { app } = await testApp({}, undefined, { sandbox: lazy(async () => sandbox!) });
    const body = { code: CPP, language: "cpp", run_timeout: 10, compile_timeout: 30 };
    const before = await request(app).post("/run_code").send(body).expect(200);
    assert.equal(before.body.status, "SandboxError");
    assert.match(before.body.message, /not built here; build it with `npx assay sandbox build --lang cpp`/);

    // `npx assay sandbox build --lang cpp`, as far as the server can tell.
    docker("tag", imageTag(recipeFor("cpp")!), testTag(recipeFor("cpp")!));
    await new Promise((r) => setTimeout(r, IMAGE_RECHECK_MS + 100));
    const after = await request(app).post("/run_code").send(body).expect(200);
    assert.equal(after.body.status, "Success", JSON.stringify(after.body));
    assert.equal(after.body.run_result.stdout, "built later\n");
    assert.ok(sandbox.languages.includes("cpp"), "the sandbox's languages (shown in /readyz) now include cpp");
  } finally {
    await sandbox?.close();
    for (const name of ["python", "cpp"]) {
      try {
        docker("rmi", testTag(recipeFor(name)!));
      } catch {
        /* not tagged */
      }
    }
  }
});

test("a missing image is looked for at most once per IMAGE_RECHECK_MS, however many items ask", { skip: available() }, async () => {
  docker("tag", imageTag(recipeFor("python")!), testTag(recipeFor("python")!));
  let sandbox: Sandbox | null = null;
  try {
    sandbox = (await openDocker({ ...dockerOptions(loadConfig().sandbox), poolSize: 1, tagOf: (r) => (r.name === "python" ? testTag(r) : `assay-test-live-never-${r.name}:${run}`) })).sandbox;
    assert.ok(sandbox);
    const { engines } = sandbox as unknown as { engines: { list: { docker: { getImage: (t: string) => unknown } }[] } };
    let looks = 0;
    for (const e of engines.list) {
      const getImage = e.docker.getImage.bind(e.docker);
      e.docker.getImage = (t: string) => (looks++, getImage(t));
    }
    const outs = await Promise.all(Array.from({ length: 200 }, () => sandbox!.run({ language: "cpp", code: CPP })));
    assert.ok(outs.every((o) => o.status === "sandbox_error"));
    assert.equal(looks, 1, "200 items asking for a missing image cost one look at the engine");
  } finally {
    await sandbox?.close();
    try {
      docker("rmi", testTag(recipeFor("python")!));
    } catch {
      /* not tagged */
    }
  }
});
