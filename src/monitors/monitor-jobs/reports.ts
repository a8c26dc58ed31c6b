/**
 * What a model reports for a monitor job, read from its job outputs (ACR) or the body of the status
 * PUT (External): `{ "criticality": [{ "assetId", "criticality": 0..100 }] }` and `{ "variables": [{
 * "assetId", "name", "value" }] }`. Entries that are not of that shape are refused and named, never
 * dropped in silence.
 */

interface CriticalityReport {
  assetId: string;
  criticality: number;
}

export interface VariableReport {
  assetId: string;
  name: string;
  value: number;
}

/** What a model reported for one job: criticality and variables per asset. */
export interface ModelReports {
  criticality: CriticalityReport[];
  variables: VariableReport[];
}

/** Reads `{ criticality: [{ assetId, criticality }] }` reports; returns them and the problems with the entries that were refused. */
export function criticalityReports(outputs: unknown[]): { reports: CriticalityReport[]; problems: string[] } {
  const reports: CriticalityReport[] = [];
  const problems: string[] = [];
  for (const output of outputs) {
    const list = (output as { criticality?: unknown } | null)?.criticality;
    if (!Array.isArray(list)) continue;
    for (const [i, entry] of list.entries()) {
      const { assetId, criticality } = (entry ?? {}) as { assetId?: unknown; criticality?: unknown };
      if (
        typeof assetId !== "string" ||
        typeof criticality !== "number" ||
        !Number.isFinite(criticality) ||
        criticality < 0 ||
        criticality > 100
      ) {
        problems.push(`criticality[${i}] is not { assetId: string, criticality: 0 to 100 }`);
      } else reports.push({ assetId, criticality });
    }
  }
  return { reports, problems };
}

/** Reads `{ variables: [{ assetId, name, value }] }` reports; returns them and the problems with the entries that were refused. */
export function variableReports(outputs: unknown[]): { reports: VariableReport[]; problems: string[] } {
  const reports: VariableReport[] = [];
  const problems: string[] = [];
  for (const output of outputs) {
    const list = (output as { variables?: unknown } | null)?.variables;
    if (!Array.isArray(list)) continue;
    for (const [i, entry] of list.entries()) {
      const { assetId, name, value } = (entry ?? {}) as { assetId?: unknown; name?: unknown; value?: unknown };
      if (
        typeof assetId !== "string" ||
        typeof name !== "string" ||
        name.length === 0 ||
        name.length > 200 ||
        typeof value !== "number" ||
        !Number.isFinite(value)
      ) {
        problems.push(`variables[${i}] is not { assetId: string, name: text, value: number }`);
      } else reports.push({ assetId, name, value });
    }
  }
  return { reports, problems };
}

/** Reads both kinds of report from job outputs (or a status PUT's body); the problems name the refused entries. */
export function modelReports(outputs: unknown[]): { reports: ModelReports; problems: string[] } {
  const criticality = criticalityReports(outputs);
  const variables = variableReports(outputs);
  const problems = [
    ...(criticality.problems.length ? [`Criticality ignored: ${criticality.problems.join("; ")}.`] : []),
    ...(variables.problems.length ? [`Variables ignored: ${variables.problems.join("; ")}.`] : []),
  ];
  return { reports: { criticality: criticality.reports, variables: variables.reports }, problems };
}

/** At most this many asset ids are named in a job's error message; the rest are counted. */
const NAMED_ASSETS = 20;

/** "Criticality ignored for 3 assets outside the monitor's populations: a, b, c." (the first 20 named, the rest counted). */
export function outsideMessage(assetIds: string[], what = "Criticality"): string | null {
  if (assetIds.length === 0) return null;
  const named = assetIds.slice(0, NAMED_ASSETS).join(", ");
  const more = assetIds.length > NAMED_ASSETS ? ` and ${assetIds.length - NAMED_ASSETS} more` : "";
  return (
    `${what} ignored for ${assetIds.length} asset${assetIds.length === 1 ? "" : "s"} outside the monitor's ` +
    `populations: ${named}${more}.`
  );
}
