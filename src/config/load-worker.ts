/**
 * Worker-thread entry of {@link loadConfigFileOffThread}: reads, parses and validates one
 * config file and posts the result back. Only the result crosses threads.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadConfigFile } from './load.js';

parentPort?.postMessage(loadConfigFile((workerData as { path: string }).path));
