import { describe, expect, it } from "vitest";
import { checkTarget } from "../../src/subscriptions/targets";
import { call } from "../support/http";

const production = { WEBHOOK_ALLOWED_TARGETS: "" };

const refused: [string, string][] = [
  ["http://hooks.example.com/h", "https"],
  ["ftp://hooks.example.com/h", "https"],
  ["https://127.0.0.1/h", "loopback"],
  ["https://127.1/h", "loopback"],
  ["https://2130706433/h", "loopback"],
  ["https://0x7f000001/h", "loopback"],
  ["https://0177.0.0.1/h", "loopback"],
  ["https://10.1.2.3/h", "private"],
  ["https://172.16.0.1/h", "private"],
  ["https://172.31.255.255/h", "private"],
  ["https://192.168.1.10/h", "private"],
  ["https://169.254.169.254/latest/meta-data", "link-local"],
  ["https://0.0.0.0/h", "unspecified"],
  ["https://100.64.0.1/h", "carrier-grade"],
  ["https://224.0.0.1/h", "multicast"],
  ["https://[::1]/h", "loopback"],
  ["https://[::]/h", "unspecified"],
  ["https://[fe80::1]/h", "link-local"],
  ["https://[fd00::1]/h", "unique local"],
  ["https://[::ffff:127.0.0.1]/h", "IPv4-mapped"],
  ["https://[::ffff:10.0.0.1]/h", "IPv4-mapped"],
  ["https://[64:ff9b::7f00:1]/h", "translation"],
  ["https://[4000::1]/h", "non-global"],
  ["https://[2001:db8::1]/h", "documentation"],
  ["https://[2002:c0a8:0101::1]/h", "6to4"],
  ["https://localhost/h", "local or special-use host"],
  ["https://LOCALHOST./h", "local or special-use host"],
  ["https://api.localhost/h", "local or special-use host"],
  ["https://printer.local/h", "local or special-use host"],
  ["https://db.internal/h", "local or special-use host"],
  ["https://intranet/h", "single-label"],
  ["https://10.0.0.1.nip.io/h", "private"],
  ["https://app-127-0-0-1.sslip.io/h", "loopback"],
  ["https://localtest.me/h", "loopback"],
  ["https://user:pass@hooks.example.com/h", "credentials"],
  ["https://hooks.example.com/h#frag", "fragment"],
  ["not a url", "absolute URL"],
  ["http://127.0.0.1:8000/h", "https"],
  ["http://localhost:9999/h", "https"],
];

/**
 * Issue 32: the rest of IANA's special-purpose registries, special-use domain names, public names that
 * resolve to loopback, and ports other than the https ones.
 */
const refusedSince32: [string, string][] = [
  ["https://localhost.localdomain/h", "local or special-use host"],
  ["https://localhost.direct/h", "loopback"],
  ["https://app.localhost.direct/h", "loopback"],
  ["https://localho.st/h", "loopback"],
  ["https://x.lcl.host/h", "loopback"],
  ["https://hooks.test/h", "local or special-use host"],
  ["https://hooks.example/h", "local or special-use host"],
  ["https://hooks.invalid/h", "local or special-use host"],
  ["https://receiver.default.svc/h", "local or special-use host"],
  ["https://receiver.default.svc.cluster.local/h", "local or special-use host"],
  ["https://abcdefghijklmnop.onion/h", "local or special-use host"],
  ["https://relay.alt/h", "local or special-use host"],
  ["https://router.home.arpa/h", "local or special-use host"],
  ["https://1.0.0.127.in-addr.arpa/h", "local or special-use host"],
  ["https://[2001:10::1]/h", "ORCHID"],
  ["https://[2001:1f::1]/h", "ORCHID"],
  ["https://[2001:20::1]/h", "ORCHIDv2"],
  ["https://[2001:2::1]/h", "benchmarking"],
  ["https://[2001:1::1]/h", "IETF protocol assignment"],
  ["https://[2001:4:112::1]/h", "IETF protocol assignment"],
  ["https://[2002:808:808::1]/h", "6to4"],
  ["https://[3fff::1]/h", "documentation"],
  ["https://[2620:4f:8000::1]/h", "AS112"],
  ["https://[100::1]/h", "discard-only"],
  ["https://[ff02::1]/h", "multicast"],
  ["https://192.0.0.9/h", "IETF protocol assignment"],
  ["https://192.31.196.1/h", "AS112"],
  ["https://192.52.193.1/h", "AMT"],
  ["https://192.175.48.1/h", "AS112"],
  ["https://198.19.255.1/h", "benchmarking"],
  ["https://255.255.255.255/h", "reserved"],
  ["https://hooks.example.com:22/h", "port 22"],
  ["https://hooks.example.com:6379/h", "port 6379"],
  ["https://hooks.example.com:80/h", "port 80"],
  ["https://8.8.8.8:8080/h", "port 8080"],
];

const accepted = [
  "https://hooks.example.com/integrity",
  "https://hooks.example.com:8443/integrity?tenant=a",
  "https://8.8.8.8/h",
  "https://172.32.0.1/h",
  "https://[2606:4700:4700::1111]/h",
  "https://93.184.216.34.nip.io/h",
  // The other ports Cloudflare serves HTTPS on; an address just outside 2001::/23; a name that only starts like a refused one.
  "https://hooks.example.com:2053/h",
  "https://hooks.example.com:2096/h",
  "https://[2001:200::1]/h",
  "https://test.example.net/h",
  "https://localhost.direct.example.com/h",
];

describe("webhook targets", () => {
  it.each(refused)("refuses %s (%s)", (url, why) => {
    const checked = checkTarget(url, production);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toContain(why);
  });

  it.each(refusedSince32)("refuses %s (%s)", (url, why) => {
    const checked = checkTarget(url, production);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toContain(why);
  });

  it.each(accepted)("accepts %s", (url) => {
    expect(checkTarget(url, production).ok).toBe(true);
  });

  it("stores the URL as normalised, and lets the configured local targets through", () => {
    expect(checkTarget("HTTPS://Hooks.Example.COM:443/a", production)).toEqual({ ok: true, url: "https://hooks.example.com/a" });
    const local = { WEBHOOK_ALLOWED_TARGETS: "http://127.0.0.1:*, http://localhost:8080" };
    expect(checkTarget("http://127.0.0.1:41234/hook", local).ok).toBe(true);
    expect(checkTarget("http://localhost:8080/hook", local).ok).toBe(true);
    expect(checkTarget("http://localhost:8081/hook", local).ok).toBe(false);
    expect(checkTarget("http://10.0.0.1:80/hook", local).ok).toBe(false);
    expect(checkTarget("https://127.0.0.1:41234/hook", local).ok).toBe(false);
  });

  it("answers 400 naming body.url on create and update, over HTTP", async () => {
    for (const [url] of refused.slice(0, 12)) {
      const res = await call("/Subscriptions", { method: "POST", body: { url, filters: [{ entityKind: "deviation" }] } });
      expect(res.status, url).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ field: "body.url", rule: "target" });
    }
    const created = await call("/Subscriptions", {
      method: "POST",
      body: { url: "https://hooks.example.com/ok", filters: [{ entityKind: "deviation" }] },
    });
    expect(created.status).toBe(201);
    const put = await call("/Subscriptions", {
      method: "PUT",
      body: { ...created.body, secret: undefined, url: "https://169.254.169.254/" },
    });
    expect(put.status).toBe(400);
    expect(put.body.detail).toContain("link-local");
  });

  it("answers 400 naming body.url for the special-use names, ranges and ports, and stores nothing", async () => {
    for (const [url, why] of refusedSince32) {
      const res = await call("/Subscriptions", { method: "POST", body: { url, filters: [{ entityKind: "deviation" }] } });
      expect(res.status, url).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.body.errors).toEqual([{ field: "body.url", rule: "target", message: expect.stringContaining(why) }]);
    }
    const stored = ((await call("/Subscriptions?take=1000")).body as { url: string }[]).map((s) => s.url);
    expect(stored.filter((url) => refusedSince32.some(([refused]) => new URL(refused).href === url))).toEqual([]);
  });

  it("lets a port or name through when WEBHOOK_ALLOWED_TARGETS allows it", () => {
    const allowed = { WEBHOOK_ALLOWED_TARGETS: "https://hooks.example.com:9443,http://receiver.default.svc:8080" };
    expect(checkTarget("https://hooks.example.com:9443/h", allowed).ok).toBe(true);
    expect(checkTarget("https://hooks.example.com:9444/h", allowed).ok).toBe(false);
    expect(checkTarget("http://receiver.default.svc:8080/h", allowed).ok).toBe(true);
  });

  it("lets the test deployment's one allowed local target through (WEBHOOK_ALLOWED_TARGETS), and no other", async () => {
    const ok = await call("/Subscriptions", {
      method: "POST",
      body: { url: "http://127.0.0.1:9999/hook", filters: [{ entityKind: "deviation" }] },
    });
    expect(ok.status, ok.text).toBe(201);
    const other = await call("/Subscriptions", {
      method: "POST",
      body: { url: "http://127.0.0.1:9998/hook", filters: [{ entityKind: "deviation" }] },
    });
    expect(other.status).toBe(400);
  });
});
