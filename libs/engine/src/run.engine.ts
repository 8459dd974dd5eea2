import type { CompiledDefinition, CompiledGraph, CompiledNode, CompiledNodeOf } from './definition.compiler.js';
import type { NodeId, OnErrorPolicy } from './definition.types.js';
import { toJsonRecord } from './json.value.js';
import { continuationOf, executeNode, iso, type NodeContext, type NodeEffect } from './node.executor.js';
import {
  DEFAULT_RUN_LIMITS,
  ENGINE_RUNTIME,
  type ApprovalRecord,
  type JsonValue,
  type ResumeRequest,
  type RunOutcome,
  type RunPorts,
  type RunRequest,
  type RunScope,
  type RunStatus,
  type RunVars,
  type StepRecord,
  type StepStatus,
  type Suspension,
} from './run.types.js';

/** The caller asked for something no run can do (a graph the definition lacks, a bad limit). */
export class RunRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunRequestError';
  }
}

/**
 * Runs one graph of a compiled definition from its start, or from where a suspended run
 * stopped, until it ends, fails, times out or suspends. Never rejects for anything the
 * definition or its ports do: those become a FAILED or TIMEOUT outcome. Rejects with
 * RunRequestError only for a request that is wrong in itself (a graph the definition lacks,
 * limits that are not positive, starting vars with no JSON form).
 *
 * Pure: time comes from `ports.now()`, HTTP from `ports.http()`. The compiled definition is
 * only read, so one instance serves any number of concurrent runs.
 */
export async function runGraph(compiled: CompiledDefinition, request: RunRequest, ports: RunPorts): Promise<RunOutcome> {
  const graph = compiled.graphs[request.graph];
  if (graph === undefined) throw new RunRequestError(`the definition has no "${request.graph}" graph`);
  return new Run(graph, request, ports).execute();
}

/** The loop's decision after a node: go on, or stop with this outcome. */
interface Ending {
  readonly status: RunStatus;
  readonly result?: JsonValue;
  readonly errorMessage?: string;
  readonly suspension?: Suspension;
}

/** One segment of a run: its mutable state and the loop that drives it. */
class Run {
  private readonly startedAt: number;
  private readonly deadline: number;
  private readonly maxSteps: number;
  private readonly timeoutMs: number;
  private readonly policy: OnErrorPolicy;
  private readonly context: NodeContext;
  private readonly steps: StepRecord[];
  private executed = 0;
  /** How many messages the run had said when the current step began: the step's own come after. */
  private messagesAtStepStart = 0;

  constructor(
    private readonly graph: CompiledGraph,
    private readonly request: RunRequest,
    private readonly ports: RunPorts,
  ) {
    this.maxSteps = positive(request.limits?.maxSteps ?? DEFAULT_RUN_LIMITS.maxSteps, 'maxSteps', true);
    this.timeoutMs = positive(request.limits?.timeoutMs ?? DEFAULT_RUN_LIMITS.timeoutMs, 'timeoutMs', false);
    this.policy = request.onErrorPolicy ?? 'ABORT';
    this.startedAt = ports.now();
    this.deadline = this.startedAt + this.timeoutMs;
    const carried = request.resume;
    this.steps = [...(carried?.steps ?? [])];
    const { payload, input, session, vars } = request.scope;
    this.context = {
      payload,
      input,
      session,
      vars: startingVars(vars),
      messages: [...(carried?.messages ?? [])],
      actions: [...(carried?.actions ?? [])],
      ports,
      deadline: this.deadline,
    };
  }

  async execute(): Promise<RunOutcome> {
    let at: NodeId | Ending = this.request.resume === undefined ? this.graph.start : this.resume(this.request.resume);
    while (typeof at === 'string') at = await this.step(at);
    return this.finish(at);
  }

  /** Executes node `id` and says where to go next, or how the run ends. */
  private async step(id: NodeId): Promise<NodeId | Ending> {
    if (this.ports.now() >= this.deadline) return this.timedOut(`before node "${id}"`);
    if (this.executed >= this.maxSteps) return { status: 'FAILED', errorMessage: `Step limit of ${this.maxSteps} exceeded` };
    const node = this.graph.nodes.get(id);
    if (node === undefined) return { status: 'FAILED', errorMessage: `node "${id}" does not exist in the ${this.graph.name} graph` };

    this.executed += 1;
    const startedAt = this.ports.now();
    this.messagesAtStepStart = this.context.messages.length;
    let effect: NodeEffect;
    try {
      effect = await executeNode(node, this.context);
    } catch (error) {
      return this.failed(node, startedAt, reasonOf(error));
    }

    switch (effect.kind) {
      case 'next':
        this.record(node, startedAt, 'SUCCEEDED');
        return effect.next;
      case 'return':
        this.record(node, startedAt, 'SUCCEEDED');
        return { status: 'SUCCEEDED', result: effect.result };
      case 'fail':
        this.record(node, startedAt, 'FAILED', effect.error);
        return { status: 'FAILED', errorMessage: effect.error };
      case 'suspend':
        this.record(node, startedAt, 'SUSPENDED');
        return { status: effect.suspension.kind === 'ask' ? 'WAITING_FOR_INPUT' : 'SUSPENDED', suspension: effect.suspension };
      case 'timeout': {
        const ending = this.timedOut(`at node "${node.id}"`);
        this.record(node, startedAt, 'FAILED', ending.errorMessage);
        return ending;
      }
    }
  }

  /** ABORT: the run fails naming the node. CONTINUE: the step fails, the run goes on. */
  private failed(node: CompiledNode, startedAt: number, reason: string): NodeId | Ending {
    this.record(node, startedAt, 'FAILED', reason);
    const next = this.policy === 'CONTINUE' ? continuationOf(node) : undefined;
    return next ?? { status: 'FAILED', errorMessage: `node "${node.id}": ${reason}` };
  }

  private timedOut(where: string): Ending & { readonly errorMessage: string } {
    return { status: 'TIMEOUT', errorMessage: `Time limit of ${this.timeoutMs} ms exceeded ${where}` };
  }

  /** Where a suspended run goes on; completes the suspended node's carried step record. */
  private resume(resume: ResumeRequest): NodeId | Ending {
    switch (resume.kind) {
      case 'wait': {
        const node = this.nodeOf(resume.nodeId, 'wait');
        if (node === undefined) return this.cannotResume(resume);
        this.completeSuspendedStep(node, 'SUCCEEDED');
        return node.next;
      }
      case 'ask': {
        const node = this.nodeOf(resume.nodeId, 'ask');
        if (node === undefined) return this.cannotResume(resume);
        // Without saveAs the answer is kept nowhere: it is still the new run's input.message.
        if (node.saveAs !== undefined) this.context.vars[node.saveAs] = resume.answer;
        this.completeSuspendedStep(node, 'SUCCEEDED');
        return node.next;
      }
      case 'approval': {
        const node = this.nodeOf(resume.nodeId, 'approval');
        if (node === undefined) return this.cannotResume(resume);
        const approval: ApprovalRecord = {
          decision: resume.decision,
          decidedBy: resume.decidedBy ?? null,
          decidedAt: resume.decidedAt ?? iso(this.ports.now()),
          comment: resume.comment ?? null,
        };
        const next = resume.decision === 'approve' ? node.next : node.onReject;
        if (next !== undefined) {
          this.completeSuspendedStep(node, 'SUCCEEDED', undefined, approval);
          return next;
        }
        const rejected = `Rejected at node "${node.id}"`;
        this.completeSuspendedStep(node, 'FAILED', rejected, approval);
        return { status: 'FAILED', errorMessage: rejected };
      }
    }
  }

  private nodeOf<T extends CompiledNode['type']>(id: NodeId, type: T): CompiledNodeOf<T> | undefined {
    const node = this.graph.nodes.get(id);
    return node?.type === type ? (node as CompiledNodeOf<T>) : undefined;
  }

  /** A resume that does not match the graph: another definition version, or a stale request. */
  private cannotResume(resume: ResumeRequest): Ending {
    const node = this.graph.nodes.get(resume.nodeId);
    const found = node === undefined ? 'no such node' : `it is a ${node.type} node`;
    return {
      status: 'FAILED',
      errorMessage: `Cannot resume at node "${resume.nodeId}" of the ${this.graph.name} graph: ${found}, not ${resume.kind}`,
    };
  }

  /** The latest carried record of `node` that is still SUSPENDED, now finished. */
  private completeSuspendedStep(node: CompiledNode, status: StepStatus, error?: string, approval?: ApprovalRecord): void {
    const index = this.steps.findLastIndex((step) => step.nodeId === node.id && step.status === 'SUSPENDED');
    const suspended = this.steps[index];
    if (suspended === undefined) return;
    const completedAt = this.ports.now();
    const startedAt = Date.parse(suspended.startedAt);
    this.steps[index] = {
      nodeId: suspended.nodeId,
      type: suspended.type,
      status,
      startedAt: suspended.startedAt,
      completedAt: iso(completedAt),
      durationMs: Number.isNaN(startedAt) ? suspended.durationMs : Math.max(0, completedAt - startedAt),
      ...(error === undefined ? {} : { error }),
      ...(approval === undefined ? {} : { approval }),
    };
  }

  private record(node: CompiledNode, startedAt: number, status: StepStatus, error?: string): void {
    const completedAt = this.ports.now();
    const step: StepRecord = {
      nodeId: node.id,
      type: node.type,
      status,
      startedAt: iso(startedAt),
      completedAt: iso(completedAt),
      durationMs: completedAt - startedAt,
      ...(error === undefined ? {} : { error }),
    };
    this.steps.push(step);
    this.ports.onStep?.(step, this.context.messages.slice(this.messagesAtStepStart));
  }

  private finish(ending: Ending): RunOutcome {
    const completedAt = this.ports.now();
    const suspension = ending.suspension ?? null;
    return {
      status: ending.status,
      messages: this.context.messages,
      actions: this.context.actions,
      result: ending.result ?? null,
      errorMessage: ending.errorMessage ?? null,
      steps: this.steps,
      trace: {
        runtime: ENGINE_RUNTIME,
        graph: this.graph.name,
        startedAt: iso(this.startedAt),
        completedAt: iso(completedAt),
        durationMs: completedAt - this.startedAt,
        steps: this.steps.length,
      },
      vars: this.context.vars,
      suspension,
      pendingApproval:
        suspension?.kind === 'approval'
          ? { nodeId: suspension.nodeId, title: suspension.title, requestedAt: suspension.requestedAt }
          : null,
    };
  }
}

function positive(value: number, name: string, integer: boolean): number {
  if (!(value > 0) || (integer && !Number.isInteger(value)) || !Number.isFinite(value)) {
    throw new RunRequestError(`limits.${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`);
  }
  return value;
}

/** NodeFailure, ExpressionEvaluationError and NotJsonError all say what went wrong in the node. */
function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function startingVars(vars: RunScope['vars']): RunVars {
  try {
    return toJsonRecord(vars, 'scope.vars');
  } catch (error) {
    throw new RunRequestError(reasonOf(error));
  }
}
