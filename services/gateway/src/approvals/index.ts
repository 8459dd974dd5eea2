/** What other features may use of approvals (runs/ starts the decision and documents its messages): nothing else of this folder. */
export { APPROVAL_MESSAGES } from './approval-messages.js';
export { DecideInvocationApprovalHandler } from './decide-invocation-approval.handler.js';
