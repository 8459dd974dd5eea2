import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, type Bus, type Subscription } from '@runline/bus';
import { decodeEnvelope, fromBinary, INVOCATION_LIVE_SUBJECTS, RunProgressSchema, type Envelope, type RunProgress } from '@runline/contracts';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { GatewayConfig } from '../config.js';

/** Hears the events of one run or one project. */
export interface RunEventsFollower {
  onEvent(envelope: Envelope): void;
  /** A step or message of the run as it happens (live only; may be missed). */
  onProgress?(progress: RunProgress): void;
  /** Called every RUN_STREAM_PING_MS while it follows. */
  onPing?(): void;
  /** The gateway is stopping: end the response (a client reconnects elsewhere with its Last-Event-ID). */
  onShutdown?(): void;
}

/** Every invocation event, from every invocation replica: `invocation.evt.>` (and live progress on its own subject). */
const INVOCATION_EVENTS = 'invocation.evt.>';

/**
 * The gateway replica's one subscription to the runs' events (DESIGN section 14), fanned out
 * in memory to whoever follows a run (its event streams, `Prefer: wait`) or a project (the
 * console's project stream). A core NATS subscription: no consumer on the server, no
 * acknowledgement; what a follower misses (a reconnect, an event out of turn) it reads back
 * from the run's recorded history, which the event's sequence lets it notice.
 */
@Injectable()
export class RunEventsFeed implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly byRun = new Map<string, Set<RunEventsFollower>>();
  private readonly byProject = new Map<string, Set<RunEventsFollower>>();
  private subscription: Subscription | undefined;
  private progressSubscription: Subscription | undefined;
  private pings: NodeJS.Timeout | undefined;
  private readonly pingMs: number;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GatewayConfig) config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.pingMs = config.RUN_STREAM_PING_MS;
  }

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await this.bus.listen(INVOCATION_EVENTS, ({ data }) => this.deliver(data));
    this.progressSubscription = await this.bus.listen(INVOCATION_LIVE_SUBJECTS.RUN_PROGRESS, ({ data }) => this.deliverProgress(data));
    // One timer for every open stream, not one each: pings cost nothing per stream at rest.
    this.pings = setInterval(() => this.ping(), this.pingMs);
    this.pings.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.pings) clearInterval(this.pings);
    await this.subscription?.stop();
    await this.progressSubscription?.stop();
    // Before the HTTP server closes: it waits for open responses, and a stream never ends by itself.
    for (const followers of [...this.byRun.values(), ...this.byProject.values()]) {
      for (const follower of [...followers]) follower.onShutdown?.();
    }
  }

  /** Follows one run until the returned function is called. */
  followRun(invocationId: string, follower: RunEventsFollower): () => void {
    return add(this.byRun, invocationId, follower);
  }

  /** Follows every run of one project until the returned function is called. */
  followProject(projectId: string, follower: RunEventsFollower): () => void {
    return add(this.byProject, projectId, follower);
  }

  /** Open followers, for the metrics and the bench. */
  get followerCount(): number {
    let count = 0;
    for (const followers of this.byRun.values()) count += followers.size;
    for (const followers of this.byProject.values()) count += followers.size;
    return count;
  }

  private deliver(data: Uint8Array): void {
    if (this.byRun.size === 0 && this.byProject.size === 0) return;
    let envelope: Envelope;
    try {
      envelope = decodeEnvelope(data);
    } catch (error) {
      this.logger.warn({ err: error }, 'an invocation event could not be decoded; its streams read it from the history');
      return;
    }
    for (const follower of this.byRun.get(envelope.invocationId) ?? []) follower.onEvent(envelope);
    for (const follower of this.byProject.get(envelope.projectId) ?? []) follower.onEvent(envelope);
  }

  private deliverProgress(data: Uint8Array): void {
    if (this.byRun.size === 0) return;
    let progress: RunProgress;
    try {
      progress = fromBinary(RunProgressSchema, data);
    } catch (error) {
      this.logger.warn({ err: error }, 'a run progress message could not be decoded; its streams read it from the history');
      return;
    }
    for (const follower of this.byRun.get(progress.invocationId) ?? []) follower.onProgress?.(progress);
  }

  private ping(): void {
    for (const followers of [...this.byRun.values(), ...this.byProject.values()]) {
      for (const follower of followers) follower.onPing?.();
    }
  }
}

function add(index: Map<string, Set<RunEventsFollower>>, key: string, follower: RunEventsFollower): () => void {
  let followers = index.get(key);
  if (!followers) index.set(key, (followers = new Set()));
  followers.add(follower);
  return () => {
    followers.delete(follower);
    if (followers.size === 0 && index.get(key) === followers) index.delete(key);
  };
}
