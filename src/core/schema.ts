// The type registry: each memory type names its key fields (which make the slug), its optional
// fields, and whether it is add-only (events: every write is a new memory) or revisable.
import { invalid } from './errors.js';

export interface TypeSchema {
  name: string;
  keyFields: string[];
  optionalFields: string[];
  addOnly: boolean;
  description: string;
}

const revisable = (name: string, description: string, optional: string[] = []): TypeSchema => ({
  name,
  keyFields: ['subject'],
  optionalFields: optional,
  addOnly: false,
  description,
});

export const DEFAULT_TYPES: readonly TypeSchema[] = [
  revisable('decision', 'a choice that was made and why', ['rationale', 'alternatives']),
  revisable('constraint', 'a rule the work must respect'),
  revisable('procedure', 'how to do something here', ['steps']),
  revisable('fact', 'something true about the project or world'),
  revisable('preference', 'how someone likes things done', ['who']),
  revisable('lesson', 'what was learned, usually the hard way'),
  revisable('incident', 'something that went wrong', ['impact', 'resolution']),
  revisable('reference', 'where to find something', ['url']),
  {
    name: 'event',
    keyFields: ['subject'],
    optionalFields: ['when'],
    addOnly: true,
    description: 'something that happened (add-only)',
  },
  revisable('profile', 'who someone is and what they work on', ['who']),
  revisable('handoff', 'where a session left off: doing, next, blocked', ['session']),
];

export class SchemaRegistry {
  private readonly types = new Map<string, TypeSchema>();
  constructor(types: readonly TypeSchema[] = DEFAULT_TYPES) {
    for (const t of types) this.types.set(t.name, t);
  }
  get(name: string): TypeSchema {
    const t = this.types.get(name);
    if (!t) {
      throw invalid(
        `unknown memory type "${name}"`,
        `use one of: ${[...this.types.keys()].join(', ')}`,
      );
    }
    return t;
  }
  names(): string[] {
    return [...this.types.keys()];
  }
  /** Refuses fields the type does not define, so a typo never silently drops data. */
  checkFields(type: TypeSchema, fields: Record<string, string>): void {
    const allowed = new Set([...type.keyFields, ...type.optionalFields]);
    for (const k of Object.keys(fields)) {
      if (!allowed.has(k)) {
        throw invalid(
          `type "${type.name}" has no field "${k}"`,
          `fields of ${type.name}: ${[...allowed].join(', ')}`,
        );
      }
    }
  }
}
