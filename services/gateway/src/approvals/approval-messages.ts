/**
 * What PATCH approve/reject (console JWT) refuses with. The 409 and 502 are the spec's; the body
 * messages are ours. runs/ documents them on the PATCH route, through this folder's index.ts.
 */
export const APPROVAL_MESSAGES = {
  notAwaitingApproval: 'Invocation is not waiting for approval',
  notResumed: 'Failed to resume the automation after recording the decision',
  commentInvalid: 'comment must be a string of at most 2000 characters',
  takesComment: 'approve and reject take no fields other than action and comment',
} as const;
