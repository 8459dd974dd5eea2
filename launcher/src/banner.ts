import type { DemoCredentials } from './demo-seed.js';

/** The console's one-click sign-in: the JWT rides in the fragment, which browsers never send. */
export function consoleSignInLink(gatewayUrl: string, consoleJwt: string): string {
  return `${gatewayUrl}/console/#token=${encodeURIComponent(consoleJwt)}`;
}

/** What a newcomer needs after `npm start`: credentials and curl lines that work when pasted. */
export function startBanner(options: {
  gatewayUrl: string;
  demo: DemoCredentials;
  /** `<data dir>/demo.env`, the demo's variables for the README's first run. */
  demoEnvFile: string;
  /** Where the log lines go (launcher-logs.ts). */
  logDescription: string;
  usingDevelopmentJwtSecret: boolean;
  databaseDescription: string;
  busDescription: string;
}): string {
  const { gatewayUrl: url, demo } = options;
  const lines = [
    '',
    '================================ Runline is running ================================',
    `Console:   ${consoleSignInLink(url, demo.consoleJwt)}`,
    '           (opens the web console signed in as the demo owner; the token after # never reaches a server log)',
    `Gateway:   ${url}`,
    `Database:  ${options.databaseDescription}`,
    `Bus:       ${options.busDescription}`,
    `Log:       ${options.logDescription}`,
    options.usingDevelopmentJwtSecret
      ? 'Console JWTs are signed with the DEVELOPMENT secret (set CONSOLE_JWT_SECRET in production).'
      : 'Console JWTs are verified with CONSOLE_JWT_SECRET.',
    '',
    `Demo organization ${demo.firstStart ? '(created now)' : '(from an earlier start; tokens below are new)'}:`,
    `  ORG=${demo.orgId}`,
    `  CHATBOT_PROJECT=${demo.chatbotProjectId}`,
    `  AUTOMATION_PROJECT=${demo.automationProjectId}`,
    `  CONSOLE_JWT=${demo.consoleJwt}`,
    `  CHATBOT_TOKEN=${demo.chatbotToken}`,
    `  AUTOMATION_TOKEN=${demo.automationToken}`,
    `  (the same, with RUNLINE_URL, as shell exports: source ${options.demoEnvFile})`,
    '',
    'Try (each line works as pasted):',
    `  curl -s ${url}/v1/orgs/${demo.orgId}/projects/${demo.chatbotProjectId}/api-settings -H "Authorization: Bearer ${demo.consoleJwt}"`,
    `  curl -s ${url}/v1/orgs/${demo.orgId}/projects/${demo.chatbotProjectId}/api-tokens -H "Authorization: Bearer ${demo.consoleJwt}"`,
    `  curl -s ${url}/v1/orgs/${demo.orgId}/external-invocations/00000000-0000-4000-8000-000000000000 -H "Authorization: Bearer ${demo.chatbotToken}"`,
    `  curl -s -X POST ${url}/v2/orgs/${demo.orgId}/flows/${demo.chatbotProjectId}/trigger -H "x-api-key: ${demo.chatbotToken}"`,
    `  curl -s ${url}/health/ready`,
    `  curl -s -X POST ${url}/v1/orgs/${demo.orgId}/flows/${demo.chatbotProjectId}/trigger -H "Authorization: Bearer ${demo.chatbotToken}" -H "content-type: application/json" -d '{"event":"order.created","customerId":"c-1","orderId":"42"}'`,
    `  curl -s -X POST ${url}/v1/orgs/${demo.orgId}/bots/${demo.chatbotProjectId}/message -H "Authorization: Bearer ${demo.chatbotToken}" -H "content-type: application/json" -d '{"message":"hello","userName":"Ada"}'`,
    `  curl -s -X POST ${url}/v1/orgs/${demo.orgId}/automations/${demo.automationProjectId}/trigger-async -H "Authorization: Bearer ${demo.automationToken}" -H "content-type: application/json" -d '{"event":"order.paid","payload":{"orderId":"42","amount":10}}'`,
    '  (then read the run: curl -s <gateway>/v1/orgs/<ORG>/external-invocations/<invocationId> -H "Authorization: Bearer <the same token>")',
    '====================================================================================',
    '',
  ];
  return lines.join('\n');
}
