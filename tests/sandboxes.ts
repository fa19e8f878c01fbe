/**
 * Opens the real sandbox backends for tests. On a developer machine without Docker or bwrap a
 * test may skip; under CI=true a missing backend fails instead (CI installs both).
 */
import type { Sandbox } from "../sandbox/types.js";
import { openDocker, dockerOptionsFromEnv } from "../sandbox/docker/index.js";
import { openBwrap } from "../sandbox/bwrap/index.js";

export const IN_CI = process.env.CI === "true";

export interface Opened {
  sandbox: Sandbox | null;
  /** Why there is none (a skip reason on a laptop). */
  skip: string | false;
}

function verdict(name: string, sandbox: Sandbox | null, note: string): Opened {
  if (sandbox) return { sandbox, skip: false };
  if (IN_CI) throw new Error(`CI=true but the ${name} sandbox is unavailable: ${note}`);
  return { sandbox: null, skip: `${name} unavailable here: ${note}` };
}

export async function openDockerForTests(poolSize = 2): Promise<Opened> {
  const { sandbox, note } = await openDocker({ ...dockerOptionsFromEnv(), poolSize });
  return verdict("docker", sandbox, note);
}

export async function openBwrapForTests(): Promise<Opened> {
  const { sandbox, note } = await openBwrap();
  return verdict("bwrap", sandbox, note);
}
