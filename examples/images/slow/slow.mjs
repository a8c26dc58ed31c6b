// examples/slow: a long job whose output the service refreshes every minute.
const seconds = Number(process.env.SLOW_SECONDS || 120);
for (let i = 1; i <= seconds; i++) {
  console.log(`tick ${i} of ${seconds}`);
  await new Promise((resolve) => setTimeout(resolve, 1000));
}
console.log("done");
