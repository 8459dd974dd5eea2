import type { FastifyReply } from 'fastify';

/** The headers of every event stream: no caching, no buffering by a proxy (nginx reads X-Accel-Buffering). */
const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/** An open text/event-stream response, written to directly (outside Fastify's serialization). */
export interface EventStreamResponse {
  write(text: string): void;
  close(): void;
}

/**
 * Takes the reply over from Fastify and starts a text/event-stream answer. `onGone` runs once,
 * when the client goes away or the stream is closed. Call it only after every check that can
 * refuse the request has passed: from here on the status is 200.
 */
export function openEventStream(reply: FastifyReply, onGone: () => void): EventStreamResponse {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, STREAM_HEADERS);
  // The headers go out at once, so a client knows the stream is open before the first event.
  raw.flushHeaders();
  let gone = false;
  const leave = () => {
    if (gone) return;
    gone = true;
    onGone();
  };
  raw.on('close', leave);
  return {
    write: (text) => {
      if (!gone && !raw.writableEnded) raw.write(text);
    },
    close: () => {
      if (!raw.writableEnded) raw.end();
      leave();
    },
  };
}

/** 204: nothing will follow (a client that saw `end`); an EventSource does not reconnect after it. */
export function answerNothingMore(reply: FastifyReply): void {
  void reply.status(204).send();
}
