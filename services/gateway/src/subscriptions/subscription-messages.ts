/** What the managed webhook subscriptions refuse with (DESIGN section 9). The 409 before publishing is DESIGN's; the rest are ours. */
export const SUBSCRIPTION_MESSAGES = {
  needsPublish: 'Publish the project before adding a subscription',
  notFound: 'Subscription not found',
  notFailed: 'Only a FAILED subscription can be retried',
  inProgress: 'The subscription is being created at the provider, retry shortly',
  /** 502 when the provider did not remove the webhook on revoke; the provider's message follows. */
  notRemoved: 'The provider did not remove the webhook:',
} as const;
