/** The shared-memory layout of bench/math-sab.ts and its worker: per slot a header, a request area and a response area. */
export const HEAD = { req: 0, resp: 1, reqLen: 2, respLen: 3, ready: 4 } as const;
const HEAD_BYTES = 64;

export interface SabWorkerData { file: string; sab: SharedArrayBuffer; slots: number; slotBytes: number; warmupMs: number }

export function slotViews(sab: SharedArrayBuffer, k: number, slotBytes: number) {
  const at = k * slotBytes;
  const half = (slotBytes - HEAD_BYTES) >> 1;
  return { head: new Int32Array(sab, at, HEAD_BYTES / 4), bytes: Buffer.from(sab), reqAt: at + HEAD_BYTES, respAt: at + HEAD_BYTES + half, room: half };
}
