import { EXAMPLE_GATEWAY, type Example, IDS } from '../platform/api-docs/examples.js';

// The request example builder's example (platform/api-docs/examples.ts says what they share and how they are checked).

const requestExampleBody = { triggerKey: 'external_event', event: 'order.created', customerId: 'c-1042', orderId: '42' };
const runUrl = `${EXAMPLE_GATEWAY}/v1/orgs/${IDS.org}/flows/${IDS.chatbot}/trigger`;

export const ANSWERS = {
  requestExample: {
    method: 'POST',
    url: runUrl,
    headers: { Authorization: 'Bearer $RUNLINE_TOKEN', 'Content-Type': 'application/json', 'x-idempotency-key': 'ec759329-72de-4502-b7a7-8d964f8b02c9' },
    body: requestExampleBody,
    snippets: {
      curl: `curl -sS -X POST '${runUrl}' \\\n  -H "Authorization: Bearer $RUNLINE_TOKEN" \\\n  -H 'Content-Type: application/json' \\\n  --data-raw '${JSON.stringify(requestExampleBody)}'`,
      javascript: `const response = await fetch(${JSON.stringify(runUrl)}, {\n  method: 'POST',\n  headers: { Authorization: \`Bearer \${process.env.RUNLINE_TOKEN}\`, 'Content-Type': 'application/json' },\n  body: JSON.stringify(${JSON.stringify(requestExampleBody)}),\n});`,
      python: `import os, requests\n\nresponse = requests.post(\n    ${JSON.stringify(runUrl)},\n    headers={"Authorization": f"Bearer {os.environ['RUNLINE_TOKEN']}"},\n    json=${JSON.stringify(requestExampleBody)},\n)`,
    },
  },
} satisfies Record<string, Example>;
