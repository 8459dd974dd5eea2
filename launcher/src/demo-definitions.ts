import { STARTER_DEFINITIONS } from '@runline/engine';

/** The demo projects' definitions: the documented example of each project type (schema v1), also the console's starters. */
export const DEMO_CHATBOT_DEFINITION = STARTER_DEFINITIONS.CHATBOT;
export const DEMO_AUTOMATION_DEFINITION = STARTER_DEFINITIONS.AUTOMATION;
