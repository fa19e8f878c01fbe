/**
 * What makes a path in a request's `files` map one a sandbox cannot write: shared by the routes
 * and services that take such a map (sessions, /run_code), so each refuses it as the caller's
 * error (400) instead of a sandbox failure (500, or SandboxFusion's "SandboxError").
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Why `path` cannot be written under `dir` (a phrase such as "the session's directory"), or null:
 * empty, over 1,024 characters, a NUL or a lone surrogate, deeper than 32 folders, absolute, a
 * `..`, `.` or empty segment (so also a trailing `/`), or inside another path of `paths` (`a`
 * beside `a/b`).
 */
export function badFilePath(path: string, paths: ReadonlySet<string>, dir: string): string | null {
  const segs = path.split("/");
  return path === "" ? "is empty"
    : path.length > 1024 ? "is longer than 1024 characters"
    : path.includes("\0") ? "holds a NUL"
    : LONE_SURROGATE.test(path) ? "holds a lone surrogate"
    : segs.length > 32 ? "is deeper than 32 folders"
    : path.startsWith("/") ? `is absolute; give it relative to ${dir}`
    : segs.includes("..") ? `leaves ${dir} (..)`
    : segs.some((seg) => seg === "" || seg === ".") ? "has an empty or '.' segment"
    : segs.slice(1).some((_, i) => paths.has(segs.slice(0, i + 1).join("/"))) ? "lies inside another file's path"
    : null;
}

/** Text with a lone surrogate, which utf8 cannot write. */
export function hasLoneSurrogate(s: string): boolean {
  return LONE_SURROGATE.test(s);
}
