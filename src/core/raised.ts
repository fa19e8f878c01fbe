/**
 * Superscripts, subscripts and vulgar fractions written as their own characters, spelled out
 * before a compatibility normalisation (NFKC) flattens them into the text beside them: NFKC makes
 * `10²` the number 102, `x₁` the name x1, `2³` 23 and `1½` 11⁄2 (eleven halves). A run of
 * superscripts becomes `^` and its characters (`10^2`, `x^-1`), a run of subscripts `_` and its
 * characters, a vulgar fraction `n/d` (after a digit: ` n/d` for text, `+n/d` for mathematics,
 * since `1½` is one and a half), and the fraction slash `⁄` a `/`. Style "math" puts a run of
 * more than one character in `{}`, as LaTeX needs (`10^{23}`). One pass over the char codes
 * into a typed array (all of these are in the BMP; 1 MiB of them takes tens of milliseconds);
 * text without any of them comes back as it is after one native scan.
 */
const SUPERSCRIPTS = "⁰0 ¹1 ²2 ³3 ⁴4 ⁵5 ⁶6 ⁷7 ⁸8 ⁹9 ⁺+ ⁻- ⁼= ⁽( ⁾) ⁱi ⁿn";
const SUBSCRIPTS = "₀0 ₁1 ₂2 ₃3 ₄4 ₅5 ₆6 ₇7 ₈8 ₉9 ₊+ ₋- ₌= ₍( ₎) ₐa ₑe ₒo ₓx ₔə ₕh ₖk ₗl ₘm ₙn ₚp ₛs ₜt";
const FRACTIONS = "¼1/4 ½1/2 ¾3/4 ⅐1/7 ⅑1/9 ⅒1/10 ⅓1/3 ⅔2/3 ⅕1/5 ⅖2/5 ⅗3/5 ⅘4/5 ⅙1/6 ⅚5/6 ⅛1/8 ⅜3/8 ⅝5/8 ⅞7/8 ↉0/3 ⁄/";

const SUPER = 1, SUB = 2, FRACTION = 3;
/** By char code: its kind (0: none of these) and what it spells. */
const KIND = new Uint8Array(65536);
const SPELLED: string[] = [];
for (const [kind, list] of [[SUPER, SUPERSCRIPTS], [SUB, SUBSCRIPTS], [FRACTION, FRACTIONS]] as const) {
  for (const e of list.split(" ")) {
    KIND[e.charCodeAt(0)] = kind;
    SPELLED[e.charCodeAt(0)] = e.slice(1);
  }
}
const ANY = new RegExp(`[${SPELLED.map((_, c) => String.fromCharCode(c)).join("")}]`);

export function spellRaised(s: string, style: "text" | "math"): string {
  if (!ANY.test(s)) return s;
  // Each character spells at most 5 code units ("+1/10"), a run's braces add 3.
  const out = new Uint16Array(s.length * 5 + 3);
  let n = 0;
  const put = (t: string) => {
    for (let k = 0; k < t.length; k++) out[n++] = t.charCodeAt(k);
  };
  for (let i = 0; i < s.length; ) {
    const c = s.charCodeAt(i);
    const kind = KIND[c];
    if (kind === 0) {
      out[n++] = c;
      i++;
    } else if (kind === FRACTION) {
      const before = i > 0 ? s.charCodeAt(i - 1) : 0;
      if (before >= 48 && before <= 57 && c !== 0x2044) out[n++] = style === "math" ? 43 : 32; // "+" or " "
      put(SPELLED[c]);
      i++;
    } else {
      let j = i;
      while (j < s.length && KIND[s.charCodeAt(j)] === kind) j++;
      const braces = style === "math" && j - i > 1;
      out[n++] = kind === SUPER ? 94 : 95; // "^" or "_"
      if (braces) out[n++] = 123;
      for (let k = i; k < j; k++) put(SPELLED[s.charCodeAt(k)]);
      if (braces) out[n++] = 125;
      i = j;
    }
  }
  return Buffer.from(out.buffer, 0, n * 2).toString("utf16le");
}
