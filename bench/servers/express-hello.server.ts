// The baseline: a bare express 5 hello route, nothing else. Started by the benchmark as a
// child process on PORT; stops on SIGTERM or when the benchmark goes away.
import express from 'express';

const port = Number(process.env.PORT);
const app = express();
app.get('/', (_req, res) => {
  res.send('Hello World!');
});
const server = app.listen(port, '127.0.0.1');

const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('disconnect', stop);
