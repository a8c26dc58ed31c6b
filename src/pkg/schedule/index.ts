export { dispatchDueRuns, readSchedule, runKeyOf, scheduleStatement, MAX_ATTEMPTS } from "./dispatcher";
export type { DueRun, ScheduleKind } from "./dispatcher";
export { nextRunAfter, scheduleRuleProblem } from "./rule";
export type { ScheduleRule } from "./rule";
