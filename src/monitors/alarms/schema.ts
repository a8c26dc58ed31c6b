/** API shapes of the monitoring loop's alarms (issue 25): an item's active alarms and its alarm history. */
import { z } from "@hono/zod-openapi";

/** An alarm a population item is in now (issue 25): entered by a monitor job, not left yet. */
export const ActiveAlarmSchema = z
  .object({
    id: z.uuid(),
    controller: z.string(),
    enteredAt: z.string(),
    monitorJobId: z.uuid().openapi({ description: "The monitor job that entered it." }),
    deviationId: z.uuid().nullable().openapi({ description: "The deviation its controller raised, if any." }),
    workItemId: z.uuid().nullable().openapi({ description: "The work item its controller created, if any." }),
  })
  .openapi("ActiveAlarm");
export type ActiveAlarm = z.infer<typeof ActiveAlarmSchema>;

export const AlarmHistoryEntrySchema = z
  .object({
    id: z.uuid(),
    alarmId: z.uuid(),
    controller: z.string(),
    action: z.enum(["entered", "left"]),
    monitorJobId: z.uuid(),
    conditions: z
      .array(
        z.object({
          variableName: z.string(),
          operator: z.string(),
          comparisonValue: z.number(),
          value: z.number().nullable(),
          holds: z.boolean(),
        }),
      )
      .openapi({ description: "The controller's conditions with the values the job reported (null: not reported): what decided it." }),
    recordedAt: z.string(),
    deviationId: z.uuid().nullable(),
    workItemId: z.uuid().nullable(),
  })
  .openapi("AlarmHistoryEntry");
