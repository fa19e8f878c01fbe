import { exact } from "./exact.js";
export default [exact];
