/**
 * Models whose licence an admin accepts before installing them from the console: those whose licence
 * forbids commercial use, and those published with no licence for their weights (whoever runs them
 * has no written permission to). The install is refused without the acknowledgement, whatever sent it.
 */
import { AtelierError } from "../../core/errors.js";
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";

/** Why the licence needs accepting, in words for the console; undefined when it does not. */
export function licenseCaution(entry: CatalogEntry): string | undefined {
  if (entry.nonCommercial) return "its licence forbids commercial use";
  if (entry.licenseStated === false) return "its weights were published without a licence";
  return undefined;
}

/** INVALID_INPUT naming the licence when `entry` needs it accepted and it was not. */
export function assertLicenseAccepted(entry: CatalogEntry, accepted: boolean): void {
  const caution = licenseCaution(entry);
  if (caution === undefined || accepted) return;
  throw new AtelierError(
    "INVALID_INPUT",
    `${entry.id} is installed only once its licence is accepted, because ${caution}: "${entry.license}". ` +
      "Tick the box naming the licence beside Install (a script sends acceptLicense=yes with the form).",
    { issues: [{ path: "acceptLicense", message: `Accept the licence of ${entry.id}: ${entry.license}.` }] },
  );
}
