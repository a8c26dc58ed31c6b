// npm run seed: a demo plant in the running local server (npm start, or PORT=...), made through its
// HTTP API as a client would (never with SQL of its own), so every rule the API keeps holds for it too.
// It finds what an earlier run made (by name or reference) and adds only what is missing, so it can
// run again. The README's filter examples use its property definitions (Depth, Material, Zone,
// Inspected, Grade). npm run reset empties local state.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { localBase, ROOT } from "./dev-env.mjs";

const base = localBase();
const made = { created: 0, found: 0 };

function token() {
  const minted = spawnSync(process.execPath, [join(ROOT, "scripts", "token.mjs")], { cwd: ROOT, encoding: "utf8" });
  const value = minted.stdout.trim().split("\n").pop();
  if (minted.status !== 0 || !value) throw new Error(`could not mint a token: ${minted.stderr}`);
  return value;
}
const authorization = `Bearer ${token()}`;

/** One request; answers with the parsed body, or throws with the server's problem. */
async function api(method, path, body, headers = {}) {
  const init = { method, headers: { authorization, ...headers } };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["content-type"] = "application/json";
  }
  let response;
  try {
    response = await fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    throw new Error(`${base} does not answer (${error.cause?.code ?? error.message}): start it with npm start first`);
  }
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.trim().slice(0, 600)}`);
  return text ? JSON.parse(text) : undefined;
}

/** The entity the list finds (`match` on its items), else the one `create` makes. */
async function ensure(listPath, match, create) {
  const found = (await api("GET", listPath)).find(match);
  if (found) {
    made.found++;
    return found;
  }
  made.created++;
  return create();
}

const q = (params) => `?${new URLSearchParams({ take: "1000", ...params })}`;
const byName = (name) => (item) => item.name === name;

async function assets() {
  const asset = (kind, name, parentId) =>
    ensure(`/Assets${q({ kinds: kind, searchText: name })}`, byName(name), () =>
      api("POST", "/Assets", { kind, name, ...(parentId ? { parentId } : {}) }),
    );
  const organisation = await asset("organization", "Demo Energy");
  const plant = await asset("plant", "Demo plant", organisation.id);
  const feedWater = await asset("mainSystem", "Demo feed water", plant.id);
  const cooling = await asset("mainSystem", "Demo cooling water", plant.id);
  const equipment = {
    "P-101": await asset("equipment", "P-101 feed pump", feedWater.id),
    "P-102": await asset("equipment", "P-102 feed pump", feedWater.id),
    "T-201": await asset("equipment", "T-201 feed tank", feedWater.id),
    "HX-301": await asset("equipment", "HX-301 cooler", cooling.id),
  };
  return { plant, systems: { feedWater, cooling }, equipment };
}

async function propertyModel() {
  const grades = await ensure("/Classifications", byName("Corrosion grade"), () =>
    api("POST", "/Classifications", {
      name: "Corrosion grade",
      description: "How far corrosion has gone (demo data).",
      elements: [
        { name: "A", displayName: "A: surface", color: "#43A047", order: 1, grade: 1 },
        { name: "B", displayName: "B: pitting", color: "#FDD835", order: 2, grade: 2 },
        { name: "C", displayName: "C: wall loss", color: "#E53935", order: 3, grade: 3 },
      ],
    }),
  );
  const definitions = [
    { name: "Depth", format: "decimal", unit: "centimetre", instruction: "Deepest wall loss." },
    { name: "Material", format: "text", instruction: "The material of the corroded part." },
    { name: "Zone", format: "text", instruction: "Plant zone: A, B or C." },
    { name: "Inspected", format: "date", instruction: "When the finding was inspected." },
    { name: "Grade", format: "classification", classification: { id: grades.id } },
  ];
  const made = [];
  for (const definition of definitions) {
    made.push(
      await ensure(`/PropertyDefinitions${q({ applicationRules: "Deviation" })}`, byName(definition.name), () =>
        api("POST", "/PropertyDefinitions", { ...definition, applicationRule: "Deviation", required: false }),
      ),
    );
  }
  const type = await ensure("/DeviationTypes?take=1000", byName("Corrosion finding"), () =>
    api("POST", "/DeviationTypes", {
      name: "Corrosion finding",
      description: "A deviation found by a corrosion inspection (demo data).",
      icon: { name: "corrosion", color: "#E53935" },
      propertyDefinitions: made.map((d) => ({ id: d.id })),
    }),
  );
  return { type };
}

async function photos() {
  const bytes = readFileSync(join(ROOT, "examples", "media", "pump-p101.jpg"));
  return ensure(
    `/Medias${q({ searchText: "demo-pump-p101" })}`,
    (m) => m.name === "demo-pump-p101.jpg",
    () => {
      const form = new FormData();
      form.append("File", new File([bytes], "demo-pump-p101.jpg", { type: "image/jpeg" }));
      form.append("Type", "image");
      return api("POST", "/Medias", form);
    },
  );
}

async function deviations({ equipment, systems }, { type }, photo) {
  const rows = [
    ["DEMO-1", "P-101", "Corrosion under insulation on the discharge flange.", "active", 0.31, "carbon steel", "A", "2026-03-12", "C"],
    ["DEMO-2", "P-101", "Pitting on the suction nozzle.", "new", 0.12, "carbon steel", "A", "2026-05-04", "B"],
    ["DEMO-3", "P-102", "Coating breakdown on the pump base.", "new", 0.04, "carbon steel", "B", "2026-06-20", "A"],
    ["DEMO-4", "T-201", "Wall loss at the tank's bottom course.", "active", 0.28, "stainless steel", "B", "2026-02-01", "C"],
    ["DEMO-5", "HX-301", "Tube-sheet corrosion at the cooler's inlet.", "active", 0.26, "duplex steel", "C", "2026-07-15", "B"],
    ["DEMO-6", "HX-301", "Surface rust on the cooler's support.", "closed", 0.02, "carbon steel", "C", "2025-11-30", "A"],
  ];
  const list = [];
  for (const [referenceId, tag, description, status, depth, material, zone, inspected, grade] of rows) {
    const asset = equipment[tag];
    const system = tag === "HX-301" ? systems.cooling : systems.feedWater;
    list.push(
      await ensure(
        `/Deviations${q({ searchText: referenceId })}`,
        (d) => d.referenceId === referenceId,
        () =>
          api("POST", "/Deviations", {
            referenceId,
            description,
            status,
            typeId: type.id,
            assetReference: { mainSystem: { id: system.id }, equipment: { id: asset.id } },
            properties: [
              { name: "Depth", value: depth },
              { name: "Material", value: material },
              { name: "Zone", value: zone },
              { name: "Inspected", value: `${inspected}T08:00:00Z` },
              { name: "Grade", value: grade },
            ],
            // The photo of the finding (GET /Medias/{id}/Data?size=Medium).
            metadata: { photos: tag === "P-101" ? [photo.id] : [] },
          }),
      ),
    );
  }
  return list;
}

async function work({ equipment }, deviationList) {
  const activity = await ensure(
    `/ActivityTemplates${q({ searchText: "Demo: measure wall thickness" })}`,
    (a) => a.displayName === "Demo: measure wall thickness",
    () =>
      api("POST", "/ActivityTemplates", {
        displayName: "Demo: measure wall thickness",
        inputTemplates: [{ name: "thickness", format: "decimal", required: true }],
      }),
  );
  const template = await ensure(
    `/WorkTemplates${q({ searchText: "Demo: pump inspection" })}`,
    (t) => t.displayName === "Demo: pump inspection",
    () =>
      api("POST", "/WorkTemplates", {
        displayName: "Demo: pump inspection",
        tags: ["pump", "demo"],
        activityTemplates: [{ activityTemplateId: activity.id }],
      }),
  );
  const items = [];
  for (const [referenceId, tag, deviation] of [
    ["DEMO-WI-1", "P-101", "DEMO-1"],
    ["DEMO-WI-2", "T-201", "DEMO-4"],
  ]) {
    items.push(
      await ensure(
        `/WorkItems${q({ searchText: referenceId })}`,
        (w) => w.referenceId === referenceId,
        async () => {
          const item = await api("POST", "/WorkItems", {
            displayName: `Follow up ${deviation} on ${tag}`,
            referenceId,
            tags: ["demo"],
            designations: [{ id: equipment[tag].id }],
            basedOn: [{ id: template.id }],
          });
          const linked = deviationList.find((d) => d.referenceId === deviation);
          await api("POST", `/Deviations/${linked.id}/WorkItems/${item.id}`);
          return item;
        },
      ),
    );
  }
  return { template, items };
}

/** A monitor of the two pumps on the vibration model, run once: P-101 and P-102 enter its alarm. */
async function monitor({ equipment }, template) {
  const definitions = await api("GET", "/ModelDefinitions?take=1000");
  if (!definitions.some((d) => d.name === "models/vibration" && d.version === "1.0")) {
    await api("POST", "/ModelDefinitions", { name: "models/vibration", version: "1.0", location: "ACR" });
  }
  const model = await ensure(`/Models${q({ searchText: "Demo pump vibration" })}`, byName("Demo pump vibration"), () =>
    api("POST", "/Models", {
      name: "Demo pump vibration",
      modelDefinitionName: "models/vibration",
      modelDefinitionVersion: "1.0",
      cpuCores: 1,
      memory: 1,
      configurableParameters: { VIBRATION: "9.4" },
    }),
  );
  const existing = (await api("GET", `/Monitors${q({ searchText: "Demo pump watch" })}`)).find(byName("Demo pump watch"));
  if (existing) {
    made.found++;
    return existing;
  }
  made.created++;
  const population = await api("POST", `/Models/${model.id}/Populations`, { name: "Demo pumps", assetType: "Equipment" });
  for (const tag of ["P-101", "P-102"]) {
    await api(
      "POST",
      `/Models/${model.id}/PopulationItems`,
      { assetReference: { id: equipment[tag].id } },
      { populationId: population.id },
    );
  }
  const created = await api("POST", "/Monitors", {
    name: "Demo pump watch",
    modelId: model.id,
    status: "Active",
    controllers: [
      {
        name: "High vibration",
        conditions: [{ variableName: "vibration", operator: "GreaterThen", comparisonValue: 7.1 }],
        actions: { raiseDeviation: { status: "active" }, createWorkItem: { workTemplateId: template.id }, setCriticality: { value: 90 } },
        onLeave: { deviationStatus: "closed" },
      },
    ],
  });
  const run = await api("POST", `/MonitorJobs/Execution/${created.id}`);
  // The job runs on the local container host; each fire of the cron moves it on (it also moves every minute).
  for (let i = 0; i < 60; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await fetch(`${base}/__scheduled?cron=*+*+*+*+*`).then((r) => r.body?.cancel());
    const job = await api("GET", `/MonitorJobs/${run.id}`);
    if (job.status === "Succeeded") return created;
    if (job.status === "Failed" || job.status === "Unknown") throw new Error(`the monitor job ended ${job.status}: ${job.output ?? ""}`);
  }
  throw new Error(`the monitor job ${run.id} did not end within 60 s (is the local container host running? npm start runs it)`);
}

async function main() {
  const started = Date.now();
  console.log(`seed: a demo plant in ${base}`);
  const plant = await assets();
  const model = await propertyModel();
  const photo = await photos();
  const deviationList = await deviations(plant, model, photo);
  const { template } = await work(plant, deviationList);
  const watch = await monitor(plant, template);
  console.log(
    [
      `seed: ${made.created} made, ${made.found} already there (${((Date.now() - started) / 1000).toFixed(1)} s):`,
      `  assets       Demo Energy > Demo plant > Demo feed water (P-101, P-102, T-201), Demo cooling water (HX-301)`,
      `  properties   Depth, Material, Zone, Inspected, Grade (classification Corrosion grade) on the deviation type Corrosion finding`,
      `  deviations   DEMO-1 ... DEMO-6 (photo of P-101: media ${photo.id})`,
      `  work         template "Demo: pump inspection", work items DEMO-WI-1, DEMO-WI-2`,
      `  monitoring   monitor "Demo pump watch" (${watch.id}): P-101 and P-102 in alarm, each with a deviation and a work item`,
      `Try: curl -s -G -H "Authorization: Bearer $(npm run -s token)" ${base}/Deviations --data-urlencode "properties=Depth gt 0.25"`,
    ].join("\n"),
  );
}

main().catch((error) => {
  console.error(`seed: ${error.message}`);
  process.exit(1);
});
