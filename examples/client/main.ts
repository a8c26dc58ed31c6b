// Creates a deviation and reads it back through the generated types (npm start runs it: run.mjs).
import { createAndReadDeviation } from "./deviations.js";

// The example needs no Node types: run.mjs passes the server and the token in the environment.
declare const process: { env: Record<string, string | undefined> };

const deviation = await createAndReadDeviation(process.env.API_URL!, process.env.TOKEN!);
console.log(`created and read ${deviation.referenceId} (${deviation.status}): ${deviation.description}`);
