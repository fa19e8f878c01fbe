/** The small verifiers people expect: exact match, multiple choice, regex, format. */
import { exact } from "./exact.js";
import { choice } from "./choice.js";
import { regex } from "./regex.js";
import { format } from "./format.js";

export default [exact, choice, regex, format];
