/**
 * The key ring moved into the kit (src/pkg/keys.ts) with one key per purpose: what the service sealed
 * and signed before the move still opens and verifies. The values below were made by the previous
 * code (src/dataprocessing/run-options.ts at 231df30) under key version 1 of this ring; version 2 is
 * now current, as after a rotation.
 */
import { describe, expect, it } from "vitest";
import { openRunOptions, sealRunOptions } from "../../src/dataprocessing/run-options";
import { openText, sealedKeyVersion, sealText, signScopedToken, verifyScopedToken } from "../../src/pkg/keys";

const env = {
  DATAPROCESSING_ENCRYPTION_KEY: "2:AQgPFh0kKzI5QEdOVVxjanF4f4aNlJuiqbC3vsXM09o=,1://79/Pv6+fj39vX08/Lx8O/u7ezr6uno5+bl5OPi4eA=",
};
const SEALED_BEFORE = {
  runOptions: "v1.Yj8OcJ7-vmLvyxXu.8I4TgvIJvP2OtyEIwLJHH50dTep4WmKX7BF624-7vwJjVw3bj9c5o7eDZLIRETtdPHiuSY8",
  webhookSecret: "v1.iZRlbpzMe2Wws_Ef.g5uKcpKxdAWLKTlmIl2XW_NcvcAfkKlgMQ",
  jobToken: "job.0f9d6a4e-3c1b-4e0a-9b7d-2a5c8e1f3d4b.1.DYBszY46MyRRudovEAM63sjR4w9rm911177D_nHrBFc",
  monitorJobToken: "monitorjob.1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d.1.587ZklWJ8dm4bMk-gLqCY75YtAlbuKCODbAmsgcLyGk",
};

describe("the key ring", () => {
  it("opens run options, webhook secrets and tokens made before it moved, after a rotation", async () => {
    expect(await openRunOptions(env, SEALED_BEFORE.runOptions)).toEqual({ API_KEY: "s3cret", REGION: "north" });
    expect(await openText(env, "webhook signing secret", SEALED_BEFORE.webhookSecret)).toBe("whsec_abc");
    expect(await verifyScopedToken(env, SEALED_BEFORE.jobToken)).toEqual({ scope: "job", id: "0f9d6a4e-3c1b-4e0a-9b7d-2a5c8e1f3d4b" });
    expect(await verifyScopedToken(env, SEALED_BEFORE.monitorJobToken)).toEqual({
      scope: "monitorjob",
      id: "1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d",
    });
  });

  it("seals under the current key and keeps each purpose's key its own", async () => {
    const sealed = await sealText(env, "webhook signing secret", "whsec_new");
    expect(sealedKeyVersion(sealed)).toBe("2");
    expect(await openText(env, "webhook signing secret", sealed)).toBe("whsec_new");
    await expect(openText(env, "idempotent answer", sealed)).rejects.toThrow();
    const options = await sealRunOptions(env, { A: "1" });
    expect(sealedKeyVersion(options)).toBe("2");
    // Run options use the deployment's key itself: no purpose opens them.
    await expect(openText(env, "webhook signing secret", options)).rejects.toThrow();
    expect(await openRunOptions(env, options)).toEqual({ A: "1" });
  });

  it("signs tokens it verifies, and refuses one changed or made under a key the ring no longer holds", async () => {
    const token = await signScopedToken(env, "job", "0f9d6a4e-3c1b-4e0a-9b7d-2a5c8e1f3d4b");
    expect(await verifyScopedToken(env, token)).toEqual({ scope: "job", id: "0f9d6a4e-3c1b-4e0a-9b7d-2a5c8e1f3d4b" });
    expect(await verifyScopedToken(env, token.replace(/^job\./, "monitorjob."))).toBeNull();
    const rotatedAway = { DATAPROCESSING_ENCRYPTION_KEY: env.DATAPROCESSING_ENCRYPTION_KEY.split(",")[0]! };
    expect(await verifyScopedToken(rotatedAway, SEALED_BEFORE.jobToken)).toBeNull();
  });
});
