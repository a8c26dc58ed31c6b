// models/criticality: what a monitor's model does. It gets its parameters (the model's static ones,
// the monitor's configurable ones, monitorId, populationAssetCount, populationAssetIdsPath and, for
// up to 1,000 assets, populationAssetIds) as environment variables and reports a criticality per
// asset as structured job outputs.
import { createHash } from "node:crypto";

const env = process.env;
const api = env.INTEGRITY_EDGE_API_URL;
const auth = { authorization: `Bearer ${env.INTEGRITY_EDGE_JOB_TOKEN}` };

/** Every asset to score: from the environment when it holds them, else paged from the API. */
async function populationAssetIds() {
  if (env.populationAssetIds !== undefined) return env.populationAssetIds.split(",").filter(Boolean);
  const ids = [];
  for (let skip = 0; ; skip += 1000) {
    const res = await fetch(`${api}${env.populationAssetIdsPath}?skip=${skip}&take=1000`, { headers: auth });
    if (!res.ok) throw new Error(`could not read the population's assets: ${res.status} ${(await res.text()).slice(0, 300)}`);
    const page = await res.json();
    ids.push(...page);
    if (page.length < 1000) break;
  }
  return ids;
}

const assets = await populationAssetIds();
if (assets.length !== Number(env.populationAssetCount ?? assets.length))
  console.log(`note: ${env.populationAssetCount} assets when the job started, ${assets.length} now`);
const base = Number(env.BASE_CRITICALITY ?? 50);
console.log(`monitor ${env.monitorId}: scoring ${assets.length} assets`);
// A stand-in score: stable per asset and monitor, spread around BASE_CRITICALITY.
const criticality = assets.map((assetId) => {
  const spread = createHash("sha256").update(`${env.monitorId}:${assetId}`).digest()[0] % 41;
  return { assetId, criticality: Math.max(0, Math.min(100, base - 20 + spread)) };
});
if (criticality.length <= 50) for (const entry of criticality) console.log(`  ${entry.assetId}: ${entry.criticality}`);
// An output is at most 256 KiB of JSON: 1,000 entries (about 75 bytes each) per output.
for (let i = 0; i === 0 || i < criticality.length; i += 1000) {
  const res = await fetch(`${api}/JobOutputs`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ jobId: env.jobId, output: { criticality: criticality.slice(i, i + 1000) } }),
  });
  console.log(`posted the criticality: ${res.status} (assets ${i + 1} to ${Math.min(i + 1000, criticality.length)})`);
  if (!res.ok) {
    console.error(`the API refused the criticality: ${(await res.text()).slice(0, 300)}`);
    process.exit(1);
  }
}
