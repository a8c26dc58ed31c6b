import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hostFor, HostNotConfiguredError, HostUnavailableError, type GroupSpec } from "../../src/dataprocessing/host";
import { groupRecord, loseGroup, scriptGroup, setHostDown } from "../support/fake-host";

const spec = (name: string): GroupSpec => ({
  name,
  image: "examples/hello:latest",
  command: null,
  environment: { jobId: name, SECRET: "s3cret" },
  cpuCores: 1,
  memoryGb: 1,
  gpuCores: null,
  gpuSku: null,
  timeoutSeconds: 60,
  owner: "host-client-owner",
});

describe("the local container host client", () => {
  const host = () => hostFor(env);

  it("lists the host's images and capacity", async () => {
    const { images, capacity } = await host().listImages();
    expect(images.map((i) => `${i.name}:${i.tag}`)).toContain("examples/hello:latest");
    expect(capacity.maxCpuCores).toBeGreaterThan(0);
  });

  it("starts a group once however often it is asked, and reads its output tail", async () => {
    const name = `containergroup-${crypto.randomUUID()}`;
    await host().startGroup(spec(name));
    await host().startGroup(spec(name));
    expect((await groupRecord(name))?.starts).toBe(1);
    await scriptGroup(name, { phase: "succeeded", exitCode: 0, output: "0123456789" });
    const state = await host().inspectGroup(name, 4);
    expect(state).toMatchObject({ phase: "succeeded", exitCode: 0, output: "6789", outputTruncated: true });
    await host().removeGroup(name);
    expect(await host().inspectGroup(name, 4)).toBeNull();
    await host().removeGroup(name);
  });

  it("reads a group the host no longer knows as null", async () => {
    const name = `containergroup-${crypto.randomUUID()}`;
    await host().startGroup(spec(name));
    await loseGroup(name);
    expect(await host().inspectGroup(name, 100)).toBeNull();
  });

  it("turns a host that answers 5xx into HostUnavailableError without echoing the environment", async () => {
    await setHostDown(true);
    try {
      const error = await host()
        .startGroup(spec(`containergroup-${crypto.randomUUID()}`))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HostUnavailableError);
      expect(String((error as Error).message)).not.toContain("s3cret");
    } finally {
      await setHostDown(false);
    }
  });

  it("refuses an unknown host kind or a local host with nowhere to reach", () => {
    expect(() => hostFor({ ...env, CONTAINER_HOST_KIND: "mainframe" } as typeof env)).toThrow(HostNotConfiguredError);
    expect(() => hostFor({ ...env, LOCAL_CONTAINER_HOST: undefined, LOCAL_CONTAINER_HOST_URL: "" } as unknown as typeof env)).toThrow(
      HostNotConfiguredError,
    );
  });

  it("never falls back to the local host: no kind configured is no host", () => {
    for (const kind of [undefined, "", "  "]) {
      expect(() => hostFor({ ...env, CONTAINER_HOST_KIND: kind } as unknown as typeof env)).toThrow(
        /no container host is configured: set CONTAINER_HOST_KIND/,
      );
    }
  });

  it("reaches a local host by URL only with its secret", () => {
    const local = {
      ...env,
      LOCAL_CONTAINER_HOST: undefined,
      LOCAL_CONTAINER_HOST_URL: "http://127.0.0.1:8790",
      LOCAL_CONTAINER_HOST_SECRET: "",
    };
    expect(() => hostFor(local as unknown as typeof env)).toThrow(/LOCAL_CONTAINER_HOST_SECRET/);
    expect(hostFor({ ...local, LOCAL_CONTAINER_HOST_SECRET: "s" } as unknown as typeof env).kind).toBe("local");
  });
});
