/**
 * Issue 37, "Batch": POST /$batch runs its operations through the app's own routes, in order, one
 * result per operation; a later operation uses an earlier one's answer.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";

const batch = (body: unknown, options: { headers?: Record<string, string>; user?: { permissions: string[] } } = {}) =>
  call("/$batch", { method: "POST", body, ...options });

describe("POST /$batch", () => {
  it("creates a deviation and a work item and links them, the link using both answers' ids", async () => {
    const res = await batch({
      operations: [
        { id: "deviation", method: "POST", path: "/Deviations", body: { description: "Corrosion under insulation on P-101" } },
        { id: "work", method: "POST", path: "/WorkItems", body: { displayName: "Follow up CUI on P-101" } },
        { id: "link", method: "POST", path: "/Deviations/{{deviation.body.id}}/WorkItems/{{work.body.id}}" },
        { id: "read", method: "GET", path: "/Deviations/{{deviation.body.id}}/WorkItems" },
      ],
    });
    expect(res.status, res.text).toBe(200);
    const [deviation, work, link, read] = res.body.results;
    expect(deviation).toMatchObject({ id: "deviation", ran: true, status: 201 });
    expect(deviation.headers.location).toBe(`/Deviations/${deviation.body.id}`);
    expect(deviation.headers.etag).toBeTruthy();
    expect(work).toMatchObject({ id: "work", ran: true, status: 201 });
    expect(link.status, JSON.stringify(link)).toBeLessThan(300);
    expect(read.status).toBe(200);
    expect(read.body.map((w: { id: string }) => w.id)).toEqual([work.body.id]);
  });
});
