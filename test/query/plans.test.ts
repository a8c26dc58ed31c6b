/** The plans without statistics, as D1 leaves a database (it never runs ANALYZE): see plan-suite.ts. */
import { planSuite } from "./plan-suite";

planSuite({ analyze: false });
