/** Factories of the measurements tests: a channel on a fresh plant's equipment, readings posted as the original client posts them. */
import { expect } from "vitest";
import { BUILT_IN } from "../../src/measurements/catalogue/schema";
import { call } from "../support/http";
import { createPlantTree, unique } from "../support/factories/work";

export { BUILT_IN };

export interface ChannelBody {
  id: string;
  channelNumber: number;
  [field: string]: unknown;
}

export async function createChannel(overrides: Record<string, unknown> = {}): Promise<ChannelBody & { etag: string; plantId: string }> {
  const tree = await createPlantTree();
  const res = await call("/Channels", {
    method: "POST",
    body: { name: unique("CML"), assetId: tree.equipment.id, channelTypeId: BUILT_IN.thickness, ...overrides },
  });
  expect(res.status, res.text).toBe(201);
  return { ...res.body, etag: res.headers.get("etag") as string, plantId: tree.plant.id };
}

/** Milliseconds of a UTC date. */
export const at = (iso: string) => Date.parse(iso);
