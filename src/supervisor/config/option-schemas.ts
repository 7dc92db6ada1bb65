// What a flag's text must be, as zod schemas that turn it into its value.
import { z } from 'zod';
import { MAX_CPU_LIMIT, MIN_CPU_LIMIT } from '../../process/limits.js';

export const integer = (min: number, max: number) =>
  z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(min).max(max));
export const positiveNumber = z
  .string()
  .regex(/^\d+(\.\d+)?$/)
  .transform(Number)
  .pipe(z.number().positive().max(31_536_000));
export const cpus = z
  .string()
  .regex(/^\d+(\.\d+)?$/)
  .transform(Number)
  .pipe(z.number().min(MIN_CPU_LIMIT).max(MAX_CPU_LIMIT));
export const text = z
  .string()
  .min(1)
  .refine((value) => !value.includes('\0'));
/** A flag whose value is JSON text of what `schema` takes. */
export const jsonOf = <S extends z.ZodType>(schema: S) =>
  z
    .string()
    .transform((value, context) => {
      try {
        return JSON.parse(value) as unknown;
      } catch {
        context.addIssue({ code: 'custom', message: 'not JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);
