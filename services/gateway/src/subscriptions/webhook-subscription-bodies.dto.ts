import { IsDefined, IsObject, IsString, MaxLength, ValidateBy } from 'class-validator';

/** Longest `events` text taken; a provider's longest list is far shorter. */
const MAX_EVENTS_LENGTH = 10_000;

/**
 * `POST …/webhook-subscriptions` (DESIGN section 9). `events` is the comma-separated provider
 * event names, as the spec's settings field; a JSON array of names is taken too. Which provider,
 * events and credentials are valid is the provider adapter's to say (webhook service).
 */
export class CreateWebhookSubscriptionBody {
  @IsDefined({ message: 'provider is required' })
  @IsString({ message: 'provider must be a string' })
  @MaxLength(50, { message: 'provider must be one of the supported providers' })
  provider!: string;

  @IsDefined({ message: 'events is required' })
  @ValidateBy({
    name: 'isEventList',
    validator: {
      validate: (value: unknown) =>
        (typeof value === 'string' && value.length <= MAX_EVENTS_LENGTH) ||
        (Array.isArray(value) && value.length <= 100 && value.every((entry) => typeof entry === 'string' && entry.length <= 200)),
      defaultMessage: () => 'events must be comma-separated event names',
    },
  })
  events!: string | string[];

  @IsDefined({ message: 'credentials is required' })
  @IsObject({ message: 'credentials must be an object' })
  credentials!: Record<string, unknown>;
}

/** The event names of a body: split on commas, trimmed, empty ones dropped. */
export function eventNamesOf(events: string | string[]): string[] {
  const names = Array.isArray(events) ? events : events.split(',');
  return names.map((name) => name.trim()).filter((name) => name !== '');
}
