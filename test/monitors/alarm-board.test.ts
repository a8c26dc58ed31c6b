/**
 * The alarm board (issue 33): GET /Alarms over every monitor's alarms on the shared list engine, its
 * filters, its order (severity, then newest), paging, and the counts per severity and state over
 * everything the filters select; bad query values are 400s naming the parameter.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
import { settledCall } from "../users/support";
import { advance, iso, MINUTE, useAlarmClock } from "./alarm-clock";
import { run, vibration, watchedEquipment, type Alarm } from "./alarm-support";

useAlarmClock();

const controller = (name: string, severity: string, limit: number) => ({
  name,
  severity,
  conditions: [{ variableName: "vibration", operator: "GreaterThen", comparisonValue: limit }],
});

interface Board {
  items: Alarm[];
  counts: {
    total: number;
    byStatus: Record<string, number>;
    bySeverity: Record<string, Record<string, number>>;
    shelved: number;
  };
}

let scope = "";
const named = new Map<string, string>();
const nameOf = (id: string) => [...named].find(([, v]) => v === id)?.[0] ?? id;
const board = async (query = "") => {
  const res = await call<Board>(`/Alarms?${scope}${query ? `&${query}` : ""}`);
  expect(res.status, res.text).toBe(200);
  return res;
};
const names = async (query = "") => (await board(query)).body.items.map((a) => nameOf(a.id));
let t1 = "";
let plantA1 = "";

beforeAll(async () => {
  // Monitor A: two pumps, three controllers of three severities; monitor B: one pump, one controller.
  const a = await watchedEquipment([controller("Critical", "critical", 9), controller("High", "high", 7), controller("Low", "low", 5)], 2);
  const b = await watchedEquipment([controller("Medium", "medium", 7)], 1);
  scope = `monitorIds=${a.monitor.id},${b.monitor.id}`;
  const [a1, a2] = [a.assets[0]!, a.assets[1]!];
  const b1 = b.assets[0]!;
  await run(a.monitor.id, vibration({ [a1.id]: 9.5, [a2.id]: 6 }));
  advance(MINUTE);
  t1 = iso();
  await run(a.monitor.id, vibration({ [a1.id]: 9.5, [a2.id]: 8 }));
  advance(MINUTE);
  await run(b.monitor.id, vibration({ [b1.id]: 10 }));
  const all = (await call<Board>(`/Alarms?${scope}`)).body.items;
  for (const alarm of all) {
    const pump = alarm.asset as { id: string };
    const which = pump.id === a1.id ? "a1" : pump.id === a2.id ? "a2" : "b1";
    named.set(`${which}-${alarm.controller}`, alarm.id);
  }
  plantA1 = all.find((x) => x.id === named.get("a1-High"))!.plantId as string;
  // People work some of them, and pump a1 comes back to normal.
  advance(MINUTE);
  const user = { id: `tech-${crypto.randomUUID().slice(0, 8)}`, name: "Tess Technician" };
  await settledCall("/Categories", { user });
  const act = (alarm: string, action: string, body: unknown) =>
    call(`/Alarms/${named.get(alarm)}/${action}`, { method: "POST", body }).then((res) => expect(res.status, res.text).toBe(200));
  await act("a1-High", "Acknowledgement", {});
  await act("a2-Low", "Assignment", { userId: user.id });
  await act("b1-Medium", "Shelving", { durationMinutes: 60 });
  await run(a.monitor.id, vibration({ [a1.id]: 2, [a2.id]: 8 }));
  named.set("assignee", user.id);
});

describe("GET /Alarms", () => {
  it("orders by severity (critical first), then the newest first", async () => {
    const order = await names();
    expect(order.slice(0, 3)).toEqual(["a1-Critical", "a2-High", "a1-High"]);
    expect(order[3]).toBe("b1-Medium");
    expect(order.slice(4).sort()).toEqual(["a1-Low", "a2-Low"]);
    expect(await names("order=enteredAt desc, severity desc")).toEqual([
      "b1-Medium",
      "a2-High",
      "a1-Critical",
      "a1-High",
      ...order.slice(4),
    ]);
  });

  it("counts per severity and state over everything the filters select, whatever the page", async () => {
    const { body } = await board("take=1");
    expect(body.items).toHaveLength(1);
    expect(body.counts).toEqual({
      total: 6,
      byStatus: { activeUnacknowledged: 3, activeAcknowledged: 0, clearedUnacknowledged: 2, clearedAcknowledged: 1 },
      bySeverity: {
        critical: { total: 1, activeUnacknowledged: 0, activeAcknowledged: 0, clearedUnacknowledged: 1, clearedAcknowledged: 0 },
        high: { total: 2, activeUnacknowledged: 1, activeAcknowledged: 0, clearedUnacknowledged: 0, clearedAcknowledged: 1 },
        medium: { total: 1, activeUnacknowledged: 1, activeAcknowledged: 0, clearedUnacknowledged: 0, clearedAcknowledged: 0 },
        low: { total: 2, activeUnacknowledged: 1, activeAcknowledged: 0, clearedUnacknowledged: 1, clearedAcknowledged: 0 },
      },
      shelved: 1,
    });
    const filtered = (await board(`plantIds=${plantA1}`)).body.counts;
    expect(filtered).toMatchObject({ total: 3, shelved: 0, byStatus: { clearedUnacknowledged: 2, clearedAcknowledged: 1 } });
  });

  it("filters by state, acknowledgement, severity, assignee, monitor, asset, plant, shelving and time entered", async () => {
    const sorted = async (query: string) => (await names(query)).sort();
    expect(await sorted("statuses=clearedUnacknowledged")).toEqual(["a1-Critical", "a1-Low"]);
    expect(await sorted("statuses=activeUnacknowledged,activeAcknowledged,clearedUnacknowledged")).toEqual(
      ["a1-Critical", "a1-Low", "a2-High", "a2-Low", "b1-Medium"].sort(),
    );
    expect(await sorted("active=true")).toEqual(["a2-High", "a2-Low", "b1-Medium"]);
    expect(await sorted("acknowledged=true")).toEqual(["a1-High"]);
    expect(await sorted("severities=critical,high")).toEqual(["a1-Critical", "a1-High", "a2-High"]);
    expect(await sorted(`assigneeIds=${named.get("assignee")}`)).toEqual(["a2-Low"]);
    expect(await sorted("assigned=true")).toEqual(["a2-Low"]);
    expect(
      await sorted(`assetIds=${((await board()).body.items.find((a) => a.id === named.get("a2-Low"))!.asset as { id: string }).id}`),
    ).toEqual(["a2-High", "a2-Low"]);
    expect(await sorted(`plantIds=${plantA1}`)).toEqual(["a1-Critical", "a1-High", "a1-Low"]);
    expect(await sorted("shelved=true")).toEqual(["b1-Medium"]);
    expect(await sorted(`enteredFrom=${t1}`)).toEqual(["a2-High", "b1-Medium"]);
    expect(await sorted(`enteredTo=${t1}`)).toEqual(["a1-Critical", "a1-High", "a1-Low", "a2-Low"]);
    expect(await sorted("searchText=medium")).toEqual(["b1-Medium"]);
    const monitorB = (await board()).body.items.find((a) => a.id === named.get("b1-Medium"))!.monitor as { id: string };
    const onlyB = await call<Board>(`/Alarms?monitorIds=${monitorB.id}`);
    expect(onlyB.body.items.map((a) => nameOf(a.id))).toEqual(["b1-Medium"]);
  });

  it("pages with skip and take, and says the total with includeTotal", async () => {
    const all = await names();
    const page = await board("skip=2&take=2&includeTotal=true");
    expect(page.headers.get("x-total-count")).toBe("6");
    expect(page.body.items.map((a) => nameOf(a.id))).toEqual(all.slice(2, 4));
    expect((await board()).headers.get("x-total-count")).toBeNull();
  });

  it("refuses a bad filter with a 400 naming the parameter", async () => {
    const cases: [string, string][] = [
      ["statuses=open", "query.statuses"],
      ["severities=urgent", "query.severities"],
      ["enteredFrom=yesterday", "query.enteredFrom"],
      ["monitorIds=abc", "query.monitorIds"],
      ["active=maybe", "query.active"],
      ["order=colour", "query.order"],
      ["colour=red", "query.colour"],
    ];
    for (const [query, field] of cases) {
      const res = await call(`/Alarms?${query}`);
      expect(res.status, `${query}: ${res.text}`).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });
});
