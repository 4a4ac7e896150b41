import { z } from 'zod';

/** The API's named shapes (the OpenAPI document's components). */
export const apiSchemas = z.registry<{ id: string }>();

export const isoTime = z.iso.datetime({ offset: true }).describe('ISO 8601 time');
