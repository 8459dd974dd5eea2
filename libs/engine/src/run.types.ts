/**
 * The run engine's contract: what a caller asks for (`RunRequest`), what it lends the engine
 * (`RunPorts`) and what it gets back (`RunOutcome`). Everything a run produces is a plain JSON
 * value, so an outcome can be stored as it is and handed back later to resume the run.
 */
import type { GraphName, HttpMethod, NodeId, NodeType, OnErrorPolicy } from './definition.types.js';
import type { JsonValue } from './json.value.js';

/** Written into every trace, so a stored run says which engine produced it. */
export const ENGINE_RUNTIME = 'runline-engine/1';

export type { JsonValue };

/** Variables of a run (`vars.*` in expressions), written by `set`, `http.saveAs` and `ask.saveAs`. */
export type RunVars = Record<string, JsonValue>;

/** Limits on one run segment (from its start or resume to where it ends or suspends). */
export interface RunLimits {
  /**
   * Nodes executed before the run fails with `Step limit of N exceeded`: the guard against a
   * loop with no way out. Counts this segment's steps only, so a loop through a `wait` or an
   * `approval` (which a person or the clock paces) is not cut short.
   */
  readonly maxSteps?: number;
  /**
   * Wall time of the segment on the `ports.now()` clock; past it the run ends as TIMEOUT.
   * Checked before each step and bounds every http call. A resumed run gets a fresh budget.
   */
  readonly timeoutMs?: number;
}

/** What a run gets when the request sets no limits. */
export const DEFAULT_RUN_LIMITS: Required<RunLimits> = { maxSteps: 1000, timeoutMs: 60_000 };

/**
 * What the expressions see. The engine never changes these objects: it copies `vars` and works
 * on the copy, so one scope can seed many runs.
 */
export interface RunScope {
  readonly payload?: unknown;
  readonly input?: unknown;
  readonly session?: unknown;
  /** Variables at the start: none for a new run, the previous outcome's `vars` on a resume. */
  readonly vars?: Readonly<Record<string, unknown>>;
}

/**
 * What a resumed run carries over from the outcome that suspended it. All optional: a bot
 * passes nothing (each message is a run of its own whose answer holds only its own messages),
 * an approved async run passes everything so its final record is complete.
 */
export interface CarriedState {
  /** Earlier step records; the suspended node's record is completed when the run resumes. */
  readonly steps?: readonly StepRecord[];
  readonly messages?: readonly string[];
  readonly actions?: readonly RunAction[];
}

/**
 * Where and how a suspended run continues. `nodeId` is the node named by the outcome's
 * `suspension`; it must be a node of that kind in the same compiled definition, or the run
 * fails with `Cannot resume …`.
 */
export type ResumeRequest = CarriedState &
  (
    | { readonly kind: 'wait'; readonly nodeId: NodeId }
    | ({ readonly kind: 'approval'; readonly nodeId: NodeId; readonly decision: ApprovalDecisionName } & ApprovalDecider)
    | { readonly kind: 'ask'; readonly nodeId: NodeId; readonly answer: string }
  );

/** What a person decided at an `approval` node. */
export type ApprovalDecisionName = 'approve' | 'reject';

/**
 * Who decided an approval, when and why, as the caller recorded it. Optional on a resume (an
 * unknown decider is null, an unknown time is the resume's `ports.now()`); the approval's step
 * record carries them (`StepRecord.approval`).
 */
export interface ApprovalDecider {
  readonly decidedBy?: string | null;
  /** ISO 8601. */
  readonly decidedAt?: string;
  readonly comment?: string | null;
}

export interface RunRequest {
  /** Which graph of the definition runs: a chatbot's `bot` or `flow`, an automation's `workflow`. */
  readonly graph: GraphName;
  readonly scope: RunScope;
  /** ABORT (default) ends the run at a failing node; CONTINUE records the failure and goes on. */
  readonly onErrorPolicy?: OnErrorPolicy;
  /** Defaults: `DEFAULT_RUN_LIMITS`. */
  readonly limits?: RunLimits;
  /** Continue a suspended run instead of entering the graph at `start`. */
  readonly resume?: ResumeRequest;
}

/** An outbound call made by an `http` node, ready for the outbound guard. */
export interface HttpCall {
  /** The http node making the call (names the request's span in traces). */
  readonly nodeId?: NodeId;
  readonly method: HttpMethod;
  /** Rendered from the node's template; the guard decides whether it may be called. */
  readonly url: string;
  /**
   * Rendered header values. When the node sends a body and sets no content type,
   * `content-type: application/json` is added.
   */
  readonly headers: Readonly<Record<string, string>>;
  /** The evaluated `body` as JSON text; absent when the node has none or it yields nothing. */
  readonly body?: string;
  /** What is left of the run's time: the call must settle (resolve or reject) within it. */
  readonly timeoutMs: number;
  /** Aborted when the run gives up on the call (its time ran out); stop work when it fires. */
  readonly signal: AbortSignal;
}

/** What the outbound call answered. Any status is an answer; the engine judges it. */
export interface HttpReply {
  readonly status: number;
  /** Response headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body parsed as JSON when the response is JSON, else its text; null when empty. */
  readonly body: unknown;
}

/**
 * Everything the engine needs from outside. The engine does no I/O and reads no clock of its
 * own; the caller decides what time it is and how HTTP leaves the process.
 */
export interface RunPorts {
  /** Current time in epoch milliseconds (`Date.now` in production, a fake clock in tests). */
  now(): number;
  /**
   * Performs an `http` node's call through the outbound guard. Rejects on network errors,
   * refused addresses and its own timeout; a non-2xx status is an answer, not a rejection.
   */
  http(call: HttpCall): Promise<HttpReply>;
  /**
   * Optional watchdog: resolves after `ms` on the same clock as `now()` and may stop early
   * once `signal` aborts (its outcome is then ignored). With it, a run ends as TIMEOUT on time
   * even if the http port overruns `timeoutMs`; without it, the engine relies on the port.
   * Production: `(ms, signal) => setTimeout(ms, undefined, { signal })` from node:timers/promises.
   */
  sleep?(ms: number, signal: AbortSignal): Promise<void>;
  /**
   * Optional: hears each step as it is recorded, with the messages its node said (in order), so
   * a caller can show a run as it happens. It must not throw, and it changes nothing of the run.
   */
  onStep?(step: StepRecord, messages: readonly string[]): void;
}

/** How a run ended, or why it stopped for now. */
export type RunStatus = 'SUCCEEDED' | 'FAILED' | 'TIMEOUT' | 'SUSPENDED' | 'WAITING_FOR_INPUT';

/** SUSPENDED: a `wait`, `approval` or `ask` node that paused the run (completed on resume). */
export type StepStatus = 'SUCCEEDED' | 'FAILED' | 'SUSPENDED';

/** One executed node. Times are ISO 8601 on the `ports.now()` clock. */
export interface StepRecord {
  readonly nodeId: NodeId;
  readonly type: NodeType;
  readonly status: StepStatus;
  readonly startedAt: string;
  readonly completedAt: string;
  readonly durationMs: number;
  /** Why the node failed, e.g. `expression "payload.a + 'x'" failed: …`; absent otherwise. */
  readonly error?: string;
  /** An `approval` node once decided: the decision, who made it, when, and their comment. */
  readonly approval?: ApprovalRecord;
}

/** The decision on an `approval` step, in the step's record. */
export interface ApprovalRecord {
  readonly decision: ApprovalDecisionName;
  /** The deciding user's id; null when the caller did not say. */
  readonly decidedBy: string | null;
  /** ISO 8601. */
  readonly decidedAt: string;
  readonly comment: string | null;
}

/** An `action` node's output: its name and evaluated parameters. */
export interface RunAction {
  readonly name: string;
  readonly params: Readonly<Record<string, JsonValue>>;
}

/** The run is paused at an `approval` node until someone approves or rejects it. */
export interface PendingApproval {
  readonly nodeId: NodeId;
  /** The node's rendered title. */
  readonly title: string;
  readonly requestedAt: string;
}

/** Where a SUSPENDED or WAITING_FOR_INPUT run stopped, and what resumes it. */
export type Suspension =
  /** Resume (kind `wait`) at or after `resumeAt`; the scheduler fires it. */
  | { readonly kind: 'wait'; readonly nodeId: NodeId; readonly resumeAt: string }
  /** Resume (kind `approval`) with the decision; also the outcome's `pendingApproval`. */
  | ({ readonly kind: 'approval' } & PendingApproval)
  /** Bot only: resume (kind `ask`) with the session's next message; `saveAs` receives it. */
  | { readonly kind: 'ask'; readonly nodeId: NodeId; readonly saveAs: string | null };

/** Small timing summary of a run segment. */
export interface RunTrace {
  readonly runtime: typeof ENGINE_RUNTIME;
  readonly graph: GraphName;
  readonly startedAt: string;
  readonly completedAt: string;
  readonly durationMs: number;
  /** Step records in the outcome (carried ones included). */
  readonly steps: number;
  /**
   * The published definition version this segment ran, when the caller knows it (the
   * invocation service sets it; the engine does not know versions). Absent for a draft.
   */
  readonly definitionVersion?: number;
}

/**
 * The result of `runGraph`: JSON-serialisable, every field always present (null when unset).
 * `messages`, `actions` and `steps` start from the resume's carried state, if any.
 */
export interface RunOutcome {
  readonly status: RunStatus;
  /** Rendered `message` and `ask` texts, in order. */
  readonly messages: string[];
  readonly actions: RunAction[];
  /** The `return` node's value; null for `end`, failures and suspensions. */
  readonly result: JsonValue;
  /** Set for FAILED and TIMEOUT; null otherwise (CONTINUE keeps failures in `steps`). */
  readonly errorMessage: string | null;
  readonly steps: StepRecord[];
  readonly trace: RunTrace;
  /** Variables as the run left them: pass them back as `scope.vars` to resume. */
  readonly vars: RunVars;
  readonly suspension: Suspension | null;
  /** Set while the run waits at an `approval` node. */
  readonly pendingApproval: PendingApproval | null;
}
