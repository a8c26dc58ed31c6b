import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { call } from "../support/http";

// This file runs alone (ALONE_TESTS in vitest.config.ts), so breaking the schema here affects no other test.
it("hides internals on a 500 and gives the request id instead", async () => {
  await env.DB.prepare("DROP TABLE entity_type_properties").run();
  await env.DB.prepare("ALTER TABLE categories RENAME TO categories_gone").run();
  const res = await call("/Categories", { headers: { "x-request-id": "req-internal-1" } });
  expect(res.status).toBe(500);
  expect(res.body).toMatchObject({ code: "Internal", status: 500, requestId: "req-internal-1" });
  expect(res.body.detail).not.toMatch(/categories|SQL|D1/i);
  expect(res.text).not.toMatch(/SQLITE|D1_ERROR|stack|no such table|\.ts:/i);
});
