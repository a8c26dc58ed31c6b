// models/criticality: what a monitor's model does. It gets its parameters (the model's static ones,
// the monitor's configurable ones, monitorId and populationAssetIds) as environment variables and
// reports a criticality per asset as a structured job output.
import { createHash } from "node:crypto";

const env = process.env;
const assets = (env.populationAssetIds ?? "").split(",").filter(Boolean);
const base = Number(env.BASE_CRITICALITY ?? 50);
console.log(`monitor ${env.monitorId}: scoring ${assets.length} assets`);
// A stand-in score: stable per asset and monitor, spread around BASE_CRITICALITY.
const criticality = assets.map((assetId) => {
  const spread = createHash("sha256").update(`${env.monitorId}:${assetId}`).digest()[0] % 41;
  return { assetId, criticality: Math.max(0, Math.min(100, base - 20 + spread)) };
});
for (const entry of criticality) console.log(`  ${entry.assetId}: ${entry.criticality}`);
const res = await fetch(`${env.INTEGRITY_EDGE_API_URL}/JobOutputs`, {
  method: "POST",
  headers: { authorization: `Bearer ${env.INTEGRITY_EDGE_JOB_TOKEN}`, "content-type": "application/json" },
  body: JSON.stringify({ jobId: env.jobId, output: { criticality } }),
});
console.log(`posted the criticality: ${res.status}`);
if (!res.ok) {
  console.error(`the API refused the criticality: ${(await res.text()).slice(0, 300)}`);
  process.exit(1);
}
