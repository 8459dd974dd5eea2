/**
 * Limits of schema v1. A definition breaking one is refused when saved, so the engine never
 * meets an oversized document. They are generous for hand-built and console-built projects and
 * keep one document, its compiled form and its validation report small.
 */
export const DEFINITION_LIMITS = {
  /** Size of the document serialized as JSON, in UTF-8 bytes (256 KiB). */
  maxDocumentBytes: 256 * 1024,
  /** Nesting depth of objects and arrays anywhere in the document (expectedPayload included). */
  maxDepth: 32,
  /** Nodes in one graph. */
  maxNodesPerGraph: 500,
  /** Node id length; ids match NODE_ID_PATTERN. */
  maxNodeIdLength: 64,
  /** Variable names (`saveAs`, keys of `set.values`) and parameter names. */
  maxNameLength: 64,
  /** Length of one expression or template source. */
  maxSourceLength: 8192,
  /** Cases of one branch node. */
  maxBranchCases: 50,
  /** Entries of `set.values`, `action.params` and `http.headers`. */
  maxMapEntries: 100,
  /** Top-level keys of a trigger's expectedPayload. */
  maxExpectedKeys: 100,
  /** Trigger key and action name length. */
  maxKeyLength: 128,
  /** Callback URL length. */
  maxUrlLength: 2048,
  /** Callback secret length. */
  maxSecretLength: 256,
  /** A wait node's `seconds` (one year). */
  maxWaitSeconds: 365 * 24 * 3600,
  /** Retry attempts in total, first attempt included. */
  maxRetryAttempts: 10,
  /** Wait between retries (one day). */
  maxBackoffSeconds: 24 * 3600,
  /** Errors reported for one document; the rest are counted in the summary only. */
  maxReportedErrors: 50,
} as const;

/** Node ids: a letter, digit or underscore, then letters, digits, `_` or `-`. */
export const NODE_ID_PATTERN = '^(?!__proto__$)[A-Za-z0-9_][A-Za-z0-9_-]*$';

/** Variable and parameter names: a JSONata-friendly identifier, so `vars.total` works. */
export const NAME_PATTERN = '^(?!__proto__$)[A-Za-z_][A-Za-z0-9_]*$';

/** HTTP header names (RFC 9110 token). */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

/**
 * Guards applied to every expression evaluation, so a user's expression cannot stall a worker:
 * wall-clock budget, evaluation depth and the length of any sequence it builds.
 */
export const EXPRESSION_GUARDS = {
  timeoutMs: 1000,
  maxDepth: 300,
  maxSequenceLength: 100_000,
} as const;
