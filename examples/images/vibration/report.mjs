// models/vibration: a condition-monitoring model for a monitor's controllers (README, "From a monitor
// to a work item in five minutes"). A real model would read its sensors; this one takes its readings
// from its parameters, so a walkthrough can turn a reading up and down:
//   VIBRATION            the reading (mm/s) of every asset (default 2.5);
//   VIBRATION_BY_ASSET   JSON { "<assetId>": reading } for some assets;
//   VARIABLE_NAME        the variable's name (default "vibration").
// It reports { variables: [{ assetId, name, value }], criticality: [{ assetId, criticality }] } as
// structured job outputs with its job token; the monitor's controllers compare the variables with
// their limits when the job succeeds.
const env = process.env;
const api = env.INTEGRITY_EDGE_API_URL;
const auth = { authorization: `Bearer ${env.INTEGRITY_EDGE_JOB_TOKEN}` };

/** Every asset of the monitor's populations: from the environment when it holds them, else paged from the API. */
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

function reading(value, what) {
  const number = Number(value);
  if (!Number.isFinite(number)) {
    console.error(`${what} is not a number: '${value}'`);
    process.exit(2);
  }
  return number;
}

const name = env.VARIABLE_NAME || "vibration";
const everyAsset = reading(env.VIBRATION ?? "2.5", "VIBRATION");
let byAsset = {};
try {
  byAsset = JSON.parse(env.VIBRATION_BY_ASSET || "{}");
} catch {
  console.error(`VIBRATION_BY_ASSET is not JSON: '${env.VIBRATION_BY_ASSET}'`);
  process.exit(2);
}

const assets = await populationAssetIds();
console.log(`monitor ${env.monitorId}: ${assets.length} assets`);
const variables = assets.map((assetId) => ({
  assetId,
  name,
  value: assetId in byAsset ? reading(byAsset[assetId], `VIBRATION_BY_ASSET.${assetId}`) : everyAsset,
}));
// ISO 10816-style zones, roughly: up to 2.8 mm/s good, 7.1 and above unacceptable.
const criticality = variables.map(({ assetId, value }) => ({
  assetId,
  criticality: Math.round(Math.max(0, Math.min(100, (value / 11.2) * 100))),
}));
for (const v of variables.slice(0, 50)) console.log(`  ${v.assetId}: ${v.name} ${v.value}`);

// An output is at most 256 KiB of JSON: 1,000 assets per output.
for (let i = 0; i === 0 || i < variables.length; i += 1000) {
  const res = await fetch(`${api}/JobOutputs`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({
      jobId: env.jobId,
      output: { variables: variables.slice(i, i + 1000), criticality: criticality.slice(i, i + 1000) },
    }),
  });
  console.log(`posted the readings: ${res.status} (assets ${i + 1} to ${Math.min(i + 1000, variables.length)})`);
  if (!res.ok) {
    console.error(`the API refused the readings: ${(await res.text()).slice(0, 300)}`);
    process.exit(1);
  }
}
