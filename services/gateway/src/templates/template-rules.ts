import { secretPathsOf } from '@runline/observability';
import type { ProjectType } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { endpointMismatch, type RunEndpoint } from './run-endpoints.js';

/** Bounds of the template library (ours; the design gives none). */
export const TEMPLATE_LIMITS = {
  nameLength: 200,
  /** Of the body's JSON text, UTF-8: far above a real trigger body, far below MAX_BODY_BYTES. */
  bodyBytes: 64 * 1024,
  perProject: 100,
} as const;

export const TEMPLATE_ERRORS = {
  notFound: 'Template not found',
  bodyTooLarge: `body must be at most ${TEMPLATE_LIMITS.bodyBytes} bytes of JSON`,
  tooMany: `A project holds at most ${TEMPLATE_LIMITS.perProject} templates; delete one first`,
  secrets: (paths: string[]) =>
    `A template must not hold secrets (found: ${paths.join(', ')}); leave such fields empty and fill them in where the request is sent`,
} as const;

/**
 * What a template must be beyond its field types (checked by the DTO): an endpoint of the
 * project's type, a body of bounded size, and no secret.
 *
 * Secrets are refused rather than stored and redacted: every member (a VIEWER too) reads the
 * library and the request examples built from it, a redacted body would send the literal
 * "[REDACTED]" when its snippet is pasted (a callback signed with the wrong key), and a secret
 * kept in clear in a table of documents would be one more place to guard. The rule is the one
 * run payloads are redacted by (`secretPathsOf`), so a template never holds what GET hides.
 */
export function assertTemplate(projectType: ProjectType, template: { endpoint: RunEndpoint; body: Record<string, unknown> }): void {
  const mismatch = endpointMismatch(template.endpoint, projectType);
  if (mismatch) throw new DomainError('invalid', mismatch);
  if (Buffer.byteLength(JSON.stringify(template.body), 'utf8') > TEMPLATE_LIMITS.bodyBytes) throw new DomainError('invalid', TEMPLATE_ERRORS.bodyTooLarge);
  const secrets = secretPathsOf(template.body, 'body');
  if (secrets.length > 0) throw new DomainError('invalid', TEMPLATE_ERRORS.secrets(secrets));
}

/** A template as the API answers it. */
export function templateView(template: { id: string; name: string; endpoint: RunEndpoint; body: Record<string, unknown>; createdAt: Date; updatedAt: Date }) {
  return {
    id: template.id,
    name: template.name,
    endpoint: template.endpoint,
    body: template.body,
    createdAt: template.createdAt.toISOString(),
    updatedAt: template.updatedAt.toISOString(),
  };
}
