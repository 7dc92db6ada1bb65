// One of the daemon's options: the zod schema that turns its flag's (or variable's) text into its
// value, or gives its default when neither is set, with what --help and the errors say about it
// attached. The option table (config-options.ts) is an object of these keyed by the Config field,
// so that z.object of it is the Config's schema and its type (config.ts).
import { z } from 'zod';

/** What is said about an option: its flag, its variable, what it accepts and its line of --help. */
export interface OptionText {
  flag: string;
  /** Environment variable; by default HIVE_BASH_ and the flag in upper snake case. */
  env?: string;
  /** For the error that echoes a wrong value: "--port must be <accepts>; got ...". */
  accepts: string;
  help: string;
}

/** An option's text and default, for --help and the errors. */
export interface OptionInfo extends OptionText {
  default: unknown;
}

/** The info of every option's schema (`option`'s result). */
export const OPTION_INFO = z.registry<OptionInfo>();

/** An option whose text `schema` reads, and whose value is `fallback` when neither flag nor variable is set. */
export function option<S extends z.ZodType<unknown, string>, D extends z.output<S> | null>(
  text: OptionText,
  schema: S,
  fallback: D,
) {
  const field = schema.optional().transform((value): z.output<S> | D => value ?? fallback);
  OPTION_INFO.add(field, { ...text, default: fallback });
  return field;
}

export const envName = (text: OptionText) => text.env ?? `HIVE_BASH_${text.flag.toUpperCase().replaceAll('-', '_')}`;
