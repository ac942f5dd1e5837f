import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const fixtures = join(process.cwd(), 'plugins/providers/azure-openai/__fixtures__');

export const azureFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** A recorded Azure stream (one `data:` payload per line) as SSE events. */
export const azureStreamEvents = (name: string): string[] =>
  azureFixture(name)
    .split('\n')
    .filter(Boolean)
    .map((line) => `data: ${line}\n\n`);
