export { dispatchDueRuns, readSchedule, runKeyOf, scheduleStatement, LEASE_MS, MAX_ATTEMPTS } from "./dispatcher";
export type { DispatchOptions, DispatchReport, DueRun, ScheduleKind, ScheduleState } from "./dispatcher";
export { nextRunAfter, scheduleRuleProblem } from "./rule";
export type { ScheduleRule } from "./rule";
