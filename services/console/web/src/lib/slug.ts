// Slugs made from the name a person typed, as the registry makes a
// testset's (versioned.SlugOf): lowercase ASCII letters and digits, every
// other run of characters one hyphen, accents dropped ("Été à Paris" →
// "ete-a-paris"), so the CLI and the SDKs find the thing by a word, not
// by a generated hex slug.
export function slugOf(name: string): string {
  return name
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
}

/** freeSlug is slugOf(name), or "<slug>-2", "<slug>-3", … past the ones
 * taken; "" when the name has nothing to keep. */
export function freeSlug(name: string, taken: Iterable<string>): string {
  const base = slugOf(name);
  if (!base) return "";
  const held = new Set(taken);
  if (!held.has(base)) return base;
  for (let i = 2; ; i++) if (!held.has(`${base}-${i}`)) return `${base}-${i}`;
}
