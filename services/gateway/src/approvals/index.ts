/** What other features may use of approvals: nothing else of this folder. */
export { DecideInvocationApprovalHandler } from './decide-invocation-approval.handler.js';
