import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DemoCredentials } from './demo-seed.js';

/**
 * `<data dir>/demo.env`: the demo's address, ids and the tokens just printed, as shell exports,
 * so the README's first run works as pasted (`source .runline/demo.env`). Only its owner may
 * read it (0600): it holds live tokens, which the next start revokes and writes anew.
 */
export async function writeDemoEnv(dataDir: string, gatewayUrl: string, demo: DemoCredentials): Promise<string> {
  const file = path.join(dataDir, 'demo.env');
  const variables: Array<[string, string]> = [
    ['RUNLINE_URL', gatewayUrl],
    ['ORG', demo.orgId],
    ['CHATBOT_PROJECT', demo.chatbotProjectId],
    ['AUTOMATION_PROJECT', demo.automationProjectId],
    ['CONSOLE_JWT', demo.consoleJwt],
    ['CHATBOT_TOKEN', demo.chatbotToken],
    ['AUTOMATION_TOKEN', demo.automationToken],
  ];
  const lines = [
    '# Written by `npm start` at each start: the demo organization and fresh credentials.',
    '# The tokens are revoked at the next start, which writes this file again.',
    ...variables.map(([name, value]) => `export ${name}=${shellQuoted(value)}`),
  ];
  await writeFile(file, lines.join('\n') + '\n', { mode: 0o600 });
  await chmod(file, 0o600); // `mode` applies only when the file is created
  return file;
}

function shellQuoted(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
