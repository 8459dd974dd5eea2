/** What the launcher needs to run the gateway in one process with the other services. */
export { gatewayService } from './gateway.service.js';
