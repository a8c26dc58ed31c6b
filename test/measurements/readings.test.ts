/**
 * Issue 35: readings posted one by one and in bulk, idempotent per channel and timestamp, never
 * edited (a void with a reason), read raw and aggregated in a time zone; bad input refused entry by
 * entry with nothing stored; one event per request.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { at, BUILT_IN, createChannel } from "./support";

const signal = (channelNumber: number, iso: string, value: number) => ({ channelNumber, timestamp: at(iso), value });

async function readingsEvents(channelId: string): Promise<{ action: string; payload: string }[]> {
  const { results } = await env.DB.prepare(
    "SELECT action, payload FROM outbox WHERE entity_kind = 'readings' AND payload LIKE ?1 ORDER BY seq",
  )
    .bind(`%${channelId}%`)
    .all<{ action: string; payload: string }>();
  return results;
}

describe("recording readings", () => {
  it("stores one and many, ignores the same reading again, refuses another value at the same timestamp", async () => {
    const ch = await createChannel({ channelTypeId: BUILT_IN.pressure });
    const one = await call("/signals", { method: "POST", body: { ...signal(ch.channelNumber, "2026-01-01T00:00:00Z", 5.5), unit: "bar" } });
    expect(one.status, one.text).toBe(201);
    expect(one.body).toMatchObject({ accepted: 1, duplicates: 0 });
    const bulk = await call("/signals/bulk", {
      method: "POST",
      body: [
        signal(ch.channelNumber, "2026-01-01T00:00:00Z", 5.5),
        signal(ch.channelNumber, "2026-01-01T01:00:00Z", 6),
        { channelId: ch.id, timestamp: "2026-01-01T02:00:00Z", value: 7 },
      ],
    });
    expect(bulk.status, bulk.text).toBe(201);
    expect(bulk.body).toMatchObject({ accepted: 2, duplicates: 1 });
    const conflict = await call("/signals", { method: "POST", body: signal(ch.channelNumber, "2026-01-01T01:00:00Z", 6.1) });
    expect(conflict.status).toBe(409);
    expect(conflict.body.errors[0]).toMatchObject({ field: "body.timestamp", rule: "conflict" });
    const channel = (await call(`/Channels/${ch.id}`)).body;
    expect(channel).toMatchObject({ readingCount: 3, lastValue: 7, lastReadingAt: "2026-01-01T02:00:00.000Z" });
    // One event per request that stored something, naming the channel with its count.
    const events = await readingsEvents(ch.id);
    expect(events.map((e) => e.action)).toEqual(["recorded", "recorded"]);
    expect(JSON.parse(events[1]!.payload).channels[0]).toMatchObject({ channelNumber: ch.channelNumber, count: 2, lastValue: 7 });
  });

  it("refuses bad entries one by one, naming index and rule, and stores nothing of the request", async () => {
    const ch = await createChannel({ channelTypeId: BUILT_IN.temperature });
    const closed = await createChannel({ channelTypeId: BUILT_IN.temperature, availabilityId: BUILT_IN.outOfService });
    const good = signal(ch.channelNumber, "2026-02-01T00:00:00Z", 20);
    const res = await call("/signals/bulk", {
      method: "POST",
      body: [
        good,
        { ...good, timestamp: at("2026-02-01T01:00:00Z"), value: "NaN" },
        { ...good, timestamp: at("1899-12-31T00:00:00Z") },
        { ...good, timestamp: at("2100-01-01T00:00:00Z") },
        { ...good, timestamp: at("2026-02-01T02:00:00Z"), unit: "bar" },
        signal(closed.channelNumber, "2026-02-01T00:00:00Z", 20),
        signal(99_999_999, "2026-02-01T00:00:00Z", 20),
        { ...good, timestamp: "yesterday" },
        { ...good, timestamp: at("2026-02-01T03:00:00Z"), extra: 1 },
      ],
    });
    expect(res.status, res.text).toBe(400);
    const byIndex = Object.fromEntries(res.body.errors.map((e: { field: string; rule: string }) => [e.field, e.rule]));
    expect(byIndex).toMatchObject({
      "body.1.value": "type",
      "body.2.timestamp": "range",
      "body.3.timestamp": "future",
      "body.4.unit": "unit",
      "body.5.channelNumber": "notWritable",
      "body.6.channelNumber": "exists",
      "body.7.timestamp": "format",
    });
    expect(res.body.errors.some((e: { field: string }) => e.field.startsWith("body.0"))).toBe(false);
    expect(res.body.errors.some((e: { field: string }) => e.field.startsWith("body.8"))).toBe(true);
    expect((await call(`/Channels/${ch.id}`)).body.readingCount).toBe(0);
    // Infinity cannot be written in JSON, but 1e999 parses to it.
    const infinite = await call("/signals", {
      method: "POST",
      rawBody: `{"channelNumber": ${ch.channelNumber}, "timestamp": ${at("2026-02-01T00:00:00Z")}, "value": 1e999}`,
      headers: { "content-type": "application/json" },
    });
    expect(infinite.status).toBe(400);
    expect(infinite.body.errors[0].field).toBe("body.value");
  });

  it("answers 413 beyond 10,000 readings in one request, and 403 without readings_write", async () => {
    const ch = await createChannel({ channelTypeId: BUILT_IN.vibration });
    const many = Array.from({ length: 10_001 }, (_, i) => ({
      channelNumber: ch.channelNumber,
      timestamp: at("2026-01-01T00:00:00Z") + i * 1000,
      value: 1,
    }));
    const tooMany = await call("/signals/bulk", { method: "POST", body: many });
    expect(tooMany.status).toBe(413);
    const limit = await call("/signals/bulk", { method: "POST", body: many.slice(0, 10_000) });
    expect(limit.status, limit.text).toBe(201);
    expect(limit.body.accepted).toBe(10_000);
    const reader = await call("/signals", {
      method: "POST",
      body: signal(ch.channelNumber, "2026-03-01T00:00:00Z", 1),
      user: { permissions: ["measurements_read"] },
    });
    expect(reader.status).toBe(403);
  });

  it("voids a reading with its reason (kept beside it) and takes it out of counts and aggregates", async () => {
    const ch = await createChannel({ channelTypeId: BUILT_IN.pressure });
    await call("/signals/bulk", {
      method: "POST",
      body: [
        signal(ch.channelNumber, "2026-04-01T10:00:00Z", 2),
        signal(ch.channelNumber, "2026-04-01T11:00:00Z", 100),
        signal(ch.channelNumber, "2026-04-01T12:00:00Z", 4),
      ],
    });
    const voided = await call(`/Channels/${ch.id}/Readings/${at("2026-04-01T11:00:00Z")}/Void`, {
      method: "POST",
      body: { reason: "gauge stuck" },
    });
    expect(voided.status, voided.text).toBe(200);
    expect(voided.body).toMatchObject({ voided: { value: 100, reason: "gauge stuck" }, readingCount: 2 });
    const again = await call(`/Channels/${ch.id}/Readings/${at("2026-04-01T11:00:00Z")}/Void`, {
      method: "POST",
      body: { reason: "twice" },
    });
    expect(again.status).toBe(404);
    const raw = await call(`/Channels/${ch.id}/Readings?includeVoided=true`);
    expect(raw.body.readings.map((r: { value: number; voided?: { reason: string } }) => [r.value, r.voided?.reason ?? null])).toEqual([
      [2, null],
      [100, "gauge stuck"],
      [4, null],
    ]);
    const day = await call(`/Channels/${ch.id}/Aggregates?from=2026-04-01T00:00:00Z&to=2026-04-02T00:00:00Z&granularity=day`);
    expect(day.status, day.text).toBe(200);
    expect(day.body.buckets).toEqual([
      { start: "2026-04-01T00:00:00.000Z", label: "2026-04-01", count: 2, min: 2, max: 4, avg: 3, first: 2, last: 4 },
    ]);
    // A new reading at the voided timestamp is a new reading, not an edit.
    const replaced = await call("/signals", { method: "POST", body: signal(ch.channelNumber, "2026-04-01T11:00:00Z", 3) });
    expect(replaced.status).toBe(201);
    expect((await readingsEvents(ch.id)).map((e) => e.action)).toEqual(["recorded", "voided", "recorded"]);
  });

  it("aggregates by day in a time zone from the rollups, and by hour", async () => {
    const ch = await createChannel({ channelTypeId: BUILT_IN.temperature });
    // 22:30 UTC on 31 March is 00:30 on 1 April in Oslo (summer time, +2).
    await call("/signals/bulk", {
      method: "POST",
      body: [
        signal(ch.channelNumber, "2026-03-31T21:30:00Z", 10),
        signal(ch.channelNumber, "2026-03-31T22:30:00Z", 20),
        signal(ch.channelNumber, "2026-04-01T09:00:00Z", 30),
      ],
    });
    const utc = await call(`/Channels/${ch.id}/Aggregates?from=2026-03-30T00:00:00Z&to=2026-04-03T00:00:00Z&granularity=day`);
    expect(utc.body.source).toBe("days");
    expect(utc.body.buckets.map((b: { label: string; count: number }) => [b.label, b.count])).toEqual([
      ["2026-03-31", 2],
      ["2026-04-01", 1],
    ]);
    const oslo = await call(
      `/Channels/${ch.id}/Aggregates?from=2026-03-30T00:00:00Z&to=2026-04-03T00:00:00Z&granularity=day&timeZone=Europe/Oslo`,
    );
    expect(oslo.body.source).toBe("hours");
    expect(
      oslo.body.buckets.map((b: { label: string; start: string; count: number; avg: number }) => [b.label, b.start, b.count, b.avg]),
    ).toEqual([
      ["2026-03-31", "2026-03-30T22:00:00.000Z", 1, 10],
      ["2026-04-01", "2026-03-31T22:00:00.000Z", 2, 25],
    ]);
    const hours = await call(`/Channels/${ch.id}/Aggregates?from=2026-03-31T00:00:00Z&to=2026-04-02T00:00:00Z&granularity=hour`);
    expect(hours.body.buckets).toHaveLength(3);
    expect((await call(`/Channels/${ch.id}/Aggregates?timeZone=Mars/Olympus`)).status).toBe(400);
  });
});
