/** What the launcher needs to run the gateway in one process with the other services. */
export { gatewayService } from './gateway.service.js';
/** The published API: the document as built from the code, and the routes the running gateway registered (its coverage test). */
export { buildOpenApiDocument, OPENAPI_PATH } from './openapi/openapi-document.js';
export { registeredRoutes, type RegisteredRoute } from './openapi/openapi.route.js';
