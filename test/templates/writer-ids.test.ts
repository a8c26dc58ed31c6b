/**
 * The template writer takes new ids from the IdGenerator every other writer uses
 * (src/platform/services.ts), not from a generator of its own.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { InputTemplateInputSchema } from "../../src/templates/activity/schema";
import { executeTemplateOperation } from "../../src/templates/writer";
import { createActivityTemplate } from "./factories";

describe("TemplateWriter ids", () => {
  it("a new input template's id is the one the IdGenerator gives", async () => {
    const at = await createActivityTemplate();
    const pinned = crypto.randomUUID();
    let asked = 0;
    const ids = {
      uuid: () => {
        asked += 1;
        return pinned;
      },
    };
    const context = {
      now: new Date().toISOString(),
      actorId: null,
      actorName: null,
      requestId: "writer-ids-test",
      expectedEtag: undefined,
    };
    const item = InputTemplateInputSchema.parse({ name: "pinnedInput", format: "text" });
    const result = await executeTemplateOperation(
      env.DB,
      context,
      { template: "activity", action: "addInputTemplate", id: at.id, item },
      ids,
    );
    expect(result.ok, JSON.stringify(result)).toBe(true);
    expect(asked).toBeGreaterThan(0);
    const inputs = (result as { value: { inputTemplates: { id: string; name: string }[] } }).value.inputTemplates;
    expect(inputs.find((i) => i.name === "pinnedInput")?.id).toBe(pinned);
  });
});
