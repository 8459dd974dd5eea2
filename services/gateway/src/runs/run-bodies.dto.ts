import { applyDecorators } from '@nestjs/common';
import { IsBoolean, IsDefined, IsIn, IsObject, IsOptional, IsString, IsUrl, MaxLength } from 'class-validator';
import { INVOCATION_ACTIONS, type InvocationAction } from '../platform/invocations/invocation-answer.js';
import { RUN_MESSAGES } from './run-messages.js';
import { ENROLLMENT_POLICIES, ON_ERROR_POLICIES, type EnrollmentPolicy, type OnErrorPolicy } from '../platform/store/project-api-settings.entity.js';

/**
 * Request bodies of the external API. Every field is optional unless the spec says otherwise;
 * flow bodies may carry any further top-level fields, which become the run's payload.
 * runAt and delaySeconds are checked by the scheduling rules, with the spec's own messages.
 */
const SHORT_TEXT = 256;
const LONG_TEXT = 16_384;

export class BotMessageBody {
  @IsOptional() @IsString() @MaxLength(LONG_TEXT) message?: string;
  @IsOptional() @IsString() @MaxLength(SHORT_TEXT) sessionId?: string;
  @IsOptional() @IsString() @MaxLength(SHORT_TEXT) userId?: string;
  @IsOptional() @IsString() @MaxLength(SHORT_TEXT) userName?: string;
  @IsOptional() @IsString() @MaxLength(SHORT_TEXT) platform?: string;
}

/** Callbacks go to https URLs only (the outbound guard checks the address when sending). */
const WebhookUrl = () =>
  applyDecorators(
    IsOptional(),
    IsUrl({ protocols: ['https'], require_protocol: true, require_tld: false }, { message: 'webhookUrl must be an https URL' }),
    MaxLength(2048),
  );
const WebhookSecret = () => applyDecorators(IsOptional(), IsString(), MaxLength(SHORT_TEXT));

class CallbackFields {
  @WebhookUrl() webhookUrl?: string;
  @WebhookSecret() webhookSecret?: string;
}

export class BotInvokeBody extends BotMessageBody {
  @WebhookUrl() webhookUrl?: string;
  @WebhookSecret() webhookSecret?: string;
}

class TriggerFields extends CallbackFields {
  @IsOptional() @IsString() @MaxLength(SHORT_TEXT) triggerKey?: string;
  @IsOptional() @IsString() @MaxLength(SHORT_TEXT) event?: string;
  @IsOptional() @IsBoolean() dryRun?: boolean;
  @IsOptional() @IsIn(ENROLLMENT_POLICIES) enrollmentPolicy?: EnrollmentPolicy;
  @IsOptional() @IsIn(ON_ERROR_POLICIES) onErrorPolicy?: OnErrorPolicy;
}

/** Sync flow trigger: webhook fields are accepted by the async variant only (ignored here). */
export class FlowTriggerBody extends TriggerFields {
  @IsOptional() @IsString() @MaxLength(SHORT_TEXT) customerId?: string;
  [extraField: string]: unknown;
}

export class AutomationTriggerBody extends TriggerFields {
  @IsOptional() @IsObject() payload?: Record<string, unknown>;
  @IsOptional() @IsIn(['app', 'production']) runtimeStage?: 'app' | 'production';
}

/**
 * PATCH /external-invocations/{id}. Only `action` is checked here; which other fields an action
 * takes (none for cancel, runAt or delaySeconds for reschedule) is checked by the handler.
 */
export class ModifyInvocationBody {
  @IsDefined({ message: RUN_MESSAGES.actionRequired })
  @IsIn(INVOCATION_ACTIONS, { message: RUN_MESSAGES.actionInvalid })
  action!: InvocationAction;
  [field: string]: unknown;
}
