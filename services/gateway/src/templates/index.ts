/** What other features (and the OpenAPI document) may use of templates: nothing else of this folder. */
export { RequestTemplateRepository } from './request-template.repository.js';
export { endpointMismatch, isRunEndpoint, RUN_ENDPOINT_ERRORS, RUN_ENDPOINT_INFO, type RunEndpoint } from './run-endpoints.js';
export { TEMPLATE_ERRORS } from './template-rules.js';
export { TEMPLATES_ROUTE_DESCRIPTIONS } from './templates-route-descriptions.js';
