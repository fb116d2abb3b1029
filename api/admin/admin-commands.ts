/**
 * The admin tool's commands over the store and auth service: argv in, lines
 * of output out. Kept apart from the process shell (cli.ts) so tests run it
 * in-process against a real store.
 */
import { parseArgs } from "node:util";
import { BadRequestError, NotFoundError, ValidationError } from "../../common/errors.ts";
import type { AuthService } from "../auth/auth-service.ts";
import { createUser } from "../auth/create-user.ts";
import type { CatalogueService } from "../catalogue/catalogue-service.ts";
import { ROLES, type Role, type Store, type Tenant } from "../store/store.ts";
import { COPY_STORE_USAGE } from "./copy-store-command.ts";
import { provisionTenant } from "./provision-tenant.ts";

const ADMIN_USAGE = `usage: npm run admin -- <command> [options]
  create-tenant <name> [--admin <username>] [--email <address>]
      creates a tenant with its first administrator and prints an administrator token
  add-user --tenant <name> <username> --roles <role,...> [--email <address>] [--last-name <name>]
      adds a user (roles: ${ROLES.join(", ")})
  mint-token --tenant <name> --user <username> [--roles <role,...>] [--expires <ISO datetime>]
      prints a new token for a user (roles default to the user's)
  list-tenants
      prints one line per tenant: id, name, creation time
${COPY_STORE_USAGE}`;

export interface AdminServices {
  store: Store;
  auth: AuthService;
  catalogues: CatalogueService;
}

/** Runs one admin command. @returns the lines to print. @throws AppError for bad input. */
export async function runAdminCommand(argv: string[], services: AdminServices): Promise<string[]> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      admin: { type: "string" },
      email: { type: "string" },
      tenant: { type: "string" },
      user: { type: "string" },
      roles: { type: "string" },
      expires: { type: "string" },
      "last-name": { type: "string" },
    },
  });
  const { store, auth } = services;
  const [command, name] = positionals;
  switch (command) {
    case "create-tenant": {
      if (!name) throw new BadRequestError("create-tenant needs a tenant name");
      const { tenant, token } = await provisionTenant(services, {
        tenantName: name,
        username: values.admin,
        email: values.email,
      });
      return [`tenant ${tenant.name} (${tenant.id}) created`, "administrator token:", token.token];
    }
    case "add-user": {
      const tenant = await tenantNamed(store, values.tenant);
      if (!name) throw new BadRequestError("add-user needs a username");
      const roles = parseRoles(values.roles);
      if (!roles) throw new BadRequestError("add-user needs --roles");
      const user = {
        id: crypto.randomUUID(),
        tenantId: tenant.id,
        username: name,
        email: values.email ?? `${name}@${tenant.name.toLowerCase()}.invalid`,
        firstName: null,
        lastName: values["last-name"] ?? name,
        roles,
        isActive: true,
        createdAt: Date.now(),
      };
      await store.unitOfWork(async (tx) => {
        if (await tx.findUserByUsername(tenant.id, name))
          throw new ValidationError(`user '${name}' exists already`);
        await createUser(tx, user);
      });
      return [`user ${name} (${user.id}) added to ${tenant.name} with roles ${roles.join(", ")}`];
    }
    case "mint-token": {
      const tenant = await tenantNamed(store, values.tenant);
      const user = values.user ? await store.findUserByUsername(tenant.id, values.user) : null;
      if (!user) throw new NotFoundError(`no user '${values.user ?? ""}' in tenant ${tenant.name}`);
      const expiresAt = values.expires === undefined ? undefined : Date.parse(values.expires);
      if (Number.isNaN(expiresAt)) throw new BadRequestError("--expires must be an ISO datetime");
      const issued = await auth.issueToken({
        tenantId: tenant.id,
        userId: user.id,
        roles: parseRoles(values.roles),
        expiresAt,
      });
      return [issued.token];
    }
    case "list-tenants":
      return (await store.listTenants()).map(
        (t) => `${t.id}\t${t.name}\t${new Date(t.createdAt).toISOString()}`,
      );
    default:
      throw new BadRequestError(command ? `unknown command '${command}'\n${ADMIN_USAGE}` : ADMIN_USAGE);
  }
}

async function tenantNamed(store: Store, name: string | undefined): Promise<Tenant> {
  if (!name) throw new BadRequestError("--tenant <name> is required");
  const tenant = await store.findTenantByName(name);
  if (!tenant) throw new NotFoundError(`no tenant named '${name}'`);
  return tenant;
}

function parseRoles(list: string | undefined): Role[] | undefined {
  if (list === undefined) return undefined;
  const roles = list.split(",").map((role) => role.trim());
  const unknown = roles.filter((role) => !(ROLES as readonly string[]).includes(role));
  if (unknown.length > 0)
    throw new BadRequestError(`unknown roles: ${unknown.join(", ")} (known: ${ROLES.join(", ")})`);
  return roles as Role[];
}
