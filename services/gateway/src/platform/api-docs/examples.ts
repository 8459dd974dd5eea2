/**
 * What the published document's examples share. There is one for every request body and every
 * success answer (the document's build refuses an operation without one), kept by each feature
 * beside its route descriptions (`<feature>/<feature>-examples.ts`). They tell one story, a demo
 * shop whose chatbot and automation projects receive orders, with the same ids throughout, in the
 * shapes the gateway really sends (taken from a running system). The OpenAPI e2e test validates
 * each against its schema, and Redocly's lint does too, so they cannot drift from the schemas;
 * the fuzz test holds the schemas to what the gateway answers.
 */
export type Example = Record<string, unknown>;

/** The story's ids that the examples of several features show; an id only one feature shows stands in its examples file. */
export const IDS = {
  org: '6f1c2a7e-3b4d-4e8f-9a0b-1c2d3e4f5a6b',
  chatbot: '0b8e5c3a-7d2f-4a1e-9c6b-5d4e3f2a1b0c',
  automation: '9d7c6b5a-4e3f-4a2b-8c1d-0e9f8a7b6c5d',
  asyncRun: '7c2e9b14-5a3d-4f6e-8b1c-2d3e4f5a6b7c',
} as const;

/** The gateway's address in the story. */
export const EXAMPLE_GATEWAY = 'https://runline.example.com';

/** The answer of a route that only says it was done (the `Success` schema). */
export const SUCCESS_ANSWER = { success: true } satisfies Example;
