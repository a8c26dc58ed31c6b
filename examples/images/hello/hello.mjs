// examples/hello: what a model container does with the variables the service gives it.
const env = process.env;
console.log(`hello from job ${env.jobId}`);
console.log(`environment names: ${Object.keys(env).sort().join(", ")}`);
await new Promise((resolve) => setTimeout(resolve, 2000));

const api = env.INTEGRITY_EDGE_API_URL;
const token = env.INTEGRITY_EDGE_JOB_TOKEN;
if (api && token) {
  const output = {
    greeting: "hello",
    optionNames: Object.keys(env)
      .filter((k) => !k.startsWith("INTEGRITY_EDGE_"))
      .sort(),
    finishedAt: new Date().toISOString(),
  };
  const res = await fetch(`${api}/JobOutputs`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ jobId: env.jobId, jobOutputTypeId: env.INTEGRITY_EDGE_OUTPUT_TYPE_ID ?? null, output }),
  });
  console.log(`posted an output: ${res.status}`);
  if (!res.ok) {
    console.error(`the API refused the output: ${(await res.text()).slice(0, 500)}`);
    process.exit(1);
  }
}
console.log("done");
