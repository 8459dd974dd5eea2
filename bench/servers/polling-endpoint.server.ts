// The customer endpoint of the polling benchmark, in its own process: GET /<set>/<n> (`p/…` for
// the polling service's triggers, `b/…` for the bare poller's) answers `[]` (nothing new, so no
// runs: the benchmark measures polling itself) and records when each call arrived; GET /report
// answers every arrival time per `<set>/<n>`; GET /ready answers 200.
import { createServer } from 'node:http';

const port = Number(process.env.PORT);
const arrivals = new Map<string, number[]>();
const POLL_PATH = /^\/([a-z]+\/\d+)$/;
process.once('disconnect', () => process.exit(0));

createServer((request, response) => {
  const at = Date.now();
  const url = request.url ?? '';
  const poll = POLL_PATH.exec(url);
  if (poll) {
    const key = poll[1]!;
    let list = arrivals.get(key);
    if (!list) arrivals.set(key, (list = []));
    list.push(at);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('[]');
    return;
  }
  if (url === '/report') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(Object.fromEntries(arrivals)));
    return;
  }
  response.writeHead(200);
  response.end('ok');
}).listen(port, '127.0.0.1');
