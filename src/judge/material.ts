/**
 * Delimiting the material a judge grades (a prompt, a reference, the response): each piece sits
 * between markers that carry a random nonce, `<<<NAME-nonce>>>` and `<<<END-NAME-nonce>>>`. The
 * judge client makes one Delimiter per question and hands it to the question's `render`, so it
 * knows the markers when it reads the reply: the verdict is read only from the judge's own words
 * after the material's last closing marker (see parse.ts), never from inside quoted material.
 *
 * The material was written before the nonce was drawn (128 random bits), so it cannot hold a
 * marker; should it hold the nonce by chance, the nonce is escaped (a word joiner is put inside
 * it), so the material can never close its own block.
 */
import { randomBytes } from "node:crypto";

/** U+2060 WORD JOINER: invisible, and breaks an exact match of the nonce. */
const JOINER = "\u2060";

export class Delimiter {
  readonly nonce: string;

  constructor(nonce: string = randomBytes(16).toString("hex")) {
    if (!/^[0-9a-f]{8,}$/.test(nonce)) throw new Error("a delimiter nonce is 8 or more lowercase hex digits");
    this.nonce = nonce;
  }

  /** `<<<NAME-nonce>>>`. */
  open(name: string): string {
    return `<<<${name}-${this.nonce}>>>`;
  }

  /** `<<<END-NAME-nonce>>>`. */
  close(name: string): string {
    return `<<<END-${name}-${this.nonce}>>>`;
  }

  /** The text with every occurrence of the nonce broken, so no marker of this delimiter can occur in it. Linear. */
  escape(text: string): string {
    if (!text.includes(this.nonce)) return text;
    const half = this.nonce.length >> 1;
    return text.split(this.nonce).join(this.nonce.slice(0, half) + JOINER + this.nonce.slice(half));
  }

  /** The text, escaped, between its markers on lines of their own. */
  block(name: string, text: string): string {
    return `${this.open(name)}\n${this.escape(text)}\n${this.close(name)}`;
  }
}
