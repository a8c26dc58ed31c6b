/**
 * What a channel's controllers may say (issue 35). The variables a condition may name: `value` (the
 * channel's latest reading, by time, after the batch), `min` and `max` (of the batch's new readings;
 * absent for a void or a batch of duplicates) and, for a thickness channel with an analysis,
 * `longTermRate`, `shortTermRate`, `governingRate`, `leastSquaresRate` and `remainingLifeYears` (absent
 * while unbounded). A condition on an absent variable does not hold (unless the controller sets
 * alarmOnNoData). A criticality is a population item's: a channel's controller cannot set one.
 */
import type { Controller } from "../../monitors/monitors/schema";
import type { FieldProblem } from "../../pkg/errors";
import type { ThicknessAnalysis } from "../analysis";

/** The variables of every channel, and those of thickness channels with an analysis. */
export const CHANNEL_VARIABLES = ["value", "min", "max"] as const;
export const THICKNESS_VARIABLES = ["longTermRate", "shortTermRate", "governingRate", "leastSquaresRate", "remainingLifeYears"] as const;

/** What the conditions of a channel's controllers may name, and what they may do: a problem per misfit. */
export function channelControllerProblems(controllers: readonly Controller[], thickness: boolean): FieldProblem[] {
  const names: readonly string[] = thickness ? [...CHANNEL_VARIABLES, ...THICKNESS_VARIABLES] : CHANNEL_VARIABLES;
  const problems: FieldProblem[] = [];
  controllers.forEach((controller, i) => {
    controller.conditions.forEach((condition, j) => {
      if (!names.includes(condition.variableName))
        problems.push({
          field: `body.controllers.${i}.conditions.${j}.variableName`,
          rule: "channelVariable",
          message: `'${condition.variableName}' is not a variable of this channel: ${names.join(", ")}.`,
        });
    });
    if (controller.actions?.setCriticality)
      problems.push({
        field: `body.controllers.${i}.actions.setCriticality`,
        rule: "monitorOnly",
        message: "A criticality belongs to a monitor's population item; a channel's controller cannot set one.",
      });
  });
  return problems;
}

/** What a batch of readings (or a void) leaves: the latest reading, the batch's extremes, the analysis. */
export interface ChannelValues {
  last: { value: number } | null;
  batch: { min: number; max: number } | null;
  analysis: ThicknessAnalysis | null;
}

export function channelVariables(values: ChannelValues): Map<string, number> {
  const variables = new Map<string, number>();
  if (values.last) variables.set("value", values.last.value);
  if (values.batch) {
    variables.set("min", values.batch.min);
    variables.set("max", values.batch.max);
  }
  const a = values.analysis;
  if (a)
    for (const name of THICKNESS_VARIABLES) {
      const v = a[name];
      if (typeof v === "number" && Number.isFinite(v)) variables.set(name, v);
    }
  return variables;
}
