// Prints the OpenAPI document (argv[2]) cut down to the operations named
// in argv[3..] (operationIds) and the component schemas they reach, so
// the CLI's generated package (cli/internal/api/gen, scripts/apiclient.sh)
// holds the types of the calls it makes, not the whole API's.
import { readFileSync } from "node:fs";

const [docPath, ...ops] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(docPath, "utf8"));
const want = new Set(ops);
const paths = {};
for (const [path, item] of Object.entries(doc.paths)) {
  for (const [method, op] of Object.entries(item)) {
    if (op && typeof op === "object" && want.has(op.operationId)) {
      (paths[path] ??= {})[method] = op;
      want.delete(op.operationId);
    }
  }
}
if (want.size > 0) {
  console.error(`the OpenAPI document has no operation ${[...want].join(", ")}`);
  process.exit(1);
}
const prefix = "#/components/schemas/";
const keep = new Set();
const walk = (v) => {
  if (Array.isArray(v)) return v.forEach(walk);
  if (!v || typeof v !== "object") return;
  if (typeof v.$ref === "string" && v.$ref.startsWith(prefix)) {
    const name = v.$ref.slice(prefix.length);
    if (!keep.has(name)) {
      keep.add(name);
      walk(doc.components.schemas[name]);
    }
  }
  Object.values(v).forEach(walk);
};
walk(paths);
doc.paths = paths;
doc.components.schemas = Object.fromEntries(Object.entries(doc.components.schemas).filter(([name]) => keep.has(name)));
process.stdout.write(JSON.stringify(doc, null, 2) + "\n");
