/**
 * Webhook receivers for the tests, served to the test Worker as the `WEBHOOK_TRANSPORT` service binding
 * (src/subscriptions/sender.ts sends through it instead of the internet). It runs in the vitest (Node)
 * process, so its state outlives one test file: tests use their own paths (`/hooks/{uuid}`).
 *
 * Every request that is not control is recorded under its path and answered from that path's script
 * (in order; when the script is used up, 200 "ok").
 * Control (tests only, through test/subscriptions/support.ts):
 *   POST /__control/script?path=/hooks/x   [{ status, body?, headers? }]   what the next requests get
 *   GET  /__control/received?path=/hooks/x                                 [{ url, method, headers, body }]
 */
interface Scripted {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

interface Received {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

export function createFakeWebhookReceiver(): (request: Request) => Promise<Response> {
  const scripts = new Map<string, Scripted[]>();
  const received = new Map<string, Received[]>();

  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/__control/")) {
      const path = url.searchParams.get("path") ?? "/";
      if (url.pathname === "/__control/script" && request.method === "POST") {
        scripts.set(path, (await request.json()) as Scripted[]);
        return Response.json({ ok: true });
      }
      if (url.pathname === "/__control/received") return Response.json(received.get(path) ?? []);
      return new Response("unknown control", { status: 404 });
    }
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => (headers[key] = value));
    // The body is read before the list is touched: concurrent deliveries must not overwrite each other's record.
    const body = await request.text();
    const list = received.get(url.pathname) ?? [];
    list.push({ url: request.url, method: request.method, headers, body });
    received.set(url.pathname, list);
    const next = scripts.get(url.pathname)?.shift();
    return new Response(next?.body ?? "ok", { status: next?.status ?? 200, headers: next?.headers });
  };
}
