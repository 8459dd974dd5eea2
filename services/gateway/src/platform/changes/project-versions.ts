import { Injectable } from '@nestjs/common';
import { boundedCache } from '@runline/runtime';
import { DomainError } from '../errors/domain-error.js';
import { API_ERRORS } from '../errors/error-messages.js';
import { ProjectRepository } from '../store/project.repository.js';

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

/** Projects whose versions are kept at most; past it the one asked for least recently goes. */
const KNOWN_LIMIT = 100_000;

/**
 * The current `config_version` of projects (and `plan_version` of their organizations), read
 * from the database: the gateway's question "is what I hold in memory still current?" before
 * it acts on it.
 *
 * A read sent after a request arrived reflects every change answered before that request, so
 * it may serve that request and every other request that arrived before it was sent. One
 * read is in flight at a time and the next takes every project asked for meanwhile, so an idle
 * gateway pays one round trip and a busy one shares a statement among many requests.
 */
@Injectable()
export class ProjectVersions {
  private readonly known = boundedCache<string, Known>({ maxEntries: KNOWN_LIMIT });
  private waiting = new Map<string, Waiter[]>();
  private reading = false;

  constructor(private readonly projects: ProjectRepository) {}

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
      // One read at a time: the next is sent as soon as the one in flight ends, and takes every
      // project asked for meanwhile. An idle gateway sends at once; a busy one batches.
      if (!this.reading) void this.readWaiting();
    });
  }

  private async readWaiting(): Promise<void> {
    this.reading = true;
    try {
      while (this.waiting.size > 0) await this.read();
    } finally {
      this.reading = false;
    }
  }

  private async read(): Promise<void> {
    const waiting = this.waiting;
    this.waiting = new Map();
    const ids = [...waiting.keys()];
    const sentAt = performance.now();
    try {
      const rows = await this.projects.versionsOf(ids);
      const versions = new Map(rows.map((row) => [row.id, { config: row.config_version, plan: row.plan_version }]));
      for (const [projectId, queue] of waiting) {
        const version = versions.get(projectId) ?? null;
        const earlier = this.known.get(projectId);
        if (!earlier || earlier.sentAt <= sentAt) this.known.set(projectId, { version, sentAt });
        for (const { resolve } of queue) resolve(version);
      }
    } catch {
      const unavailable = new DomainError('unavailable', API_ERRORS.serviceTemporarilyUnavailable);
      for (const queue of waiting.values()) for (const { reject } of queue) reject(unavailable);
    }
  }
}
