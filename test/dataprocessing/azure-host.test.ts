/**
 * The Azure Container Instances host against a recorded fake of the documented Azure Resource
 * Manager and registry requests and answers (it has never been run against Azure itself).
 */
import { describe, expect, it } from "vitest";
import { ARM_API_VERSION, AzureContainerHost, armPhase, azureSettings, type AzureSettings } from "../../src/dataprocessing/host/azure";
import { HostNotConfiguredError, HostUnavailableError, hostFor } from "../../src/dataprocessing/host";
import { env } from "cloudflare:workers";

const settings: AzureSettings = {
  AZURE_TENANT_ID: "tenant-1",
  AZURE_CLIENT_ID: `client-${crypto.randomUUID()}`,
  AZURE_CLIENT_SECRET: "client-secret",
  AZURE_SUBSCRIPTION_ID: "0000-sub",
  AZURE_RESOURCE_GROUP: "rg-jobs",
  AZURE_LOCATION: "westeurope",
  ACR_LOGIN_SERVER: "models.azurecr.io",
  ACR_USERNAME: "acr-user",
  ACR_PASSWORD: "acr-pass",
};
const GROUP =
  "https://management.azure.com/subscriptions/0000-sub/resourceGroups/rg-jobs" +
  "/providers/Microsoft.ContainerInstance/containerGroups/containergroup-j1";

interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
}

/** Answers recorded requests in order of the routes; every request is kept for the assertions. */
function recordedAzure(routes: [method: string, url: string | RegExp, answer: () => Response][]) {
  const calls: Recorded[] = [];
  const send = async (url: string, init?: RequestInit) => {
    const method = init?.method ?? "GET";
    const body = init?.body === undefined || init.body === null ? null : String(init.body);
    calls.push({ method, url, headers: Object.fromEntries(new Headers(init?.headers).entries()), body });
    const route = routes.find(([m, u]) => m === method && (typeof u === "string" ? u === url : u.test(url)));
    if (!route) return new Response(JSON.stringify({ error: { code: "NotRecorded", message: `${method} ${url}` } }), { status: 500 });
    return route[2]();
  };
  return { calls, send };
}

const tokenRoute: [string, RegExp, () => Response] = [
  "POST",
  /^https:\/\/login\.microsoftonline\.com\/tenant-1\/oauth2\/v2\.0\/token$/,
  () => Response.json({ token_type: "Bearer", expires_in: 3599, access_token: "arm-token" }),
];
const json =
  (body: unknown, status = 200) =>
  () =>
    Response.json(body, { status });
const spec = {
  name: "containergroup-j1",
  image: "scoring/model:1.4",
  command: "python score.py",
  environment: { jobId: "j1", SECRET: "s3" },
  cpuCores: 2,
  memoryGb: 4,
  gpuCores: 1,
  gpuSku: "K80",
  timeoutSeconds: 600,
  owner: "azure-owner",
};

describe("the Azure Container Instances host (recorded fake)", () => {
  it("signs in with client credentials once, then creates containergroup-{jobId} with secure variables and GPU", async () => {
    const fake = recordedAzure([
      tokenRoute,
      ["GET", `${GROUP}?api-version=${ARM_API_VERSION}`, json({ error: { code: "ResourceNotFound" } }, 404)],
      ["PUT", `${GROUP}?api-version=${ARM_API_VERSION}`, json({ name: "containergroup-j1" }, 201)],
    ]);
    const host = new AzureContainerHost({ ...settings, AZURE_CLIENT_ID: `client-${crypto.randomUUID()}` }, fake.send);
    await host.startGroup(spec);
    const [token, get, put] = fake.calls;
    expect(token!.body).toContain("grant_type=client_credentials");
    expect(token!.body).toContain(`scope=${encodeURIComponent("https://management.azure.com/.default")}`);
    expect(get!.headers.authorization).toBe("Bearer arm-token");
    expect(put!.method).toBe("PUT");
    const body = JSON.parse(put!.body!);
    expect(body).toMatchObject({
      location: "westeurope",
      properties: {
        osType: "Linux",
        restartPolicy: "Never",
        imageRegistryCredentials: [{ server: "models.azurecr.io", username: "acr-user" }],
      },
    });
    expect(body.properties.containers[0].properties).toEqual({
      image: "models.azurecr.io/scoring/model:1.4",
      command: ["/bin/sh", "-c", "python score.py"],
      environmentVariables: [
        { name: "jobId", secureValue: "j1" },
        { name: "SECRET", secureValue: "s3" },
      ],
      resources: { requests: { cpu: 2, memoryInGB: 4, gpu: { count: 1, sku: "K80" } } },
    });
    expect(fake.calls.filter((c) => c.url.includes("login.microsoftonline.com"))).toHaveLength(1);
  });

  it("does not create a group that exists (starting is idempotent)", async () => {
    const fake = recordedAzure([
      tokenRoute,
      ["GET", `${GROUP}?api-version=${ARM_API_VERSION}`, json({ properties: { instanceView: { state: "Running" } } })],
    ]);
    await new AzureContainerHost(settings, fake.send).startGroup(spec);
    expect(fake.calls.some((c) => c.method === "PUT")).toBe(false);
  });

  it("maps instance views to phases, with the log tail", async () => {
    const view = (groupState: string, current?: object) => ({
      properties: { instanceView: { state: groupState }, containers: [{ properties: { instanceView: { currentState: current } } }] },
    });
    const cases: [object, string, number | null, string | null][] = [
      [view("Pending"), "pending", null, null],
      [view("Running", { state: "Running" }), "running", null, null],
      [view("Succeeded", { state: "Terminated", exitCode: 0, detailStatus: "Completed" }), "succeeded", 0, null],
      [
        view("Failed", { state: "Terminated", exitCode: 137, detailStatus: "OOMKilled" }),
        "failed",
        137,
        "The container exited with code 137 (OOMKilled).",
      ],
    ];
    for (const [answer, phase, exitCode, error] of cases) {
      const fake = recordedAzure([
        tokenRoute,
        ["GET", `${GROUP}?api-version=${ARM_API_VERSION}`, json(answer)],
        ["GET", `${GROUP}/containers/job/logs?tail=1000&api-version=${ARM_API_VERSION}`, json({ content: "line 1\nline 2\n" })],
      ]);
      const state = await new AzureContainerHost(settings, fake.send).inspectGroup("containergroup-j1", 7);
      expect(state).toEqual({
        phase,
        exitCode,
        error,
        output: phase === "pending" ? "" : "line 2\n",
        outputTruncated: phase !== "pending",
      });
    }
  });

  it("maps the other documented states: Stopped, a failed deployment, Succeeded without a container view", () => {
    expect(armPhase({ properties: { provisioningState: "Succeeded", instanceView: { state: "Stopped" } } })).toEqual({
      phase: "failed",
      exitCode: null,
      error: "The container group was stopped outside this service.",
    });
    // An image that cannot be pulled: the deployment fails while the container still waits.
    const pullFailed = {
      properties: {
        provisioningState: "Failed",
        instanceView: { state: "Pending", events: [{ type: "Normal", message: "Pulling image" }] },
        containers: [
          {
            properties: {
              instanceView: {
                currentState: { state: "Waiting", detailStatus: "ErrImagePull" },
                events: [
                  { type: "Normal", message: 'pulling image "models.azurecr.io/scoring/model:9"' },
                  { type: "Warning", message: 'Failed to pull image "models.azurecr.io/scoring/model:9": not found' },
                  { type: "Normal", message: "Back-off pulling image" },
                ],
              },
            },
          },
        ],
      },
    };
    expect(armPhase(pullFailed)).toEqual({
      phase: "failed",
      exitCode: null,
      error: 'Azure could not run the container group: Failed to pull image "models.azurecr.io/scoring/model:9": not found',
    });
    expect(armPhase({ properties: { provisioningState: "Failed", instanceView: {} } }).error).toBe(
      "Azure reports the container group as Failed.",
    );
    expect(armPhase({ properties: { instanceView: { state: "Succeeded" } } })).toEqual({ phase: "succeeded", exitCode: null, error: null });
    expect(armPhase({ properties: { provisioningState: "Creating" } })).toEqual({ phase: "pending", exitCode: null, error: null });
    expect(armPhase({})).toEqual({ phase: "pending", exitCode: null, error: null });
  });

  it("reads a failed group whose container never started (its logs answer 400) as failed with no output", async () => {
    const fake = recordedAzure([
      tokenRoute,
      [
        "GET",
        `${GROUP}?api-version=${ARM_API_VERSION}`,
        json({
          properties: {
            provisioningState: "Failed",
            instanceView: { state: "Failed", events: [{ type: "Warning", message: "no capacity for K80 in westeurope" }] },
          },
        }),
      ],
      [
        "GET",
        `${GROUP}/containers/job/logs?tail=1000&api-version=${ARM_API_VERSION}`,
        json({ error: { code: "ContainerGroupDeploymentNotReady" } }, 400),
      ],
    ]);
    const state = await new AzureContainerHost(settings, fake.send).inspectGroup("containergroup-j1", 100);
    expect(state).toEqual({
      phase: "failed",
      exitCode: null,
      error: "Azure could not run the container group: no capacity for K80 in westeurope",
      output: "",
      outputTruncated: false,
    });
  });

  it("follows the registry's Link header through every page of the catalog and of the tags", async () => {
    const page = (body: unknown, next?: string) => () => Response.json(body, { headers: next ? { link: `<${next}>; rel="next"` } : {} });
    const fake = recordedAzure([
      ["GET", "https://models.azurecr.io/v2/_catalog?n=1000", page({ repositories: ["a"] }, "/v2/_catalog?last=a&n=1000")],
      ["GET", "https://models.azurecr.io/v2/_catalog?last=a&n=1000", page({ repositories: ["b"] })],
      ["GET", "https://models.azurecr.io/v2/a/tags/list?n=1000", page({ name: "a", tags: ["1"] }, "/v2/a/tags/list?last=1&n=1000")],
      ["GET", "https://models.azurecr.io/v2/a/tags/list?last=1&n=1000", page({ name: "a", tags: ["2"] })],
      ["GET", "https://models.azurecr.io/v2/b/tags/list?n=1000", () => new Response('{"errors":[{"code":"DENIED"}]}', { status: 403 })],
    ]);
    const { images } = await new AzureContainerHost(settings, fake.send).listImages();
    expect(images.map((i) => `${i.name}:${i.tag}`)).toEqual(["a:1", "a:2"]);
    expect(fake.calls.every((c) => c.headers.authorization === `Basic ${btoa("acr-user:acr-pass")}`)).toBe(true);
  });

  it("reads a deleted group as null and deletes idempotently", async () => {
    const fake = recordedAzure([
      tokenRoute,
      ["GET", /containergroup-j1\?/, json({ error: { code: "ResourceNotFound" } }, 404)],
      ["DELETE", /containergroup-j1\?/, json({}, 404)],
    ]);
    const host = new AzureContainerHost(settings, fake.send);
    expect(await host.inspectGroup("containergroup-j1", 100)).toBeNull();
    await host.removeGroup("containergroup-j1");
    expect(fake.calls.at(-1)!.url).toBe(`${GROUP}?api-version=${ARM_API_VERSION}`);
  });

  it("lists images and tags from the registry with its credentials", async () => {
    const fake = recordedAzure([
      ["GET", "https://models.azurecr.io/v2/_catalog?n=1000", json({ repositories: ["scoring/model", "cleanup"] })],
      ["GET", "https://models.azurecr.io/v2/scoring/model/tags/list?n=1000", json({ name: "scoring/model", tags: ["1.3", "1.4"] })],
      ["GET", "https://models.azurecr.io/v2/cleanup/tags/list?n=1000", json({ name: "cleanup", tags: ["latest"] })],
    ]);
    const { images, capacity } = await new AzureContainerHost(settings, fake.send).listImages();
    expect(images.map((i) => `${i.name}:${i.tag}`)).toEqual(["scoring/model:1.3", "scoring/model:1.4", "cleanup:latest"]);
    expect(fake.calls[0]!.headers.authorization).toBe(`Basic ${btoa("acr-user:acr-pass")}`);
    expect(capacity.gpuSkus).toEqual(["K80", "P100", "V100"]);
  });

  it("turns throttling and outages into HostUnavailableError", async () => {
    const fake = recordedAzure([
      tokenRoute,
      ["GET", /containergroup-j1/, () => new Response('{"error":{"code":"TooManyRequests"}}', { status: 429 })],
    ]);
    await expect(new AzureContainerHost(settings, fake.send).inspectGroup("containergroup-j1", 10)).rejects.toBeInstanceOf(
      HostUnavailableError,
    );
    const down = new AzureContainerHost({ ...settings, AZURE_CLIENT_ID: `client-${crypto.randomUUID()}` }, () =>
      Promise.reject(new TypeError("network down")),
    );
    await expect(down.removeGroup("containergroup-j1")).rejects.toBeInstanceOf(HostUnavailableError);
  });

  it("is chosen by CONTAINER_HOST_KIND=azure and names missing settings", () => {
    expect(() => azureSettings({ AZURE_TENANT_ID: "t" })).toThrow(/AZURE_CLIENT_ID, .*ACR_PASSWORD are not set/);
    expect(hostFor({ ...env, CONTAINER_HOST_KIND: "azure", ...settings } as typeof env).kind).toBe("azure");
    expect(() => hostFor({ ...env, CONTAINER_HOST_KIND: "cloudflare" } as typeof env)).toThrow(HostNotConfiguredError);
  });
});
