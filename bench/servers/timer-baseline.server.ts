// The baseline of the scheduling benchmark: a bare Node `setTimeout` scheduler in a process of
// its own. Told the same schedule as the system (the window's due times, and as many far-away
// timers as the system has far-away runs), it arms one timer per run and records how late each
// window timer fired by the same clock the system's timestamps use (Date.now(), milliseconds).
// It is the floor a Node timer gives on this machine while the system does the same work beside
// it. Talks to the benchmark over IPC (support/timer-baseline.ts); stops when the benchmark goes.
import type { BaselineReply, BaselineRequest } from '../support/timer-baseline.js';

let farTimers: NodeJS.Timeout[] = [];

process.on('message', (message: BaselineRequest) => {
  if (message.type === 'arm') arm(message.windowDues, message.farDues);
});
process.once('disconnect', () => process.exit(0));
send({ type: 'ready' });

function arm(windowDues: number[], farDues: number[]): void {
  farTimers = farDues.map((due) => setTimeout(() => undefined, due - Date.now()));
  const latenessMs = new Array<number>(windowDues.length).fill(Number.NaN);
  let left = windowDues.length;
  windowDues.forEach((due, index) => {
    const fire = (): void => {
      const now = Date.now();
      // setTimeout measures from the loop's cached time, so it can wake a millisecond early.
      // A scheduler must not fire early: wait for the rest, as the system's timer does.
      if (now < due) {
        setTimeout(fire, due - now);
        return;
      }
      latenessMs[index] = now - due;
      if (--left === 0) finish(latenessMs);
    };
    setTimeout(fire, due - Date.now());
  });
}

function finish(latenessMs: number[]): void {
  for (const timer of farTimers) clearTimeout(timer);
  farTimers = [];
  send({ type: 'fired', latenessMs });
}

function send(reply: BaselineReply): void {
  process.send?.(reply);
}
