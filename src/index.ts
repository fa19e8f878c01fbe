/** The `assay` package's library entry: the client for Node-based pipelines, and the wire types. */
export { AssayClient, AssayError, type AssayClientOptions, type GetRewardResponse } from "./client/index.js";
export type { RewardItem, RewardResult, Status } from "./core/types.js";
