/**
 * What an import (`llm-gateway import portkey|litellm`) stores, as plain data made by a pure
 * translation: credentials (their secrets held only in memory until the vault seals them), routes
 * and model aliases, and the fields that could not be carried over (paths and reasons, never values).
 * A route names the credentials it uses by {@link credentialReference}, replaced by the stored id.
 */
export interface ImportPlan {
  readonly credentials: PlannedCredential[];
  readonly routes: Array<{ readonly name: string; readonly route: Record<string, unknown> }>;
  /** Model aliases, each taking the stored route of that name. */
  readonly aliases: Array<{ readonly alias: string; readonly route: string }>;
  /** `path: why`, one per field not carried. */
  readonly notCarried: string[];
}

export interface PlannedCredential {
  /** What routes name it by until it is stored. */
  readonly reference: string;
  readonly name: string;
  readonly provider: string;
  readonly api_key?: string;
  readonly fields?: Readonly<Record<string, string>>;
}

/** The placeholder a planned route holds in `credential` for a credential not stored yet. */
export const credentialReference = (index: number): string => `@import-credential-${index}`;

export function emptyPlan(): ImportPlan {
  return { credentials: [], routes: [], aliases: [], notCarried: [] };
}

/** A record name the vault and the routes accept: letters, digits and `._:-`, at most 64. */
export function recordName(text: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9._:-]+/g, '-').replace(/^-+|-+$/g, '');
  return (cleaned.startsWith('route_') ? `r-${cleaned}` : cleaned || 'imported').slice(0, 64);
}

/** Adds a credential to the plan and returns the reference routes name it by. */
export function planCredential(plan: ImportPlan, credential: Omit<PlannedCredential, 'reference'>): string {
  const reference = credentialReference(plan.credentials.length);
  plan.credentials.push({ ...credential, reference });
  return reference;
}
