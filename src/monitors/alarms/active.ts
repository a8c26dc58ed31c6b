/**
 * The shapes a population item shows of its alarms (issue 25): its active alarms, and the conditions
 * with the values seen. Apart from ./schema.ts, which names the populations' asset types, so the
 * populations' shapes can show alarms without the two modules importing each other.
 */
import { z } from "@hono/zod-openapi";
import { SEVERITIES } from "./severity";

export const ConditionSeenSchema = z.object({
  variableName: z.string(),
  operator: z.string(),
  comparisonValue: z.number(),
  deadband: z.number().optional().openapi({ description: "The condition's deadband, when it has one." }),
  value: z.number().nullable(),
  holds: z.boolean(),
});

/** An alarm a population item is in now (issue 25): entered by a monitor job, not left yet. */
export const ActiveAlarmSchema = z
  .object({
    id: z.uuid(),
    controller: z.string(),
    severity: z.enum(SEVERITIES),
    enteredAt: z.string(),
    monitorJobId: z.uuid().openapi({ description: "The monitor job that entered it." }),
    deviationId: z.uuid().nullable().openapi({ description: "The deviation its controller raised, if any." }),
    workItemId: z.uuid().nullable().openapi({ description: "The work item its controller created, if any." }),
    acknowledged: z.boolean(),
    shelved: z.boolean(),
  })
  .openapi("ActiveAlarm");
export type ActiveAlarm = z.infer<typeof ActiveAlarmSchema>;
