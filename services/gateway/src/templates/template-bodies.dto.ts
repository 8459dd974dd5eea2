import { IsDefined, IsIn, IsNotEmpty, IsObject, IsString, MaxLength } from 'class-validator';
import { RUN_ENDPOINT_ERRORS, RUN_ENDPOINTS, type RunEndpoint } from './run-endpoints.js';
import { TEMPLATE_LIMITS } from './template-rules.js';

/** POST and PUT of a template: every field, every time (PUT replaces the template). */
export class TemplateBody {
  @IsDefined({ message: 'name is required' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(TEMPLATE_LIMITS.nameLength)
  name!: string;

  @IsDefined({ message: 'endpoint is required' })
  @IsIn(RUN_ENDPOINTS, { message: RUN_ENDPOINT_ERRORS.unknown })
  endpoint!: RunEndpoint;

  @IsDefined({ message: 'body is required' })
  @IsObject({ message: 'body must be a JSON object' })
  body!: Record<string, unknown>;
}
