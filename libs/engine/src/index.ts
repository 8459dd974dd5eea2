/**
 * @runline/engine: definition schema v1 (types, validation, compilation) and the run engine
 * that executes it. Pure: no I/O except through the ports a run is given.
 *
 * Saving a definition (gateway):
 *   const result = validateDefinition(project.type, body.definition);
 *   if (!result.ok) throw new BadRequestException({ error: result.summary, details: result.errors });
 *
 * Running one (invocation): compile once per published version and keep it,
 *   const compiled = compileDefinition(definition);   // cache by (projectId, version)
 *   await renderTemplate(node.text, { payload, vars, session, input });
 *
 * Executing it (invocation), with the outbound guard behind `http`:
 *   const outcome = await runGraph(compiled, {
 *     graph: 'workflow', scope: { payload, input, session, vars }, onErrorPolicy: 'ABORT',
 *     limits: { maxSteps: 1000, timeoutMs: 30_000 },
 *   }, { now: Date.now, http: (call) => guardedFetch(call), sleep });
 *   // outcome: { status, messages, actions, result, errorMessage, steps, trace, vars,
 *   //            suspension, pendingApproval } (plain JSON; store it as it is)
 *   const result = shapeRunResult('workflow', outcome);  // the endpoint's `result`
 *
 * Resuming a SUSPENDED / WAITING_FOR_INPUT run (same compiled version):
 *   runGraph(compiled, { graph, scope: { ...scope, vars: outcome.vars },
 *     resume: { kind: 'approval', nodeId, decision: 'approve', decidedBy, decidedAt, comment,
 *               steps: outcome.steps, messages: outcome.messages, actions: outcome.actions } }, ports);
 *   // the approval's step then carries `approval: { decision, decidedBy, decidedAt, comment }`
 *
 * Trigger checks (gateway / invocation): `expectedTriggerKeys`, `resolveTrigger`,
 * `DEFAULT_TRIGGER_KEY`.
 *
 * Schedule triggers (gateway on save and in its answers, scheduler when firing), DESIGN
 * section 12. Pure: the clock is an argument.
 *   const schedules = schedulesOf(definition);              // normalized, [] for a chatbot
 *   const key = scheduleFingerprint(schedule);              // unchanged → keep its times and anchor
 *   const due = nextFireTime(schedule, now, anchor);        // anchor: when this form came into force
 *   const startAt = due.getTime() + jitterMs(`${projectId}/${schedule.id}`, due, schedule.jitterSeconds);
 *   const missed = catchUpFires(schedule, lastHandled, now, anchor);     // after an outage
 *   const backfill = fireTimesBetween(schedule, from, to, anchor, SCHEDULE_LIMITS.maxBackfillFires + 1);
 * A disabled schedule (`enabled: false`) has no fire times.
 */

// Document model (schema v1).
export {
  ENROLLMENT_POLICIES,
  GRAPHS_BY_PROJECT_TYPE,
  GRAPH_NAMES,
  HTTP_METHODS,
  NODE_TYPES,
  ON_ERROR_POLICIES,
  PROJECT_TYPES,
  SCHEMA_VERSION,
  isAutomationDefinition,
  isChatbotDefinition,
  type ActionNode,
  type ApprovalNode,
  type AskNode,
  type AutomationDefinition,
  type BotGraph,
  type BranchCase,
  type BranchNode,
  type CallbackOverride,
  type ChatbotDefinition,
  type Definition,
  type DefinitionDocument,
  type DefinitionNode,
  type EndNode,
  type EnrollmentPolicy,
  type ExpressionSource,
  type FailNode,
  type Graph,
  type GraphName,
  type HttpMethod,
  type HttpNode,
  type MessageNode,
  type NodeId,
  type NodeType,
  type OnErrorPolicy,
  type ProjectType,
  type RetryPolicy,
  type ReturnNode,
  type SetNode,
  type TemplateSource,
  type TriggerConfig,
  type TriggeredGraph,
  type TriggeredNode,
  type WaitNode,
  type WorkflowGraph,
} from './definition.types.js';

// Limits a saved definition must respect, and the guards every evaluation runs under.
export {
  DEFINITION_LIMITS,
  EXPRESSION_GUARDS,
  HEADER_NAME_PATTERN,
  NAME_PATTERN,
  NODE_ID_PATTERN,
} from './definition.limits.js';

// The JSON Schema of the document's structure (for editors and docs; validation uses it).
export { DEFINITION_SCHEMA_V1 } from './definition.schema.js';
// The documented example of each project type (the demo's; the console's first-run offer).
export { STARTER_DEFINITIONS } from './starter-definitions.js';

// Validation and its errors.
export { validateDefinition, type DefinitionValidation } from './definition.validator.js';
export {
  InvalidDefinitionError,
  summarizeDefinitionErrors,
  type DefinitionError,
} from './definition.errors.js';

// Compilation: once per definition version, never per run.
export {
  compileDefinition,
  isSelfContained,
  projectTypeOf,
  type CompiledDefinition,
  type CompiledGraph,
  type CompiledNode,
  type CompiledNodeOf,
  type CompiledTrigger,
} from './definition.compiler.js';
export {
  ExpressionSyntaxError,
  compileExpression,
  compileTemplate,
  isStaticTemplate,
  type CompiledExpression,
  type CompiledTemplate,
  type ExpressionProgram,
  type TemplatePart,
} from './expression.compiler.js';

// Evaluation of compiled expressions and templates.
export {
  ExpressionEvaluationError,
  evaluate,
  renderTemplate,
  type EvaluationScope,
} from './expression.evaluator.js';

// Trigger defaults and the keys a trigger call must carry.
export {
  CHATBOT_DEFAULT_EXPECTED_KEYS,
  DEFAULT_TRIGGER_KEY,
  expectedTriggerKeys,
  resolveTrigger,
  type ResolvedTrigger,
} from './trigger.config.js';

// Flow control of a trigger (DESIGN section 13): compiled with the definition, evaluated per run.
export {
  FLOW_CONTROL_LIMITS,
  clampPriority,
  evaluateFlowControl,
  type CompiledFlowControl,
  type FlowControlConfig,
  type FlowControlValues,
} from './flow-control.js';

// Schedule triggers of automations (`workflow.schedules`): definition, validation, fire times.
export {
  CATCH_UP_POLICIES,
  OVERLAP_POLICIES,
  SCHEDULE_DEFAULTS,
  SCHEDULE_ID_PATTERN,
  SCHEDULE_LIMITS,
  scheduleJobName,
  type CatchUpPolicy,
  type OverlapPolicy,
  type ScheduleConfig,
  type ScheduleDefinition,
} from './schedules/schedule-definition.types.js';
export {
  canonicalCron,
  jitterMs,
  normalizeSchedule,
  parseEvery,
  scheduleFingerprint,
  schedulesOf,
} from './schedules/schedule-definition.normalizer.js';
export { validateSchedules } from './schedules/schedule-definition.validator.js';
export { catchUpFires, fireTimesBetween, nextFireTime, nextFireTimes } from './schedules/schedule-fire-times.js';

// Running a compiled graph. Node semantics, failures, limits and resumes: README "Runs".
export { RunRequestError, runGraph } from './run.engine.js';
export {
  DEFAULT_RUN_LIMITS,
  ENGINE_RUNTIME,
  type ApprovalDecider,
  type ApprovalDecisionName,
  type ApprovalRecord,
  type CarriedState,
  type HttpCall,
  type HttpReply,
  type JsonValue,
  type PendingApproval,
  type ResumeRequest,
  type RunAction,
  type RunLimits,
  type RunOutcome,
  type RunPorts,
  type RunRequest,
  type RunScope,
  type RunStatus,
  type RunTrace,
  type RunVars,
  type StepRecord,
  type StepStatus,
  type Suspension,
} from './run.types.js';

// The `result` an endpoint answers with, per graph.
export {
  shapeRunResult,
  type BotRunResult,
  type FlowRunResult,
  type RunResultOf,
} from './run.result.js';
