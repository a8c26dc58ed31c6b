/**
 * The rule for what may become a job container's environment, shared by everything a user can put
 * there: job configs' and executions' run options, and models' and monitors' parameters. A name must
 * be an environment variable name and not one the service sets itself; a value may not hold a NUL
 * character, which no environment (a C string) can carry, so such a value could never reach the job.
 */
import type { FieldProblem } from "../pkg/errors";
import { JOB_ENV } from "./host";

/** An environment variable name, as every host takes it (letters, digits, `_`; at most 128). */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Names the service sets in every job's environment: `jobId` and everything named `INTEGRITY_EDGE_*`. */
export function isServiceVariable(name: string): boolean {
  return name === JOB_ENV.jobId || name.startsWith("INTEGRITY_EDGE_");
}

/** What is wrong with one variable: its name, the rule it breaks and a sentence saying so. */
export interface VariableProblem {
  name: string;
  rule: "reserved" | "pattern" | "noNulCharacter";
  message: string;
}

/**
 * What is wrong with each variable of `variables`: rule `reserved` for a name the service sets (a
 * job's own ones, and `alsoReserved`: a monitor job's), `pattern` for a name that is not an environment
 * variable name, `noNulCharacter` for a value holding a NUL. `what` names the variables in the
 * messages ("a run option", "a parameter").
 */
export function variableProblems(variables: Record<string, string>, what: string, alsoReserved: readonly string[] = []): VariableProblem[] {
  const problems: VariableProblem[] = [];
  for (const [name, value] of Object.entries(variables)) {
    if (isServiceVariable(name) || alsoReserved.includes(name)) {
      problems.push({ name, rule: "reserved", message: `'${name}' is set by the service for every job and cannot be ${what}.` });
    } else if (!VARIABLE_NAME.test(name)) {
      problems.push({ name, rule: "pattern", message: `'${name}' is not an environment variable name.` });
    }
    if (typeof value === "string" && value.includes("\0")) {
      problems.push({
        name,
        rule: "noNulCharacter",
        message: `The value of '${name}' holds a NUL character (\\u0000), which no environment variable can carry.`,
      });
    }
  }
  return problems;
}

/** {@link variableProblems} as field problems of the request: `{field}.{name}`. */
export function environmentProblems(variables: Record<string, string>, field: string, what: string): FieldProblem[] {
  return variableProblems(variables, what).map(({ name, rule, message }) => ({ field: `${field}.${name}`, rule, message }));
}
