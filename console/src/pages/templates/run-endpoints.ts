/** The six run endpoints a template or an example can target, and which project type each suits. */
export const RUN_ENDPOINTS = [
  ['bots.message', 'CHATBOT', 'send a message, answer at once'],
  ['bots.invoke', 'CHATBOT', 'send a message, answer to a callback'],
  ['flows.trigger', 'CHATBOT', 'run the flow, wait for the result'],
  ['flows.trigger-async', 'CHATBOT', 'run the flow in the background'],
  ['automations.trigger', 'AUTOMATION', 'run the automation, wait for the result'],
  ['automations.trigger-async', 'AUTOMATION', 'run the automation in the background'],
] as const;

export type RunEndpoint = (typeof RUN_ENDPOINTS)[number][0];

export const endpointsFor = (projectType: string | undefined) => RUN_ENDPOINTS.filter(([, type]) => type === projectType);
