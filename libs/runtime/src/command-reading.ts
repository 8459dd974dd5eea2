import { InvalidEnvelopeError, UnexpectedEventTypeError, type Envelope } from '@runline/contracts';

/** A command that can never be handled as it is (a required field missing, an id that is no id). */
export class InvalidCommandError extends Error {}

/**
 * Reads a work-queue command with `read`. One that can never be handled (an envelope that is not
 * one, a payload of another type, an InvalidCommandError from `read`) would fail the same way on
 * every delivery: it is logged as `<what> refused` and terminated, and undefined is answered.
 * Anything else is thrown, and the message comes again.
 */
export async function readCommandOrTerminate<T>(
  envelope: Envelope,
  message: { term(): Promise<void> },
  logger: { warn(details: Record<string, unknown>, text: string): void },
  what: string,
  read: (envelope: Envelope) => T,
): Promise<T | undefined> {
  try {
    return read(envelope);
  } catch (error) {
    if (!(error instanceof InvalidCommandError || error instanceof InvalidEnvelopeError || error instanceof UnexpectedEventTypeError)) throw error;
    logger.warn({ messageId: envelope.id, error: error.message }, `${what} refused`);
    await message.term();
    return undefined;
  }
}
