/**
 * The tuning decisions moved to core (core/tuning/loop-tuning.ts: they are pure); the MQTT
 * state and the HTTP views still reach the published tuning status here.
 */
export { type PublishedTuning, publishedTuning } from '../core/tuning/loop-tuning.js';
