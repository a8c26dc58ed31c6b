// Runs inside a job's jail as nobody (scripts/container-host/jail.sh): listens on the namespace's own
// 127.0.0.1:PORT and carries each connection to the host's socket, which leads to the API. It says
// it is listening by writing to fd 3 and closing it.
//   node forward.mjs PORT SOCKET
import { closeSync, writeSync } from "node:fs";
import { connect, createServer } from "node:net";

const [port, socketPath] = process.argv.slice(2);
const server = createServer((client) => {
  const upstream = connect(socketPath);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", close).on("close", close);
  upstream.on("error", close).on("close", close);
  client.pipe(upstream).pipe(client);
});
server.listen(Number(port), "127.0.0.1", () => {
  try {
    writeSync(3, "ready\n");
    closeSync(3);
  } catch {
    // Nobody waits.
  }
});
