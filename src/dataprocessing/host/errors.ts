/** The container host did not answer, or answered something this service cannot use. Retryable. */
export class HostUnavailableError extends Error {
  override readonly name = "HostUnavailableError";
}

/** The configured host kind cannot run here (missing settings, or a kind the platform cannot offer). */
export class HostNotConfiguredError extends Error {
  override readonly name = "HostNotConfiguredError";
}
