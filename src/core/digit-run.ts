/**
 * Whether a text holds a run of 16 or more decimal digits. Integers of up to 15 digits are exact
 * as doubles, so a JSON text without a longer run parses the same with JSON.parse as with an
 * exact-integer parser, at a fraction of the cost. One pass: linear.
 */
export function hasLongDigitRun(text: string): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++run >= 16) return true;
    } else run = 0;
  }
  return false;
}
