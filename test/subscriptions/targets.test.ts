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
  ["https://[64:ff9b::7f00:1]/h", "non-global"],
  ["https://[2001:db8::1]/h", "documentation"],
  ["https://[2002:c0a8:0101::1]/h", "6to4"],
  ["https://localhost/h", "local host"],
  ["https://LOCALHOST./h", "local host"],
  ["https://api.localhost/h", "local host"],
  ["https://printer.local/h", "local host"],
  ["https://db.internal/h", "local host"],
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

const accepted = [
  "https://hooks.example.com/integrity",
  "https://hooks.example.com:8443/integrity?tenant=a",
  "https://8.8.8.8/h",
  "https://172.32.0.1/h",
  "https://[2606:4700:4700::1111]/h",
  "https://93.184.216.34.nip.io/h",
];

describe("webhook targets", () => {
  it.each(refused)("refuses %s (%s)", (url, why) => {
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
