/** Automation definitions several end-to-end suites publish. */

/** An automation that waits `seconds` (a Wait node: SUSPENDED, resumed by its scheduler job), then returns. */
export function waitingAutomation(seconds: number): object {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event' },
      start: 'pause',
      nodes: {
        pause: { type: 'wait', seconds, next: 'done' },
        done: { type: 'return', value: "{ 'waited': true }" },
      },
    },
  };
}
