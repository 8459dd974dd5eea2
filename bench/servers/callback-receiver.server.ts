// The customer's callback receiver for the callbacks benchmark, in a process of its own so it
// never shares a thread with what is measured. HTTPS on RECEIVER_PORT with the benchmark's
// self-signed certificate (RECEIVER_KEY_FILE, RECEIVER_CERT_FILE); it answers 200 to every POST
// and counts them. A plain HTTP control port (CONTROL_PORT) serves GET /health and GET /count.
// Stops when the benchmark goes (IPC disconnect).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

let received = 0;
const tls = { key: readFileSync(process.env.RECEIVER_KEY_FILE!), cert: readFileSync(process.env.RECEIVER_CERT_FILE!) };
const receiver = https.createServer({ ...tls, keepAliveTimeout: 30_000 }, (req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    received += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
});
receiver.listen(Number(process.env.RECEIVER_PORT), '127.0.0.1');

http
  .createServer((req, res) => {
    if (req.url === '/count') res.end(String(received));
    else res.end('ok');
  })
  .listen(Number(process.env.CONTROL_PORT), '127.0.0.1');

process.once('disconnect', () => process.exit(0));
