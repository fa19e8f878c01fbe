/** A session service over the real Docker engine for tests (small limits; skips without Docker unless CI=true). */
import { DockerBoxes } from "../sandbox/sessions/index.js";
import { Sessions, type SessionServiceOptions } from "../src/sessions/service.js";
import type { SessionLimits } from "../src/sessions/types.js";
import { IN_CI } from "./sandboxes.js";

export const TEST_LIMITS: SessionLimits = { memoryMb: 256, cpuMsPerExec: 3000, wallMsPerExec: 8000, lifetimeMs: 120_000, idleMs: 60_000, outputBytes: 64 * 1024 };

export async function openTestSessions(o: Partial<SessionServiceOptions> & { warm?: number; scratchMb?: number; pids?: number } = {}): Promise<{ sessions: Sessions | null; skip: string | false }> {
  const boxes = new DockerBoxes({ warm: o.warm ?? 2, memoryMb: 256, pids: o.pids ?? 64, scratchMb: o.scratchMb ?? 32 });
  const why = await boxes.check();
  if (why) {
    if (IN_CI) throw new Error(`CI=true but sessions cannot run: ${why}`);
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
