// The polling benchmark's baseline: a bare poller in a process of its own. One timer chain per
// URL `${POLL_BASE}<i>` (i < POLL_COUNT): its first GET is due at FIRST_DUE + ⌊i · INTERVAL_MS /
// POLL_COUNT⌋ (epoch ms), every next one INTERVAL_MS after the last due time, until STOP_AT. The
// GETs go through one keep-alive agent of 64 sockets, as the outbound guard's pool per address
// does; each answer is read to its end. No database, no lease, no outcome written: the floor
// of what polling these URLs on time costs in Node. GET /ready on PORT answers 200.
import http from 'node:http';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} must be set`);
  return value;
};
const base = env('POLL_BASE');
const count = Number(env('POLL_COUNT'));
const intervalMs = Number(env('INTERVAL_MS'));
const firstDue = Number(env('FIRST_DUE'));
const stopAt = Number(env('STOP_AT'));
const agent = new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 64, scheduling: 'lifo' });
process.once('disconnect', () => process.exit(0));

function pollAt(i: number, due: number): void {
  if (due >= stopAt) return;
  setTimeout(() => {
    const request = http.get(`${base}${i}`, { agent }, (response) => {
      response.resume();
    });
    request.on('error', () => undefined);
    pollAt(i, due + intervalMs);
  }, Math.max(0, due - Date.now()));
}

for (let i = 0; i < count; i++) pollAt(i, firstDue + Math.floor((i * intervalMs) / count));

http
  .createServer((_request, response) => {
    response.writeHead(200);
    response.end('ok');
  })
  .listen(Number(env('PORT')), '127.0.0.1');
