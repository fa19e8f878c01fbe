/** A session's `files` are checked before any sandbox is taken: what the sandbox cannot write is a 400, not a 500. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkFiles } from "./service.js";
import { SessionRequestError } from "./types.js";

test("files the sandbox could not write are refused as the caller's error, naming the path", () => {
  const refused: [Record<string, unknown>, RegExp][] = [
    [{ "../x": "" }, /leaves the session's directory/],
    [{ "a/../../x": "" }, /leaves the session's directory/],
    [{ "/etc/passwd": "" }, /is absolute/],
    [{ "": "" }, /is empty/],
    [{ "a\0b": "" }, /holds a NUL/],
    [{ "a/": "" }, /empty or '.' segment/],
    [{ "./a": "" }, /empty or '.' segment/],
    [{ "a//b": "" }, /empty or '.' segment/],
    [{ a: "1", "a/b": "2" }, /inside another file's path/],
    [{ "a/b/c": "2", "a/b": "1" }, /inside another file's path/],
    [{ "\udc00": "" }, /lone surrogate/],
    [{ x: "ok \ud800" }, /lone surrogate/],
    [{ x: 5 }, /must be utf8 text/],
    [{ ["d/".repeat(40) + "x"]: "" }, /deeper than 32/],
  ];
  for (const [files, why] of refused) {
    assert.throws(() => checkFiles(files), (e: unknown) => e instanceof SessionRequestError && why.test((e as Error).message), JSON.stringify(files));
  }
  for (const files of [undefined, {}, { "a.txt": "x", "d/e/f.txt": "😀", "a-b": "", a: "" }, { "in/x": "", "in/y": "" }]) checkFiles(files);
});
