/**
 * Provisioning: a new tenant with its first administrator and an admin token,
 * in one unit of work. Used by the admin tool and by the first start.
 */
import { ConflictError, ValidationError } from "../../common/errors.ts";
import type { AuthService, IssuedToken } from "../auth/auth-service.ts";
import { createUser } from "../auth/create-user.ts";
import type { CatalogueService } from "../catalogue/catalogue-service.ts";
import type { Store, Tenant, User } from "../store/store.ts";

export interface ProvisionRequest {
  tenantName: string;
  /** Default `admin`. */
  username?: string;
  /** Default `<username>@<tenant>.invalid`. */
  email?: string;
}

export interface Provisioned {
  tenant: Tenant;
  user: User;
  token: IssuedToken;
}

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,62}$/;

/**
 * Creates the tenant, its administrator and a long-lived administrator token.
 * @throws ValidationError for a bad name, ConflictError when the tenant exists.
 */
export async function provisionTenant(
  { store, auth, catalogues }: { store: Store; auth: AuthService; catalogues: CatalogueService },
  request: ProvisionRequest,
  now: () => number = Date.now,
): Promise<Provisioned> {
  const username = request.username ?? "admin";
  const problems = [
    ...(NAME.test(request.tenantName)
      ? []
      : [{ path: "tenant", message: "letters, digits, '_' and '-', starting with a letter, at most 63" }]),
    ...(NAME.test(username)
      ? []
      : [{ path: "username", message: "letters, digits, '_' and '-', starting with a letter, at most 63" }]),
  ];
  if (problems.length > 0) throw new ValidationError("invalid tenant request", problems);

  return store.unitOfWork(async (tx) => {
    if (await tx.findTenantByName(request.tenantName)) {
      throw new ConflictError(`a tenant named '${request.tenantName}' exists already`);
    }
    const tenant: Tenant = { id: crypto.randomUUID(), name: request.tenantName, createdAt: now() };
    const user: User = {
      id: crypto.randomUUID(),
      tenantId: tenant.id,
      username,
      email: request.email ?? `${username}@${request.tenantName.toLowerCase()}.invalid`,
      firstName: null,
      lastName: username,
      roles: ["administrator", "scheduler"],
      isActive: true,
      createdAt: now(),
    };
    await tx.insertTenant(tenant);
    await catalogues.ensureStandardStorage(tenant.id, tx);
    await createUser(tx, user);
    const token = await auth.issueToken(
      { tenantId: tenant.id, userId: user.id, description: "first administrator token" },
      tx,
    );
    return { tenant, user, token };
  });
}
