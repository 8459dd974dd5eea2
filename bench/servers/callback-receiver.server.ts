// The customer's callback receiver for the callbacks benchmark, in a process of its own so it
// never shares a thread with what is measured. HTTPS on RECEIVER_PORT with the benchmark's
// self-signed certificate (RECEIVER_KEY_FILE, RECEIVER_CERT_FILE); it answers 200 to every POST
// and counts them, except on /retry: there it answers 500 to a callback's first attempt and 200
// to its second, and keeps the time between the two (ms). A plain HTTP control port
// (CONTROL_PORT) serves GET /health, GET /count and GET /retry-gaps (those times, as JSON).
// Stops when the benchmark goes (IPC disconnect).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

let received = 0;
/** /retry: when each callback's first attempt arrived (by its webhook-id), and the gaps to the second. */
const firstAttempts = new Map<string, number>();
const retryGaps: number[] = [];
const tls = { key: readFileSync(process.env.RECEIVER_KEY_FILE!), cert: readFileSync(process.env.RECEIVER_CERT_FILE!) };
const receiver = https.createServer({ ...tls, keepAliveTimeout: 30_000 }, (req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    received += 1;
    if (req.url === '/retry') {
      const id = String(req.headers['webhook-id']);
      const first = firstAttempts.get(id);
      if (first === undefined) {
        firstAttempts.set(id, performance.now());
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"try again"}');
        return;
      }
      retryGaps.push(performance.now() - first);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
});
receiver.listen(Number(process.env.RECEIVER_PORT), '127.0.0.1');

http
  .createServer((req, res) => {
    if (req.url === '/count') res.end(String(received));
    else if (req.url === '/retry-gaps') res.end(JSON.stringify(retryGaps));
    else res.end('ok');
  })
  .listen(Number(process.env.CONTROL_PORT), '127.0.0.1');

process.once('disconnect', () => process.exit(0));
