/** The plans after ANALYZE (in its own file: storage is per test file): see plan-suite.ts. */
import { planSuite } from "./plan-suite";

planSuite({ analyze: true });
