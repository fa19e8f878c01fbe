/**
 * The rubric UI end to end, in a real headless Chromium (Debian's, driven by playwright-core; no
 * browser download) against a real server on loopback with API keys on, an in-memory store and
 * the judge fixture: create a rubric, edit it, score two responses, read per-criterion reasons,
 * diff and restore an old version, score a math item in the playground, and check the layout at
 * 1280 and 800 px. Without chromium (or without the built UI) this skips with a notice; under
 * CI=true it fails instead. ASSAY_UI_SCREENSHOTS=1 also writes docs/ui-editor.png and
 * docs/ui-try-it.png.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import request from "supertest";
import express from "express";
import { chromium, type Browser, type Page } from "playwright-core";
import { loadConfig } from "../src/core/config.js";
import { startServer, type Running } from "../src/server/start.js";
import { uiRoutes, UI_DIST } from "../src/server/routes/ui.js";
import { startJudgeFixture, type JudgeFixture } from "./fixtures/judge-server.js";
import { quiet, testApp } from "./helpers.js";
import { tempDir } from "./scratch.js";

const CHROMIUM = process.env.ASSAY_CHROMIUM ?? "/usr/bin/chromium";
const KEY = "e2e-secret-key";
const missing = [
  existsSync(CHROMIUM) ? "" : `no browser at ${CHROMIUM} (bash scripts/setup-browser.sh installs Debian's chromium)`,
  existsSync(join(UI_DIST, "index.html")) ? "" : `the UI is not built (${UI_DIST}; npm run build:ui)`,
].filter(Boolean).join("; ");
const skip = missing && process.env.CI !== "true" ? `UI end-to-end tests skipped: ${missing}` : false;
if (skip) console.log(skip);

describe("/ui route", () => {
  test("without a build it answers 503 with a message saying how to build it", async () => {
    const app = express().use(uiRoutes(tempDir("assay-ui-")));
    const res = await request(app).get("/ui/");
    assert.equal(res.status, 503);
    assert.match(res.text, /npm run build/);
  });

  test("with API keys on, the app's files are public and the API it calls is not", { skip: existsSync(join(UI_DIST, "index.html")) ? false : "UI not built" }, async () => {
    const { app } = await testApp({ ASSAY_API_KEYS: KEY });
    const page = await request(app).get("/ui/");
    assert.equal(page.status, 200);
    assert.match(page.headers["content-type"], /html/);
    const asset = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
    assert.ok(asset, "index.html names its script");
    const js = await request(app).get(asset);
    assert.equal(js.status, 200);
    assert.match(js.headers["cache-control"], /immutable/);
    // Nothing fetched from the net: no absolute http(s) URLs to scripts, styles or fonts.
    assert.doesNotMatch(page.text, /(src|href)="https?:/);
    assert.equal((await request(app).get("/rubrics")).status, 401);
    assert.equal((await request(app).get("/rubrics").set("authorization", `Bearer ${KEY}`)).status, 200);
  });
});

describe("rubric UI in Chromium", { skip }, () => {
  let judge: JudgeFixture;
  let server: Running;
  let browser: Browser;
  let page: Page;
  const shots = process.env.ASSAY_UI_SCREENSHOTS === "1";
  const pageErrors: string[] = [];

  before(async () => {
    if (missing) throw new Error(`CI=true and ${missing}`);
    judge = await startJudgeFixture();
    server = await startServer(
      loadConfig({
        ASSAY_HOST: "127.0.0.1", ASSAY_PORT: "0", ASSAY_DATA_DIR: ":memory:", ASSAY_SANDBOX: "none", ASSAY_LOG_LEVEL: "silent",
        ASSAY_API_KEYS: KEY, ASSAY_JUDGE_BASE_URL: judge.url, ASSAY_JUDGE_MODEL: "fx", ASSAY_WORKERS: "1",
      }),
      quiet,
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(30_000);
    page.on("dialog", (d) => void d.accept());
    page.on("pageerror", (e) => pageErrors.push(e.message));
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await judge?.close();
  });

  const status = () => page.getByRole("status");
  /** The computed text colour of the element with this test id. */
  const colour = (testId: string) => page.getByTestId(testId).evaluate((e) => getComputedStyle(e).color);

  test("the API key is asked for once and kept for the tab", async () => {
    await page.goto(`${server.url}/ui/`);
    await page.getByText("This server needs an API key").waitFor();
    await page.getByLabel("API key").fill(KEY);
    await page.getByRole("button", { name: "Use key" }).click();
    await page.getByRole("heading", { name: "No rubric open" }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem("assay.apiKey")), KEY);
    await page.reload();
    await page.getByRole("heading", { name: "No rubric open" }).waitFor();
  });

  test("keyboard: from the search box, Tab reaches New rubric, Enter opens a draft with focus on its id", async () => {
    await page.getByLabel("Search").focus();
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "New rubric");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "New rubric" }).waitFor();
    await page.waitForFunction(() => document.activeElement?.id === "rubric-id");
  });

  test("create a rubric; a server error shows next to the field it names", async () => {
    await page.getByRole("button", { name: "New rubric" }).click();
    await page.getByLabel("Id", { exact: true }).fill("capital");
    // No title: the server's 400 names "title" and the UI shows it under that input.
    const first = page.locator("li.criterion").nth(0);
    await first.getByLabel("Description").fill('Names "Paris" as the capital.');
    await first.getByLabel("Weight").fill("3");
    await page.getByRole("button", { name: "Create rubric" }).click();
    await page.locator("#err-title").waitFor();
    assert.match(await page.locator("#err-title").innerText(), /title/);
    assert.equal(await page.getByLabel("Title").getAttribute("aria-invalid"), "true");

    await page.getByLabel("Title").fill("Capital of France");
    await page.getByRole("button", { name: "Add criterion" }).click();
    const second = page.locator("li.criterion").nth(1);
    // Focus moved to the new criterion's description: the keyboard follows the work.
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), "TEXTAREA");
    await page.keyboard.type('Mentions "France".');
    await second.getByLabel("Weight").fill("1");
    await page.getByRole("button", { name: "Create rubric" }).click();
    await status().filter({ hasText: "Saved capital as version 1." }).waitFor();
    await page.getByRole("list", { name: "Stored rubrics" }).getByRole("button", { name: /capital/ }).waitFor();
  });

  test("an empty response is refused in the page, with a message, and never reaches the judge", async () => {
    await page.getByLabel("Prompt").fill("What is the capital of France?");
    const responses = page.locator("ol.responses textarea");
    await responses.nth(0).fill("Paris is the capital of France.");
    await responses.nth(1).fill("   ");
    const calls = judge.stats.requests;
    await page.getByRole("button", { name: "Score responses" }).click();
    await page.locator("#try-err").waitFor();
    assert.match(await page.locator("#try-err").innerText(), /Response 2 is empty: write the response to score, or remove it/);
    assert.equal(await responses.nth(1).getAttribute("aria-invalid"), "true");
    assert.equal(await page.evaluate(() => document.activeElement?.id), await responses.nth(1).getAttribute("id"));
    assert.equal(judge.stats.requests, calls, "no judge call for a refused run");
    assert.equal(await page.getByTestId("reward-1").count(), 0, "nothing was scored");
  });

  test("score two responses and read each criterion's verdict and reason", async () => {
    await page.getByLabel("Prompt").fill("What is the capital of France?");
    const responses = page.locator("ol.responses textarea");
    await responses.nth(0).fill("Paris is the capital of France.");
    await responses.nth(1).fill("It is Lyon, in France.");
    await page.getByRole("button", { name: "Score responses" }).click();
    await page.getByTestId("reward-1").waitFor();
    assert.equal(await page.getByTestId("reward-1").innerText(), "1");
    assert.equal(await page.getByTestId("reward-2").innerText(), "0.25");
    assert.equal(await page.getByTestId("reward-1").getAttribute("data-grade"), "pass");
    assert.equal(await page.getByTestId("reward-2").getAttribute("data-grade"), "partial");
    assert.notEqual(await colour("reward-1"), await colour("reward-2"), "partial credit is not shown as full marks");
    assert.equal(await page.locator("#try-err").count(), 0, "the empty-response message is gone once every response is written");
    const r2 = page.getByRole("article", { name: "Response 2 result" });
    const paris = r2.locator('tr[data-criterion="c1"]');
    assert.equal(await paris.locator(".verdict").innerText(), "not met");
    assert.equal(await paris.locator(".why").innerText(), "the response does not");
    const france = r2.locator('tr[data-criterion="c2"]');
    assert.equal(await france.locator(".verdict").innerText(), "met");
    assert.equal(await france.locator(".why").innerText(), "the response does what the criterion asks");
  });

  test("edit (a pitfall, a reorder), re-run unsaved: new reward beside the old", async () => {
    await page.getByRole("button", { name: "Add criterion" }).click();
    const third = page.locator("li.criterion").nth(2);
    await third.getByLabel("Description").fill('Brings up "Lyon".');
    // A draft the server refuses (a duplicate criterion id) is scored invalid, and the reason
    // shows under the offending input in the editor.
    await third.getByLabel("Criterion id").fill("c1");
    await page.getByRole("button", { name: "Score again" }).click();
    await third.locator(".field-error").waitFor();
    assert.match(await third.locator(".field-error").innerText(), /used twice/);
    assert.equal(await third.getByLabel("Criterion id").getAttribute("aria-invalid"), "true");
    await third.getByLabel("Criterion id").fill("c3");
    await third.getByLabel("Type").selectOption("pitfall");
    await third.getByLabel("Penalty").fill("1");
    // Move it to the top with the keyboard-reachable buttons.
    await page.getByRole("button", { name: "Move c3 up" }).click();
    await page.getByRole("button", { name: "Move c3 up" }).click();
    const ids = await page.locator("li.criterion").evaluateAll((els) => els.map((e) => (e.querySelector("input") as HTMLInputElement).value));
    assert.deepEqual(ids, ["c3", "c1", "c2"]);
    await page.getByText("rubric edited since the last run").waitFor();
    await page.getByRole("button", { name: "Score again" }).click();
    await page.getByTestId("was-2").waitFor();
    assert.equal(await page.getByTestId("reward-2").innerText(), "0");
    // A 0 is a failure: red and labelled so, never the green of a 1.
    assert.equal(await page.getByTestId("reward-2").getAttribute("data-grade"), "fail");
    assert.equal(await colour("reward-2"), "rgb(179, 38, 30)");
    assert.equal(await colour("reward-1"), "rgb(26, 127, 55)");
    const r2 = page.getByRole("article", { name: "Response 2 result" });
    assert.equal(await r2.locator(".grade").innerText(), "no credit");
    assert.match(await page.getByTestId("was-2").innerText(), /was 0\.25, -0\.25/);
    assert.match(await page.getByTestId("was-1").innerText(), /was 1, unchanged/);
    assert.equal(await page.locator("li.criterion .field-error").count(), 0, "a clean run clears the refused draft's error");
    const lyon = page.getByRole("article", { name: "Response 2 result" }).locator('tr[data-criterion="c3"]');
    assert.equal(await lyon.locator(".verdict").innerText(), "made (pitfall)");
    if (shots) {
      await page.locator("section.editor").screenshot({ path: "docs/ui-editor.png" });
      await page.locator("section.tryit").screenshot({ path: "docs/ui-try-it.png" });
    }
    await page.getByRole("button", { name: "Save new version" }).click();
    await status().filter({ hasText: "Saved capital as version 2." }).waitFor();
  });

  test("diff two versions side by side and restore the old one", async () => {
    const history = page.getByRole("region", { name: "Version history" });
    await history.getByLabel("Compare").selectOption("1");
    await history.getByLabel("with").selectOption("2");
    const diff = history.getByRole("table", { name: "Differences between version 1 and version 2" });
    await diff.waitFor();
    const added = await diff.locator("td.ins").allInnerTexts();
    assert.deepEqual(added.map((t) => t.trim()), ['+ c3 [pitfall -1] Brings up "Lyon".']);
    assert.equal(await diff.locator("td.del").count(), 0);
    await history.getByRole("button", { name: "Restore version 1" }).click();
    await status().filter({ hasText: "Restored version 1 as version 3." }).waitFor();
    assert.equal(await page.locator("li.criterion").count(), 2);
    const v = await (await fetch(`${server.url}/rubrics/capital`, { headers: { authorization: `Bearer ${KEY}` } })).json();
    assert.equal(v.version, 3);
    assert.deepEqual(v.criteria.map((c: { id: string }) => c.id), ["c1", "c2"]);
  });

  test("export, import, duplicate, search and delete", async () => {
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export JSON" }).click()]);
    assert.equal(download.suggestedFilename(), "capital.rubric.json");
    const doc = JSON.parse(readFileSync(await download.path(), "utf8"));
    assert.equal(doc.rubrics[0].versions.length, 3);
    doc.rubrics[0].id = "imported-capital";
    await page.getByLabel("Import JSON").setInputFiles({ name: "x.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(doc)) });
    const list = page.getByRole("list", { name: "Stored rubrics" });
    await list.getByRole("button", { name: /imported-capital/ }).waitFor();

    await page.getByRole("button", { name: "Duplicate" }).click();
    assert.equal(await page.getByLabel("Id", { exact: true }).inputValue(), "capital-copy");
    await page.getByRole("button", { name: "Create rubric" }).click();
    await status().filter({ hasText: "Saved capital-copy as version 1." }).waitFor();
    await list.getByRole("button", { name: /capital-copy/ }).waitFor();
    assert.deepEqual(await list.locator(".rid").allInnerTexts(), ["capital", "capital-copy", "imported-capital"]);

    await page.getByLabel("Search").fill("imported");
    assert.deepEqual(await list.locator(".rid").allInnerTexts(), ["imported-capital"]);
    await page.getByLabel("Search").fill("");

    await page.getByRole("button", { name: "Delete" }).click();
    await status().filter({ hasText: "Deleted capital-copy." }).waitFor();
    await list.getByRole("button", { name: /capital-copy/ }).waitFor({ state: "detached" });
    assert.deepEqual(await list.locator(".rid").allInnerTexts(), ["capital", "imported-capital"]);
    await list.getByRole("button", { name: /^capital/ }).click();
    await status().filter({ hasText: "Opened capital (version 3)." }).waitFor();
  });

  test("no horizontal scrolling at 1280 px or 800 px", async () => {
    for (const width of [1280, 800]) {
      await page.setViewportSize({ width, height: 900 });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${overflow} px too wide at ${width} px`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test("the playground scores a math item from a form built from the verifier's schemas", async () => {
    await page.getByRole("button", { name: "Verifier playground" }).click();
    await page.getByLabel("Verifier", { exact: true }).selectOption("math");
    await page.getByLabel("Response", { exact: true }).fill("So the answer is \\boxed{\\frac{1}{2}}.");
    await page.getByLabel(/^Reference/).fill("0.5");
    await page.getByRole("button", { name: "Score", exact: true }).click();
    await page.getByTestId("pg-reward").waitFor();
    assert.equal(await page.getByTestId("pg-reward").innerText(), "1");
    assert.equal(await page.getByTestId("pg-reward").getAttribute("data-grade"), "pass");
    // A wrong answer is a 0, shown as a failure.
    await page.getByLabel(/^Reference/).fill("0.75");
    await page.getByRole("button", { name: "Score", exact: true }).click();
    await page.locator('[data-testid="pg-reward"][data-grade="fail"]').waitFor();
    assert.equal(await page.getByTestId("pg-reward").innerText(), "0");
    assert.equal(await colour("pg-reward"), "rgb(179, 38, 30)");
    await page.getByLabel(/^Reference/).fill("0.5");
    // The options form came from the schema: a boolean with its default, an integer input.
    assert.equal(await page.getByLabel("strip_think").isChecked(), true);
    assert.equal(await page.getByLabel("seed").getAttribute("type"), "number");
    // A reference the server refuses (status invalid, field "reference") shows by that field.
    await page.getByLabel("Reference as JSON (lists, objects)").check();
    await page.getByLabel(/^Reference/).fill('{"nope": 1}');
    await page.getByRole("button", { name: "Score", exact: true }).click();
    await page.locator("#pg-reference-err").waitFor();
    assert.match(await page.locator("#pg-reference-err").innerText(), /reference/);
    assert.equal(await page.getByTestId("pg-reward").innerText(), "—");
    if (shots) await page.locator("section.playground").screenshot({ path: "docs/ui-playground.png" });
  });

  test("every verifier's form renders from its schemas, and the page threw nothing", async () => {
    const names = await page.getByLabel("Verifier", { exact: true }).locator("option").allInnerTexts();
    assert.ok(names.length >= 5 && !names.includes("rubric"), names.join(","));
    for (const name of names) {
      await page.getByLabel("Verifier", { exact: true }).selectOption(name);
      await page.getByLabel("Response", { exact: true }).waitFor();
      assert.ok((await page.locator(".options .field").count()) + (await page.locator("#pg-options").count()) + (await page.getByText("This verifier has no options.").count()) > 0, name);
    }
    // format takes no reference: an empty JSON box sends none, and the item is scored.
    await page.getByLabel("Verifier", { exact: true }).selectOption("format");
    await page.getByLabel("Response", { exact: true }).fill("<think>short</think><answer>42</answer>");
    await page.getByRole("button", { name: "Score", exact: true }).click();
    const result = page.getByRole("article", { name: "Playground result" });
    await result.waitFor();
    assert.equal(await result.locator(".badge").innerText(), "ok");
    assert.deepEqual(pageErrors, []);
  });
});
