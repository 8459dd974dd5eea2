import { randomUUID } from 'node:crypto';
import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  create,
  fromBinary,
  POLLING_REQUEST_SUBJECTS,
  RegisterPollingTriggerReplySchema,
  RegisterPollingTriggerRequestSchema,
  toBinary,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { OutboundGuard, OutboundRefusedError } from '@runline/outbound';
import { SecretBox } from '@runline/runtime';
import { raiseVersion } from '../events/project-copies.repository.js';
import { DEFAULT_DEDUPE_FIELD } from '../polling/poll-items.js';
import { Poller } from '../polling/poller.js';
import { upsertTrigger } from '../polling/polling-triggers.repository.js';
import { triggerDocument } from '../polling/trigger-document.js';

/** How often a trigger that names no interval is polled. */
export const DEFAULT_INTERVAL_MS = 60_000;

/**
 * Registers a trigger, or updates the project's trigger with the same poll key; its first poll
 * is due at once. A poll endpoint the outbound guard refuses (address not allowed) is refused
 * here already, so the customer hears it from the 400 rather than from dead letters.
 */
@Controller()
export class RegisterPollingTriggerHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly guard: OutboundGuard,
    private readonly poller: Poller,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  @MessagePattern(POLLING_REQUEST_SUBJECTS.REGISTER_POLLING_TRIGGER)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(RegisterPollingTriggerRequestSchema, data);
    const invalid = await this.endpointProblem(request.pollEndpoint);
    if (invalid !== null) return toBinary(RegisterPollingTriggerReplySchema, create(RegisterPollingTriggerReplySchema, { invalidReason: invalid }));
    const now = new Date();
    const row = await this.transactions.run(async (tx) => {
      // Polled items run on a copy at least as new as what the gateway registered this from.
      await raiseVersion(tx.manager, request.projectId, request.orgId, Number(request.configVersion));
      return upsertTrigger(
        tx.manager,
        {
          id: randomUUID(),
          orgId: request.orgId,
          projectId: request.projectId,
          pollKey: request.pollKey,
          source: request.source,
          pollEndpoint: request.pollEndpoint,
          dedupeField: request.dedupeField || DEFAULT_DEDUPE_FIELD,
          sealedAuthHeader: request.authHeader ? this.secrets.seal(request.authHeader) : null,
          intervalMs: request.intervalMs || DEFAULT_INTERVAL_MS,
          runTarget: request.projectType === 'AUTOMATION' ? 'AUTOMATION' : 'FLOW',
        },
        now,
      );
    });
    this.poller.offer(row.nextPollAt);
    return toBinary(RegisterPollingTriggerReplySchema, create(RegisterPollingTriggerReplySchema, { triggerJson: JSON.stringify(triggerDocument(row)) }));
  }

  private async endpointProblem(url: string): Promise<string | null> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'pollEndpoint must be an http or https URL';
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'pollEndpoint must be an http or https URL';
    if (parsed.username || parsed.password) return 'pollEndpoint must not contain credentials; use authHeader';
    try {
      await this.guard.check(url);
    } catch (error) {
      // A host that does not resolve right now may resolve later; only a refusal is final.
      if (error instanceof OutboundRefusedError) return `pollEndpoint is not allowed: ${error.message}`;
    }
    return null;
  }
}
