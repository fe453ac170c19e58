/** slugOf previews the slug the registry makes from a name when a create
 * sends no slug (services/registry/internal/versioned/slugname.go):
 * lowercase ASCII letters and digits, every other run of characters one
 * hyphen, accents dropped. The registry adds "-2", "-3", … when the slug
 * is taken in the project. */
export function slugOf(name: string): string {
  return name
    .normalize("NFD")
    .replace(/\p{Mn}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+/, "")
    .slice(0, 60)
    .replace(/-+$/, "");
}
