/**
 * Reads the request examples out of the Markdown documentation, so tests/docs-examples.test.ts
 * can send each one to a live server and compare the reply with the one printed.
 *
 * What counts as an example (docs/writing-a-verifier.md, "A README", says how to write one):
 * - a ```bash or ```sh block holding `curl` commands: each command runs in order; a ```json block
 *   right after it is the reply of the block's last command;
 * - a ```json block (not a reply) holding items, i.e. objects with a "verifier": each is sent to
 *   POST /reward and must score `ok`; a line `→ reward N` (or `→ reward a/b`) right after the
 *   block is the reward of its single item;
 * - a ```text block of `{item}` lines, each followed by a `→ {reply}` line.
 * An example that cannot run here carries `<!-- example: skip (the reason) -->` on the line
 * before its fence; the test lists them, so none is skipped silently. Anything that looks like
 * an example but cannot be read (an unknown curl option, `{...}` placeholders in JSON) is an
 * error, not a skip.
 */

/** One HTTP request, as curl would send it. */
export interface DocRequest {
  method: string;
  /** Path and query, e.g. "/reward?x=1". */
  path: string;
  headers: Record<string, string>;
  /** A body, or multipart fields (value `{file}`: the named file's contents). */
  body?: { text: string } | { file: string; stripNewlines: boolean } | { form: [string, { value: string } | { file: string }][] };
  /** `> file`: where the reply is saved. */
  saveTo?: string;
}

export interface DocExample {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  kind: "curl" | "item" | "arrow";
  requests: DocRequest[];
  /** The documented reply of the last request (parsed JSON), if any. */
  reply?: unknown;
  /** The documented reward of the last request (`→ reward N`), if any. */
  reward?: number;
  skip?: string;
}

interface Fence { lang: string; start: number; end: number; body: string[] }

/** Fenced blocks (``` or ````) with their 0-based line numbers. */
export function fences(lines: string[]): Fence[] {
  const out: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const ticks = open[1];
    let j = i + 1;
    while (j < lines.length && !(lines[j].startsWith(ticks) && lines[j].trim() === ticks)) j++;
    out.push({ lang: open[2], start: i, end: j, body: lines.slice(i + 1, j) });
    i = j;
  }
  return out;
}

const SKIP = /^<!--\s*example:\s*skip\s*\((.+)\)\s*-->\s*$/;

/** Every example of one Markdown file; throws, naming the line, for one it cannot read. */
export function extractExamples(file: string, text: string): DocExample[] {
  const lines = text.split("\n");
  const blocks = fences(lines);
  const out: DocExample[] = [];
  const replies = new Set<Fence>();
  for (let b = 0; b < blocks.length; b++) {
    const f = blocks[b];
    if (replies.has(f)) continue;
    const at = `${file}:${f.start + 1}`;
    const skipLine = f.start > 0 ? SKIP.exec(lines[f.start - 1].trim()) : null;
    const skip = skipLine?.[1];
    const next = blocks[b + 1];
    const nextIsReply = next && next.lang === "json" && lines.slice(f.end + 1, next.start).every((l) => l.trim() === "");
    if ((f.lang === "bash" || f.lang === "sh") && f.body.some((l) => /(^|\s)curl\s/.test(l))) {
      const ex: DocExample = { file, line: f.start + 1, kind: "curl", requests: [], skip };
      if (nextIsReply) {
        replies.add(next);
        ex.reply = parseJson(next.body.join("\n"), `${file}:${next.start + 1} (the reply)`);
      }
      if (!skip) ex.requests = shellCommands(f.body.join("\n"), at).map((argv) => curlRequest(argv, at));
      out.push(ex);
    } else if (f.body.some((l) => /^\s*(\$\s*)?curl\s/.test(l))) {
      throw new Error(`${at}: a curl command in a \`\`\`${f.lang || "(no language)"} block; write it in a \`\`\`bash block so it runs with the others`);
    } else if (f.lang === "json" && f.body.some((l) => l.includes('"verifier"'))) {
      const ex: DocExample = { file, line: f.start + 1, kind: "item", requests: [], skip };
      const after = lines[f.end + 1]?.trim() ?? "";
      if (after.startsWith("→")) ex.reward = arrowReward(after, `${file}:${f.end + 2}`);
      if (!skip) {
        const items = jsonValues(f.body, at);
        if (ex.reward !== undefined && items.length !== 1) throw new Error(`${at}: "→ reward" follows a block of ${items.length} items; give each its own block`);
        ex.requests = items.map((item) => itemRequest(item, at));
      }
      out.push(ex);
    } else if (f.lang === "text" && f.body.some((l) => l.startsWith("→"))) {
      // {item} / → {reply} pairs: one example per pair.
      for (let i = 0; i < f.body.length; i++) {
        const l = f.body[i].trim();
        if (!l) continue;
        const here = `${file}:${f.start + 2 + i}`;
        const reply = f.body[i + 1]?.trim() ?? "";
        if (!l.startsWith("{") || !reply.startsWith("→")) throw new Error(`${here}: a text example is an {item} line followed by a "→ {reply}" line`);
        out.push({
          file, line: f.start + 2 + i, kind: "arrow", skip,
          requests: skip ? [] : [itemRequest(parseJson(l, here), here)],
          reply: parseJson(reply.slice(1).trim(), `${file}:${f.start + 3 + i}`),
        });
        i++;
      }
    }
  }
  return out;
}

function parseJson(text: string, at: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${at}: not valid JSON (${(err as Error).message}); write the real value, not a placeholder such as {...}`);
  }
}

/** Consecutive JSON values, each starting on a line that begins with "{" (or a single value). */
function jsonValues(body: string[], at: string): unknown[] {
  const starts = body.flatMap((l, i) => (l.startsWith("{") ? [i] : []));
  if (starts.length === 0) throw new Error(`${at}: a JSON item block holds no object starting a line`);
  return starts.map((s, k) => parseJson(body.slice(s, starts[k + 1] ?? body.length).join("\n"), at));
}

function itemRequest(item: unknown, at: string): DocRequest {
  if (!item || typeof item !== "object" || typeof (item as { verifier?: unknown }).verifier !== "string") {
    throw new Error(`${at}: an example item is a JSON object with a "verifier"`);
  }
  return { method: "POST", path: "/reward", headers: { "content-type": "application/json" }, body: { text: JSON.stringify(item) } };
}

function arrowReward(line: string, at: string): number {
  const m = /^→\s*`?reward`?\s+(-?\d+(?:\.\d+)?)(?:\s*\/\s*(\d+(?:\.\d+)?))?(?=[\s(,;:]|\.(?!\d)|$)/.exec(line);
  if (!m) throw new Error(`${at}: after an example item, write "→ reward N" (or "→ reward a/b"), then any prose`);
  return m[2] === undefined ? Number(m[1]) : Number(m[1]) / Number(m[2]);
}

/**
 * The simple commands of a shell snippet as argument lists: quotes ('…', "…", the '\'' idiom),
 * backslash-newline, comments and `> file`. Pipes, `&&`, `;`, `$(…)` and variables are refused:
 * an example a reader pastes should not need them.
 */
export function shellCommands(src: string, at: string): string[][] {
  const cmds: string[][] = [];
  let argv: string[] = [];
  let word: string | null = null;
  const end = () => { if (word !== null) argv.push(word); word = null; };
  const endCmd = () => { end(); if (argv.length) cmds.push(argv); argv = []; };
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === "\\") {
      if (src[i + 1] === "\n") { i++; continue; }
      word = (word ?? "") + (src[i + 1] ?? "");
      i++;
    } else if (c === "'") {
      const close = src.indexOf("'", i + 1);
      if (close < 0) throw new Error(`${at}: unclosed ' quote`);
      word = (word ?? "") + src.slice(i + 1, close);
      i = close;
    } else if (c === '"') {
      let s = "";
      let j = i + 1;
      for (; j < src.length && src[j] !== '"'; j++) {
        if (src[j] === "$" || src[j] === "`") throw new Error(`${at}: shell expansion inside "..." is not supported in examples`);
        if (src[j] === "\\" && '"\\$`\n'.includes(src[j + 1])) { j++; if (src[j] === "\n") continue; }
        s += src[j];
      }
      if (j >= src.length) throw new Error(`${at}: unclosed " quote`);
      word = (word ?? "") + s;
      i = j;
    } else if (c === "#" && word === null) {
      while (i < src.length && src[i] !== "\n") i++;
      endCmd();
    } else if (c === "\n") {
      endCmd();
    } else if (c === " " || c === "\t") {
      end();
    } else if ("|;&$`<(){}".includes(c)) {
      throw new Error(`${at}: "${c}" (pipes, lists, expansions) is not supported in a runnable example; one simple curl command a line`);
    } else {
      word = (word ?? "") + c;
    }
  }
  endCmd();
  return cmds;
}

/** curl's request for an argument list, for the options the documentation uses. */
export function curlRequest(argv: string[], at: string): DocRequest {
  if (argv[0] !== "curl") throw new Error(`${at}: only curl commands run in an example block, not "${argv[0]}"`);
  let method: string | undefined;
  let url: string | undefined;
  const headers: Record<string, string> = {};
  let body: DocRequest["body"];
  let saveTo: string | undefined;
  const form: [string, { value: string } | { file: string }][] = [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    const arg = () => {
      if (i + 1 >= argv.length) throw new Error(`${at}: ${a} needs a value`);
      return argv[++i];
    };
    if (a === "-s" || a === "--silent" || a === "-S" || a === "-sS" || a === "--show-error") continue;
    else if (a === "-X" || a === "--request") method = arg();
    else if (a === "-H" || a === "--header") {
      const h = arg();
      const colon = h.indexOf(":");
      if (colon < 1) throw new Error(`${at}: header "${h}" is not "Name: value"`);
      headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
    } else if (a === "-d" || a === "--data" || a === "--data-binary" || a === "--data-raw") {
      if (body) throw new Error(`${at}: one -d per example command`);
      const v = arg();
      body = v.startsWith("@") && a !== "--data-raw" ? { file: v.slice(1), stripNewlines: a !== "--data-binary" } : { text: v };
    } else if (a === "-F" || a === "--form") {
      const v = arg();
      const eq = v.indexOf("=");
      if (eq < 1) throw new Error(`${at}: -F "${v}" is not name=value`);
      const value = v.slice(eq + 1);
      form.push([v.slice(0, eq), value.startsWith("@") ? { file: value.slice(1) } : { value }]);
    } else if (a === ">") saveTo = arg();
    else if (a.startsWith("-")) throw new Error(`${at}: curl option ${a} is not understood by the example runner (tests/docs-examples.ts)`);
    else if (url === undefined) url = a;
    else throw new Error(`${at}: a second URL "${a}"`);
  }
  if (!url) throw new Error(`${at}: curl without a URL`);
  const m = /^(?:https?:\/\/)?(?:localhost|127\.0\.0\.1):8787(\/[^\s]*)?$/.exec(url);
  if (!m) throw new Error(`${at}: an example talks to localhost:8787 (the default server), not ${url}`);
  if (form.length) {
    if (body) throw new Error(`${at}: -d and -F together`);
    body = { form };
  }
  // curl's own defaults: -d/-F make a POST; -d without a content type says form-urlencoded,
  // which no route takes (state-changing routes answer 415 to it).
  if (body && ("text" in body || "file" in body) && !headers["content-type"]) {
    throw new Error(`${at}: curl -d without -H 'content-type: application/json' sends application/x-www-form-urlencoded; add the header`);
  }
  return { method: method ?? (body ? "POST" : "GET"), path: m[1] ?? "/", headers, body, saveTo };
}

/** Keys whose values are timings or generated ids: present, but any value. */
export const IGNORED_KEYS = new Set(["elapsed_ms", "ms", "sim_ms", "execution_time", "created_at", "updated_at", "items_per_s", "eta_s", "uptime_s"]);

/**
 * Where `actual` differs from the documented `doc`: every documented field must be there with
 * the documented value (numbers exact); fields the documentation leaves out are allowed. A
 * documented string with "…" in it matches any text in its place.
 */
export function differences(doc: unknown, actual: unknown, path = "$"): string[] {
  if (typeof doc === "string" && doc.includes("…")) {
    const re = new RegExp(`^${doc.split("…").map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[\\s\\S]*")}$`);
    return typeof actual === "string" ? (re.test(actual) ? [] : [`${path}: ${JSON.stringify(actual)} does not match ${JSON.stringify(doc)}`])
      : doc === "…" && actual !== undefined ? [] : [`${path}: ${JSON.stringify(actual)} is not a string like ${JSON.stringify(doc)}`];
  }
  if (Array.isArray(doc)) {
    if (!Array.isArray(actual)) return [`${path}: documented an array, got ${JSON.stringify(actual)}`];
    if (doc.length !== actual.length) return [`${path}: documented ${doc.length} elements, got ${actual.length}: ${JSON.stringify(actual).slice(0, 400)}`];
    return doc.flatMap((d, i) => differences(d, actual[i], `${path}[${i}]`));
  }
  if (doc && typeof doc === "object") {
    if (!actual || typeof actual !== "object" || Array.isArray(actual)) return [`${path}: documented an object, got ${JSON.stringify(actual)}`];
    return Object.entries(doc).flatMap(([k, d]) => {
      const a = (actual as Record<string, unknown>)[k];
      if (!(k in actual)) return [`${path}.${k}: documented, missing from the reply`];
      if (IGNORED_KEYS.has(k)) return [];
      return differences(d, a, `${path}.${k}`);
    });
  }
  return Object.is(doc, actual) || doc === actual ? [] : [`${path}: documented ${JSON.stringify(doc)}, got ${JSON.stringify(actual)}`];
}
