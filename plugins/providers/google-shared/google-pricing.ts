/**
 * The price catalogue's name for a Google-hosted model: without a resource path
 * (`projects/…/publishers/google/models/`, `models/`), a publisher prefix (`google/`, `anthropic/`),
 * a version (`@001`, `@20250929`) or a stable-release suffix (`-001`).
 */
export function googleCatalogueModelName(model: string): string {
  return model
    .replace(/^(?:projects\/[^/]+\/locations\/[^/]+\/)?publishers\/[^/]+\/models\//, '')
    .replace(/^models\//, '')
    .replace(/^(?:google|anthropic)\//, '')
    .replace(/@[^@]*$/, '')
    .replace(/-\d{3}$/, '');
}
