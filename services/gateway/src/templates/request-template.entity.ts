import type { RunEndpoint } from './run-endpoints.js';

/** A saved request body for one of a project's run endpoints (the console's template library; a row of `request_templates`). */
export interface RequestTemplateEntity {
  id: string;
  projectId: string;
  name: string;
  endpoint: RunEndpoint;
  /** A `json` column. Never holds a secret: refused when saved (see template-rules.ts). */
  body: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}
