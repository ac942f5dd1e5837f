import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGateway } from '../../core/app.js';
import { permissionMatrix } from '../../core/admin/declarations.js';
import { ORG_ROLE_PERMISSIONS, TEAM_ROLE_PERMISSIONS } from '../../core/org/permissions.js';
import { openai } from '../../plugins/providers/openai/index.js';

export const MATRIX_START = '<!-- permission-matrix:start -->';
export const MATRIX_END = '<!-- permission-matrix:end -->';

/** The matrix of a gateway built with the shipped admin surface (no listen: the routes are declared at construction). */
export async function documentedMatrix(): Promise<string> {
  const gateway = createGateway({ providers: [openai()] }, { environment: { GATEWAY_API_KEY: 'matrix-account-key-0123456789abcdef', GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'gateway-matrix-')), LOG_LEVEL: 'silent' } });
  try {
    return permissionMatrix(gateway.adminRoutes, { org: ORG_ROLE_PERMISSIONS, team: TEAM_ROLE_PERMISSIONS });
  } finally {
    await gateway.close();
  }
}
