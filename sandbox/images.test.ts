import { test } from "node:test";
import assert from "node:assert/strict";
import { pullAllowed, debianMirror } from "./images.js";

test("ASSAY_SANDBOX_PULL=0 turns registry pulls off; anything else leaves them on", () => {
  assert.equal(pullAllowed({ ASSAY_SANDBOX_PULL: "0" }), false);
  assert.equal(pullAllowed({}), true);
  assert.equal(pullAllowed({ ASSAY_SANDBOX_PULL: "1" }), true);
});

test("ASSAY_DEBIAN_MIRROR overrides the mirror read from apt's sources", () => {
  assert.equal(debianMirror({ ASSAY_DEBIAN_MIRROR: "http://mirror.example/debian" }), "http://mirror.example/debian");
  assert.match(debianMirror({}), /^https?:\/\/\S+debian\/?$/);
});
