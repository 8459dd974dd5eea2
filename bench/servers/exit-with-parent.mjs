// Preloaded (`node --import`) into children the sustained benchmark runs as they are deployed,
// without the TypeScript hooks (whose compiler would add to the RSS the benchmark measures):
// when the benchmark goes away (its IPC channel closes, even after a SIGKILL) the process sends
// itself SIGTERM, so its own shutdown runs and nothing outlives the benchmark.
if (process.channel) {
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  // The channel carries nothing; it must not be what keeps the process alive.
  process.channel.unref();
}
