import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { API_ERRORS, ApiError } from '../http/api-error.js';

/** A project's `config_version` and its organization's `plan_version`. */
export interface ProjectVersion {
  config: number;
  plan: number;
}

interface Known {
  /** null: the project does not exist. */
  version: ProjectVersion | null;
  /** performance.now() when the statement that read it was sent. */
  sentAt: number;
}

interface Waiter {
  resolve: (version: ProjectVersion | null) => void;
  reject: (error: unknown) => void;
}

const KNOWN_LIMIT = 100_000;

/**
 * The current `config_version` of projects (and `plan_version` of their organizations), read
 * from the database: the gateway's question "is what I hold in memory still current?" before
 * it acts on it.
 *
 * A read sent after a request arrived reflects every change answered before that request, so
 * it may serve that request and every other request that arrived before it was sent. Reads
 * are gathered per event-loop turn into one statement; under load one statement serves many
 * requests, and a request waits for at most one round trip.
 */
@Injectable()
export class ProjectVersions {
  private readonly known = new Map<string, Known>();
  private waiting = new Map<string, Waiter[]>();
  private scheduled = false;

  constructor(private readonly transactions: TransactionRunner) {}

  /**
   * The project's versions as of a moment at or after `since` (a performance.now() time, at the
   * latest when the request arrived); null when the project does not exist.
   */
  current(projectId: string, since: number): ProjectVersion | null | Promise<ProjectVersion | null> {
    const known = this.known.get(projectId);
    if (known && known.sentAt >= since) return known.version;
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(projectId);
      if (queue) queue.push({ resolve, reject });
      else this.waiting.set(projectId, [{ resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.read());
      }
    });
  }

  private async read(): Promise<void> {
    this.scheduled = false;
    const waiting = this.waiting;
    this.waiting = new Map();
    const sentAt = performance.now();
    try {
      // A prepared statement: parsed and planned once per connection, it is on every request's path.
      const rows = await this.transactions.runStatement<Array<{ id: string; config_version: number; plan_version: number }>>(
        `SELECT p.id, p.config_version, o.plan_version FROM projects p JOIN organizations o ON o.id = p.org_id
          WHERE p.id = ANY($1::uuid[])`,
        [[...waiting.keys()]],
      );
      const versions = new Map(rows.map((row) => [row.id, { config: row.config_version, plan: row.plan_version }]));
      if (this.known.size > KNOWN_LIMIT) this.known.clear();
      for (const [projectId, queue] of waiting) {
        const version = versions.get(projectId) ?? null;
        const earlier = this.known.get(projectId);
        if (!earlier || earlier.sentAt <= sentAt) this.known.set(projectId, { version, sentAt });
        for (const { resolve } of queue) resolve(version);
      }
    } catch {
      const unavailable = new ApiError(503, API_ERRORS.serviceTemporarilyUnavailable);
      for (const queue of waiting.values()) for (const { reject } of queue) reject(unavailable);
    }
  }
}
