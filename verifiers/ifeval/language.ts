/**
 * Language identification for language:response_language and change_case:english_*.
 *
 * IFEval calls Python `langdetect.detect` (ISO 639-1 codes, plus zh-cn / zh-tw) and counts a text
 * it cannot classify (LangDetectException: no features) as following the instruction.
 * langdetect.ts ports langdetect with its own profiles, seeded with 0 (see there).
 * A code langdetect does not know is a malformed item (the caller throws InvalidItemError).
 */
import { langdetect } from "./langdetect.js";

/** langdetect's 55 profiles (langdetect/profiles/), as `DetectorFactory.get_lang_list()` lists them. */
const LANGDETECT_CODES = [
  "af", "ar", "bg", "bn", "ca", "cs", "cy", "da", "de", "el", "en", "es", "et", "fa", "fi", "fr", "gu", "he", "hi", "hr",
  "hu", "id", "it", "ja", "kn", "ko", "lt", "lv", "mk", "ml", "mr", "ne", "nl", "no", "pa", "pl", "pt", "ro", "ru", "sk",
  "sl", "so", "sq", "sv", "sw", "ta", "te", "th", "tl", "tr", "uk", "ur", "vi", "zh-cn", "zh-tw",
];
const KNOWN = new Set(LANGDETECT_CODES);

/**
 * Does the code name a language langdetect can answer? IFEval compares `detect(value) == language`
 * literally, so a code langdetect never returns ("zh", "EN") could never be followed.
 */
export function knownLanguage(code: string): boolean {
  return KNOWN.has(code);
}

export function supportedLanguages(): string[] {
  return [...LANGDETECT_CODES];
}

/**
 * Is `text` in language `code`? `null` when langdetect finds no features (its exception), which
 * IFEval counts as followed.
 */
export function isLanguage(text: string, code: string): boolean | null {
  const got = detect(text);
  return got === null ? null : got === code;
}

/** The language langdetect reads `text` as (null when none), for details. */
export function detectedLanguage(text: string): string | null {
  return detect(text);
}

/**
 * langdetect(text). With the seed fixed the answer depends on the text alone; an item's checks
 * share it through Facts.language (instructions.ts), one call per distinct text of the item.
 */
function detect(text: string): string | null {
  return langdetect(text);
}
