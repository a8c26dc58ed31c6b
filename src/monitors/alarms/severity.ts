/**
 * Alarm severities (issue 33): ISA-18.2's priorities, highest first. A module of its own, so the
 * monitors' controllers and the alarms' shapes both name them without importing each other.
 */
export const SEVERITIES = ["critical", "high", "medium", "low"] as const;
export type Severity = (typeof SEVERITIES)[number];
export const DEFAULT_SEVERITY: Severity = "medium";
