// The API's records and request bodies as the console reads and sends them,
// from the types generated out of the OpenAPI document (schema.gen.ts, by
// `make apiclient`): a field added to the API reaches the console there,
// never by a hand-kept copy. The document marks no field required, so
// where the registry always answers one (an id, a slug) the console says
// so with Has; where it reads a field more narrowly than the document
// types it (a status as a union, a revision's data), the module that
// reads it narrows it by intersection, next to its reason.
import type { components, operations } from "./schema.gen";

/** Schemas are the document's named schemas (components.schemas). */
export type Schemas = components["schemas"];

/** Has is T with the fields K required. */
export type Has<T, K extends keyof T> = T & { [P in K]-?: Exclude<T[P], undefined> };

/** Body is the JSON request body of the operation op (its operationId). */
export type Body<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : never;

/** Answer is the JSON body of the operation's 200 answer. */
export type Answer<Op extends keyof operations> = operations[Op] extends {
  responses: { 200: { content: { "application/json": infer A } } };
}
  ? A
  : never;
