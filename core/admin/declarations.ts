import { BootError } from '../errors.js';
import type { Router } from '../http/router.js';
import type { Permission } from '../org/permissions.js';
import type { DeclaredMiddleware } from './guard.js';

/** One admin route and the permission it declared (null: open to anyone, e.g. a public document). */
export interface DeclaredRoute {
  readonly method: string;
  readonly path: string;
  readonly permission: Permission | 'signed-in' | null;
}

/** Paths whose routes must declare a permission. */
const GUARDED = /^\/(admin|scim)(\/|$)/;

/**
 * Every admin route of the routers with the permission it declares (`guard.require`). A route under
 * `/admin` or `/scim` that declares none fails the start with a BootError naming it, so no route
 * can be added without saying who may call it. The permission matrix (docs) is generated from this.
 */
export function declaredRoutes(routers: readonly Router[]): DeclaredRoute[] {
  const routes: DeclaredRoute[] = [];
  for (const router of routers) {
    for (const layer of router.stack) {
      const path = String(layer.path);
      if (!GUARDED.test(path)) continue;
      const declared = layer.stack.find((middleware): middleware is DeclaredMiddleware => 'permission' in middleware);
      for (const method of layer.methods) {
        if (method === 'HEAD') continue;
        if (!declared) throw new BootError('ADMIN_ROUTE_UNDECLARED', `${method} ${path} declares no permission: guard it with guard.require(<permission>) (or guard.open() for a public document)`);
        routes.push({ method, path, permission: declared.permission });
      }
    }
  }
  return routes;
}

/**
 * The permission matrix as docs/organizations.md shows it: every admin route, the permission it
 * declares, and which roles hold it (✓ organization-wide, `team` in the role's own teams).
 */
export function permissionMatrix(routes: readonly DeclaredRoute[], roles: { org: Record<string, ReadonlySet<string>>; team: Record<string, ReadonlySet<string>> }): string {
  const orgRoles = Object.keys(roles.org);
  const teamRoles = Object.keys(roles.team);
  const lines = [`| Route | Permission | ${[...orgRoles, ...teamRoles].join(' | ')} |`, `|---|---|${[...orgRoles, ...teamRoles].map(() => '---').join('|')}|`];
  const sorted = [...routes].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  for (const route of sorted) {
    const permission = route.permission;
    const cell = (set: ReadonlySet<string>, mark: string) => (permission === null || permission === 'signed-in' || set.has(permission) ? mark : '');
    const cells = [...orgRoles.map((role) => cell(roles.org[role]!, '✓')), ...teamRoles.map((role) => cell(roles.team[role]!, 'team'))];
    lines.push(`| \`${route.method} ${route.path}\` | ${permission === null ? 'open' : `\`${permission}\``} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}
