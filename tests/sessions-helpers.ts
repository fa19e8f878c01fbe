/** A session service over the real Docker engine for tests (small limits; skips without Docker unless CI=true). */
import { DockerBoxes, type BoxBackend } from "../sandbox/sessions/index.js";
import { BwrapBoxes } from "../sandbox/sessions/bwrap.js";
import { loadConfig } from "../src/core/config.js";
import { Sessions, type SessionServiceOptions } from "../src/sessions/service.js";
import type { SessionLimits } from "../src/sessions/types.js";
import { IN_CI } from "./sandboxes.js";

export const TEST_LIMITS: SessionLimits = { memoryMb: 256, cpuMsPerExec: 3000, wallMsPerExec: 8000, lifetimeMs: 120_000, idleMs: 60_000, outputBytes: 64 * 1024 };

export async function openTestSessions(o: Partial<SessionServiceOptions> & { warm?: number; scratchMb?: number; pids?: number; backend?: "docker" | "bwrap" } = {}): Promise<{ sessions: Sessions | null; skip: string | false }> {
  const box = { warm: o.warm ?? 2, memoryMb: 256, pids: o.pids ?? 64, scratchMb: o.scratchMb ?? 32 };
  let boxes: BoxBackend & { fill(): void };
  let why: string | null;
  if (o.backend === "bwrap") {
    const b = new BwrapBoxes({ ...box, rootfs: loadConfig().sandbox.rootfs });
    why = b.check();
    boxes = b;
  } else {
    const d = new DockerBoxes(box);
    why = await d.check();
    boxes = d;
  }
  if (why) {
    await boxes.close();
    if (IN_CI) throw new Error(`CI=true but ${o.backend ?? "docker"} sessions cannot run: ${why}`);
    return { sessions: null, skip: why };
  }
  boxes.fill();
  const sessions = new Sessions(boxes, {
    defaults: o.defaults ?? TEST_LIMITS,
    maxLimits: o.maxLimits ?? { ...TEST_LIMITS, memoryMb: 1024, lifetimeMs: 3_600_000, idleMs: 3_600_000, cpuMsPerExec: 60_000, wallMsPerExec: 60_000 },
    max: o.max ?? 16,
    maxWaitMs: o.maxWaitMs ?? 60_000,
    sweepMs: o.sweepMs ?? 200,
    retryAfterS: 1,
  });
  await sessions.warmUp();
  return { sessions, skip: false };
}
