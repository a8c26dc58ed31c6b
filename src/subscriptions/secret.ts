/**
 * A subscription's signing secret: `whsec_` and 32 random bytes in base64, the form Standard Webhooks
 * libraries take. It is shown once (at creation and at each rotation) and stored sealed: AES-256-GCM
 * under a key derived from the run-option key ring (DATAPROCESSING_ENCRYPTION_KEY) for this purpose
 * alone (src/pkg/keys.ts `sealText`), so a key rotation of the ring leaves every
 * stored secret readable while the old key version stays in the ring.
 */
import { Webhook } from "standardwebhooks";
import { openText, sealText, type SecretSource } from "../pkg/keys";
import { ApiError } from "../pkg/errors";

const PURPOSE = "webhook signing secret";

export function newSigningSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return `whsec_${btoa(text)}`;
}

export async function sealSecret(env: SecretSource, secret: string): Promise<string> {
  if (!env.DATAPROCESSING_ENCRYPTION_KEY) {
    throw new ApiError(
      "NotConfigured",
      "Webhook subscriptions cannot be stored: their secrets are sealed under the secret " +
        'DATAPROCESSING_ENCRYPTION_KEY, which is not set (README, "Webhooks").',
    );
  }
  return sealText(env, PURPOSE, secret);
}

export function openSecret(env: SecretSource, sealed: string): Promise<string> {
  return openText(env, PURPOSE, sealed);
}

/** The three Standard Webhooks headers for one attempt: the event id, the attempt's time, the v1 signature. */
export function signedHeaders(secret: string, messageId: string, body: string, at: Date): Record<string, string> {
  const signature = new Webhook(secret).sign(messageId, at, body);
  return { "webhook-id": messageId, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": signature };
}
