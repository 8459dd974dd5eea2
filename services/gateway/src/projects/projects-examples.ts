import { type Example, IDS } from '../platform/api-docs/examples.js';

// The project routes' examples (platform/api-docs/examples.ts says what they share and how they are checked).

export const REQUESTS = {
  createProject: { name: 'Order updates', type: 'CHATBOT' },
  saveDefinition: {
    definition: {
      schemaVersion: 1,
      bot: { start: 'hello', nodes: { hello: { type: 'message', text: 'Hi {{ input.userName }}', next: 'end' }, end: { type: 'end' } } },
      flow: {
        trigger: { externalEnabled: true, key: 'external_event' },
        start: 'n1',
        nodes: { n1: { type: 'message', text: 'Order {{ payload.orderId }} is on its way', next: 'n2' }, n2: { type: 'end' } },
      },
    },
  },
} satisfies Record<string, Example>;

export const ANSWERS = {
  projectCreated: { projectId: IDS.chatbot, name: 'Order updates', type: 'CHATBOT' },
  projects: {
    data: [
      { projectId: IDS.chatbot, name: 'Order updates', type: 'CHATBOT', publishedVersion: 3, createdAt: '2026-02-12T10:00:51.954Z' },
      { projectId: IDS.automation, name: 'Payments', type: 'AUTOMATION', publishedVersion: 1, createdAt: '2026-02-12T10:00:52.010Z' },
    ],
  },
  project: { projectId: IDS.chatbot, name: 'Order updates', type: 'CHATBOT', publishedVersion: 3, draftVersion: 4, createdAt: '2026-02-12T10:00:51.954Z' },
  definitionStage: { version: 3, definition: REQUESTS.saveDefinition.definition },
  draftSaved: { projectId: IDS.chatbot, draftVersion: 4, draftUpdatedAt: '2026-03-02T09:18:24.274Z', publishedVersion: 3 },
  published: { publishedVersion: 4 },
  definitionVersions: {
    data: [
      { version: 4, publishedBy: 'auth0|5f7c8ec7c33c6c004bbafe82', publishedAt: '2026-03-02T09:20:11.502Z' },
      { version: 3, publishedBy: 'auth0|5f7c8ec7c33c6c004bbafe82', publishedAt: '2026-02-20T16:41:03.118Z' },
    ],
  },
  definitionVersion: { version: 3, definition: REQUESTS.saveDefinition.definition, publishedBy: 'auth0|5f7c8ec7c33c6c004bbafe82', publishedAt: '2026-02-20T16:41:03.118Z' },
  definitionSchema: {
    requiredGraphs: ['bot'],
    optionalGraphs: ['flow'],
    starterDefinition: REQUESTS.saveDefinition.definition,
    schema: { $id: 'https://runline.dev/schemas/definition/v1.json', type: 'object', required: ['schemaVersion'], properties: { schemaVersion: { const: 1 } } },
  },
} satisfies Record<string, Example>;
