/** Maps the container host's failures to problem details. */
import { ApiError } from "../pkg/errors";
import type { Bindings } from "../env";
import { hostFor, HostNotConfiguredError, HostUnavailableError } from "./host";

/** Runs a host call; a host that does not answer is a 503 with Retry-After, a missing host a 501. */
export async function viaHost<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof HostUnavailableError) {
      throw new ApiError("HostUnavailable", `The container host is not answering; try again shortly. (${error.message})`, {
        headers: { "retry-after": "30" },
      });
    }
    if (error instanceof HostNotConfiguredError) throw new ApiError("NotConfigured", error.message);
    throw error;
  }
}

/**
 * Refuses, before anything is written, a run that needs a container host on a deployment that has
 * none (501 NotConfigured naming what to set), rather than creating jobs that can only fail.
 */
export function requireHost(env: Bindings): void {
  try {
    hostFor(env);
  } catch (error) {
    if (error instanceof HostNotConfiguredError) throw new ApiError("NotConfigured", error.message);
    throw error;
  }
}
