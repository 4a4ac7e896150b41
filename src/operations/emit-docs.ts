/**
 * Writes the reference pages generated from the operation table (reference.ts): docs/api.md
 * and the generated parts of docs/command-line.md and docs/home-assistant.md. Run: `npm run docs`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import {
  API_REFERENCE_PATH,
  apiReference,
  COMMAND_LINE_PATH,
  commandLineReference,
  HOME_ASSISTANT_PATH,
  homeAssistantReference,
} from './reference.js';

writeFileSync(API_REFERENCE_PATH, apiReference());
writeFileSync(COMMAND_LINE_PATH, commandLineReference(readFileSync(COMMAND_LINE_PATH, 'utf8')));
writeFileSync(HOME_ASSISTANT_PATH, homeAssistantReference(readFileSync(HOME_ASSISTANT_PATH, 'utf8')));
process.stdout.write(`wrote ${API_REFERENCE_PATH}, ${COMMAND_LINE_PATH} and ${HOME_ASSISTANT_PATH}\n`);
